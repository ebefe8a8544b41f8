"""The passes over the pairs of exact event times at most s apart, in NumPy, and the choice between them and their
compiled twins (:mod:`~dphawkes_core.statistics.compiled_passes`, numba).

The compiled passes are faster per pair, but a process pays for them before the first pair: importing numba and
loading the cached passes costs about 0.7 s of CPU, and compiling them into an empty cache (a fresh checkout, a
new machine) about 4.5 s. A small fit never earns that back, so below a measured size the pure-NumPy passes run
instead (:data:`COMPILED_MIN_PAIRS`, :func:`dense_design`). Both count the same: the integer counts are
equal cell for cell, and ctls's weighted sums are summed in the same order, so they are equal bit for bit; the
likelihood's curvature is the same sum in another order (BLAS on dense rows), equal at its own scale
(``tests/core/statistics/test_pair_passes.py`` compares them, and both with a brute force).

The dense rows are kept as what they are, small counts (:class:`CountRows`: one byte a cell where every count fits),
and made float a few thousand rows at a time as they are multiplied: an eighth of the memory of float rows, which
on this machine is most of their cost (a process's new memory costs ~2 ms of CPU a megabyte when first touched:
the 32 MB of float rows at 10^5 events were ~70 ms of a 0.19 s fit).
"""

from __future__ import annotations

import numpy as np

# The NumPy offset walk (ctls's Toeplitz cells) costs 11–26 ns of CPU per pair, the compiled one 4–8 ns plus ~0.7 s
# to import numba and load the cached pass (4.5 s to compile it into an empty cache); measured with one BLAS thread on
# the four held-out processes at 10^4–10^6 events (docs/load.md, "The whole command against EM"): the walk wins below
# ~4·10^7 pairs.
COMPILED_MIN_PAIRS = 40_000_000
# The likelihood's pair design: rows of counts laid out densely on ctls's walk of the pairs (~25 ns of CPU per pair
# more than ctls's cells alone) and NEWTON_ITERATIONS curvatures by float32 BLAS (~0.03 ns per target × (d·B + 1)², in
# cache-sized chunks), against the compiled walk (~25 ns per pair, most of it writing the sparse rows) and compiled
# curvature (~0.6 ns per target × cells², cells ≤ d·B) plus ~0.7 s to load numba (4.5 s to compile into an empty
# cache). Measured with one BLAS thread: the dense terms on bench_cost_model's cases (predicted ×0.77–1.37 of the
# measured fits, 2026-11-28), the compiled ones on the held-out processes (docs/load.md, "The whole command against
# EM"): at 10^6 events of near-critical-2d the dense layout fits in 2.0 s (in process), the compiled one in 2.7 s plus
# the load. A fit cannot tell whether numba's cache is warm, so the load is counted as 2 s: the compiled passes run
# only where they win by more.
SECONDS_PER_DENSE_PAIR = 2.5e-8
SECONDS_PER_DENSE_CURVATURE_CELL = 3e-11
SECONDS_PER_COMPILED_PAIR = 3e-8
SECONDS_PER_COMPILED_CELL_PRODUCT = 6e-10
SECONDS_TO_LOAD_COMPILED = 2.0
NEWTON_ITERATIONS = 8  # 4–16 measured
MAX_DENSE_DESIGN_CELLS = 1 << 26  # 64 MiB of dense rows of byte counts (128 MiB of two-byte ones) at most
CURVATURE_CHUNK = 4096  # rows scaled and multiplied at once by the dense curvature (1.5× faster than all at once)


def design_seconds(targets: float, pairs: float, columns: int) -> tuple[float, float]:
    """Predicted CPU seconds of the likelihood's pair design and its Newton curvatures: dense rows and BLAS, and the
    compiled sparse rows (with numba's load, :data:`SECONDS_TO_LOAD_COMPILED`); ``inf`` for dense rows over
    :data:`MAX_DENSE_DESIGN_CELLS`."""
    targets, pairs = float(targets), float(pairs)
    row_cells = min(pairs / max(targets, 1.0), float(columns))
    dense = (pairs * SECONDS_PER_DENSE_PAIR
             + NEWTON_ITERATIONS * targets * (columns + 1) ** 2 * SECONDS_PER_DENSE_CURVATURE_CELL)
    compiled = (SECONDS_TO_LOAD_COMPILED + pairs * SECONDS_PER_COMPILED_PAIR
                + NEWTON_ITERATIONS * targets * row_cells**2 * SECONDS_PER_COMPILED_CELL_PRODUCT)
    return (dense if targets * columns <= MAX_DENSE_DESIGN_CELLS else float("inf")), compiled


