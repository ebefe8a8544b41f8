"""Algorithm 1 (DP-PGD) with Theorem 2's step computed here from the paper's formula, not from the package.

The paper (dp-hawkes-paper.tex, proof of Theorem 2, and docs/privacy.md "Step sizes and constraints"):
``η_k = ΔB / sqrt(k (L₂² + d(dp+1)σ²))`` with, under the paper calibrations, ``L₂ = 2ΔBR`` (appendix: "under
Assumption 1, L₂ <= 2(ΔB)R") and ``R = max(||ZZᵀ/N||²_F, ||YZᵀ/N||²_F)`` (Assumption 1); under the formal
calibration the public bound ``L₂ = (β M_A + M_b) M_A`` with ``β = ΔB``, ``M_A = dpC² + 1``,
``M_b = √d·C·sqrt(dpC² + 1)``. (The printed statement of Theorem 2 writes ``(4ΔB)²R²`` under the root, with
unbalanced parentheses; its proof — and this project — use ``L₂ = 2ΔBR``.)

A, b and R are computed here from the raw count array with plain loops; the loop is Algorithm 1 written out
(``U_0 = 0``, ``U_{k+1} = Proj_{||U||_F <= ΔB}(U_k − η_k(∇L(U_k) + ζ_k))``, ``∇L(U) = (UA − b)A``) drawing
the noise like the package (one ``standard_normal((d, dp+1))`` per step from ``default_rng(seed)``), or
with σ = 0. It must reproduce ``fit``'s estimate and its reported first step; ``L₂ = 4ΔBR`` fails.
"""

import math

import numpy as np
import pytest
from dp_accounting.gaussian_mechanism import get_sigma_gaussian

from dphawkes_core.data.io import Events, EventSequence
from dphawkes_core.estimators import FitConfig, binned_stats, fit, fit_stats
from dphawkes_core.statistics.binning import BinnedCounts

DELTA_T, P, B, K = 0.5, 3, 0.6, 40


def raw_counts(seed=1, n=150, d=2, rate=0.7, cap=None):
    x = np.random.default_rng(seed).poisson(rate, (n, d))
    return np.minimum(x, cap) if cap is not None else x


def reference_stats(x, p):
    """A = ZZᵀ/N, b = YZᵀ/N from the paper's z_t = [X[t−1], …, X[t−p], 1], y_t = X[t] (plain loops)."""
    n, d = x.shape
    q = d * p + 1
    A = np.zeros((q, q))
    b = np.zeros((d, q))
    for t in range(p, n):
        z = np.array([float(x[t - lag, j]) for lag in range(1, p + 1) for j in range(d)] + [1.0])
        A += np.outer(z, z)
        b += np.outer(x[t].astype(float), z)
    N = n - p
    return A / N, b / N


def paper_step_scale(A, b, d, p, sigma2, bound=B, bin_size=DELTA_T):
    """``c`` in ``η_k = c/√k``: ``ΔB / sqrt(L₂² + d(dp+1)σ²)``, ``L₂ = 2ΔBR``."""
    R = max(float(np.sum(A**2)), float(np.sum(b**2)))
    beta = bin_size * bound
    L2 = 2.0 * beta * R
    return beta / math.sqrt(L2**2 + d * (d * p + 1) * sigma2)


def formal_step_scale(d, p, cap, sigma2, bound=B, bin_size=DELTA_T):
    """The formal calibration's public L₂ = (β M_A + M_b) M_A."""
    beta = bin_size * bound
    m_a = d * p * cap**2 + 1.0
    m_b = math.sqrt(d) * cap * math.sqrt(d * p * cap**2 + 1.0)
    L2 = (beta * m_a + m_b) * m_a
    return beta / math.sqrt(L2**2 + d * (d * p + 1) * sigma2)


def algorithm_1(A, b, radius, iters, sigma2, scale, seed):
    """Algorithm 1, plainly: projected noisy gradient steps η_k = scale/√k from U = 0."""
    rng = np.random.default_rng(seed)
    U = np.zeros_like(b)
    for k in range(1, iters + 1):
        grad = (U @ A - b) @ A
        zeta = math.sqrt(sigma2) * rng.standard_normal(U.shape) if sigma2 > 0 else 0.0
        U = U - scale / math.sqrt(k) * (grad + zeta)
        norm = np.linalg.norm(U)
        if norm > radius:
            U = U * (radius / norm)
    return U


def _stats(x, cap=None):
    return binned_stats(BinnedCounts((x,), DELTA_T, 0, 0, cap), P)


@pytest.mark.parametrize("sigma2", [0.0, 0.3])
@pytest.mark.parametrize("calibration", ["paper", "tight-paper"])
def test_dp_pgd_is_algorithm_1_with_theorem_2_step(sigma2, calibration):
    x = raw_counts()
    A, b = reference_stats(x, P)
    cfg = FitConfig(method="pgd", bin_size=DELTA_T, lags=P, bound=B, iters=K, sigma2=sigma2, seed=9,
                    calibration=calibration)
    result = fit_stats(_stats(x), cfg)
    scale = paper_step_scale(A, b, x.shape[1], P, sigma2)
    assert result.info["first_step"] == pytest.approx(scale, rel=1e-12)
    expected = algorithm_1(A, b, DELTA_T * B, K, sigma2, scale, seed=9)
    np.testing.assert_allclose(result.H * DELTA_T, expected, rtol=1e-9, atol=1e-12)


