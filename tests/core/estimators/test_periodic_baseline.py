"""A baseline that follows the clock (``baseline_period``, ``baseline_bins``) for mle and exp: the likelihood at the fit
against a brute force (loops over the events, a direct numerical integral of the baseline), no feasible perturbation
better (the maximum), exp's least squares against tick's ``ModelHawkesSumExpKernLeastSq(n_baselines, period_length)``,
the parts recovered, and the refusals."""

import math

import numpy as np
import pytest

from dphawkes_core.data.io import Events, EventSequence, from_arrays
from dphawkes_core.errors import ConfigError
from dphawkes_core.estimators import FitConfig, fit
from dphawkes_experiments.prediction import heldout_split, score_fit

PERIOD, PARTS = 24.0, 6


def _periodic_events(seed: int, end: float = 1500.0, start: float = 0.0):
    """Two dimensions: a Poisson process whose rate follows the day (thinning), each event followed by a child after
    an exponential delay with probability 0.4 (one generation: a clustered, periodic sample)."""
    rng = np.random.default_rng(seed)
    times = []
    for j in range(2):
        candidates = np.sort(rng.uniform(0, end, rng.poisson(0.6 * end)))
        phase = 2 * np.pi * (candidates + start) / PERIOD
        parents = candidates[rng.uniform(0, 0.6, candidates.size) < 0.3 + 0.25 * np.sin(phase + j)]
        kids = parents + rng.exponential(1.0 + j, parents.size)
        kids = kids[(rng.uniform(size=parents.size) < 0.4) & (kids < end)]
        times.append(np.sort(np.concatenate([parents, kids])))
    return times


def _part(t, start=0.0):
    """The part by its definition (independent of the package): the phase in the day over a part's length."""
    return np.floor(np.mod(np.asarray(t) + start, PERIOD) / (PERIOD / PARTS)).astype(int)


def _integral_of_parts(profile, a, b, start=0.0, step=1e-3):
    """``∫_a^b μ_i`` by the midpoint rule on a fine grid (a direct numerical integral; the grid's nodes fall on the
    parts' edges, so it is exact for a step function up to round-off)."""
    grid = np.linspace(a, b, int(round((b - a) / step)) + 1)
    middles = 0.5 * (grid[1:] + grid[:-1])
    return np.asarray(profile)[:, _part(middles, start)].sum(axis=1) * (grid[1] - grid[0])


def _mle_loglik(times, end, width, lags, kernels, profile, start=0.0):
    """The step-kernel likelihood of the family's convention (targets from s = Bw on, compensator over [s, T]) by loops
    over the events; the baseline's integral numerically."""
    s = width * lags
    total = 0.0
    for i, ti in enumerate(times):
        for t in ti[ti >= s]:
            lam = profile[i][_part(t, start)]
            for j, tj in enumerate(times):
                for u in tj[(tj < t) & (tj >= t - s)]:
                    b = math.ceil((t - u) / width) - 1
                    lam += kernels[i, j, b]
            total += math.log(lam)
    total -= _integral_of_parts(profile, s, end, start).sum()
    for j, tj in enumerate(times):
        for u in tj:
            for b in range(lags):
                lo, hi = max(u + b * width, s), min(u + (b + 1) * width, end)
                if hi > lo:
                    total -= kernels[:, j, b].sum() * (hi - lo)
    return total


def test_mle_with_a_periodic_baseline_is_the_maximum_of_the_likelihood_written_with_loops():
    times = _periodic_events(1, end=400.0)
    config = FitConfig(method="mle", bin_size=1.0, lags=3, baseline_period=PERIOD, baseline_bins=PARTS,
                       baseline_floor=0.0, mle_tol=1e-12)
    result, _ = fit(from_arrays(times, end_time=400.0), config)
    profile = np.array(result.info["baseline_profile"])
    kernels = result.kernels
    best = _mle_loglik(times, 400.0, 1.0, 3, kernels, profile)
    assert result.info["converged"] and profile.shape == (2, PARTS)
    assert result.info["log_likelihood"] == pytest.approx(best, rel=1e-9)
    # The exported mean baseline is the parts' mean over the fit window [s, T].
    np.testing.assert_allclose(result.baseline, _integral_of_parts(profile, 3.0, 400.0) / 397.0, rtol=1e-6)
    step = 1e-4
    for index in [(0, 0, 0), (1, 0, 2), (0, 1, 1), (1, 1, 0)]:
        for sign in (1, -1):
            moved = kernels.copy()
            moved[index] = max(moved[index] + sign * step, 0.0)
            assert _mle_loglik(times, 400.0, 1.0, 3, moved, profile) <= best + 1e-9 * abs(best)
    for i in range(2):
        for k in range(PARTS):
            for sign in (1, -1):
                moved = profile.copy()
                moved[i, k] = max(moved[i, k] + sign * step, 1e-12)
                assert _mle_loglik(times, 400.0, 1.0, 3, kernels, moved) <= best + 1e-9 * abs(best)


