"""CLS against a dense least-squares reference; DP-PGD / DP-CG against naive implementations of the
paper's algorithms, their limits (σ² = 0, large B or r) and reproducibility."""

import numpy as np
import pytest

from dphawkes_core import estimators as est
from dphawkes_core.data.kernels import get_scenario
from dphawkes_core.data.simulate import simulate
from dphawkes_core.errors import ConfigError
from dphawkes_core.evaluation.metrics import compare
from dphawkes_core.statistics.binning import BinnedCounts
from dphawkes_core.statistics.moments import design_matrix, sufficient_stats


def small_stats(seed=0, n=400, d=2, p=3, lam=0.6):
    x = np.random.default_rng(seed).poisson(lam, (n, d))
    return x, sufficient_stats(BinnedCounts((x,), 0.5, 0, 0, None), p)


def test_cls_equals_dense_least_squares():
    x, s = small_stats()
    zt, yt = design_matrix(x, 3)
    theta, *_ = np.linalg.lstsq(zt, yt, rcond=None)
    result = est.fit_cls(s, 0.5)
    np.testing.assert_allclose(result.H * 0.5, theta.T, rtol=1e-9, atol=1e-12)


def test_result_layout_kernels_and_baseline():
    _, s = small_stats(d=3, p=4)
    r = est.fit_cls(s, 0.5)
    d, p = 3, 4
    for i in range(d):
        for j in range(d):
            for k in range(p):
                assert r.kernels[i, j, k] == r.H[i, k * d + j]
    np.testing.assert_array_equal(r.baseline, r.H[:, -1])
    np.testing.assert_allclose(r.lag_grid, [0.5, 1.0, 1.5, 2.0])


def test_cls_is_consistent_on_a_long_simulation():
    sc = get_scenario("paper-2d")
    events = simulate(sc, n_events=60_000, seed=4)
    result, info = est.fit(events, est.FitConfig(bin_size=0.5, lags=10))
    errors = compare(result.H, sc.true_H(0.5, 10))
    assert errors.baseline_relative_error < 0.15
    # far better than the all-zero estimate (whose plain relative error is 1)
    assert errors.relative_error < 0.5 * errors.zero_estimate_relative_error
    assert info["n_events"] == 60_000


def naive_dp_pgd(s, radius, K, sigma2, steps, seed):
    """Algorithm 1 written plainly from the paper, drawing noise in the same order."""
    rng = np.random.default_rng(seed)
    U = np.zeros_like(s.b)
    for k in range(K):
        grad = (U @ s.A - s.b) @ s.A
        zeta = np.sqrt(sigma2) * rng.standard_normal(U.shape) if sigma2 > 0 else 0
        U = U - steps[k] * (grad + zeta)
        if np.linalg.norm(U) > radius:
            U = U * radius / np.linalg.norm(U)
    return U


def naive_dp_cg(s, r, K, sigma2, seed, classic):
    rng = np.random.default_rng(seed)
    U = np.zeros_like(s.b)
    for k in range(K):
        G = (U @ s.A - s.b) @ s.A
        if sigma2 > 0:
            G = G + np.sqrt(sigma2) * rng.standard_normal(U.shape)
        u, _, vt = np.linalg.svd(G, full_matrices=False)
        vertex = -r * np.outer(u[:, 0], vt[0])
        mu = 2 / (k + 2) if classic else 1 / (K + 2)
        U = (1 - mu) * U + mu * vertex
    return U


@pytest.mark.parametrize("sigma2", [0.0, 0.3])
def test_dp_pgd_is_algorithm_1(sigma2):
    _, s = small_stats(seed=1)
    cfg = est.FitConfig(method="pgd", bin_size=0.5, lags=3, bound=0.6, iters=60, sigma2=sigma2, seed=9)
    result = est.fit_stats(s, cfg)
    steps = est.theorem_step_scale(s, cfg, result.privacy) / np.sqrt(np.arange(1, 61))
    expected = naive_dp_pgd(s, 0.5 * 0.6, 60, sigma2, steps, seed=9)
    np.testing.assert_allclose(result.H * 0.5, expected, rtol=1e-9, atol=1e-12)
    assert len(result.loss_history) == 61
    assert result.loss_history[-1] == pytest.approx(est.paper_loss(expected, s), rel=1e-9)


@pytest.mark.parametrize("fw_step", ["paper", "classic"])
def test_dp_cg_is_algorithm_2(fw_step):
    _, s = small_stats(seed=2, d=3)
    cfg = est.FitConfig(method="cg", bin_size=0.5, lags=3, radius=0.7, iters=40, sigma2=0.2, seed=5,
                        fw_step=fw_step)
    result = est.fit_stats(s, cfg)
    expected = naive_dp_cg(s, 0.7, 40, 0.2, seed=5, classic=fw_step == "classic")
    np.testing.assert_allclose(result.H * 0.5, expected, rtol=1e-8, atol=1e-11)
    assert np.linalg.norm(result.H * 0.5, "nuc") <= 0.7 + 1e-9


