"""The NumPy pair passes and the choice between them and the compiled ones (``pair_passes``): the same counts either
way, cell for cell, and the same fits.

References: the compiled passes (``compiled_passes``, themselves checked against a brute force in
``test_compiled_passes.py``) and a brute force over every pair written here. The adversarial data of that module
(ties, whole-step pairs, pairs exactly s apart, every event a target, sparse data) is reused."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from scipy.sparse import csr_matrix
from test_compiled_passes import CASES, brute_offset_cells, brute_rows, random_sequence

from dphawkes_core.data.events import Events, EventSequence
from dphawkes_core.estimators import FitConfig, fit
from dphawkes_core.statistics import pair_passes
from dphawkes_core.statistics.compiled_passes import target_rows
from dphawkes_core.statistics.pair_passes import (
    CountRows,
    count_dtype,
    dense_layout,
    dense_target_rows,
    largest_step_count,
    numpy_offset_cells,
    offset_cells,
    pair_count,
    target_matrices,
    weighted_gram,
)


@pytest.mark.parametrize("seed,n,dim,lags,span,grid,first", CASES)
def test_dense_rows_are_the_compiled_rows_and_the_brute_force(seed, n, dim, lags, span, grid, first):
    x, dims = random_sequence(np.random.default_rng(seed), n, dim, span, grid)
    rows, tdims = dense_target_rows(x, dims, dim, lags, first)
    indptr, indices, counts, compiled_dims = target_rows(x, dims, dim, lags, first)
    compiled = csr_matrix((counts, indices, indptr), shape=(compiled_dims.size, dim * lags)).toarray()
    assert np.array_equal(rows, compiled) and np.array_equal(tdims, compiled_dims)
    brute, brute_dims = brute_rows(x, dims, dim, lags, first)
    assert np.array_equal(rows, brute) and np.array_equal(tdims, brute_dims)


@pytest.mark.parametrize("seed,n,dim,lags,span,grid,first", CASES)
def test_rows_counted_on_ctls_walk_are_the_brute_force_rows_and_leave_its_cells_as_they_were(
        seed, n, dim, lags, span, grid, first):
    """One walk for both (mle's statistics): the rows filled on ctls's offset walk equal the brute force's (ties, whole
    steps, pairs exactly s apart, targets from ``first`` on), and the cells are the walk's without rows, bit for
    bit."""
    x, dims = random_sequence(np.random.default_rng(seed), n, dim, span, grid)
    layout = dense_layout([(x, dims)], dim, lags, first)
    if layout is None:
        pytest.skip("the compiled rows are predicted faster here")
    cells = numpy_offset_cells(x, dims * dim, dims, dim, lags, 7, layout.place(0))  # small chunks: their seams too
    brute, brute_dims = brute_rows(x, dims, dim, lags, first)
    assert np.array_equal(np.concatenate([X.toarray() for X in layout.matrices()]),
                          brute[np.argsort(brute_dims, kind="stable")])
    for got, expected in zip(cells, numpy_offset_cells(x, dims * dim, dims, dim, lags, 7)):
        assert np.array_equal(got, expected)


def test_rows_asked_of_the_compiled_cells_are_filled_too(monkeypatch):
    """Where ctls's cells are compiled (a sequence past COMPILED_MIN_PAIRS), the rows are counted by their own walk:
    the same rows."""
    x, dims = random_sequence(np.random.default_rng(4), 400, 2, 60.0)
    rows = {}
    for threshold in (0, 10**12):
        monkeypatch.setattr(pair_passes, "COMPILED_MIN_PAIRS", threshold)
        layout = dense_layout([(x, dims)], 2, 5, 5.0)
        offset_cells(x, dims * 2, dims, 2, 5, 1 << 20, layout.place(0))
        rows[threshold] = layout.counts.copy()
    assert rows[0].any() and np.array_equal(rows[0], rows[10**12])


@pytest.mark.parametrize("seed,n,dim,lags,span,grid,first", CASES)
def test_the_pair_count_is_the_brute_force_count(seed, n, dim, lags, span, grid, first):
    x, _ = random_sequence(np.random.default_rng(seed), n, dim, span, grid)
    brute = sum(int(np.count_nonzero(x[e + 1:] - x[e] <= lags)) for e in range(x.size))
    assert pair_count(x, lags) == brute


@pytest.mark.parametrize("threshold", [0, 10**12])
def test_ctls_cells_are_the_same_bit_for_bit_whichever_pass_runs(threshold, monkeypatch):
    """Forced to the compiled pass (threshold 0) and to NumPy (a threshold no data reaches): the same four arrays,
    bit for bit, and the brute force's counts."""
    x, dims = random_sequence(np.random.default_rng(21), 600, 3, 80.0, 0.25)
    monkeypatch.setattr(pair_passes, "COMPILED_MIN_PAIRS", threshold)
    ours = offset_cells(x, dims * 3, dims, 3, 5, 1 << 20)
    for got, expected in zip(ours, numpy_offset_cells(x, dims * 3, dims, 3, 5, 1 << 20)):
        assert np.array_equal(got, expected)
    counts, _, whole, _ = brute_offset_cells(x, dims, 3, 5)
    assert np.array_equal(ours[0], counts) and np.array_equal(ours[2], whole)


