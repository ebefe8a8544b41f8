"""Clipped-gradient DP-PGD: grouped per-bin rows against the dense design, clipping, sensitivity,
convergence to CLS without noise, reproducibility."""

import math

import numpy as np
import pytest

from dphawkes_core.errors import ConfigError
from dphawkes_core.estimators import FitConfig, binned_stats, clipped_gradient, fit_stats, solve_cls
from dphawkes_core.estimators.clipped import pgd_clip_sensitivity
from dphawkes_core.statistics.binning import BinnedCounts
from dphawkes_core.statistics.moments import design_matrix, sufficient_stats
from dphawkes_core.statistics.per_bin import SparseCounts, bin_design

D, P = 2, 3


def _binned(*series, cap=None):
    return BinnedCounts(tuple(np.asarray(x, dtype=np.int64) for x in series), 0.5, 0, 0, cap)


def _sparse_series(rng, n, rate=0.15):
    return rng.poisson(rate, size=(n, D))


def _dense_clipped_gradient(U, series, lags, clip):
    """Reference: loop over every row of every series, clip each rank-one term explicitly."""
    total, rows = np.zeros_like(U), 0
    for x in series:
        if x.shape[0] <= lags:
            continue
        zt, yt = design_matrix(x, lags)
        for z, y in zip(zt, yt):
            g = np.outer(U @ z - y, z)
            norm = np.linalg.norm(g)
            total += g * min(1.0, clip / norm) if norm > 0 else g
        rows += zt.shape[0]
    return total / rows


@pytest.fixture(scope="module")
def series():
    rng = np.random.default_rng(3)
    return (_sparse_series(rng, 400), _sparse_series(rng, 150, rate=0.6), _sparse_series(rng, 2))


def test_grouped_rows_reproduce_the_dense_design(series):
    design = bin_design(SparseCounts.from_binned(_binned(*series)), P)
    zi = np.hstack(
        [
            np.asarray(design.z_lagged.todense() if hasattr(design.z_lagged, "todense") else design.z_lagged),
            np.ones((design.distinct_rows, 1)),
        ]
    )
    w = design.weight
    ref_zz = sum(design_matrix(x, P)[0].T @ design_matrix(x, P)[0] for x in series if x.shape[0] > P)
    ref_yz = sum(design_matrix(x, P)[1].T @ design_matrix(x, P)[0] for x in series if x.shape[0] > P)
    zz = (zi * w[:, None]).T @ zi
    zz[-1, -1] += design.zero_rows
    assert np.array_equal(zz, ref_zz)
    assert np.array_equal((design.y * w[:, None]).T @ zi, ref_yz)
    assert design.n_rows == sum(x.shape[0] - P for x in series if x.shape[0] > P)
    assert design.distinct_rows < design.informative_rows < design.n_rows  # grouping happened


@pytest.mark.parametrize("storage", ["dense", "sparse merged", "sparse unmerged"])
@pytest.mark.parametrize("clip", [1e12, 1.0, 0.05])
def test_clipped_gradient_matches_dense_reference(series, clip, storage, monkeypatch):
    """Every storage of the grouped rows (dense, sparse, with or without merging) gives the same gradient."""
    if storage != "dense":
        monkeypatch.setattr("dphawkes_core.statistics.per_bin.MAX_DENSE_CELLS", 0)
    if storage == "sparse unmerged":
        monkeypatch.setattr("dphawkes_core.statistics.per_bin.MAX_DEDUP_CELLS", 0)
    design = bin_design(SparseCounts.from_binned(_binned(*series)), P)
    U = np.random.default_rng(0).normal(scale=0.3, size=(D, D * P + 1))
    got = clipped_gradient(U, design, clip)
    assert np.allclose(got, _dense_clipped_gradient(U, series, P, clip), atol=1e-12)
    if clip > 1e6:  # no clipping: the CLS gradient U A − b
        stats = sufficient_stats(_binned(*series), P)
        assert np.allclose(got, U @ stats.A - stats.b, atol=1e-12)


def test_gradient_sensitivity_bound_holds():
    """Random and adversarial neighbours, U anywhere (large U: every term clipped)."""
    rng = np.random.default_rng(7)
    clip, worst = 0.5, 0.0
    for trial in range(60):
        n = int(rng.integers(P + 2, 50))
        x = rng.poisson(float(rng.uniform(0.1, 3)), size=(n, D))
        if trial % 3 == 0:  # burst around the changed bin
            m = int(rng.integers(0, n))
            x[max(0, m - P):m + P + 1] += 4
        m, j = int(rng.integers(0, n)), int(rng.integers(0, D))
        x2 = x.copy()
        x2[m, j] += 1
        scale = [0.01, 1.0, 100.0][trial % 3]
        U = rng.normal(scale=scale, size=(D, D * P + 1))
        g1 = clipped_gradient(U, bin_design(SparseCounts.from_binned(_binned(x)), P), clip)
        g2 = clipped_gradient(U, bin_design(SparseCounts.from_binned(_binned(x2)), P), clip)
        bound = pgd_clip_sensitivity(P, n - P, clip)
        change = np.linalg.norm(g1 - g2)
        assert change <= bound * (1 + 1e-12)
        worst = max(worst, change / bound)
    print(f"worst measured/bound ratio: {worst:.3f}")
    assert worst > 0.2


def test_no_noise_converges_to_cls(series):
    stats = binned_stats(_binned(*series), P)
    theta, _ = solve_cls(stats)
    step = 1.0 / np.linalg.eigvalsh(stats.A)[-1]
    config = FitConfig(method="pgd-clip", bin_size=0.5, lags=P, bound=1e6, clip=1e9, iters=4000,
                       calibration="formal", sigma2=0.0, step="constant", step_size=step)
    result = fit_stats(stats, config)
    assert np.allclose(result.H, theta / 0.5, atol=1e-6)
    assert result.privacy.epsilon_by_calibration["formal"] == math.inf


def test_calibration_and_reproducibility(series):
    stats = binned_stats(_binned(*series), P)
    config = FitConfig(method="pgd-clip", bin_size=0.5, lags=P, bound=1.0, clip=0.5, iters=50,
                       calibration="formal", epsilon=1.0, seed=1)
    a, b = fit_stats(stats, config), fit_stats(stats, config)
    c = fit_stats(stats, FitConfig(**{**vars(config), "seed": 2}))
    assert np.array_equal(a.H, b.H) and not np.allclose(a.H, c.H)
    assert a.privacy.sensitivity == pytest.approx(2 * (P + 1) * 0.5 / stats.n_rows)
    assert a.privacy.iters == 50 and a.privacy.epsilon_by_calibration["formal"] == pytest.approx(1.0, rel=1e-3)
    assert np.linalg.norm(a.H * 0.5) <= 1.0 * 0.5 + 1e-12  # projected on ||U||_F <= ΔB


def test_needs_per_bin_counts_and_clip(series):
    plain = sufficient_stats(_binned(*series), P)
    config = FitConfig(method="pgd-clip", bin_size=0.5, lags=P, bound=1.0, clip=0.5, iters=5,
                       calibration="formal", epsilon=1.0)
    with pytest.raises(ConfigError, match="per-bin"):
        fit_stats(plain, config)
    with pytest.raises(ConfigError, match="clip"):
        FitConfig(method="pgd-clip", bin_size=0.5, lags=P, bound=1.0, calibration="formal", epsilon=1.0)