def test_without_noise_and_a_large_ball_both_converge_to_cls():
    _, s = small_stats(seed=3, n=2000, d=2, p=2, lam=0.8)
    cls = est.fit_cls(s, 0.5).H
    big = 10 * np.linalg.norm(cls * 0.5)
    step = 1.0 / np.linalg.eigvalsh(s.A @ s.A).max()
    pgd = est.fit_stats(s, est.FitConfig(method="pgd", bin_size=0.5, lags=2, bound=big / 0.5, iters=20000,
                                         sigma2=0.0, step="constant", step_size=step))
    np.testing.assert_allclose(pgd.H, cls, rtol=1e-3, atol=1e-4)
    nuc = 1.2 * np.linalg.norm(cls * 0.5, "nuc")
    cg = est.fit_stats(s, est.FitConfig(method="cg", bin_size=0.5, lags=2, radius=nuc, iters=20000,
                                        sigma2=0.0, fw_step="classic"))
    assert np.linalg.norm(cg.H - cls) / np.linalg.norm(cls) < 0.05
    assert cg.loss_history[-1] <= est.paper_loss(cls * 0.5, s) + 1e-3 * cg.loss_history[0]


def test_without_noise_a_small_ball_gives_the_constrained_optimum():
    _, s = small_stats(seed=4)
    radius = 0.2 * np.linalg.norm(est.fit_cls(s, 0.5).H * 0.5)
    step = 1.0 / np.linalg.eigvalsh(s.A @ s.A).max()
    r = est.fit_stats(s, est.FitConfig(method="pgd", bin_size=0.5, lags=3, bound=radius / 0.5, iters=20000,
                                       sigma2=0.0, step="constant", step_size=step))
    U = r.H * 0.5
    grad = est.paper_gradient(U, s)
    # KKT on the Frobenius ball: U sits on the sphere, anti-parallel to the gradient
    assert np.linalg.norm(U) == pytest.approx(radius, rel=1e-9)
    cosine = np.sum(U * grad) / (np.linalg.norm(U) * np.linalg.norm(grad))
    assert cosine == pytest.approx(-1.0, abs=1e-6)


def test_same_seed_same_estimate_different_seed_different_noise():
    _, s = small_stats(seed=5)
    cfg = est.FitConfig(method="pgd", bin_size=0.5, lags=3, bound=1.0, iters=50, sigma2=0.1, seed=1)
    a, b = est.fit_stats(s, cfg), est.fit_stats(s, cfg)
    c = est.fit_stats(s, est.FitConfig(**{**vars(cfg), "seed": 2}))
    np.testing.assert_array_equal(a.H, b.H)
    assert not np.allclose(a.H, c.H)


def test_single_precision_path_for_large_designs_matches_double():
    rng = np.random.default_rng(6)
    x = rng.poisson(0.3, (3000, 2))
    p = 520  # dp+1 = 1041 >= SINGLE_PRECISION_FROM
    s = sufficient_stats(BinnedCounts((x,), 0.1, 0, 0, None), p)
    cfg = est.FitConfig(method="pgd", bin_size=0.1, lags=p, bound=2.0, iters=30, sigma2=1e-4, seed=3)
    result = est.fit_stats(s, cfg)
    steps = est.theorem_step_scale(s, cfg, result.privacy) / np.sqrt(np.arange(1, 31))
    expected = naive_dp_pgd(s, 0.2, 30, 1e-4, steps, seed=3)
    np.testing.assert_allclose(result.H * 0.1, expected, rtol=1e-5, atol=1e-6 * np.abs(expected).max())


def test_invalid_configs_are_refused():
    with pytest.raises(ConfigError, match="unknown method"):
        est.FitConfig(method="magic")
    with pytest.raises(ConfigError, match="constant step"):
        est.FitConfig(method="pgd", bound=1.0, step="constant")
    _, s = small_stats()
    # B is a required option of DP-PGD: refused when the config is made, before any fit
    with pytest.raises(ConfigError, match="bound B"):
        est.FitConfig(method="pgd", lags=3, bin_size=0.5, sigma2=1.0)
    with pytest.raises(ConfigError, match="exactly one"):
        est.fit_stats(s, est.FitConfig(method="cg", lags=3, bin_size=0.5, radius=1.0))


