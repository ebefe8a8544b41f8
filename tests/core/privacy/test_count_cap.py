"""Automatic count cap: the tail-count release, the choice of C, the exact composition with the
statistics' release, and the fit/CLI paths."""

import json
import math

import numpy as np
import pytest
from dp_accounting import dp_event
from dp_accounting.gaussian_mechanism import get_sigma_gaussian
from dp_accounting.pld import pld_privacy_accountant

from dphawkes_cli.main import main
from dphawkes_core.data.io import from_arrays
from dphawkes_core.errors import ConfigError
from dphawkes_core.estimators import FitConfig, fit, fit_stats, prepare_stats
from dphawkes_core.estimators.ssp import ssp_lagged_sensitivity
from dphawkes_core.privacy.calibration import compose_count_cap
from dphawkes_core.privacy.count_cap import (
    AUTO_CAP_TARGET,
    cap_noise_sigma,
    cap_rng,
    choose_cap,
    clip_target,
    dp_count_cap,
    release_tail_counts,
    step_noise_scale,
    tail_counts,
)
from dphawkes_core.statistics.binning import BinnedCounts, SparseCounts


def _binned(*series, cap=None):
    return BinnedCounts(tuple(np.asarray(x, dtype=np.int64) for x in series), 0.5, 0, 0, cap)


def _brute_tails(series, max_cap):
    values = np.concatenate([np.asarray(x).ravel() for x in series])
    return np.array([np.sum(values >= c) for c in range(1, max_cap + 1)], dtype=float)


def test_tail_counts_match_a_direct_count_dense_and_sparse():
    rng = np.random.default_rng(0)
    series = [rng.poisson(1.5, size=(40, 3)), rng.poisson(4.0, size=(25, 3))]
    for max_cap in (1, 3, 8, 64):
        expected = _brute_tails([np.minimum(x, max_cap) for x in series], max_cap)
        assert np.array_equal(tail_counts(_binned(*series), max_cap), expected)
        assert np.array_equal(tail_counts(SparseCounts.from_binned(_binned(*series)), max_cap), expected)


def test_one_event_changes_one_tail_count_by_one():
    """Sensitivity 1: adding an event anywhere (including at and above the range) moves one entry by 1."""
    rng = np.random.default_rng(1)
    x = rng.poisson(2.0, size=(30, 2))
    x[3, 1] = 12  # above the range below
    max_cap = 6
    base = tail_counts(_binned(x), max_cap)
    for m in range(x.shape[0]):
        for j in range(2):
            x2 = x.copy()
            x2[m, j] += 1
            diff = tail_counts(_binned(x2), max_cap) - base
            assert np.sum(np.abs(diff)) == (1 if x[m, j] < max_cap else 0)
            if x[m, j] < max_cap:
                assert diff[x[m, j]] == 1  # T[v+1] moved


def test_cap_noise_depends_only_on_public_numbers():
    """The std is the Gaussian mechanism's at (share·ε, δ) with sensitivity 1 whatever the data, and the
    same seed adds the same noise to two very different data sets."""
    small = _binned(np.ones((20, 2), dtype=int))
    large = _binned(np.random.default_rng(2).poisson(5.0, size=(500, 2)))
    for data in (small, large):
        auto = dp_count_cap(data, 1.0, 1e-5, np.random.default_rng(7), share=0.05, max_cap=16)
        assert auto.sigma == pytest.approx(get_sigma_gaussian(0.05, 1e-5))
    noise = [release_tail_counts(data, 16, 40.0, np.random.default_rng(7)) - tail_counts(data, 16)
             for data in (small, large)]
    assert np.allclose(noise[0], noise[1], atol=1e-9) and 10 < np.std(noise[0]) < 80
    assert cap_noise_sigma(2.0, 1e-6, 0.1) == pytest.approx(get_sigma_gaussian(0.2, 1e-6))


def test_choose_cap_rule_before_clips_at_most_the_stated_fraction():
    tails = np.array([9000.0, 1000.0, 130.0, 20.0, 1.0, 0.0, 0.0])  # N = 10151 events
    assert choose_cap(tails, sigma=1e-3, target=None) == 3  # T[4] = 20 <= 1 % of N, T[3] = 130 is not
    assert choose_cap(tails, sigma=1e-3, target=None, clipped_fraction=0.02) == 2
    assert choose_cap(tails, sigma=100.0, target=None) == 2  # the noise floor 2σ = 200 decides
    assert choose_cap(np.full(5, 1e6), sigma=1.0, target=None) == 5  # nothing qualifies: the top of the range


