"""Compiled passes over the pairs of exact event times (numba): ctls's Toeplitz pair cells, the maximum-likelihood
design's rows and their grouping by target dimension, and the curvature of a likelihood linear in its parameters.

Each pass visits every pair of events at most s apart once, in compiled loops instead of one NumPy pass per offset;
the counts they produce are integers, equal to the pure-NumPy passes' (the tests compare them cell for cell). This
module imports numba (about 0.25 s, and a first-call compilation cached on disk): import it only where a pass runs,
never at a package's import.
"""

from __future__ import annotations

import math

import numba
import numpy as np


@numba.njit(cache=True)
def _grow(array: np.ndarray, size: int) -> np.ndarray:
    """``array`` copied into one of at least ``size`` entries (doubling)."""
    bigger = np.empty(max(size, 2 * array.size), dtype=array.dtype)
    bigger[:array.size] = array
    return bigger


@numba.njit(cache=True)
def target_rows(x: np.ndarray, dims: np.ndarray, dim: int, lags: int, first_target: float
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The rows of the pair design of one sequence, in CSR form: for each target k (the events with
    ``x >= first_target``, in time order; ``x`` sorted, in units of w), the count of earlier events of source j with
    ``δ = x_k − x_source ∈ (b, b+1]``, b < B, in column ``b·d + j`` (columns ascending, zero counts left out;
    ``δ = 0`` is no pair).

    Returns
    -------
    indptr : (targets + 1,) int64
    indices : (cells,) int64
    counts : (cells,) float64
    target_dims : (targets,) int64
    """
    n = x.size
    q = dim * lags
    first = 0
    while first < n and x[first] < first_target:
        first += 1
    targets = n - first
    indptr = np.zeros(targets + 1, dtype=np.int64)
    indices = np.empty(max(4 * targets, 16), dtype=np.int64)
    counts = np.empty(indices.size, dtype=np.float64)
    row = np.zeros(q, dtype=np.int64)
    used = 0
    for k in range(first, n):
        source = k - 1
        while source >= 0:
            delta = x[k] - x[source]
            if delta > lags:
                break
            step = int(math.ceil(delta)) - 1
            if step >= 0:
                row[step * dim + dims[source]] += 1
            source -= 1
        if used + q > indices.size:
            indices = _grow(indices, used + q)
            counts = _grow(counts, used + q)
        for c in range(q):
            if row[c]:
                indices[used] = c
                counts[used] = row[c]
                row[c] = 0
                used += 1
        indptr[k - first + 1] = used
    return indptr, indices[:used].copy(), counts[:used].copy(), dims[first:].copy()


@numba.njit(cache=True)
def weighted_gram(indptr: np.ndarray, indices: np.ndarray, data: np.ndarray, columns: int, weights: np.ndarray
                  ) -> np.ndarray:
    """``X̃ᵀ diag(weights²) X̃`` for ``X̃ = [X, 1]`` (``X`` in CSR form with ``columns`` columns): ``(q+1, q+1)``."""
    q = columns
    H = np.zeros((q + 1, q + 1))
    for k in range(indptr.size - 1):
        w = weights[k]
        w2 = w * w
        start, stop = indptr[k], indptr[k + 1]
        for a in range(start, stop):
            ca, va = indices[a], data[a] * w2
            H[ca, q] += va
            for b in range(a, stop):
                H[ca, indices[b]] += va * data[b]
        H[q, q] += w2
    for a in range(q + 1):
        for b in range(a):
            H[a, b] = H[b, a]
    return H


@numba.njit(cache=True)
def offset_cells(x: np.ndarray, codes: np.ndarray, dims: np.ndarray, dim: int, lags: int, chunk: int
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The cells of :func:`~dphawkes_core.statistics.exact_times.toeplitz_pieces`: every pair (earlier e, later l)
    with ``δ = x_l − x_e <= B`` (``x`` sorted, in units of w) counted in its cell ``⌊δ⌋·d² + codes_e + dims_l``,
    plainly (``counts``), weighted by ``f = δ − ⌊δ⌋`` (``weighted``), when f = 0 (``whole``), and ``1 − f`` for
    ``δ < 1`` (``near``, by ``codes_e + dims_l``).

    The pairs are visited in the order of the offset-by-offset NumPy pass (events in chunks of ``chunk``; within a
    chunk, offset by offset; within an offset, by earlier event) and each offset's weights summed apart before they
    are added, so the floating-point sums are that pass's, bit for bit."""
    dd = dim * dim
    size = (lags + 2) * dd
    counts = np.zeros(size)
    weighted = np.zeros(size)
    whole = np.zeros(size)
    near = np.zeros(dd)
    step_weighted = np.zeros(size)
    step_near = np.zeros(dd)
    n = x.size
    active = np.empty(min(chunk, max(n - 1, 0)), dtype=np.int64)
    for start in range(0, n - 1, chunk):
        m = 0
        for e in range(start, min(start + chunk, n - 1)):
            active[m] = e
            m += 1
        offset = 1
        while m > 0:
            step_weighted[:] = 0.0
            step_near[:] = 0.0
            kept = 0
            for a in range(m):
                e = active[a]
                delta = x[e + offset] - x[e]
                if delta > lags:
                    continue
                active[kept] = e
                kept += 1
                floor = math.floor(delta)
                frac = delta - floor
                cell = int(floor) * dd + codes[e] + dims[e + offset]
                counts[cell] += 1.0
                step_weighted[cell] += frac
                if frac == 0.0:
                    whole[cell] += 1.0
                if floor == 0.0:
                    step_near[cell] += 1.0 - frac
            weighted += step_weighted
            near += step_near
            offset += 1
            m = 0
            for a in range(kept):
                if active[a] + offset < n:
                    active[m] = active[a]
                    m += 1
    return counts, weighted, whole, near


@numba.njit(cache=True)
def group_rows(indptr: np.ndarray, indices: np.ndarray, counts: np.ndarray, groups: np.ndarray, n_groups: int
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The CSR rows reordered so that each group's rows are consecutive (``groups[k]`` the group of row k; the order
    within a group kept): ``(indptr, indices as int32, counts, first row of each group and the end)``."""
    rows = groups.size
    first = np.zeros(n_groups + 1, dtype=np.int64)
    for k in range(rows):
        first[groups[k] + 1] += 1
    for g in range(n_groups):
        first[g + 1] += first[g]
    cells_before = np.zeros(n_groups + 1, dtype=np.int64)
    for k in range(rows):
        cells_before[groups[k] + 1] += indptr[k + 1] - indptr[k]
    for g in range(n_groups):
        cells_before[g + 1] += cells_before[g]
    new_indptr = np.zeros(rows + 1, dtype=np.int64)
    new_indices = np.empty(indices.size, dtype=np.int32)
    new_counts = np.empty(counts.size, dtype=np.float64)
    next_row = first[:-1].copy()
    next_cell = cells_before[:-1].copy()
    for k in range(rows):
        g = groups[k]
        r, c = next_row[g], next_cell[g]
        for a in range(indptr[k], indptr[k + 1]):
            new_indices[c] = indices[a]
            new_counts[c] = counts[a]
            c += 1
        new_indptr[r + 1] = c
        next_row[g], next_cell[g] = r + 1, c
    return new_indptr, new_indices, new_counts, first