def test_dense_and_sparse_matrices_hold_the_same_rows(monkeypatch):
    rng = np.random.default_rng(5)
    sequences = [random_sequence(rng, n, 3, span) for n, span in ((300, 40.0), (5, 30.0), (200, 25.0))]
    dense = target_matrices(sequences, 3, 4, 4.0)
    monkeypatch.setattr(pair_passes, "SECONDS_TO_LOAD_COMPILED", -1e9)
    sparse = target_matrices(sequences, 3, 4, 4.0)
    assert all(isinstance(X, CountRows) for X in dense) and not any(isinstance(X, CountRows) for X in sparse)
    assert all(X.counts.dtype == np.uint8 for X in dense)
    for D, S in zip(dense, sparse):
        assert np.array_equal(D.toarray(), S.toarray())
    assert sum(X.shape[0] for X in dense) == sum(int(np.count_nonzero(x >= 4.0)) for x, _ in sequences)


def test_the_dense_curvature_is_the_compiled_one_at_its_own_scale():
    x, dims = random_sequence(np.random.default_rng(8), 500, 2, 60.0)
    rows, _ = dense_target_rows(x, dims, 2, 6, 6.0)
    weights = np.random.default_rng(9).uniform(0.1, 3.0, rows.shape[0])
    dense, sparse = weighted_gram(rows, weights), weighted_gram(csr_matrix(rows), weights)
    assert np.allclose(dense, sparse, rtol=1e-12, atol=1e-12 * np.abs(sparse).max())
    assert np.array_equal(dense, dense.T)


@pytest.mark.parametrize("seed,n,dim,lags,span,grid,first", CASES)
def test_no_cell_exceeds_the_bound_its_type_is_chosen_by(seed, n, dim, lags, span, grid, first):
    x, dims = random_sequence(np.random.default_rng(seed), n, dim, span, grid)
    brute, _ = brute_rows(x, dims, dim, lags, first)
    assert brute.max(initial=0) <= largest_step_count(x)


def test_counts_past_a_byte_take_two_bytes_and_stay_exact():
    """A burst of 300 simultaneous events, then two targets: cells of 300 and 301 (a byte holds 255)."""
    x = np.concatenate([np.zeros(300), [0.5, 3.0]])
    dims = np.zeros(x.size, dtype=np.int64)
    assert count_dtype(largest_step_count(x)) == np.uint16
    rows = target_matrices([(x, dims)], 1, 4, 0.25)[0]
    assert rows.counts.dtype == np.uint16
    brute, _ = brute_rows(x, dims, 1, 4, 0.25)
    assert np.array_equal(rows.toarray(), brute) and brute.max() == 301
    assert count_dtype(70_000) == np.float64