def test_choose_cap_keeps_clipped_bins_under_the_target_count():
    """The smallest c with T̂[c+1] <= max(min(target, 10 %·N̂), 2σ): the target counts bins over the cap, whatever
    the number of events; the guard and the noise floor where they are larger or smaller."""
    tails = np.array([90000.0, 10000.0, 1300.0, 200.0, 10.0, 0.0, 0.0])  # N̂ = 101510
    assert choose_cap(tails, sigma=1e-3, target=1000.0) == 3  # T[4] = 200 <= 1000 < T[3] = 1300
    assert choose_cap(tails, sigma=1e-3, target=1500.0) == 2  # T[3] = 1300 <= 1500
    assert choose_cap(tails, sigma=1e-3, target=100.0) == 4  # T[5] = 10
    assert choose_cap(tails, sigma=400.0, target=100.0) == 3  # the noise floor 2σ = 800 decides
    small = tails / 100.0  # N̂ = 1015: the guard 10 %·N̂ = 101.5 binds below the target
    assert choose_cap(small, sigma=1e-3, target=1000.0) == 1  # T[2] = 100 <= 101.5
    assert choose_cap(small, sigma=1e-3, target=50.0) == 2  # T[3] = 13 <= 50 < T[2] = 100


def test_clip_target_is_kappa_times_the_release_multiplier():
    """κ·z with z the multiplier of the Gaussian release that, with the cap's release at share·ε, composes to
    exactly (ε, δ): μ-GDP, 1/z² = μ(ε, δ)² − 1/z_cap², μ(ε, δ) from the Gaussian mechanism's exact trade-off
    (Dong, Roth & Su), computed here with scipy."""
    from scipy.optimize import brentq
    from scipy.stats import norm

    eps, delta, share = 1.0, 1e-5, 0.05

    def mu_of(e):
        return brentq(lambda mu: norm.cdf(-e / mu + mu / 2) - math.exp(e) * norm.cdf(-e / mu - mu / 2) - delta,
                      1e-3, 50.0, xtol=1e-14)

    z_cap = 1.0 / mu_of(share * eps)
    z_rest = 1.0 / math.sqrt(mu_of(eps) ** 2 - 1.0 / z_cap**2)
    assert clip_target(eps, delta, share) == pytest.approx(AUTO_CAP_TARGET * z_rest, rel=1e-6)
    assert clip_target(8.0, delta, share) < clip_target(1.0, delta, share) / 5  # less noise: a larger cap allowed


def test_chosen_cap_tracks_the_data():
    rng = np.random.default_rng(3)
    x = rng.poisson(0.8, size=(20_000, 2))
    x[::10, 0] = 7  # 2,000 cells of dimension 0 hold a burst of 7
    auto = dp_count_cap(_binned(x), 1.0, 1e-5, rng)
    assert auto.clipped_target == pytest.approx(clip_target(1.0, 1e-5, 0.05))
    assert auto.count_cap == 7  # clipping below 7 would clip 2,000 cells, over the target 350·z ≈ 1,300
    x[::10, 0] = 0
    x[::40, 0] = 7  # 500 bursts: clipping them is within the target
    assert dp_count_cap(_binned(x), 1.0, 1e-5, rng).count_cap == 3  # T[4] ≈ 500 + 360 Poisson cells


def test_chosen_cap_grows_with_the_data_size():
    """The same process observed 30 times longer: the rule before (a fraction of the events) keeps C, the target
    count (clipped bins per unit of the release's noise) raises it — the bias it no longer pays for."""
    rng = np.random.default_rng(5)
    short, long_ = (rng.poisson(0.6, size=(cells, 2)) for cells in (15_000, 450_000))
    sigma, target = cap_noise_sigma(1.0, 1e-5, 0.05), clip_target(1.0, 1e-5, 0.05)
    before = [choose_cap(tail_counts(_binned(x), 64), sigma, None) for x in (short, long_)]
    after = [choose_cap(tail_counts(_binned(x), 64), sigma, target) for x in (short, long_)]
    assert before[0] == before[1]
    assert after[1] > after[0]


