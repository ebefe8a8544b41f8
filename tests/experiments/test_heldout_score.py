"""The held-out log-likelihood score against closed forms (a Poisson process, one exponential kernel) and against
tick's HawkesEM.score on the same step-kernel model and data."""

import math

import numpy as np
import pytest

from dphawkes_core.data.io import Events, EventSequence, from_arrays
from dphawkes_core.errors import ConfigError
from dphawkes_core.evaluation.lag_average import average_lags
from dphawkes_core.evaluation.step_kernels import StepKernels
from dphawkes_experiments.prediction import heldout_split, score_heldout, split_events


def _zero_steps(d: int, support: float = 1.0) -> StepKernels:
    return StepKernels(np.zeros((d, d, 1)), np.array([0.0, support]), np.zeros(d), support, 1)


class _Exponential:
    """One exponential kernel ``h(t) = α β e^{−βt}`` (1-d), cut where ``e^{−βt}`` is below 1e-26."""

    def __init__(self, alpha: float, beta: float):
        self.alpha, self.beta, self.support = alpha, beta, 60.0 / beta

    def values_at(self, t):
        t = np.asarray(t, float)
        return np.where((t > 0) & (t <= self.support), self.alpha * self.beta * np.exp(-self.beta * t), 0.0)[None, None]

    def primitive_at(self, t):
        t = np.clip(np.asarray(t, float), 0, self.support)
        return (self.alpha * -np.expm1(-self.beta * t))[None, None]


def test_poisson_model_scores_its_closed_form():
    rng = np.random.default_rng(0)
    times = [np.sort(rng.uniform(0, 100, 60)), np.sort(rng.uniform(0, 100, 140))]
    events = from_arrays(times, end_time=100.0)
    split = heldout_split(events, 70.0)
    mu = np.array([0.5, 1.2])
    score = score_heldout(_zero_steps(2), mu, split)
    test = [t[t >= 70] for t in times]
    n = sum(t.size for t in test)
    expected = (sum(t.size * math.log(m) for t, m in zip(test, mu)) - mu.sum() * 30) / n
    rates = np.array([np.count_nonzero(t < 70) for t in times]) / 70.0
    reference = (sum(t.size * math.log(r) for t, r in zip(test, rates)) - rates.sum() * 30) / n
    assert score.n_test_events == n and score.nonpositive_intensity_events == 0
    assert score.loglik_per_event == pytest.approx(expected, rel=1e-12)
    assert score.poisson_loglik_per_event == pytest.approx(reference, rel=1e-12)
    assert score.gain_over_poisson == pytest.approx(expected - reference, rel=1e-10)
    # The Poisson fit itself, given as the model, gains nothing, in every block: its bootstrap error is 0.
    itself = score_heldout(_zero_steps(2), rates, split)
    assert itself.gain_over_poisson == pytest.approx(0.0, abs=1e-12)
    assert itself.gain_standard_error == pytest.approx(0.0, abs=1e-12)


def test_exponential_kernel_matches_recursion_and_compensator_with_history():
    rng = np.random.default_rng(1)
    t = np.sort(rng.uniform(0, 50, 120))
    mu, alpha, beta, cut, end = 0.8, 0.6, 1.5, 30.0, 50.0
    # Independent: the exponential recursion A_n = e^{−β(t_n − t_{n−1})}(1 + A_{n−1}) over the full history.
    a = np.zeros(t.size)
    for n in range(1, t.size):
        a[n] = math.exp(-beta * (t[n] - t[n - 1])) * (1 + a[n - 1])
    lam = mu + alpha * beta * a
    test = t >= cut
    compensator = mu * (end - cut) + alpha * np.sum(
        np.exp(-beta * np.clip(cut - t, 0, None)) - np.exp(-beta * (end - t))
    )
    expected = (np.log(lam[test]).sum() - compensator) / test.sum()
    score = score_heldout(_Exponential(alpha, beta), np.array([mu]), heldout_split(from_arrays([t], end_time=end), cut))
    assert score.loglik_per_event == pytest.approx(expected, rel=1e-10)
    # Events before the cut count in the intensity: the same closed form without them is far from the score.
    tt = t[test]
    b = np.concatenate([[0.0], [np.exp(-beta * (tt[n] - tt[:n])).sum() for n in range(1, tt.size)]])
    no_history = (np.log(mu + alpha * beta * b).sum() - mu * (end - cut)
                  - alpha * np.sum(-np.expm1(-beta * (end - tt)))) / tt.size
    assert abs(no_history - score.loglik_per_event) > 1e4 * 1e-10 * abs(expected)