def test_the_parts_follow_the_phase_of_the_datas_own_axis():
    """The same events on a window that starts 6 h later on the data's axis: the parts turn by one (6 parts of 24 h:
    4 h each... here a shift of one part, 4 h), and the fit with them is the fit of the shifted profile."""
    times = _periodic_events(2, end=300.0)
    plain = fit(from_arrays(times, end_time=300.0),
                FitConfig(method="mle", bin_size=1.0, lags=3, baseline_period=PERIOD, baseline_bins=PARTS))[0]
    shifted = Events((EventSequence(tuple(times), 300.0, start_time=PERIOD / PARTS),), ("a", "b"))
    moved = fit(shifted, FitConfig(method="mle", bin_size=1.0, lags=3, baseline_period=PERIOD, baseline_bins=PARTS))[0]
    np.testing.assert_allclose(np.roll(plain.info["baseline_profile"], 1, axis=1), moved.info["baseline_profile"],
                               rtol=1e-6, atol=1e-12)


def _exp_loglik(times, end, decays, adjacency, profile):
    """exp's likelihood (no history before 0) by loops: λ at every event from the exponential sums, the baseline's
    integral numerically, the kernels' integrals in closed form per event."""
    beta = np.asarray(decays)
    total = 0.0
    for i, ti in enumerate(times):
        for t in ti:
            lam = profile[i][_part(t)]
            for j, tj in enumerate(times):
                lag = t - tj[tj < t]
                lam += sum(adjacency[i, j, u] * beta[u] * np.exp(-beta[u] * lag).sum() for u in range(beta.size))
            total += math.log(lam)
    total -= _integral_of_parts(profile, 0.0, end).sum()
    for j, tj in enumerate(times):
        total -= sum(adjacency[:, j, u].sum() * (-np.expm1(-beta[u] * (end - tj))).sum() for u in range(beta.size))
    return total


def test_exp_likelihood_with_a_periodic_baseline_is_the_maximum_of_the_likelihood_written_with_loops():
    times = _periodic_events(3, end=300.0)
    decays = (0.5, 2.0)
    result, _ = fit(from_arrays(times, end_time=300.0),
                    FitConfig(method="exp", bin_size=1.0, lags=4, sigma2=0.0, calibration="formal", decays=decays,
                              exp_likelihood=True, baseline_period=PERIOD, baseline_bins=PARTS, baseline_floor=0.0))
    adjacency, profile = np.array(result.info["adjacency"]), np.array(result.info["baseline_profile"])
    best = _exp_loglik(times, 300.0, decays, adjacency, profile)
    assert result.info["converged"] and np.all(adjacency >= 0) and np.all(profile > 0)
    step = 1e-4
    for index in [(0, 0, 0), (0, 1, 1), (1, 0, 0), (1, 1, 1)]:
        for sign in (1, -1):
            moved = adjacency.copy()
            moved[index] = max(moved[index] + sign * step, 0.0)
            assert _exp_loglik(times, 300.0, decays, moved, profile) <= best + 1e-9 * abs(best)
    for i in range(2):
        for k in (0, 2, 5):
            for sign in (1, -1):
                moved = profile.copy()
                moved[i, k] += sign * step
                assert _exp_loglik(times, 300.0, decays, adjacency, moved) <= best + 1e-9 * abs(best)


def test_exp_least_squares_with_a_periodic_baseline_is_ticks():
    """tick's least-squares model with ``n_baselines`` and ``period_length`` (its baselines first, then the
    adjacency), minimised by L-BFGS on its own loss and gradient, has the same minimum."""
    from scipy.optimize import minimize
    from tick.hawkes.model import ModelHawkesSumExpKernLeastSq

    times = _periodic_events(4, end=2000.0)
    decays = (0.5, 2.0)
    result, _ = fit(from_arrays(times, end_time=2000.0),
                    FitConfig(method="exp", bin_size=1.0, lags=5, sigma2=0.0, calibration="formal", decays=decays,
                              exp_ridge=0.0, exp_nonnegative=False, baseline_period=PERIOD, baseline_bins=PARTS))
    ours = np.concatenate([np.ravel(result.info["baseline_profile"]), np.ravel(result.info["adjacency"])])
    model = ModelHawkesSumExpKernLeastSq(np.array(decays), n_baselines=PARTS, period_length=PERIOD)
    model.fit([np.ascontiguousarray(t) for t in times], 2000.0)
    tick = minimize(model.loss, np.full(model.n_coeffs, 0.1), jac=model.grad, method="L-BFGS-B",
                    options=dict(maxiter=100_000, ftol=1e-16, gtol=1e-13)).x
    np.testing.assert_allclose(ours, tick, atol=1e-6 * np.abs(tick).max())
    assert model.loss(ours) <= model.loss(tick) + 1e-12