def test_count_rows_multiply_as_their_float_rows():
    """``X @ θ`` and ``Xᵀ v`` of the counts equal the float rows' to round-off (float64 both, chunks of rows); the
    curvature (float32 products of non-negative terms, summed in float64) within a few float32 roundings of each
    entry; more rows than one chunk."""
    rng = np.random.default_rng(11)
    x, dims = random_sequence(rng, 12_000, 2, 4_000.0)
    rows = target_matrices([(x, dims)], 2, 6, 6.0)[0]
    dense = rows.toarray()
    assert dense.shape[0] > pair_passes.CURVATURE_CHUNK
    theta, v = rng.uniform(0.0, 1.0, dense.shape[1]), rng.uniform(0.1, 3.0, dense.shape[0])
    assert np.allclose(rows @ theta, dense @ theta, rtol=1e-14, atol=0)
    assert np.allclose(rows.T @ v, dense.T @ v, rtol=1e-13, atol=0)
    exact = weighted_gram(dense, v)
    assert np.all(np.abs(weighted_gram(rows, v) - exact) <= 1e-5 * exact)
    assert np.array_equal(weighted_gram(rows, v), weighted_gram(rows, v).T)


def _two_sequences():
    rng = np.random.default_rng(3)
    sequences = []
    for end in (150.0, 90.0):
        times = tuple(np.sort(rng.uniform(0, end, 200)) for _ in range(2))
        sequences.append(EventSequence(times=times, end_time=end))
    return Events(sequences=tuple(sequences), names=("a", "b"))


def test_the_likelihood_fit_is_the_same_on_dense_and_sparse_rows(monkeypatch):
    """mle on the dense rows (BLAS curvature) and on the compiled sparse rows: the same maximum, at the fit's own
    scale (the curvature's sums in another order move the Newton steps by round-off only)."""
    events, config = _two_sequences(), FitConfig(method="mle", bin_size=0.5, lags=6)
    dense, _ = fit(events, config)
    monkeypatch.setattr(pair_passes, "SECONDS_TO_LOAD_COMPILED", -1e9)
    sparse, _ = fit(events, config)
    scale = np.abs(sparse.H).max()
    assert np.allclose(dense.H, sparse.H, rtol=0, atol=1e-7 * scale)
    assert dense.info["cells"] == sparse.info["cells"] and dense.info["targets"] == sparse.info["targets"]
    assert dense.info["log_likelihood"] == pytest.approx(sparse.info["log_likelihood"], rel=1e-12)


def test_a_small_likelihood_fit_loads_no_compiled_pass_and_a_large_one_does():
    """The structural boundary: below the thresholds nothing imports numba (nor scipy.sparse); the control, with the
    compiled passes' load counted as a gain (so that they always pay), does."""
    code = ("import sys\nimport numpy as np\nfrom dphawkes_core.statistics import pair_passes\n"
            "from dphawkes_core.data.events import EventSequence, Events\n"
            "from dphawkes_core.estimators import FitConfig, fit\nrng = np.random.default_rng(1)\n"
            "times = tuple(np.sort(rng.uniform(0, 300, 200)) for _ in range(2))\n"
            "events = Events(sequences=(EventSequence(times=times, end_time=300.0),), names=('a', 'b'))\n"
            "pair_passes.SECONDS_TO_LOAD_COMPILED = float(sys.argv[1])\n"
            "fit(events, FitConfig(method='mle', bin_size=0.5, lags=4))\n"
            "print('numba' in sys.modules, 'scipy.sparse' in sys.modules)")
    loaded = {}
    for threshold in ("2.0", "-1e9"):
        out = subprocess.run([sys.executable, "-c", code, threshold], capture_output=True, text=True, timeout=120)
        assert out.returncode == 0, out.stderr[-2000:]
        loaded[threshold] = out.stdout.split()
    assert loaded["2.0"] == ["False", "False"]
    assert loaded["-1e9"] == ["True", "True"]
