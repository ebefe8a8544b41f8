"""The passes over the pairs of exact event times at most s apart, in NumPy, and the choice between them and their
compiled twins (:mod:`~dphawkes_core.statistics.compiled_passes`, numba).

The compiled passes are faster per pair, but a process pays for them before the first pair: importing numba and
loading the cached passes costs about 0.7 s of CPU, and compiling them into an empty cache (a fresh checkout, a
new machine) about 4.5 s. A small fit never earns that back, so below a measured size the pure-NumPy passes run
instead (:data:`COMPILED_MIN_PAIRS`, :data:`COMPILED_MIN_DESIGN_WORK`). Both count the same: the integer counts are
equal cell for cell, and ctls's weighted sums are summed in the same order, so they are equal bit for bit; the
likelihood's curvature is the same sum in another order (BLAS on dense rows), equal at its own scale
(``tests/core/statistics/test_pair_passes.py`` compares them, and both with a brute force).
"""

from __future__ import annotations

import numpy as np

# The NumPy offset walk (ctls's Toeplitz cells) costs 11–26 ns of CPU per pair, the compiled one 4–8 ns plus ~0.7 s
# to import numba and load the cached pass (4.5 s to compile it into an empty cache); measured with one BLAS thread on
# the four held-out processes at 10^4–10^6 events (docs/load.md, "Compiled passes where they pay"): the walk wins below
# ~4·10^7 pairs.
COMPILED_MIN_PAIRS = 40_000_000
# The likelihood's rows laid out densely (targets × d·B) with the Newton curvature by BLAS (0.1–0.45 ns per target ×
# (d·B + 1)² per iteration), against the compiled sparse rows and curvature (~0.5 ns per target × cells² and the
# ~0.7 s load): measured on the same data, the dense layout is faster up to ~10^9 of that work per iteration (at
# 10^5 events: near-critical-2d 1.7·10^8, dense 0.53 s against 0.89 s; sparse-5d 10^9, 0.75 s against 0.76 s; at
# 10^6 near-critical-2d 1.7·10^9, 6.4 s against 2.7 s). Also never more than 2^25 dense cells (256 MiB).
COMPILED_MIN_DESIGN_WORK = 1_000_000_000
MAX_DENSE_DESIGN_CELLS = 1 << 25


def pair_count(x: np.ndarray, lags: int) -> int:
    """The number of pairs (earlier e, later l) with ``x_l − x_e <= lags`` of one sorted sequence (``x`` in units of
    w): what a pass over them visits, counted in ``O(n log n)`` (``x_e + lags`` rounded: a pair exactly at the
    bound may count on either side, which only moves the choice of pass, never a result)."""
    if x.size < 2:
        return 0
    reach = np.searchsorted(x, x + float(lags), side="right")
    return int(np.sum(reach - np.arange(1, x.size + 1), dtype=np.int64))