def _tick_loglik(em, events, end, baseline, kernels):
    """tick's HawkesEM.score is (log-likelihood + d·T) / n (its sum starts at T per dimension): undone here."""
    n = sum(len(t) for t in events)
    return em.score(events=events, end_times=end, baseline=baseline, kernel=kernels) * n - len(events) * end


def test_step_kernels_match_ticks_score_on_simulated_data():
    from tick.base import TimeFunction
    from tick.hawkes import HawkesEM, HawkesKernelTimeFunc, SimuHawkes

    rng = np.random.default_rng(2)
    d, delta, p = 3, 0.4, 7  # lag-averaged in blocks of 3: bins 1.2, 1.2 and a shorter last one of 0.4
    steps = average_lags(rng.uniform(0, 0.12, (d, d, p)), np.array([0.3, 0.2, 0.4]), delta, 3)
    table = steps.function_table()
    kernels = [[HawkesKernelTimeFunc(TimeFunction((np.array(table["t"][::2]), np.array(table["values"][i, j, 1::2])),
                                                  inter_mode=TimeFunction.InterConstRight)) for j in range(d)]
               for i in range(d)]
    sim = SimuHawkes(baseline=list(steps.baseline), kernels=kernels, end_time=2000.0, seed=4, verbose=False)
    sim.simulate()
    times = [np.asarray(t, float) for t in sim.timestamps]
    end, cut = 2000.0, 1300.0
    score = score_heldout(steps, steps.baseline, heldout_split(from_arrays(times, end_time=end), cut))
    em = HawkesEM(kernel_discretization=steps.edges)
    full = _tick_loglik(em, times, end, steps.baseline, steps.values)
    train = _tick_loglik(em, [t[t < cut] for t in times], cut, steps.baseline, steps.values)
    assert score.n_test_events == sum(np.count_nonzero(t >= cut) for t in times) > 500
    assert score.loglik_per_event == pytest.approx((full - train) / score.n_test_events, rel=1e-10)
    assert score.gain_over_poisson > 0  # the true model predicts better than Poisson


def test_intensity_at_or_below_zero_scores_minus_infinity_with_its_count():
    t = np.array([1.0, 2.0, 2.5, 3.2, 4.1, 6.0, 6.3, 8.0])
    steps = StepKernels(np.array([[[-1.0]]]), np.array([0.0, 1.0]), np.array([0.5]), 1.0, 1)
    score = score_heldout(steps, steps.baseline, heldout_split(from_arrays([t], end_time=9.0), 2.2), rectify=False)
    lam = np.array([0.5 - np.count_nonzero((x - t > 0) & (x - t <= 1)) for x in t])
    test = t >= 2.2
    assert score.n_test_events == test.sum()
    assert score.nonpositive_intensity_events == np.count_nonzero(lam[test] <= 0) > 0
    assert score.loglik_per_event == -math.inf and score.gain_over_poisson == -math.inf
    assert math.isnan(score.gain_standard_error)
    assert score.to_dict()["loglik_per_event"] == "-inf" and score.to_dict()["gain_standard_error"] is None
    assert score.verdict.word == "worse" and "could not happen" in score.verdict.sentence
    assert "−∞" in score.verdict.sentence


def test_several_sequences_are_scored_whole_and_resampled_by_sequence():
    rng = np.random.default_rng(3)
    seqs = tuple(EventSequence((np.sort(rng.uniform(0, 10, 5 + 3 * k)),), 10.0) for k in range(6))
    events = Events(seqs, ("a",))
    split = heldout_split(events, None, 0.5)
    score = score_heldout(_zero_steps(1), np.array([1.0]), split)
    test = [s.times[0] for s in seqs[3:]]
    n = sum(x.size for x in test)
    assert score.split == "sequences" and score.n_blocks == 3 and score.n_test_events == n
    assert score.loglik_per_event == pytest.approx(-30.0 / n)  # log 1 = 0, compensator 1 · 10 per sequence
    rate = sum(s.times[0].size for s in seqs[:3]) / 30.0
    assert score.poisson_loglik_per_event == pytest.approx((n * math.log(rate) - 30 * rate) / n)


def test_bootstrap_error_tracks_the_spread_over_independent_data():
    """The block-bootstrap standard error of the gain is close to the gain's spread over independent data sets."""
    from dphawkes_core.data.kernels import get_scenario
    from dphawkes_core.data.simulate import simulate
    from dphawkes_core.estimators import FitConfig, fit
    from dphawkes_core.evaluation.lag_average import fit_steps

    scenario = get_scenario("paper-2d")
    model = fit(simulate(scenario, end_time=4000.0, seed=99), FitConfig(bin_size=0.5, lags=8))[0]
    gains, errors = [], []
    for seed in range(40):
        events = simulate(scenario, end_time=1000.0, seed=seed)
        score = score_heldout(fit_steps(model), model.baseline, heldout_split(events, 600.0))
        gains.append(score.gain_over_poisson)
        errors.append(score.gain_standard_error)
    ratio = np.mean(errors) / np.std(gains, ddof=1)
    assert 0.6 < ratio < 1.6, ratio


