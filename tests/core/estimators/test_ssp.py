"""DP-SSP: exactness at σ = 0, both releases' sensitivity bounds, post-processing, calibration and
reproducibility."""

import math
from functools import partial

import numpy as np
import pytest
import scipy.optimize
from dp_accounting.gaussian_mechanism import get_sigma_gaussian

from dphawkes_core.errors import ConfigError
from dphawkes_core.estimators import FitConfig, binned_stats, fit_stats, noisy_statistics, run_ssp, solvers
from dphawkes_core.estimators.gradient import formal_bounds
from dphawkes_core.estimators.releases import ssp_sensitivity
from dphawkes_core.estimators.solvers import roughness_matrix, solve_nonnegative
from dphawkes_core.estimators.ssp import (
    release_pieces,
    shrink_edges,
    ssp_lagged_sensitivity,
    ssp_ridge,
)
from dphawkes_core.statistics.binning import BinnedCounts
from dphawkes_core.statistics.moments import design_matrix, moment_pieces
from tests.configs import fit_config
from tests.references import zcdp_epsilon_reference

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


_config = partial(fit_config, method="ssp", bin_size=0.5, lags=P, count_cap=C)


@pytest.mark.parametrize("release", ["lagged", "full"])
def test_sigma_zero_is_cls_exactly(stats, release):
    cls = fit_stats(stats, FitConfig(bin_size=0.5, lags=P, count_cap=C))
    for ridge in (None, 0.0):
        ssp = fit_stats(stats, _config(sigma2=0.0, ridge=ridge, ssp_release=release, ssp_nonnegative=False,
                                       ssp_smoothing=0.0))
        assert np.array_equal(ssp.H, cls.H)
        assert ssp.privacy.epsilon_by_calibration["formal"] == math.inf


def test_release_is_symmetric_and_keeps_public_intercept(stats):
    A_hat, b_hat = noisy_statistics(stats, 0.3, np.random.default_rng(1))
    assert np.array_equal(A_hat, A_hat.T)
    assert A_hat[-1, -1] == stats.A[-1, -1] == 1.0
    noise = A_hat - stats.A
    iu = np.triu_indices(stats.n_params)
    entries = noise[iu][:-1]
    assert abs(entries.std() - 0.3) < 0.05 and abs((b_hat - stats.b).std() - 0.3) < 0.1


@pytest.mark.parametrize("release, sensitivity, seed, discrete", [
    ("lagged", ssp_lagged_sensitivity, None, True),  # a release of integers: OpenDP's discrete Gaussian, in zCDP
    ("lagged", ssp_lagged_sensitivity, 0, False),  # seeded (an experiment): numpy's continuous noise
    ("full", ssp_sensitivity, None, False),
])
def test_one_release_calibration_matches_analytic_gaussian_or_zcdp(stats, release, sensitivity, seed, discrete):
    result = fit_stats(stats, _config(epsilon=1.0, dp_delta=1e-5, ssp_release=release, seed=seed))
    sens = sensitivity(D, P, stats.n_rows, C)
    assert result.privacy.sensitivity == pytest.approx(sens)
    sigma = math.sqrt(result.privacy.sigma2)
    assert result.privacy.discrete is discrete
    if discrete:  # ρ = S²/(2σ²) of the discrete Gaussian converts to exactly the target ε
        assert zcdp_epsilon_reference(sens**2 / (2 * sigma**2), 1e-5) == pytest.approx(1.0, rel=1e-5)
        assert sigma > sens * get_sigma_gaussian(1.0, 1e-5)  # zCDP's conversion needs more noise than the GDP one
    else:
        assert sigma == pytest.approx(sens * get_sigma_gaussian(1.0, 1e-5), rel=1e-9)
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
    options = dict(release="full", nonnegative=False)
    theta, info = run_ssp(stats, sigma**2, lam, "ridge", np.random.default_rng(2), **options)
    A_hat, b_hat = noisy_statistics(stats, sigma, np.random.default_rng(2))
    assert np.allclose(theta @ (A_hat + lam * np.eye(stats.n_params)), b_hat, atol=1e-9)
    theta_psd, _ = run_ssp(stats, sigma**2, lam, "psd", np.random.default_rng(2), **options)
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


def _lagged_release(x, lags=P, d=D):
    """The lagged release's vector, from the pieces of one series: C[1..p], the upper triangle of C[0],
    totals, heads and tails."""
    pieces = moment_pieces(_binned(x), lags)
    iu = np.triu_indices(d)
    return np.concatenate([pieces.lagged[1:].ravel(), pieces.lagged[0][iu], pieces.totals,
                           pieces.heads.ravel(), pieces.tails.ravel()])


def _adversarial_pairs(n, d, lags, cap):
    """Every count at the cap, one count lowered by one at every bin (edges included) and dimension."""
    full = np.full((n, d), cap)
    for m in range(n):
        for j in range(d):
            x2 = full.copy()
            x2[m, j] -= 1
            yield full, x2


@pytest.mark.parametrize("d, lags, cap, n", [(1, 3, 1, 8), (2, 4, 3, 13), (3, 2, 5, 12), (2, 6, 2, 9),
                                             (4, 3, 4, 7)])