def test_the_parts_recover_a_daily_rate_and_predict_better_than_a_constant():
    """On a clustered sample whose rate follows the day, mle's six parts recover the day's shape (highest where the
    sine peaks) and score better on held-out days than the constant baseline."""
    times = _periodic_events(5, end=3000.0)
    split = heldout_split(from_arrays(times, end_time=3000.0), 2100.0)
    daily = fit(split.train, FitConfig(method="mle", bin_size=1.0, lags=4, baseline_period=PERIOD,
                                       baseline_bins=PARTS))[0]
    constant = fit(split.train, FitConfig(method="mle", bin_size=1.0, lags=4))[0]
    profile = np.array(daily.info["baseline_profile"])
    rate = 0.3 + 0.25 * np.sin(2 * np.pi * (np.arange(PARTS) + 0.5) * 4 / 24)  # dimension 0's rate mid-part
    assert np.corrcoef(profile[0], rate)[0, 1] > 0.9
    assert score_fit(daily, split).gain_over_poisson > score_fit(constant, split).gain_over_poisson + 0.02


def test_window_parts_follow_each_window_and_are_refused_past_one_cut_in_time():
    """Without a period the parts are bins of each sequence's window: shifts whose events crowd their first hours get a
    higher first part; on one sequence cut in time such parts do not reach the test part (refused in words)."""
    rng = np.random.default_rng(6)
    seqs = tuple(EventSequence((np.sort(rng.uniform(0, 2, 12) ** 2 * 2),), 8.0) for _ in range(60))
    events = Events(seqs, ("a",))
    result = fit(events, FitConfig(method="mle", bin_size=0.5, lags=2, baseline_bins=4))[0]
    profile = np.array(result.info["baseline_profile"])[0]
    assert result.info["baseline_period"] is None and profile[0] > 1.5 * profile[-1]
    assert score_fit(result, heldout_split(events, None, 0.5)).n_test_events > 0
    one = from_arrays([np.sort(rng.uniform(0, 50, 80))], end_time=50.0)
    single = fit(one, FitConfig(method="mle", bin_size=0.5, lags=2, baseline_bins=4))[0]
    with pytest.raises(ConfigError, match="does not reach past the training window"):
        score_fit(single, heldout_split(one, 30.0))


def test_refusals_in_words():
    one_part = FitConfig(method="mle", bin_size=1.0, lags=2, baseline_period=24.0)  # tick's n_baselines = 1
    assert fit(from_arrays([[1.0, 3.0, 4.5, 7.0]], end_time=9.0), one_part)[0].info.get("baseline_profile") is None
    with pytest.raises(ConfigError, match="for the event unit"):
        FitConfig(method="exp", bin_size=1.0, lags=2, epsilon=1.0, calibration="formal", count_cap=2,
                  privacy_unit="sequence", max_events=10, baseline_bins=3)
    with pytest.raises(ConfigError, match="does not read baseline_bins"):
        FitConfig(method="ctls", bin_size=1.0, lags=2, baseline_bins=3)


def test_a_part_no_fit_window_reaches_is_at_the_floor_not_zero():
    """Window bins on windows shorter than s·K/(K−1)…: the first part of every window lies within s of its start
    (history only for mle), so no target sees it; it has no likelihood and sits at the floor, keeping the intensity
    positive there."""
    rng = np.random.default_rng(13)
    seqs = tuple(EventSequence((np.sort(rng.uniform(0, 6, 20)),), 6.0) for _ in range(30))
    result = fit(Events(seqs, ("a",)), FitConfig(method="mle", bin_size=0.5, lags=4, baseline_bins=4))[0]
    profile = np.array(result.info["baseline_profile"])[0]
    floor = result.info["baseline_floor"][0]
    assert profile[0] == pytest.approx(floor) and floor > 0 and np.all(profile[1:] >= floor)