def test_split_refusals():
    one = from_arrays([[1.0, 2.0, 3.0]], end_time=4.0)
    with pytest.raises(ConfigError, match="inside the window"):
        heldout_split(one, 4.0)
    seqs = Events(tuple(EventSequence((np.array([1.0]),), 2.0) for _ in range(3)), ("a",))
    with pytest.raises(ConfigError, match="share of sequences"):
        heldout_split(seqs, 1.0)
    assert heldout_split(one, None, 0.5).eval_from == split_events(one, 0.5).eval_from


def test_a_dimension_without_events_is_scored_by_its_compensator_alone():
    """The last dimension has no event at all: it adds only its compensator, η_2 (T − X) plus the mass its kernel
    from dimension 1 receives — here computed from the closed form of one box kernel."""
    t = np.array([1.0, 2.5, 4.0, 6.5, 8.0])
    steps = StepKernels(np.array([[[0.0], [0.0]], [[0.4], [0.0]]]), np.array([0.0, 2.0]), np.array([0.5, 0.2]),
                        2.0, 1)
    events = from_arrays([t, np.array([])], end_time=10.0)
    score = score_heldout(steps, steps.baseline, heldout_split(events, 5.0))
    test = t[t >= 5]
    kernel_mass = 0.4 * sum(min(10 - u, 2) - min(max(5 - u, 0), 2) for u in t)
    expected = (test.size * math.log(0.5) - 0.5 * 5 - 0.2 * 5 - kernel_mass) / test.size
    assert score.loglik_per_event == pytest.approx(expected, rel=1e-12)


def test_a_fit_that_can_reach_zero_is_read_as_its_floor_against_a_brute_force_integral():
    """Rectified reading: ``max(λ, f)`` at the test events and integrated over the test part, f = 5 % of the
    training part's mean rate; the integral checked against a midpoint sum on a grid far finer than the steps
    (independent of the cut points the score uses), the log terms against a loop over the events."""
    rng = np.random.default_rng(8)
    times = [np.sort(rng.uniform(0, 40, 70)), np.sort(rng.uniform(0, 40, 50))]
    steps = StepKernels(np.array([[[0.613, -0.937], [-0.521, 0.229]], [[-0.447, 0.311], [0.503, -1.171]]]),
                        np.array([0.0, 0.5, 1.5]), np.array([0.307, 0.419]), 0.5, 1)  # no sum lands on 0 exactly
    split = heldout_split(from_arrays(times, end_time=40.0), 25.0)
    score = score_heldout(steps, steps.baseline, split)
    floor = 0.05 * np.array([np.count_nonzero(t < 25) for t in times]) / 25.0
    all_t = np.concatenate(times)
    all_d = np.concatenate([np.full(t.size, j) for j, t in enumerate(times)])

    def intensity(x):
        lag = x[:, None] - all_t[None, :]  # (points, events)
        lam = np.tile(steps.baseline, (x.size, 1))
        for b, (lo, hi) in enumerate(zip(steps.edges[:-1], steps.edges[1:])):
            inside = (lag > lo) & (lag <= hi)
            lam += inside.astype(float) @ steps.values[:, all_d, b].T
        return lam

    grid = np.linspace(25.0, 40.0, 600_001)
    integral = sum(np.maximum(intensity(0.5 * (a + b)), floor).sum() * (grid[1] - grid[0])
                   for a, b in zip(np.array_split(grid[:-1], 60), np.array_split(grid[1:], 60)))
    test = all_t >= 25.0
    own = intensity(all_t[test])[np.arange(test.sum()), all_d[test]]
    logs = np.log(np.maximum(own, floor[all_d[test]])).sum()
    assert score.rectified and score.nonpositive_intensity_events == np.count_nonzero(own <= 0) > 0
    assert score.loglik_per_event == pytest.approx((logs - integral) / test.sum(), rel=1e-5)
    assert "could not happen" in score.verdict.sentence and "at least 5 % of the training part" in \
        score.verdict.sentence
    plain = score_heldout(steps, steps.baseline, split, rectify=False)
    assert plain.loglik_per_event == -math.inf and plain.nonpositive_intensity_events == \
        score.nonpositive_intensity_events


