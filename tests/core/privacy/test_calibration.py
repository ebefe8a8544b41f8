"""Privacy calibration: accountant cross-checks, the paper's formulas, and sensitivity properties."""

import math

import numpy as np
import pytest
from dp_accounting import dp_event
from dp_accounting.pld import pld_privacy_accountant
from scipy.stats import norm

from dphawkes_core.errors import ConfigError
from dphawkes_core.estimators import gradient as gr
from dphawkes_core.estimators import paper_gradient
from dphawkes_core.privacy import calibration as pv
from dphawkes_core.statistics.binning import BinnedCounts
from dphawkes_core.statistics.moments import sufficient_stats


def analytic_gaussian_delta(sigma, sensitivity, eps):
    """Balle & Wang (2018), Theorem 8: the exact δ(ε) of the Gaussian mechanism."""
    a = sensitivity / (2 * sigma)
    b = eps * sigma / sensitivity
    return norm.cdf(a - b) - math.exp(eps) * norm.cdf(-a - b)


@pytest.mark.parametrize("eps, delta, sens", [(1.0, 1e-5, 1.0), (0.3, 1e-6, 2.5), (4.0, 1e-3, 0.1)])
def test_single_release_matches_analytic_gaussian_mechanism(eps, delta, sens):
    sigma = pv.gaussian_sigma(eps, delta, sens, releases=1)
    assert analytic_gaussian_delta(sigma, sens, eps) == pytest.approx(delta, rel=1e-6)
    assert pv.gaussian_epsilon(sigma, delta, sens, releases=1) == pytest.approx(eps, rel=1e-8)


@pytest.mark.parametrize("releases, multiplier", [(10, 8.0), (100, 30.0), (1000, 118.0)])
def test_composition_matches_pld_accountant(releases, multiplier):
    delta = 1e-5
    accountant = pld_privacy_accountant.PLDAccountant(value_discretization_interval=1e-4)
    accountant.compose(dp_event.SelfComposedDpEvent(dp_event.GaussianDpEvent(multiplier), releases))
    eps_pld = accountant.get_epsilon(delta)
    eps_exact = pv.gaussian_epsilon(multiplier, delta, sensitivity=1.0, releases=releases)
    # the PLD accountant is a (slightly pessimistic) discretisation of the same privacy loss
    assert eps_exact <= eps_pld * (1 + 1e-6)
    assert eps_pld == pytest.approx(eps_exact, rel=0.02)


def test_sigma_is_monotone_in_releases_and_epsilon():
    sig_k = [pv.gaussian_sigma(1.0, 1e-5, 1.0, k) for k in (1, 10, 100, 1000)]
    assert all(a < b for a, b in zip(sig_k, sig_k[1:]))
    sig_e = [pv.gaussian_sigma(e, 1e-5, 1.0, 100) for e in (0.1, 0.5, 1.0, 5.0)]
    assert all(a > b for a, b in zip(sig_e, sig_e[1:]))
    eps = [pv.gaussian_epsilon(s, 1e-5, 1.0, 100) for s in (5.0, 10.0, 50.0)]
    assert all(a > b for a, b in zip(eps, eps[1:]))


def test_paper_formulas_are_reproduced_exactly():
    K, delta, eps, dt, B, r, R = 1000, 1e-5, 0.7, 0.1, 0.2, 1.5, 3.0
    pgd = 8 * (dt * B) ** 2 * R**2 * K * math.log(K / delta) ** 2 / eps**2
    cg = 128 * K * dt**2 * r**2 * R**2 * math.log(K / delta) ** 2 / eps**2
    assert gr.paper_sigma2(gr.THEOREM_1, eps, delta, K, dt * B, R) == pytest.approx(pgd, rel=1e-14)
    assert gr.paper_sigma2(gr.THEOREM_3, eps, delta, K, dt * r, R) == pytest.approx(cg, rel=1e-14)
    assert gr.paper_epsilon(gr.THEOREM_1, pgd, delta, K, dt * B, R) == pytest.approx(eps, rel=1e-12)
    assert gr.paper_sensitivity(dt * B, R) == pytest.approx(4 * dt * B * R)


def test_issue_orientation_numbers_and_the_papers_slack():
    K, delta = 1000, 1e-5
    # exact multiplier sigma/S for K releases at eps = 1: about 118
    assert pv.gaussian_sigma(1.0, delta, 1.0, K) == pytest.approx(118, rel=0.01)
    # the paper's sigma in units of its sensitivity 2L2 = 4ΔBR: about 412
    dt, B, R = 0.1, 0.2, 1.0
    paper_sigma = math.sqrt(gr.paper_sigma2(gr.THEOREM_1, 1.0, delta, K, dt * B, R))
    assert paper_sigma / gr.paper_sensitivity(dt * B, R) == pytest.approx(412, rel=0.01)
    # ... which under exact accounting of the same sensitivity is eps of about 0.1-0.3, not 1
    eps = pv.gaussian_epsilon(paper_sigma, delta, gr.paper_sensitivity(dt * B, R), K)
    assert 0.1 < eps < 0.3


def _binned(x):
    return BinnedCounts((np.asarray(x, dtype=np.int64),), 0.1, 0, 0, 3)