def dense_design(targets: float, pairs: float, columns: int) -> bool:
    """Whether the pair design of ``targets`` rows of ``columns`` (d·B) cells and ``pairs`` pairs is laid out densely
    (and solved by BLAS) rather than built and solved by the compiled passes: whichever is predicted faster."""
    dense, compiled = design_seconds(targets, pairs, columns)
    return dense <= compiled


def pair_count(x: np.ndarray, lags: int) -> int:
    """The number of pairs (earlier e, later l) with ``x_l − x_e <= lags`` of one sorted sequence (``x`` in units of
    w): what a pass over them visits, counted in ``O(n log n)`` (``x_e + lags`` rounded: a pair exactly at the
    bound may count on either side, which only moves the choice of pass, never a result)."""
    if x.size < 2:
        return 0
    reach = np.searchsorted(x, x + float(lags), side="right")
    return int(np.sum(reach - np.arange(1, x.size + 1), dtype=np.int64))


def offset_cells(x: np.ndarray, codes: np.ndarray, dims: np.ndarray, dim: int, lags: int, chunk: int,
                 rows: tuple | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """ctls's Toeplitz pair cells (:func:`numpy_offset_cells`), by the compiled pass when the pairs are many enough
    to pay for loading it (:data:`COMPILED_MIN_PAIRS`); the two are equal bit for bit. ``rows``: the place of this
    sequence's rows in the likelihood's dense design (:meth:`DenseLayout.place`), filled on the same walk."""
    if pair_count(x, lags) >= COMPILED_MIN_PAIRS:
        from dphawkes_core.statistics.compiled_passes import offset_cells as compiled  # numba: loaded here

        if rows is not None:
            fill_rows(x, dims, dim, lags, rows)
        return compiled(x, codes, dims, int(dim), int(lags), int(chunk))
    return numpy_offset_cells(x, codes, dims, dim, lags, chunk, rows)


def numpy_offset_cells(x: np.ndarray, codes: np.ndarray, dims: np.ndarray, dim: int, lags: int, chunk: int,
                       rows: tuple | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The cells of :func:`~dphawkes_core.statistics.exact_times.toeplitz_pieces`: every pair (earlier e, later l)
    with ``δ = x_l − x_e <= B`` (``x`` sorted, in units of w) counted in its cell ``⌊δ⌋·d² + codes_e + dims_l``,
    plainly (``counts``), weighted by ``f = δ − ⌊δ⌋`` (``weighted``), when f = 0 (``whole``), and ``1 − f`` for
    ``δ < 1`` (``near``, by ``codes_e + dims_l``).

    Events in chunks of ``chunk`` (bounding the temporaries); within a chunk, offset by offset (the pairs ``(e,
    e + offset)`` of every event at once), each offset's sums made by ``bincount`` and then added: the order the
    compiled pass follows, so that the two are equal bit for bit.

    With ``rows`` (``(counts, first, row_start)``, :meth:`DenseLayout.place`), the same walk also counts the
    likelihood's dense rows of this sequence (:func:`fill_rows`'s counts): the pair's step is ``⌈δ⌉ − 1`` — ``⌊δ⌋``,
    one lower for a whole δ — for every later event from ``first`` on (a target), δ = 0 no pair. One walk of the
    pairs instead of two, where both statistics are asked for (mle's)."""
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
            lag = floor.astype(np.int64)
            cell = lag * dd + (codes[active] + dims[later])
            counts += np.bincount(cell, minlength=size)
            weighted += np.bincount(cell, weights=frac, minlength=size)
            exact = frac == 0.0
            if exact.any():
                whole += np.bincount(cell[exact], minlength=size)
            if rows is not None:
                _count_pairs(rows, later, active, lag - exact, dims, d)
            small = floor == 0.0
            if small.any():
                near += np.bincount(cell[small], weights=1.0 - frac[small], minlength=dd)
            offset += 1
            if active[-1] + offset >= n:
                active = active[active + offset < n]
    return counts, weighted, whole, near


def _count_pairs(rows: tuple, target: np.ndarray, source: np.ndarray, step: np.ndarray, dims: np.ndarray, d: int
                 ) -> None:
    """Add the pairs ``(source, target)`` at ``step`` (``⌈δ⌉ − 1``) to the dense rows ``rows`` (``(counts, first,
    row_start)``) where the target is one (``>= first``) and the pair is one (step >= 0). One pair per target at one
    offset: no cell is added twice in one call."""
    counts, first, row_start = rows
    keep = (target >= first) & (step >= 0)
    if not keep.all():
        target, source, step = target[keep], source[keep], step[keep]
    counts[row_start[target - first] + step * d + dims[source]] += 1


class CountRows:
    """The likelihood's dense pair design as its counts: a ``(targets, columns)`` array of unsigned integers (bytes
    where every count fits in one, else two bytes: :func:`count_dtype`), multiplied in chunks of
    :data:`CURVATURE_CHUNK` rows made float on the way — ``X @ θ`` and ``X.T @ v`` in float64 (exact counts, the
    same sums as float rows in the same order), the curvature :meth:`weighted_gram` in float32 products summed in
    float64. Holds what float rows hold, as :meth:`toarray` shows."""

    __slots__ = ("counts",)

    def __init__(self, counts: np.ndarray):
        self.counts = counts

    @property
    def shape(self) -> tuple[int, int]:
        return self.counts.shape

    @property
    def T(self) -> _TransposedRows:  # noqa: N802 - the matrix idiom X.T @ v
        return _TransposedRows(self)

    def __matmul__(self, theta: np.ndarray) -> np.ndarray:
        """``X θ`` (float64)."""
        theta = np.asarray(theta, dtype=np.float64)
        out = np.empty(self.counts.shape[0])
        for start in range(0, self.counts.shape[0], CURVATURE_CHUNK):
            out[start:start + CURVATURE_CHUNK] = self.counts[start:start + CURVATURE_CHUNK] @ theta
        return out

    def transposed_times(self, vector: np.ndarray) -> np.ndarray:
        """``Xᵀ v`` (float64)."""
        vector = np.asarray(vector, dtype=np.float64)
        out = np.zeros(self.counts.shape[1])
        for start in range(0, self.counts.shape[0], CURVATURE_CHUNK):
            out += vector[start:start + CURVATURE_CHUNK] @ self.counts[start:start + CURVATURE_CHUNK]
        return out

    def weighted_gram(self, weights: np.ndarray) -> np.ndarray:
        """``X̃ᵀ diag(weights²) X̃`` (``X̃ = [X, 1]``): each chunk's rows scaled and multiplied in float32 by BLAS (half
        the work of float64), the chunks' products summed in float64; the corner ``Σ weights²`` in float64. Every
        term is ``>= 0``, so each entry is within a few float32 roundings of itself: a curvature for Newton's steps,
        never for where they stop (the gradient and ℓ are float64: :func:`~dphawkes_core.estimators.solvers.
        newton_dimension`)."""
        n, q = self.counts.shape
        H = np.zeros((q + 1, q + 1))
        narrow = weights.astype(np.float32)
        for start in range(0, n, CURVATURE_CHUNK):
            chunk = narrow[start:start + CURVATURE_CHUNK]
            scaled = self.counts[start:start + CURVATURE_CHUNK] * chunk[:, None]  # float32
            H[:q, :q] += scaled.T @ scaled
            H[:q, q] += chunk @ scaled
        H[q, :q] = H[:q, q]
        H[q, q] = weights @ weights
        return H

    def with_columns(self, columns: np.ndarray) -> CountRows:
        """These rows with ``columns`` (counts, one row each) appended."""
        dtype = np.promote_types(self.counts.dtype, count_dtype(int(columns.max(initial=0))))
        return CountRows(np.hstack([self.counts.astype(dtype, copy=False), columns.astype(dtype)]))

    def toarray(self) -> np.ndarray:
        """The rows as float64."""
        return self.counts.astype(np.float64)


class _TransposedRows:
    """``X.T`` of :class:`CountRows`, for ``X.T @ v``."""

    __slots__ = ("rows",)

    def __init__(self, rows: CountRows):
        self.rows = rows

    def __matmul__(self, vector: np.ndarray) -> np.ndarray:
        return self.rows.transposed_times(vector)


def count_dtype(largest: int):
    """The unsigned integer type that holds counts up to ``largest``: bytes, two bytes, else float64."""
    if largest <= np.iinfo(np.uint8).max:
        return np.uint8
    if largest <= np.iinfo(np.uint16).max:
        return np.uint16
    return np.float64


def largest_step_count(x: np.ndarray) -> int:
    """A bound on any cell of the pair design of ``x`` (sorted, units of w): a cell counts the events of one source
    in one step ``[x_k − b − 1, x_k − b)``, at most the events in a closed interval of length 1 starting at one."""
    if not x.size:
        return 0
    return int(np.max(np.searchsorted(x, x + 1.0, side="right") - np.arange(x.size)))


def dense_target_rows(x: np.ndarray, dims: np.ndarray, dim: int, lags: int, first_target: float
                      ) -> tuple[np.ndarray, np.ndarray]:
    """The rows of the pair design of one sequence laid out densely: the rows of
    :func:`~dphawkes_core.statistics.compiled_passes.target_rows` (for each target k — the events with
    ``x >= first_target`` in time order — the count of earlier events of source j with ``δ = x_k − x_source ∈
    (b, b+1]``, b < B, in column ``b·d + j``; ``δ = 0`` is no pair) as a ``(targets, d·B)`` array, with the targets'
    dimensions."""
    q = int(dim) * int(lags)
    first = int(np.searchsorted(x, first_target, side="left"))
    rows = np.zeros((x.size - first) * q, dtype=count_dtype(largest_step_count(x)))
    _count_rows(x, dims, int(dim), int(lags), first, np.arange(x.size - first) * q, rows)
    return rows.reshape(x.size - first, q).astype(np.float64), dims[first:].copy()


def _count_rows(x: np.ndarray, dims: np.ndarray, d: int, B: int, first: int, row_start: np.ndarray,
                rows: np.ndarray) -> None:
    """Add the pair counts of the targets ``x[first:]`` to ``rows`` (flat, ``d·B`` cells a row), target k's row
    starting at ``row_start[k − first]``. Walked offset by offset: at one offset every target has one source, so its
    cell is added once."""
    active = np.arange(first, x.size)
    offset = 1
    while active.size:
        active = active[np.searchsorted(active, offset):]  # ascending: those with a source this far back
        source = active - offset
        delta = x[active] - x[source]
        inside = delta <= B
        if not inside.all():
            active, source, delta = active[inside], source[inside], delta[inside]
        step = np.ceil(delta).astype(np.int64) - 1
        target = active - first
        if step.size and step.min() < 0:  # simultaneous events are no pair
            pair = step >= 0
            target, step, source = target[pair], step[pair], source[pair]
        rows[row_start[target] + step * d + dims[source]] += 1  # one cell per target: no index twice
        offset += 1


def fill_rows(x: np.ndarray, dims: np.ndarray, dim: int, lags: int, rows: tuple) -> None:
    """Count the dense rows of one sequence into ``rows`` (``(counts, first, row_start)``,
    :meth:`DenseLayout.place`) by the targets' walk (:func:`_count_rows`)."""
    counts, first, row_start = rows
    _count_rows(x, dims, int(dim), int(lags), first, row_start, counts)


class DenseLayout:
    """Where the likelihood's dense rows of each sequence go in one block of counts (:func:`dense_layout`):
    dimension-major, each dimension's targets in sequence and time order; filled sequence by sequence
    (:func:`fill_rows`, or on ctls's walk: :func:`numpy_offset_cells`), then split per dimension
    (:meth:`matrices`)."""

    __slots__ = ("counts", "places", "bounds", "columns")

    def __init__(self, counts: np.ndarray, places: list, bounds: np.ndarray, columns: int):
        self.counts, self.places, self.bounds, self.columns = counts, places, bounds, columns

    def place(self, k: int) -> tuple:
        """``(counts, first, row_start)`` of sequence k: the flat counts, the index of its first target and where
        each of its targets' rows starts."""
        return (self.counts, *self.places[k])

    def matrices(self) -> tuple:
        """One :class:`CountRows` per target dimension (views of the block)."""
        rows = self.counts.reshape(-1, self.columns)
        return tuple(CountRows(rows[self.bounds[i]:self.bounds[i + 1]]) for i in range(self.bounds.size - 1))


def dense_layout(sequences, dim: int, lags: int, first_target: float) -> DenseLayout | None:
    """The :class:`DenseLayout` of the pair design of ``sequences`` (``(x, dims)`` each, sorted, in units of w;
    targets ``x >= first_target``), zero counts of the narrowest type that holds them (:func:`count_dtype`); None
    where the compiled sparse rows are predicted faster (:func:`dense_design`)."""
    d, B = int(dim), int(lags)
    q = d * B
    firsts = [int(np.searchsorted(x, first_target, side="left")) for x, _ in sequences]
    targets = sum(x.size - f for (x, _), f in zip(sequences, firsts))
    if not dense_design(targets, sum(pair_count(x, B) for x, _ in sequences), q):
        return None
    target_dims = np.concatenate([dims[f:] for (_, dims), f in zip(sequences, firsts)] + [np.zeros(0, np.int64)])
    position = np.empty(target_dims.size, dtype=np.int64)  # dimension-major, in sequence and time order within each
    position[np.argsort(target_dims, kind="stable")] = np.arange(target_dims.size)
    largest = max((largest_step_count(x) for x, _ in sequences), default=0)
    counts = np.zeros(target_dims.size * q, dtype=count_dtype(largest))
    places, done = [], 0
    for (x, _), f in zip(sequences, firsts):
        places.append((f, position[done:done + x.size - f] * q))
        done += x.size - f
    bounds = np.concatenate([[0], np.cumsum(np.bincount(target_dims, minlength=d))])
    return DenseLayout(counts, places, bounds, q)


def target_matrices(sequences, dim: int, lags: int, first_target: float) -> tuple:
    """The pair design's rows of every sequence (``sequences``: ``(x, dims)`` per sequence, sorted, in units of w),
    one matrix per target dimension (its targets in sequence and time order; columns ``b·d + j``): dense
    :class:`CountRows` (one block of counts, each dimension's rows a view of it) where they are predicted faster
    (:func:`dense_design`), otherwise CSR matrices built by the compiled passes (their counts are the same)."""
    layout = dense_layout(sequences, dim, lags, first_target)
    if layout is None:
        return _compiled_matrices(sequences, int(dim), int(lags), first_target)
    for k, (x, dims) in enumerate(sequences):
        fill_rows(x, dims, dim, lags, layout.place(k))
    return layout.matrices()


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
    """``X̃ᵀ diag(weights²) X̃`` for ``X̃ = [X, 1]``: ``(q+1, q+1)``. :class:`CountRows` by its own chunks; float
    rows (exp's features) by BLAS in float64; CSR rows by one compiled pass over their cells
    (:func:`~dphawkes_core.statistics.compiled_passes.weighted_gram`)."""
    if isinstance(X, CountRows):
        return X.weighted_gram(weights)
    if isinstance(X, np.ndarray):
        q = X.shape[1]
        H = np.zeros((q + 1, q + 1))
        for start in range(0, X.shape[0], CURVATURE_CHUNK):  # chunks that stay in the cache: 1.5× faster at 10^6 rows
            chunk = weights[start:start + CURVATURE_CHUNK]
            scaled = X[start:start + CURVATURE_CHUNK] * chunk[:, None]
            H[:q, :q] += scaled.T @ scaled
            H[:q, q] += scaled.T @ chunk
        H[q, :q] = H[:q, q]
        H[q, q] = weights @ weights
        return H
    from dphawkes_core.statistics.compiled_passes import weighted_gram as compiled  # numba: loaded here

    return compiled(X.indptr, X.indices, X.data, X.shape[1], weights)


def stored_cells(X) -> int:
    """The non-zero cells of a design matrix, dense (counts or float) or sparse."""
    if isinstance(X, CountRows):
        return int(np.count_nonzero(X.counts))
    return int(np.count_nonzero(X)) if isinstance(X, np.ndarray) else int(X.nnz)