def test_step_noise_scale_follows_the_step_releases_sensitivity():
    """1 at (w, s) = (0.25, 5), where κ was chosen, and √(s/w)/w relative to it; its premise, checked on ctls's own
    public bound: at a fixed C it grows like √B (B = s/w lags). (DP-SSP's grows like B; its error is nearly flat in C
    at w >= 0.5, and the one scale serves both: ``docs/accuracy.md``, "The automatic cap".)"""
    from dphawkes_core.estimators.grid_free.release import ctls_sensitivity

    assert step_noise_scale(0.25, 5.0) == pytest.approx(1.0)
    assert step_noise_scale(0.5, 4.0) == pytest.approx((math.sqrt(8.0) / 0.5) / (math.sqrt(20.0) / 0.25))
    assert step_noise_scale(0.125, 5.0) / step_noise_scale(0.25, 5.0) == pytest.approx(2.0 * math.sqrt(2.0))
    assert ctls_sensitivity(2, 40, 3).total / ctls_sensitivity(2, 10, 3).total == pytest.approx(2.0, rel=0.05)


def test_the_step_families_choose_their_cap_at_their_scale():
    """The same events, one w-bin width: DP-SSP and ctls at (w, s) = (0.5, 4) read the target at their step scale
    (about a third of exp's), so 800 bins of 3 events are too many to clip for them and few enough for exp."""
    from dphawkes_core.estimators.binned import chosen_count_cap

    singles = [k * 0.5 + 0.25 for k in range(20_000)]
    triples = [k * 0.5 + 0.1 * j for k in range(20_000, 20_800) for j in (1, 2, 3)]
    events = from_arrays([np.sort(singles + triples)], end_time=10_500.0)
    caps = {method: chosen_count_cap(events, FitConfig(method=method, bin_size=0.5, lags=8, epsilon=1.0,
                                                       calibration="formal", count_cap="auto", seed=3))[1]
            for method in ("ssp", "ctls", "exp")}
    scaled = clip_target(1.0, 1e-5, 0.05, scale=step_noise_scale(0.5, 4.0))
    assert caps["ssp"].clipped_target == caps["ctls"].clipped_target == pytest.approx(scaled)
    assert caps["exp"].clipped_target == pytest.approx(clip_target(1.0, 1e-5, 0.05))
    assert scaled < 800 < caps["exp"].clipped_target
    assert caps["ssp"].count_cap == caps["ctls"].count_cap == 3 and caps["exp"].count_cap == 1
    # 300 bins of 3: within DP-SSP's target, but over ctls's guard (1 % of the events: its C never below the 1 % rule's)
    fewer = from_arrays([np.sort(singles + triples[:900])], end_time=10_500.0)
    chosen = {method: chosen_count_cap(fewer, FitConfig(method=method, bin_size=0.5, lags=8, epsilon=1.0,
                                                        calibration="formal", count_cap="auto", seed=3))[0]
              for method in ("ssp", "ctls")}
    assert chosen == {"ssp": 1, "ctls": 3}


@pytest.mark.parametrize("share, releases", [(0.05, 1), (0.2, 1), (0.05, 50)])
def test_composition_is_exactly_the_users_budget(share, releases):
    """The release's noise plus the cap's compose to (ε, δ): dp-accounting's PLD accountant, run here on
    the two heterogeneous mechanisms, agrees with the reported total and with the target (its discretisation is
    pessimistic: it bounds the exact total from above)."""
    eps, delta, sens = 1.0, 1e-5, 0.37
    sigma, split = compose_count_cap(eps, delta, sens, releases, share, 4)
    accountant = pld_privacy_accountant.PLDAccountant()
    accountant.compose(dp_event.GaussianDpEvent(get_sigma_gaussian(share * eps, delta)))
    accountant.compose(dp_event.GaussianDpEvent(sigma / sens), releases)
    pld = accountant.get_epsilon(delta)
    assert split.epsilon_total == pytest.approx(eps, rel=1e-9)
    assert split.epsilon_total <= pld == pytest.approx(eps, rel=1e-6)
    # the release alone is a little cheaper than ε; the cap alone costs share·ε
    assert split.release_epsilon < eps and split.cap_epsilon == pytest.approx(share * eps)
    # with no cap to pay for, the same ε would buy a little less noise
    assert sigma > sens * math.sqrt(releases) * get_sigma_gaussian(eps, delta)