def _neighbours(rng, n, d, cap):
    """Count series clipped at cap, and neighbours that add one event in a worst-case place."""
    base = rng.binomial(cap, 0.3, (n, d))
    base[n // 2 - 4:n // 2 + 4] = cap  # a burst at the cap
    base[n // 2 - 5] = cap - 1  # ... with room for one more right next to it
    base[0] = np.minimum(base[0], cap - 1)
    base[-1] = np.minimum(base[-1], cap - 1)
    yield base, (n // 2 - 5, 0)  # next to the burst
    yield base, (0, d - 1)  # at the start
    yield base, (n - 1, 0)  # in the last bin
    for _ in range(4):
        m = int(rng.integers(n))
        j = int(rng.integers(d))
        if base[m, j] < cap:
            yield base, (m, j)


@pytest.mark.parametrize("d, p, cap", [(1, 3, 2), (2, 5, 3), (3, 4, 1)])
def test_formal_gradient_sensitivity_bounds_every_measured_change(d, p, cap):
    rng = np.random.default_rng(d * 100 + p)
    n = 60
    ratios = []
    for x, (m, j) in _neighbours(rng, n, d, cap):
        x2 = x.copy()
        x2[m, j] += 1
        s1, s2 = sufficient_stats(_binned(x), p), sufficient_stats(_binned(x2), p)
        bounds = gr.formal_bounds(d, p, s1.n_rows, cap)
        assert np.linalg.norm(s2.A - s1.A) <= bounds.dA_fro_max
        assert np.linalg.norm(s2.b - s1.b) <= bounds.db_fro_max
        for s in (s1, s2):
            assert np.linalg.norm(s.A, 2) <= bounds.A_op_max
            assert np.linalg.norm(s.b) <= bounds.b_fro_max
        beta = 0.5
        sens = bounds.gradient_sensitivity(beta)
        shape = s1.b.shape
        candidates = [rng.standard_normal(shape) for _ in range(20)] + [np.ones(shape), -np.ones(shape)]
        for U in candidates:
            U = beta * U / np.linalg.norm(U)
            change = np.linalg.norm(paper_gradient(U, s2) - paper_gradient(U, s1))
            assert change <= sens
            ratios.append(sens / change)
    # report how loose the worst-case bound is on these adversarial neighbours
    print(f"d={d} p={p} C={cap}: bound / largest measured change = {min(ratios):.1f}")
    assert min(ratios) < 50


def test_statistics_bounds_are_attained_in_order_of_magnitude_by_saturated_data():
    d, p, cap, n = 2, 4, 3, 40
    x = np.full((n, d), cap)
    s = sufficient_stats(_binned(x), p)
    bounds = gr.formal_bounds(d, p, s.n_rows, cap)
    # all counts at the cap: ||A||_op equals the bound max ||z_t||^2 exactly
    assert np.linalg.norm(s.A, 2) == pytest.approx(bounds.A_op_max, rel=1e-12)
    assert np.linalg.norm(s.b) == pytest.approx(bounds.b_fro_max, rel=1e-12)


def test_calibrate_reports_all_modes_and_refuses_formal_without_cap():
    rng = np.random.default_rng(0)
    x = rng.binomial(3, 0.2, (300, 2))
    s = sufficient_stats(_binned(x), 5)
    rep = gr.calibrate(s, gr.THEOREM_1, 0.1 * 0.2, 0.1 * 0.2, 100, "formal", 1e-5, epsilon=1.0, count_cap=3)
    assert rep.formal and rep.epsilon == 1.0
    assert rep.epsilon_by_calibration["formal"] == pytest.approx(1.0, rel=1e-6)
    assert set(rep.epsilon_by_calibration) == {"paper", "formal", "tight-paper"}
    # the same sigma2 given directly reports the same eps
    back = gr.calibrate(s, gr.THEOREM_1, 0.1 * 0.2, 0.1 * 0.2, 100, "formal", 1e-5, sigma2=rep.sigma2, count_cap=3)
    assert back.epsilon == pytest.approx(1.0, rel=1e-6)
    paper = gr.calibrate(s, gr.THEOREM_1, 0.1 * 0.2, 0.1 * 0.2, 100, "paper", 1e-5, epsilon=1.0, count_cap=3)
    assert not paper.formal and "NOT a formal guarantee" in paper.note
    assert paper.R == pytest.approx(max(np.sum(s.A**2), np.sum(s.b**2)))
    uncapped = sufficient_stats(BinnedCounts((x,), 0.1, 0, 0, None), 5)
    with pytest.raises(ConfigError, match="count cap"):
        gr.calibrate(uncapped, gr.THEOREM_1, 0.1 * 0.2, 0.1 * 0.2, 100, "formal", 1e-5, epsilon=1.0)
    with pytest.raises(ConfigError, match="clipped at"):
        gr.calibrate(s, gr.THEOREM_1, 0.1 * 0.2, 0.1 * 0.2, 100, "formal", 1e-5, epsilon=1.0, count_cap=5)
    no_formal = gr.calibrate(uncapped, gr.THEOREM_3, 0.1 * 1.0, 1.0, 100, "paper", 1e-5, sigma2=0.5)
    assert no_formal.epsilon_by_calibration["formal"] is None