def test_dp_pgd_with_the_papers_sigma_from_epsilon():
    """Theorem 1's σ² = 8(ΔB)²R²K log²(K/δ)/ε² and Theorem 2's step, both from this file's R."""
    x = raw_counts(seed=2)
    A, b = reference_stats(x, P)
    eps, delta = 2.0, 1e-5
    cfg = FitConfig(method="pgd", bin_size=DELTA_T, lags=P, bound=B, iters=K, epsilon=eps, dp_delta=delta,
                    seed=4, calibration="paper")
    result = fit_stats(_stats(x), cfg)
    R = max(float(np.sum(A**2)), float(np.sum(b**2)))
    sigma2 = 8 * (DELTA_T * B) ** 2 * R**2 * K * math.log(K / delta) ** 2 / eps**2
    assert result.privacy.sigma2 == pytest.approx(sigma2, rel=1e-12)
    scale = paper_step_scale(A, b, x.shape[1], P, sigma2)
    assert result.info["first_step"] == pytest.approx(scale, rel=1e-12)
    np.testing.assert_allclose(result.H * DELTA_T, algorithm_1(A, b, DELTA_T * B, K, sigma2, scale, seed=4),
                               rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("sigma2", [0.0, 1e-4])
def test_formal_dp_pgd_uses_the_public_gradient_bound_in_the_step(sigma2):
    cap = 3
    x = raw_counts(seed=3, rate=1.2, cap=cap)
    A, b = reference_stats(x, P)
    cfg = FitConfig(method="pgd", bin_size=DELTA_T, lags=P, bound=B, iters=K, sigma2=sigma2, seed=6,
                    calibration="formal", count_cap=cap)
    result = fit_stats(_stats(x, cap), cfg)
    scale = formal_step_scale(x.shape[1], P, cap, sigma2)
    assert result.info["first_step"] == pytest.approx(scale, rel=1e-12)
    np.testing.assert_allclose(result.H * DELTA_T, algorithm_1(A, b, DELTA_T * B, K, sigma2, scale, seed=6),
                               rtol=1e-9, atol=1e-13)


def test_whole_fit_from_events_follows_the_reference():
    """fit(events, config): binning, statistics, calibration and the loop, against the reference on the
    counts of events placed mid-bin (their bins are unambiguous)."""
    x = raw_counts(seed=5, n=80)
    times = tuple(np.repeat((np.arange(len(x)) + 0.5) * DELTA_T, x[:, j]) for j in range(x.shape[1]))
    events = Events(sequences=(EventSequence(times=times, end_time=len(x) * DELTA_T),), names=("a", "b"),
                    window_stated=True)
    cfg = FitConfig(method="pgd", bin_size=DELTA_T, lags=P, bound=B, iters=K, sigma2=0.05, seed=1)
    result, info = fit(events, cfg)
    assert info["n_bins"] == len(x)
    A, b = reference_stats(x, P)
    scale = paper_step_scale(A, b, x.shape[1], P, 0.05)
    np.testing.assert_allclose(result.H * DELTA_T, algorithm_1(A, b, DELTA_T * B, K, 0.05, scale, seed=1),
                               rtol=1e-9, atol=1e-12)


def test_a_step_twice_too_small_would_be_seen():
    """The comparison is sensitive to the step: L₂ = 4ΔBR (half the step at σ = 0) moves the estimate far
    beyond the tolerance used above."""
    x = raw_counts()
    A, b = reference_stats(x, P)
    scale = paper_step_scale(A, b, x.shape[1], P, 0.0)
    right = algorithm_1(A, b, DELTA_T * B, K, 0.0, scale, seed=0)
    half = algorithm_1(A, b, DELTA_T * B, K, 0.0, scale / 2, seed=0)
    assert np.linalg.norm(right - half) > 1e-3 * np.linalg.norm(right)


def test_formal_sigma_is_the_formal_gradient_sensitivity_times_the_gaussian_multiplier():
    """σ = S·√K·z(ε, δ) with S = 2βM_A D_A + M_b D_A + M_A D_b computed here from docs/privacy.md."""
    cap, d = 3, 2
    x = raw_counts(seed=3, rate=1.2, cap=cap)
    eps, delta = 1.0, 1e-5
    cfg = FitConfig(method="pgd", bin_size=DELTA_T, lags=P, bound=B, iters=K, epsilon=eps, dp_delta=delta,
                    calibration="formal", count_cap=cap, seed=1)
    result = fit_stats(_stats(x, cap), cfg)
    N = len(x) - P
    beta = DELTA_T * B
    z = math.sqrt(d * P * cap**2 + 1)
    y = math.sqrt(d) * cap
    m_a, m_b = z * z, y * z
    d_a, d_b = math.sqrt(P) * (2 * z + 1) / N, (z + math.sqrt(P) * y) / N
    S = 2 * beta * m_a * d_a + m_b * d_a + m_a * d_b
    assert result.privacy.sensitivity == pytest.approx(S, rel=1e-12)
    assert math.sqrt(result.privacy.sigma2) == pytest.approx(S * math.sqrt(K) * get_sigma_gaussian(eps, delta),
                                                             rel=1e-9)