def test_smooth_kernels_that_can_reach_zero_use_the_midpoint_rule():
    """One exponential kernel with a negative weight: the rectified integral by the midpoint rule on 32 pieces per
    gap agrees with a fine grid to 1e-4."""
    rng = np.random.default_rng(9)
    t = np.sort(rng.uniform(0, 30, 80))

    class Negative(_Exponential):
        adjacency = np.array([[[-0.8]]])  # what marks a sum of exponentials that can reach 0

    score = score_heldout(Negative(-0.8, 2.0), np.array([1.0]), heldout_split(from_arrays([t], end_time=30.0), 20.0))
    floor = 0.05 * np.count_nonzero(t < 20) / 20.0
    grid = np.linspace(20.0, 30.0, 1_000_001)
    middles = 0.5 * (grid[1:] + grid[:-1])
    lam = np.ones(middles.size)
    for u in t:
        lag = middles - u
        lam += np.where(lag > 0, -1.6 * np.exp(-2.0 * np.clip(lag, 0, None)), 0.0)
    integral = np.maximum(lam, floor).sum() * (grid[1] - grid[0])
    own = np.array([1.0 + sum(-1.6 * math.exp(-2.0 * (x - u)) for u in t if u < x) for x in t[t >= 20]])
    expected = (np.log(np.maximum(own, floor)).sum() - integral) / own.size
    assert score.rectified and score.nonpositive_intensity_events == np.count_nonzero(own <= 0) > 0
    assert score.loglik_per_event == pytest.approx(expected, rel=1e-4)


def test_an_event_at_a_test_windows_start_is_conditioned_on_not_scored():
    """Sequences that start with an event at t = 0 (a window cut at its first event, like the taxi shifts): that
    event is where the observation begins, so the score conditions on it (history for the rest) and scores the
    others; a zero baseline of its dimension then costs nothing there."""
    seqs = tuple(EventSequence((np.array([0.0, 3.0, 7.0]), np.array([1.0, 1.5, 8.2])), 10.0) for _ in range(4))
    split = heldout_split(Events(seqs, ("pick-up", "drop-off")), None, 0.5)
    steps = StepKernels(np.array([[[0.0], [0.0]], [[0.5], [0.0]]]), np.array([0.0, 2.0]), np.array([0.0, 0.1]),
                        2.0, 1)
    score = score_heldout(steps, steps.baseline, split, rectify=False)
    assert score.conditioned_events == 2 and score.n_test_events == 10
    assert score.nonpositive_intensity_events == 4  # the pick-ups at 3 and 7 (zero baseline), not those at 0
    positive = score_heldout(steps, np.array([0.2, 0.1]), split)
    drop_offs = np.full(3, 0.1 + 0.5)  # 1.0 and 1.5 excited by the pick-up at 0, 8.2 by the one at 7
    kernel_mass = 0.5 * 2.0 * 3  # each pick-up excites the drop-offs for 2 time units, all inside the window
    expected = 2 * (2 * np.log(0.2) + np.log(drop_offs).sum() - 0.3 * 10 - kernel_mass) / 10
    assert positive.conditioned_events == 2 and positive.loglik_per_event == pytest.approx(expected, rel=1e-12)


def test_taxi_shifts_score_finite_once_their_first_events_are_conditioned_on():
    """The app's −∞ on the taxi shifts, explained: every shift starts with an event at t = 0 (its window is cut
    there), which no fit takes as a target (the first s of a window is history), while the score asked each fit for
    its probability with the baseline alone — zero for ctls's pick-up dimensions. Conditioned on, and with the
    baseline floor, the non-private ctls fit predicts; without the floor the remaining zeros are counted."""
    from dphawkes_core.data.datasets import default_data_dir, list_samples, load_sample
    from dphawkes_core.estimators import FitConfig, fit
    from dphawkes_experiments.prediction import score_fit

    found = [s for s in list_samples() if s.name == "nyc_taxi"]
    if not found:
        pytest.skip(f"the shared data set is absent: {default_data_dir() / 'nyc_taxi'}")
    split = heldout_split(load_sample(found[0]).events, None, 0.7)
    starts = sum(any(t.size and t[0] == 0 for t in seq.times) for seq in split.test)
    config = FitConfig(method="ctls", bin_size=0.25, lags=8, sigma2=0.0, calibration="formal")
    score = score_fit(fit(split.train, config)[0], split)
    assert score.conditioned_events == starts == len(split.test)
    assert score.nonpositive_intensity_events == 0 and not score.rectified and score.verdict.word == "better"
    bare = fit(split.train, config.with_changes(baseline_floor=0.0))[0]
    assert min(bare.baseline) == 0 and 0 < score_fit(bare, split).nonpositive_intensity_events < starts
