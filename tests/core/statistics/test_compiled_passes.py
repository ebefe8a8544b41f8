"""The compiled pair passes against independent references: the pure-NumPy offset-by-offset passes (the rows' one
written here; ctls's cells the NumPy pass that runs below the compiled passes' size threshold,
:mod:`~dphawkes_core.statistics.pair_passes`: their integer counts must be equal cell for cell, the weighted sums
bit for bit) and a brute force over every pair of events; and the compiled curvature against the dense product.

Adversarial data: ties (simultaneous events, which are no pair), pairs exactly a whole number of steps apart
(on a step's edge: ``δ = b + 1`` belongs to step b), pairs exactly s apart (the last step), events before the first
target, and sequences with no target or no pair."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from scipy.sparse import csr_matrix

from dphawkes_core.statistics.compiled_passes import group_rows, offset_cells, target_rows, weighted_gram
from dphawkes_core.statistics.pair_passes import numpy_offset_cells


def numpy_target_cells(x, dims, dim, lags, first_target):
    """The NumPy pass the compiled one replaced: pairs walked offset by offset, keys ``target·q + b·d + j``."""
    q = dim * lags
    is_target = x >= first_target
    target_index = np.cumsum(is_target) - 1
    keys = []
    active = np.flatnonzero(is_target)
    offset = 1
    while active.size:
        active = active[active - offset >= 0]
        source = active - offset
        delta = x[active] - x[source]
        near = delta <= lags
        active, source, delta = active[near], source[near], delta[near]
        step = np.ceil(delta).astype(np.int64) - 1
        real = step >= 0
        keys.append(target_index[active[real]] * q + step[real] * dim + dims[source[real]])
        offset += 1
    flat = np.concatenate(keys) if keys else np.zeros(0, dtype=np.int64)
    cells, counts = np.unique(flat, return_counts=True)
    rows = csr_matrix((counts.astype(np.float64), (cells // q, cells % q)), shape=(int(is_target.sum()), q))
    return rows, dims[is_target]


def brute_rows(x, dims, dim, lags, first_target):
    """Dense rows by a loop over every (target, earlier event) pair: step b when ``b < δ <= b + 1``."""
    targets = [k for k in range(x.size) if x[k] >= first_target]
    rows = np.zeros((len(targets), dim * lags))
    for r, k in enumerate(targets):
        for u in range(x.size):
            delta = x[k] - x[u]
            for b in range(lags):
                if b < delta <= b + 1:
                    rows[r, b * dim + dims[u]] += 1
    return rows, dims[targets]


def compiled_rows(x, dims, dim, lags, first_target):
    indptr, indices, counts, tdims = target_rows(x, dims, dim, lags, first_target)
    return csr_matrix((counts, indices, indptr), shape=(tdims.size, dim * lags)), indptr, indices, counts, tdims


def random_sequence(rng, n, dim, span, grid=None):
    """``n`` sorted times in ``[0, span)`` (on a grid of ``grid`` when given: ties and whole-step pairs), dims."""
    times = rng.uniform(0, span, n) if grid is None else rng.integers(0, int(span / grid), n) * grid
    order = np.argsort(times, kind="stable")
    return np.asarray(times, dtype=np.float64)[order], rng.integers(0, dim, n).astype(np.int64)[order]


CASES = [
    # (seed, events, d, B, span, grid, first target)
    (1, 300, 2, 4, 60.0, None, 4.0),
    (2, 500, 3, 6, 40.0, None, 6.0),
    (3, 400, 2, 5, 30.0, 0.5, 5.0),  # half-steps: ties, whole δ and δ = s exactly
    (4, 400, 4, 3, 20.0, 1.0, 3.0),  # whole steps only: every pair on an edge
    (5, 200, 1, 8, 10.0, 0.25, -np.inf),  # every event a target
    (6, 50, 2, 3, 500.0, None, 3.0),  # sparse: most events have no pair
]


@pytest.mark.parametrize("seed,n,dim,lags,span,grid,first", CASES)
def test_the_compiled_rows_equal_the_numpy_pass_and_the_brute_force(seed, n, dim, lags, span, grid, first):
    x, dims = random_sequence(np.random.default_rng(seed), n, dim, span, grid)
    ours, indptr, indices, counts, tdims = compiled_rows(x, dims, dim, lags, first)
    reference, ref_dims = numpy_target_cells(x, dims, dim, lags, first)
    assert np.array_equal(indptr, reference.indptr)
    assert np.array_equal(indices, reference.indices)
    assert np.array_equal(counts, reference.data)
    assert np.array_equal(tdims, ref_dims)
    brute, brute_dims = brute_rows(x, dims, dim, lags, first)
    assert np.array_equal(ours.toarray(), brute)
    assert np.array_equal(tdims, brute_dims)
    if grid is not None:
        assert np.any(np.diff(x) == 0) and ours.nnz > 0  # the case has ties and pairs


def test_simultaneous_events_are_no_pair_and_a_pair_s_apart_is_in_the_last_step():
    x = np.array([0.0, 0.0, 1.0, 3.0, 3.0])
    dims = np.array([0, 1, 0, 1, 0])
    rows, *_ = compiled_rows(x, dims, 2, 3, 0.0)
    dense = rows.toarray()
    assert dense[0].sum() == 0 and dense[1].sum() == 0  # the two at 0: each other's tie, no pair
    assert dense[2].tolist() == [1, 1, 0, 0, 0, 0]  # δ = 1 from both: step 0 (δ ∈ (0, 1])
    # t = 3: δ = 2 from 1.0 (step 1, dim 0), δ = 3 = s from both at 0 (step 2), the tie at 3 not counted
    assert dense[3].tolist() == [0, 0, 1, 0, 1, 1] and dense[4].tolist() == [0, 0, 1, 0, 1, 1]


@pytest.mark.parametrize("x", [np.zeros(0), np.array([0.5, 1.5])])
def test_a_sequence_with_no_target_has_no_row(x):
    indptr, indices, counts, tdims = target_rows(x, np.zeros(x.size, dtype=np.int64), 2, 4, 4.0)
    assert indptr.tolist() == [0] and indices.size == counts.size == tdims.size == 0


def test_the_compiled_curvature_is_the_dense_product():
    rng = np.random.default_rng(7)
    x, dims = random_sequence(rng, 400, 3, 50.0)
    X, *_ = compiled_rows(x, dims, 3, 5, 5.0)
    weights = rng.uniform(0.1, 3.0, X.shape[0])
    dense = np.hstack([X.toarray(), np.ones((X.shape[0], 1))])
    expected = dense.T @ (dense * weights[:, None] ** 2)
    got = weighted_gram(X.indptr, X.indices, X.data, X.shape[1], weights)
    assert np.allclose(got, expected, rtol=1e-12, atol=1e-12 * np.abs(expected).max())
    assert np.array_equal(got, got.T)


def test_numba_is_loaded_by_a_pass_not_by_importing_the_packages():
    code = ("import sys, dphawkes_core.estimators, dphawkes_core.estimators.mle, dphawkes_core.statistics.exact_times, "
            "dphawkes_app.estimate.references, dphawkes_cli.main; print('numba' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def brute_offset_cells(x, dims, dim, lags):
    """The same four arrays by a loop over every pair (integer counts; sums in any order)."""
    dd = dim * dim
    size = (lags + 2) * dd
    counts, weighted, whole, near = np.zeros(size), np.zeros(size), np.zeros(size), np.zeros(dd)
    for e in range(x.size):
        for later in range(e + 1, x.size):
            delta = x[later] - x[e]
            if delta > lags:
                continue
            cell = int(np.floor(delta)) * dd + dims[e] * dim + dims[later]
            counts[cell] += 1
            weighted[cell] += delta - np.floor(delta)
            whole[cell] += delta == np.floor(delta)
            if delta < 1:
                near[cell] += 1 - delta
    return counts, weighted, whole, near


@pytest.mark.parametrize("seed,n,dim,lags,span,grid,first", CASES)
@pytest.mark.parametrize("chunk", [1 << 20, 7])
def test_the_compiled_offset_cells_are_the_numpy_pass_bit_for_bit_and_the_brute_force(seed, n, dim, lags, span, grid,
                                                                                       first, chunk):
    x, dims = random_sequence(np.random.default_rng(seed), n, dim, span, grid)
    ours = offset_cells(x, dims * dim, dims, dim, lags, chunk)
    for got, expected in zip(ours, numpy_offset_cells(x, dims * dim, dims, dim, lags, chunk)):
        assert np.array_equal(got, expected)  # counts exactly; the weighted sums in the same order, so equal too
    counts, weighted, whole, near = brute_offset_cells(x, dims, dim, lags)
    assert np.array_equal(ours[0], counts) and np.array_equal(ours[2], whole)
    assert np.allclose(ours[1], weighted, rtol=1e-12, atol=1e-12 * max(weighted.max(), 1.0))
    assert np.allclose(ours[3], near, rtol=1e-12, atol=1e-12 * max(near.max(), 1.0))


def test_grouped_rows_are_each_groups_rows_in_their_order():
    x, dims = random_sequence(np.random.default_rng(11), 300, 3, 40.0, 0.5)
    X, indptr, indices, counts, tdims = compiled_rows(x, dims, 3, 4, 4.0)
    new_indptr, new_indices, new_counts, starts = group_rows(indptr, indices, counts, tdims, 3)
    grouped = csr_matrix((new_counts, new_indices, new_indptr), shape=X.shape)
    for i in range(3):
        mine = np.flatnonzero(tdims == i)
        assert starts[i + 1] - starts[i] == mine.size
        assert np.array_equal(grouped[starts[i]:starts[i + 1]].toarray(), X[mine].toarray())