def test_lagged_release_sensitivity_holds_and_is_attained(d, lags, cap, n):
    """Adversarial neighbours (all counts at C, the change at every bin and dimension, sequences
    shorter than 2p included) and random ones: the measured change never exceeds the bound, and the
    worst one attains it when the sequence has a middle bin (every count at C; n >= 2p+1)."""
    rng = np.random.default_rng(d * 100 + lags)
    pairs = list(_adversarial_pairs(n, d, lags, cap))
    for _ in range(30):
        x = np.minimum(rng.poisson(rng.uniform(0.2, 3), size=(int(rng.integers(lags + 1, 3 * lags + 4)), d)), cap)
        m, j = int(rng.integers(0, x.shape[0])), int(rng.integers(0, d))
        x2 = x.copy()
        x2[m, j] = x[m, j] - 1 if x[m, j] > 0 else 1
        pairs.append((x, x2))
    worst = 0.0
    for x, x2 in pairs:
        n_rows = x.shape[0] - lags
        change = np.linalg.norm(_lagged_release(x, lags, d) - _lagged_release(x2, lags, d)) / n_rows
        bound = ssp_lagged_sensitivity(d, lags, n_rows, cap)
        assert change <= bound * (1 + 1e-12)
        worst = max(worst, change / bound)
    if n >= 2 * lags + 1:
        assert worst == pytest.approx(1.0, rel=1e-9)
    else:  # no middle bin: every change loses some C[τ] terms at an edge
        assert 0.8 < worst < 1.0


def test_lagged_release_is_about_sqrt_p_tighter():
    for d, lags, cap in ((2, 8, 5), (4, 16, 12), (3, 16, 4)):
        ratio = ssp_sensitivity(d, lags, 1000, cap) / ssp_lagged_sensitivity(d, lags, 1000, cap)
        assert 0.7 * math.sqrt(lags) < ratio < 1.3 * math.sqrt(lags)


def test_released_pieces_noise_and_symmetry(stats):
    sigma = 0.7
    noisy = release_pieces(stats.pieces, sigma, np.random.default_rng(3))
    assert np.array_equal(noisy.lagged[0], noisy.lagged[0].T)
    assert np.array_equal(noisy.n_bins, stats.pieces.n_bins)
    noise = np.concatenate([(noisy.lagged[1:] - stats.pieces.lagged[1:]).ravel(),
                            (noisy.heads - stats.pieces.heads).ravel(), (noisy.tails - stats.pieces.tails).ravel()])
    assert abs(noise.std() - sigma) < 0.1
    assert release_pieces(stats.pieces, 0.0, np.random.default_rng(3)) is stats.pieces


def test_shrunk_edges_stay_in_range_and_move_toward_the_mean(stats):
    pieces = stats.pieces
    assert shrink_edges(pieces, 0.0) is pieces
    noisy = release_pieces(pieces, 50.0, np.random.default_rng(4))
    shrunk = shrink_edges(noisy, 50.0)
    assert shrunk.heads.min() >= 0 and shrunk.heads.max() <= C and shrunk.tails.max() <= C
    # heavy noise: the edge rows become (nearly) the released mean count
    mean = noisy.totals / pieces.n_bins.sum()
    assert np.allclose(shrunk.heads, np.clip(mean, 0, C), atol=0.05)


def test_nonnegative_solution_satisfies_kkt(stats):
    """θ >= 0 and the KKT conditions of min ½θÃθᵀ − b̂θᵀ: gradient >= 0 where θ = 0, = 0 where θ > 0."""
    A_hat, b_hat = noisy_statistics(stats, 0.05, np.random.default_rng(6))
    A_tilde = A_hat + 0.3 * np.eye(stats.n_params)
    theta = solve_nonnegative(A_tilde, b_hat)
    grad = theta @ A_tilde - b_hat
    assert theta.min() >= 0
    assert np.all(grad[theta == 0] >= -1e-8)
    assert np.allclose(grad[theta > 0], 0, atol=1e-8)
    assert (theta == 0).any()  # the noise pushed some entries below zero: the constraint is active


def test_nonnegative_solvers_agree_and_the_iteration_limit_falls_back(stats, monkeypatch):
    """Lawson–Hanson (the fast path) and BVLS (its fallback at the iteration limit) give the same θ."""
    A_hat, b_hat = noisy_statistics(stats, 0.05, np.random.default_rng(6))
    A_tilde = A_hat + 0.3 * np.eye(stats.n_params)
    fast = solve_nonnegative(A_tilde, b_hat)
    calls = []

    def at_its_limit(*args, maxiter):
        calls.append(maxiter)
        raise RuntimeError("Maximum number of iterations reached.")

    monkeypatch.setattr(scipy.optimize, "nnls", at_its_limit)
    fallback = solve_nonnegative(A_tilde, b_hat)
    assert calls == [solvers.NNLS_ITERATIONS_PER_PARAMETER * stats.n_params] * stats.dim
    assert (fast == 0).any() and np.allclose(fast, fallback, atol=1e-10)


def test_roughness_penalty_is_second_differences():
    d, lags = 2, 6
    R = roughness_matrix(d, lags)
    theta = np.zeros((d, d * lags + 1))
    k = np.arange(lags)
    theta[0, 1::d][:lags] = 3 * k - 1  # linear in the lag: no roughness, whatever the intercept
    theta[0, -1] = 5.0
    assert np.allclose(theta @ R @ theta.T, 0)
    theta[1, 0:d * lags:d] = k**2  # second difference 2 at each of the p-2 interior lags
    assert (theta @ R @ theta.T)[1, 1] == pytest.approx(4 * (lags - 2))


def test_default_ridge_rule_uses_public_numbers_only():
    assert ssp_ridge(0.1, 49, "lagged") == pytest.approx(4 * 0.1 * 7)
    assert ssp_ridge(0.1, 49, "full") == pytest.approx(8 * 0.1 * 7)


def test_default_fit_is_nonnegative_and_smooth(stats):
    result = fit_stats(stats, _config(epsilon=1.0, seed=1))
    assert result.H.min() >= 0
    assert result.info["ssp_release"] == "lagged" and result.info["nonnegative"] and result.info["smoothing"] > 0