def _times(n=4000, seed=4):
    rng = np.random.default_rng(seed)
    return [np.sort(rng.uniform(0, 2000, size=n // 2)) for _ in range(2)]


def _events():
    return from_arrays(_times(), end_time=2000.0)


def _auto_config(**kw):
    base = dict(method="ssp", bin_size=0.5, lags=4, count_cap="auto", calibration="formal", epsilon=1.0,
                dp_delta=1e-5)
    return FitConfig(**{**base, **kw})


def test_fit_with_auto_cap_reports_the_split():
    result, info = fit(_events(), _auto_config(seed=5))
    cap = info["auto_count_cap"]["count_cap"]
    assert info["count_cap"] == cap >= 1
    split = result.privacy.budget_split
    assert split.count_cap == cap and split.share == 0.05
    assert split.epsilon_total == pytest.approx(1.0, rel=1e-6)
    assert result.privacy.to_dict()["budget_split"] == split.to_dict()
    stats, _ = prepare_stats(_events(), _auto_config(seed=5))
    assert stats.count_cap == cap
    sens = ssp_lagged_sensitivity(2, 4, stats.n_rows, cap)
    assert result.privacy.sensitivity == pytest.approx(sens)
    public = fit_stats(stats, FitConfig(**{**vars(_auto_config()), "count_cap": cap, "seed": 5}))
    assert result.privacy.sigma2 > public.privacy.sigma2  # the cap's share is paid by the release
    assert public.privacy.budget_split is None


def test_auto_cap_is_reproducible_by_seed_and_apart_from_the_release_noise():
    a, b = (fit(_events(), _auto_config(seed=9)) for _ in range(2))
    assert np.array_equal(a[0].H, b[0].H) and a[1] == b[1]
    assert not np.array_equal(cap_rng(9).standard_normal(3), np.random.default_rng(9).standard_normal(3))


@pytest.mark.parametrize("kw, message", [
    (dict(method="pgd", bound=1.0), "DP-SSP"),
    (dict(epsilon=None, sigma2=1e-4), "target ε"),
    (dict(count_cap_share=1.0), "share"),
    (dict(count_cap="big"), "positive integer or 'auto'"),  # DP-SSP takes 'auto': its refusal says so
    (dict(count_cap=0), "positive integer or 'auto'"),
])
def test_bad_auto_settings_are_refused(kw, message):
    with pytest.raises(ConfigError, match=message):
        _auto_config(**kw)


def test_cli_count_cap_auto(tmp_path, capsys):
    data = tmp_path / "events.csv"
    data.write_text("time,dimension\n" + "".join(f"{t},{j}\n" for j, ts in enumerate(_times()) for t in ts))
    out = tmp_path / "fit.json"
    code = main(["fit", str(data), "--bin-size", "0.5", "--lags", "4", "--method", "ssp", "--epsilon", "1",
                 "--calibration", "formal", "--count-cap", "auto", "--end-time", "2000", "--json", str(out)])
    assert code == 0
    payload = json.loads(out.read_text())
    assert payload["count_cap"] == payload["auto_count_cap"]["count_cap"] == payload["budget_split"]["count_cap"]
    assert payload["config"]["count_cap"] == "auto"
    assert payload["ssp_release"] == "lagged" and not {"bound", "radius", "clip"} & set(payload)  # DP-SSP's own only
    code = main(["fit", str(data), "--bin-size", "0.5", "--lags", "4", "--method", "pgd", "--bound", "1",
                 "--epsilon", "1", "--calibration", "formal", "--count-cap", "auto", "--end-time", "2000"])
    assert code == 2 and "DP-SSP" in capsys.readouterr().err


@pytest.fixture(scope="module")
def audit_events():
    from dphawkes_core.data.kernels import get_scenario
    from dphawkes_core.data.simulate import simulate

    return simulate(get_scenario("paper-2d"), n_events=600, seed=3)


@pytest.mark.parametrize("seed", [None, 4])
@pytest.mark.parametrize("broken, violated", [(None, False), (100.0, True)])
def test_audit_runs_the_whole_auto_cap_mechanism(audit_events, broken, violated, seed):
    """The audit chooses C in every run (the test sees it) and claims the composed μ = √(S²/σ² + 1/σ_C²) of the
    mechanism it runs: for an unseeded config the release's (both noises the discrete Gaussian, ρ adding up to the
    ρ(ε, δ) of zCDP: μ = √(2ρ)), for a seeded one numpy's continuous Gaussians, exactly (ε, δ); a mechanism whose
    two noises are 100× too small is caught, the correct one is not refuted."""
    from dphawkes_core.privacy.accounting import gaussian_multiplier
    from dphawkes_experiments.audit import AuditConfig, run_audit

    config = _auto_config(lags=4, seed=seed)
    result = run_audit(audit_events, AuditConfig(config, trials=120, broken_factor=broken, seed=1))
    assert result.mu_claimed == pytest.approx(1 / gaussian_multiplier(1.0, 1e-5, discrete=seed is None), rel=1e-6)
    assert result.extra["sampler"].startswith("discrete Gaussian") is (seed is None)
    assert result.violated is violated
    assert result.to_dict()["count_cap"] == "auto"