def offset_cells(x: np.ndarray, codes: np.ndarray, dims: np.ndarray, dim: int, lags: int, chunk: int
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """ctls's Toeplitz pair cells (:func:`numpy_offset_cells`), by the compiled pass when the pairs are many enough
    to pay for loading it (:data:`COMPILED_MIN_PAIRS`); the two are equal bit for bit."""
    if pair_count(x, lags) >= COMPILED_MIN_PAIRS:
        from dphawkes_core.statistics.compiled_passes import offset_cells as compiled  # numba: loaded here

        return compiled(x, codes, dims, int(dim), int(lags), int(chunk))
    return numpy_offset_cells(x, codes, dims, dim, lags, chunk)


def numpy_offset_cells(x: np.ndarray, codes: np.ndarray, dims: np.ndarray, dim: int, lags: int, chunk: int
                       ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The cells of :func:`~dphawkes_core.statistics.exact_times.toeplitz_pieces`: every pair (earlier e, later l)
    with ``δ = x_l − x_e <= B`` (``x`` sorted, in units of w) counted in its cell ``⌊δ⌋·d² + codes_e + dims_l``,
    plainly (``counts``), weighted by ``f = δ − ⌊δ⌋`` (``weighted``), when f = 0 (``whole``), and ``1 − f`` for
    ``δ < 1`` (``near``, by ``codes_e + dims_l``).

    Events in chunks of ``chunk`` (bounding the temporaries); within a chunk, offset by offset (the pairs ``(e,
    e + offset)`` of every event at once), each offset's sums made by ``bincount`` and then added: the order the
    compiled pass follows, so that the two are equal bit for bit."""
    d, B = int(dim), int(lags)
    dd = d * d
    size = (B + 2) * dd
    counts, weighted, whole, near = np.zeros(size), np.zeros(size), np.zeros(size), np.zeros(dd)
    n = x.size
    for start in range(0, n - 1, chunk):
        active = np.arange(start, min(start + chunk, n - 1))
        offset = 1
        while active.size:
            later = active + offset
            delta = x[later] - x[active]
            inside = delta <= B
            if not inside.all():
                active, later, delta = active[inside], later[inside], delta[inside]
                if not active.size:
                    break
            floor = np.floor(delta)
            frac = delta - floor
            cell = floor.astype(np.int64) * dd + (codes[active] + dims[later])
            counts += np.bincount(cell, minlength=size)
            weighted += np.bincount(cell, weights=frac, minlength=size)
            exact = frac == 0.0
            if exact.any():
                whole += np.bincount(cell[exact], minlength=size)
            small = floor == 0.0
            if small.any():
                near += np.bincount(cell[small], weights=1.0 - frac[small], minlength=dd)
            offset += 1
            if active[-1] + offset >= n:
                active = active[active + offset < n]
    return counts, weighted, whole, near


def dense_target_rows(x: np.ndarray, dims: np.ndarray, dim: int, lags: int, first_target: float
                      ) -> tuple[np.ndarray, np.ndarray]:
    """The rows of the pair design of one sequence laid out densely: the rows of
    :func:`~dphawkes_core.statistics.compiled_passes.target_rows` (for each target k — the events with
    ``x >= first_target`` in time order — the count of earlier events of source j with ``δ = x_k − x_source ∈
    (b, b+1]``, b < B, in column ``b·d + j``; ``δ = 0`` is no pair) as a ``(targets, d·B)`` array, with the targets'
    dimensions. Walked offset by offset: at one offset every target has one source, so its cell is added once."""
    n, d, B = x.size, int(dim), int(lags)
    q = d * B
    first = int(np.searchsorted(x, first_target, side="left"))
    rows = np.zeros((n - first) * q)
    active = np.arange(first, n)
    offset = 1
    while active.size:
        active = active[active >= offset]
        source = active - offset
        delta = x[active] - x[source]
        inside = delta <= B
        if not inside.all():
            active, source, delta = active[inside], source[inside], delta[inside]
        step = np.ceil(delta).astype(np.int64) - 1
        pair = step >= 0
        rows[(active[pair] - first) * q + step[pair] * d + dims[source[pair]]] += 1.0
        offset += 1
    return rows.reshape(n - first, q), dims[first:].copy()


def target_matrices(sequences, dim: int, lags: int, first_target: float) -> tuple:
    """The pair design's rows of every sequence (``sequences``: ``(x, dims)`` per sequence, sorted, in units of w),
    one matrix per target dimension (its targets in sequence and time order; columns ``b·d + j``): dense arrays
    (:func:`dense_target_rows`) while the Newton work on them, targets × (d·B + 1)² per iteration, is below
    :data:`COMPILED_MIN_DESIGN_WORK` and they fit in :data:`MAX_DENSE_DESIGN_CELLS`; otherwise CSR matrices built
    by the compiled passes (their counts are the same)."""
    d, q = int(dim), int(dim) * int(lags)
    targets = sum(x.size - int(np.searchsorted(x, first_target, side="left")) for x, _ in sequences)
    if dense_design(targets, q):
        parts = [dense_target_rows(x, dims, d, lags, first_target) for x, dims in sequences]
        rows = np.concatenate([p[0] for p in parts]) if parts else np.zeros((0, q))
        target_dims = np.concatenate([p[1] for p in parts]) if parts else np.zeros(0, dtype=np.int64)
        return tuple(rows[target_dims == i] for i in range(d))
    return _compiled_matrices(sequences, d, int(lags), first_target)


def dense_design(targets: float, columns: int) -> bool:
    """Whether the pair design of ``targets`` rows of ``columns`` (d·B) cells is laid out densely (and solved by
    BLAS) rather than built and solved by the compiled passes."""
    return (targets * (columns + 1) ** 2 < COMPILED_MIN_DESIGN_WORK
            and targets * columns <= MAX_DENSE_DESIGN_CELLS)


def _compiled_matrices(sequences, dim: int, lags: int, first_target: float) -> tuple:
    """:func:`target_matrices` as CSR matrices, by the compiled walk and grouping."""
    from scipy.sparse import csr_matrix  # loaded when a large design is built (~0.1 s), not at import

    from dphawkes_core.statistics.compiled_passes import group_rows, target_rows  # numba: loaded here

    q = dim * lags
    pointers, columns, counts, target_dims, n_cells = [np.zeros(1, dtype=np.int64)], [], [], [], 0
    for x, dims in sequences:
        indptr, indices, cells, tdims = target_rows(x, dims, dim, lags, first_target)
        pointers.append(indptr[1:] + n_cells)
        columns.append(indices)
        counts.append(cells)
        target_dims.append(tdims)
        n_cells += indices.size
    indptr, indices, cells, starts = group_rows(_joined(pointers, np.int64), _joined(columns, np.int64),
                                                _joined(counts, np.float64), _joined(target_dims, np.int64), dim)
    matrices = []
    for i in range(dim):
        r0, r1 = starts[i], starts[i + 1]
        c0, c1 = indptr[r0], indptr[r1]
        rows = (indptr[r0:r1 + 1] - c0).astype(np.int32 if c1 - c0 < 2**31 else np.int64)
        matrices.append(csr_matrix((cells[c0:c1], indices[c0:c1], rows), shape=(int(r1 - r0), q), copy=False))
    return tuple(matrices)


def _joined(parts: list, dtype) -> np.ndarray:
    """The arrays of ``parts`` end to end (the one array itself when there is one)."""
    if len(parts) == 1:
        return parts[0]
    return np.concatenate(parts) if parts else np.zeros(0, dtype=dtype)


def weighted_gram(X, weights: np.ndarray) -> np.ndarray:
    """``X̃ᵀ diag(weights²) X̃`` for ``X̃ = [X, 1]``: ``(q+1, q+1)``. Dense rows by BLAS; CSR rows by one compiled
    pass over their cells (:func:`~dphawkes_core.statistics.compiled_passes.weighted_gram`)."""
    if isinstance(X, np.ndarray):
        q = X.shape[1]
        scaled = X * weights[:, None]
        H = np.empty((q + 1, q + 1))
        H[:q, :q] = scaled.T @ scaled
        H[:q, q] = H[q, :q] = scaled.T @ weights
        H[q, q] = weights @ weights
        return H
    from dphawkes_core.statistics.compiled_passes import weighted_gram as compiled  # numba: loaded here

    return compiled(X.indptr, X.indices, X.data, X.shape[1], weights)


def stored_cells(X) -> int:
    """The non-zero cells of a design matrix, dense or sparse."""
    return int(np.count_nonzero(X)) if isinstance(X, np.ndarray) else int(X.nnz)