@pytest.mark.parametrize(("keywords", "message"), [
    (dict(epsilon=-1.0), "ε must be a positive number, got -1.0"),
    (dict(epsilon=0.0), "ε must be a positive number"),
    (dict(epsilon=float("nan")), "ε must be a positive number, got nan"),
    (dict(epsilon="1"), "ε must be a positive number, got '1'"),
    (dict(epsilon=True), "ε must be a positive number"),
    (dict(epsilon=1e9), "ε = 1e\\+09 is above 100"),
    (dict(epsilon=1.0, dp_delta=1.0), "δ must be in \\(0, 1\\), got 1.0"),
    (dict(epsilon=1.0, dp_delta=0.0), "δ must be in \\(0, 1\\)"),
    (dict(epsilon=1.0, dp_delta="1e-5"), "δ must be in"),
    (dict(sigma2=-0.5), "σ² must be a number >= 0, got -0.5"),
    (dict(sigma2=float("inf")), "above 1e\\+100"),
])
def test_privacy_settings_out_of_range_are_refused_when_the_config_is_built(keywords, message):
    """Before any statistics: every family, in one line naming the setting and the value."""
    for method, bounds in (("ssp", {}), ("pgd", {"bound": 1.0}), ("cls", {})):
        with pytest.raises(ConfigError, match=message) as refused:
            est.FitConfig(method=method, lags=3, bin_size=0.5, calibration="formal", count_cap=3, **bounds,
                          **keywords)
        assert "\n" not in str(refused.value)


def test_the_privacy_target_is_the_given_sigma2_else_epsilon():
    both = est.FitConfig(method="ssp", calibration="formal", count_cap=3, epsilon=2.0, sigma2=0.1)
    assert both.privacy_target == {"epsilon": None, "sigma2": 0.1}  # σ² given: ε is reported, not targeted
    assert both.with_changes(sigma2=None).privacy_target == {"epsilon": 2.0, "sigma2": None}
    assert est.FitConfig(method="cls").privacy_target == {"epsilon": None, "sigma2": None}
    events = simulate(get_scenario("paper-2d"), n_events=300, seed=1)
    report = est.fit(events, both.with_changes(bin_size=0.5, lags=3, sigma2=1e-4, seed=0))[0].privacy
    assert report.sigma2 == 1e-4 and report.epsilon == report.epsilon_by_calibration["formal"] != 2.0


# --- each family reads its own options only ------------------------------------------------------------------

def _family_keywords(family) -> dict:
    """A valid config of ``family``: shared settings, a formal target ε when private, its required public bounds."""
    keywords = dict(method=family.name, bin_size=0.5, lags=3, count_cap=3)
    if family.privacy.private:
        keywords.update(epsilon=1.0, calibration="formal")
    return {**keywords, **family.audit_hints.worst_case_options}


def _example_value(setting):
    """A valid value of ``setting`` that is not ``None`` (and not the default where there is a choice)."""
    if setting.kind == "choice":
        value = next(c for c in setting.choices if c != setting.default)
    elif setting.kind == "bool":
        value = not setting.default
    elif setting.default is not None:
        value = setting.default
    else:
        value = 1 if setting.kind == "int" else 1.0
    setting.check(value, "")
    return value


FOREIGN_OPTIONS = [
    (family.name, setting.name)
    for family in est.FAMILIES.values()
    for setting in dict((s.name, s) for other in est.FAMILIES.values() for s in other.settings).values()
    if not family.reads(setting.name)
]


@pytest.mark.parametrize("method, option", FOREIGN_OPTIONS)
def test_a_family_refuses_an_option_only_other_families_read(method, option):
    family = est.get_family(method)
    readers = [f for f in est.FAMILIES.values() if f.reads(option)]
    setting = next(s for s in readers[0].settings if s.name == option)
    value = _example_value(setting)
    for reader in readers:  # a valid value where it is read ...
        assert getattr(est.FitConfig(**{**_family_keywords(reader), option: value}), option) == value
    base = _family_keywords(family)
    with pytest.raises(ConfigError) as refused:  # ... is refused where it is not, naming the option and its readers
        est.FitConfig(**base, **{option: value})
    assert str(refused.value) == (f"{family.label} does not read {option} "
                                  f"(an option of {', '.join(f.label for f in readers)}; flag {setting.flag})")
    assert est.FitConfig(**base, **{option: None}) == est.FitConfig(**base)  # not given: nothing to refuse
    assert option not in est.FitConfig(**base).to_dict()
    with pytest.raises(AttributeError):
        getattr(est.FitConfig(**base), option)


def test_every_family_is_checked_for_foreign_options_and_unknown_ones_are_refused():
    assert {method for method, _ in FOREIGN_OPTIONS} == set(est.method_names())  # each family refuses some
    with pytest.raises(ConfigError, match="unknown setting"):
        est.FitConfig(method="ssp", count_cap=3, epsilon=1.0, calibration="formal", banana=1.0)
