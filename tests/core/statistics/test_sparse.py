"""Sparse counts: statistics from the non-empty bins only, at bin counts no dense table could hold."""

from fractions import Fraction

import numpy as np
import pytest

from dphawkes_core.data.io import from_arrays
from dphawkes_core.errors import ConfigError
from dphawkes_core.estimators import FitConfig, fit, prepare_stats
from dphawkes_core.statistics.binning import EDGE_ULPS, MAX_DENSE_CELLS, SparseCounts, bin_events, bin_sparse
from dphawkes_core.statistics.moments import moment_pieces, sufficient_stats


def reference_bin(t: float, delta: float) -> int:
    """Exact rational ⌊(t + EDGE_ULPS·ulp(t)) / Δ⌋, independent of the package's binning."""
    return int((Fraction(t) + EDGE_ULPS * Fraction(float(np.spacing(t)))) // Fraction(delta))


def bursty_times(rng, centre: float, n_bursts: int, dims: int) -> list[np.ndarray]:
    """Bursts of a few events within a few bins of each other, far from both ends of the window."""
    starts = centre + rng.uniform(0, 1e6, n_bursts)
    times = [[] for _ in range(dims)]
    for s in starts:
        for _ in range(rng.integers(1, 6)):
            times[rng.integers(dims)].append(s + rng.uniform(0, 0.6))
    return [np.sort(np.array(t)) for t in times]


def brute_force_lagged(times, delta, p):
    """``C[τ][i, j] = Σ_m X[m, i] X[m-τ, j]`` as a sum over pairs of events (plain Python)."""
    d = len(times)
    events = sorted((reference_bin(float(t), delta), j) for j in range(d) for t in times[j])
    C = np.zeros((p + 1, d, d))
    for ka, ia in events:
        for kb, jb in events:
            if 0 <= ka - kb <= p:
                C[ka - kb, ia, jb] += 1
    return C, events


def test_statistics_at_a_billion_bins_equal_pair_sums_of_the_events():
    """T/Δ = 10⁹ bins (a dense table would need 16 GB): every product equals the brute-force pair sum."""
    rng = np.random.default_rng(7)
    delta, p, end = 0.1, 7, 1e8
    times = bursty_times(rng, 4e7, 150, 2)
    events = from_arrays(times, end_time=end)
    sparse = bin_sparse(events, delta)
    assert sparse.n_bins == 10**9 and sparse.n_bins * 2 > MAX_DENSE_CELLS
    s = sufficient_stats(sparse, p)
    C, binned_events = brute_force_lagged(times, delta, p)
    N = 10**9 - p
    assert s.n_rows == N
    # every event is far from both ends, so each block of ZZᵀ is a full-range product C[τ]
    for k in range(p):
        for tau in range(p - k):
            np.testing.assert_array_equal(np.rint(s.A[2 * k:2 * k + 2, 2 * (k + tau):2 * (k + tau) + 2] * N),
                                          C[tau])
        np.testing.assert_array_equal(np.rint(s.b[:, 2 * k:2 * k + 2] * N), C[k + 1])
    totals = np.bincount([j for _, j in binned_events], minlength=2)
    np.testing.assert_array_equal(np.rint(s.A[:-1, -1].reshape(p, 2) * N), np.tile(totals, (p, 1)))
    assert s.A[-1, -1] == 1.0
    assert s.yy * N == pytest.approx(np.trace(C[0]))


def test_sparse_counts_are_the_dense_counts():
    rng = np.random.default_rng(4)
    times = [np.sort(rng.uniform(0, 50, 400)), np.sort(np.append(rng.uniform(0, 50, 90), [47.26, 47.3]))]
    events = from_arrays(times, end_time=47.3)
    sparse = bin_sparse(events, 0.25, count_cap=2)
    dense = bin_events(events, 0.25, count_cap=2)
    np.testing.assert_array_equal(sparse.dense().counts[0], dense.counts[0])
    expected = np.zeros((sparse.lengths[0], 2), dtype=np.int64)
    for j, t in enumerate(times):
        for x in t:
            k = reference_bin(float(x), 0.25)
            if k < expected.shape[0]:
                expected[k, j] += 1
    clipped = np.minimum(expected, 2)
    np.testing.assert_array_equal(dense.counts[0], clipped)
    assert sparse.n_events == clipped.sum() and sparse.clipped_events == (expected - clipped).sum()
    assert sparse.dropped_events == events.n_events - expected.sum() > 0  # in the window, after the last bin
    assert sparse.n_nonzero == np.count_nonzero(clipped)
    round_trip = SparseCounts.from_binned(dense)
    for a, b in zip((round_trip.bins, round_trip.dims, round_trip.values), (sparse.bins, sparse.dims, sparse.values)):
        np.testing.assert_array_equal(a[0], b[0])


def test_dense_view_is_refused_but_the_fit_runs_where_a_dense_table_cannot():
    events = from_arrays([[1.0, 1.05, 3e6], [2.0, 2.2, 5e6]], end_time=1e7)
    with pytest.raises(ConfigError, match="dense"):
        bin_events(events, 1e-4)
    with pytest.raises(ConfigError, match="dense"):
        bin_sparse(events, 1e-4).dense()
    stats, info = prepare_stats(events, FitConfig(bin_size=1e-4, lags=3))
    assert info["n_bins"] == 10**11 and info["binned_events"] == 6
    # pgd-clip builds its per-bin design from the same sparse counts
    result, _ = fit(events, FitConfig(bin_size=1e-4, lags=3, method="pgd-clip", clip=1.0, bound=0.5, iters=3,
                                       calibration="formal", sigma2=0.0))
    assert np.all(np.isfinite(result.H))


def test_pieces_from_sparse_and_dense_counts_are_identical():
    rng = np.random.default_rng(12)
    times = [np.sort(rng.uniform(0, 300, 900)), np.sort(rng.uniform(0, 300, 500)), np.sort(rng.uniform(0, 9, 40))]
    events = from_arrays(times, end_time=300)
    a, b = moment_pieces(bin_sparse(events, 0.1, 3), 12), moment_pieces(bin_events(events, 0.1, 3), 12)
    for field in ("lagged", "totals", "heads", "tails", "n_bins"):
        np.testing.assert_array_equal(getattr(a, field), getattr(b, field))


def test_grouped_counts_and_the_heatmap_at_any_number_of_bins():
    from dphawkes_app.figures.data import bin_heatmap

    rng = np.random.default_rng(9)
    events = from_arrays([np.sort(rng.uniform(0, 100, 300)), np.sort(rng.uniform(0, 100, 200))], end_time=100)
    sparse, dense = bin_sparse(events, 0.3), bin_events(events, 0.3).counts[0]
    n = dense.shape[0]  # 333 bins: groups of 7 leave a shorter last group
    expected = np.array([dense[k:k + 7].sum(axis=0) for k in range(0, n, 7)])
    np.testing.assert_array_equal(sparse.grouped(0, 7), expected)
    huge = bin_sparse(from_arrays([[1.0, 2.0, 5e6], [3.0]], end_time=1e7), 0.01)  # 10⁹ bins
    z = np.asarray(bin_heatmap(huge, 0.01, ["a", "b"]).data[0].z)
    assert z.shape == (2, 1500) and z.sum() == 4
