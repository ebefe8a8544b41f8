"""DP-SSP: exactness at σ = 0, the release's sensitivity bound, calibration and reproducibility."""

import math

import numpy as np
import pytest
from dp_accounting.gaussian_mechanism import get_sigma_gaussian

from dphawkes_core.binning import BinnedCounts
from dphawkes_core.errors import ConfigError
from dphawkes_core.estimators import FitConfig, binned_stats, fit_stats, release_statistics, run_ssp
from dphawkes_core.privacy import formal_bounds, ssp_sensitivity
from dphawkes_core.stats import design_matrix

D, P, C = 2, 4, 3


def _binned(*series, cap=C):
    return BinnedCounts(tuple(np.asarray(x, dtype=np.int64) for x in series), 0.5, 0, 0, cap)


def _random_series(rng, n=60, d=D, rate=0.6, cap=C):
    return np.minimum(rng.poisson(rate, size=(n, d)), cap)


def _released(stats):
    """The released vector: upper triangle of A without the public A[-1,-1], and b."""
    iu = np.triu_indices(stats.n_params)
    upper = stats.A[iu][:-1]  # the last upper-triangle entry is A[-1, -1]
    return np.concatenate([upper, stats.b.ravel()])


def _dense_stats(x, lags):
    zt, yt = design_matrix(x, lags)
    return zt.T @ zt / zt.shape[0], yt.T @ zt / zt.shape[0]


@pytest.fixture(scope="module")
def stats():
    rng = np.random.default_rng(5)
    return binned_stats(_binned(_random_series(rng, 300), _random_series(rng, 120)), P)


def _config(**kw):
    base = dict(method="ssp", bin_size=0.5, lags=P, count_cap=C, calibration="formal")
    return FitConfig(**{**base, **kw})


def test_sigma_zero_is_cls_exactly(stats):
    cls = fit_stats(stats, FitConfig(bin_size=0.5, lags=P, count_cap=C))
    for ridge in (None, 0.0):
        ssp = fit_stats(stats, _config(sigma2=0.0, ridge=ridge))
        assert np.array_equal(ssp.H, cls.H)
        assert ssp.privacy.epsilon_by_calibration["formal"] == math.inf


def test_release_is_symmetric_and_keeps_public_intercept(stats):
    A_hat, b_hat = release_statistics(stats, 0.3, np.random.default_rng(1))
    assert np.array_equal(A_hat, A_hat.T)
    assert A_hat[-1, -1] == stats.A[-1, -1] == 1.0
    noise = A_hat - stats.A
    iu = np.triu_indices(stats.n_params)
    entries = noise[iu][:-1]
    assert abs(entries.std() - 0.3) < 0.05 and abs((b_hat - stats.b).std() - 0.3) < 0.1


def test_one_release_calibration_matches_analytic_gaussian(stats):
    result = fit_stats(stats, _config(epsilon=1.0, dp_delta=1e-5))
    sens = ssp_sensitivity(D, P, stats.n_rows, C)
    assert result.privacy.sensitivity == pytest.approx(sens)
    assert math.sqrt(result.privacy.sigma2) == pytest.approx(sens * get_sigma_gaussian(1.0, 1e-5), rel=1e-9)
    assert result.privacy.iters == 1 and result.privacy.formal
    assert result.privacy.epsilon_by_calibration["paper"] is None
    assert result.privacy.epsilon_by_calibration["formal"] == pytest.approx(1.0, rel=1e-3)


def test_formal_only_and_needs_cap(stats):
    with pytest.raises(ConfigError, match="formal"):
        FitConfig(method="ssp", bin_size=0.5, lags=P, epsilon=1.0)
    with pytest.raises(ConfigError, match="count cap"):
        fit_stats(stats, _config(count_cap=None, epsilon=1.0))


def test_reproducible_by_seed(stats):
    a = fit_stats(stats, _config(epsilon=1.0, seed=3)).H
    b = fit_stats(stats, _config(epsilon=1.0, seed=3)).H
    c = fit_stats(stats, _config(epsilon=1.0, seed=4)).H
    assert np.array_equal(a, b) and not np.allclose(a, c)


def test_stabilisers(stats):
    """ridge: θ(Â + λI) = b̂; psd: Ã has no eigenvalue below λ (checked against the released Â)."""
    sigma, lam = 0.05, 0.2
    theta, info = run_ssp(stats, sigma**2, lam, "ridge", np.random.default_rng(2))
    A_hat, b_hat = release_statistics(stats, sigma, np.random.default_rng(2))
    assert np.allclose(theta @ (A_hat + lam * np.eye(stats.n_params)), b_hat, atol=1e-9)
    theta_psd, _ = run_ssp(stats, sigma**2, lam, "psd", np.random.default_rng(2))
    w, V = np.linalg.eigh(A_hat)
    assert np.allclose(theta_psd @ ((V * np.maximum(w, lam)) @ V.T), b_hat, atol=1e-9)
    assert info["ridge"] == lam


def _neighbour_pairs(rng):
    """(x, x') pairs differing by one count: random ones and adversarial ones (all counts at the cap,
    bursts next to the change, first / last bin)."""
    pairs = []
    for _ in range(40):
        x = _random_series(rng, n=int(rng.integers(P + 2, 40)), rate=float(rng.uniform(0.2, 3)))
        m, j = int(rng.integers(0, x.shape[0])), int(rng.integers(0, D))
        x2 = x.copy()
        x2[m, j] = x[m, j] - 1 if x[m, j] > 0 else 1
        pairs.append((x, x2))
    full = np.full((3 * P + 1, D), C)
    for m in (0, P, 2 * P - 1, full.shape[0] - 1, P + 1):
        x2 = full.copy()
        x2[m, 0] -= 1
        pairs.append((full, x2))
    return pairs


def test_release_sensitivity_bound_holds_and_is_not_loose():
    rng = np.random.default_rng(11)
    worst = 0.0
    for x, x2 in _neighbour_pairs(rng):
        A, b = _dense_stats(x, P)
        A2, b2 = _dense_stats(x2, P)
        n_rows = x.shape[0] - P
        iu = np.triu_indices(A.shape[0])
        change = math.sqrt(np.sum((A - A2)[iu][:-1] ** 2) + np.sum((b - b2) ** 2))
        bound = ssp_sensitivity(D, P, n_rows, C)
        assert change <= bound * (1 + 1e-12)
        worst = max(worst, change / bound)
        # never looser than the generic pair bound sqrt(D_A² + D_b²)
        assert bound <= formal_bounds(D, P, n_rows, C).statistics_sensitivity()
    print(f"worst measured/bound ratio: {worst:.3f}")
    assert worst > 0.5  # the adversarial all-at-cap neighbours come close to the bound
