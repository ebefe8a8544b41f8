"""Next-event-time prediction against closed forms and a brute-force numerical reference."""

import numpy as np
import pytest

from dphawkes_core.data.io import Events, EventSequence, from_arrays
from dphawkes_core.errors import ConfigError, DataError
from dphawkes_experiments.prediction import evaluate_prediction, expected_waits, split_events


def _brute_force_wait(kernels, baseline, dt, times, dims, n, step_fraction=400):
    """Midpoint-rule ∫ S on a fine grid with the intensity evaluated event by event."""
    d, _, p = kernels.shape
    t_n = times[n]
    hist_t, hist_d = times[: n + 1], dims[: n + 1]
    horizon_bins = int(np.floor(t_n / dt)) + p + 1
    end = (horizon_bins + 1) * dt
    h = dt / step_fraction
    s = np.arange(t_n + h / 2, end, h)
    lam = np.tile(np.asarray(baseline, float)[:, None], (1, s.size))
    s_bin = np.floor(s / dt).astype(int)
    for te, de in zip(hist_t, hist_d):
        lag = s_bin - int(np.floor(te / dt))
        ok = (lag >= 1) & (lag <= p)
        lam[:, ok] += kernels[:, de, lag[ok] - 1]
    rate = np.clip(lam, 0, None).sum(axis=0)
    cum = np.concatenate([[0.0], np.cumsum(rate * h)])
    surv_mid = np.exp(-(cum[:-1] + cum[1:]) / 2)
    tail_rate = np.clip(baseline, 0, None).sum()
    return float(np.sum(surv_mid) * h + np.exp(-cum[-1]) / tail_rate)


def test_zero_kernels_give_poisson_mean_wait():
    seq = from_arrays([[0.5, 1.7, 2.2], [0.9]], end_time=3.0).sequences[0]
    baseline = np.array([0.3, 0.2])
    waits = expected_waits(np.zeros((2, 2, 5)), baseline, 0.25, seq, np.arange(3))
    np.testing.assert_allclose(waits, 1 / 0.5)


def test_matches_brute_force_integration_with_negative_entries():
    rng = np.random.default_rng(3)
    d, p, dt = 2, 6, 0.3
    kernels = rng.uniform(-0.4, 1.2, size=(d, d, p))
    baseline = np.array([0.2, -0.05])  # a negative component is clipped at zero
    events = from_arrays([np.sort(rng.uniform(0, 6, 9)), np.sort(rng.uniform(0, 6, 7))], end_time=6.0)
    seq = events.sequences[0]
    times = np.concatenate(seq.times)
    dims = np.concatenate([np.full(len(t), j) for j, t in enumerate(seq.times)])
    order = np.argsort(times, kind="stable")
    times, dims = times[order], dims[order]
    at = np.array([0, 3, 7, 12, 15])
    fast = expected_waits(kernels, baseline, dt, seq, at)
    slow = [_brute_force_wait(kernels, baseline, dt, times, dims, n) for n in at]
    np.testing.assert_allclose(fast, slow, rtol=2e-3)
    # Self-excitation shortens the wait relative to the baseline alone.
    assert np.all(fast < 1 / 0.2)


def test_zero_baseline_gives_infinite_wait():
    seq = from_arrays([[1.0, 2.0]], end_time=3.0).sequences[0]
    waits = expected_waits(np.full((1, 1, 3), 0.5), np.array([0.0]), 0.5, seq, np.array([1]))
    assert np.isinf(waits[0])


def test_timeline_split_and_poisson_reference():
    times = np.arange(1.0, 21.0)  # one event per time unit, window [0, 20]
    events = from_arrays([times], end_time=20.0)
    split = split_events(events, 0.5)
    assert split.mode == "timeline"
    assert split.train.n_events == 9 and split.train.end_time == pytest.approx(10.0)
    report = evaluate_prediction(np.zeros((1, 1, 2)), np.array([1.0]), 0.5, split)
    # Predictions at t = 10..19 (each has a successor); every observed wait is 1, every prediction 1/η = 1.
    assert report.n_predictions == 10
    assert report.rmse == pytest.approx(0.0, abs=1e-12)
    assert report.poisson_rmse == pytest.approx(abs(10 / 9 - 1))


def test_sequence_split_uses_later_sequences_for_test():
    seqs = tuple(EventSequence((np.array([0.0, 1.0, 3.0]),), 4.0) for _ in range(4))
    events = Events(seqs, ("a",))
    split = split_events(events, 0.5)
    assert split.mode == "sequences" and split.train.n_sequences == 2 and len(split.test) == 2
    report = evaluate_prediction(np.zeros((1, 1, 1)), np.array([1.0]), 1.0, split)
    # Waits 1 and 2 in each test sequence, predicted 1: errors 0 and 1.
    assert report.n_predictions == 4
    assert report.rmse == pytest.approx(np.sqrt(0.5))


def test_bad_split_is_refused():
    events = from_arrays([[1.0, 2.0]], end_time=3.0)
    with pytest.raises(ConfigError):
        split_events(events, 1.0)
    with pytest.raises(DataError):
        split_events(from_arrays([[2.5, 2.8]], end_time=3.0), 0.5)


def test_a_split_keeps_the_data_sets_window_metadata():
    events = from_arrays([[1.0, 2.0, 5.0, 8.0]], end_time=10.0)
    assert events.window_stated
    split = split_events(events, 0.5)
    assert split.train.window_stated and split.train.time_unit == events.time_unit
    assert split.train.sequences[0].end_time == 5.0
    several = Events((events.sequences[0],) * 3, events.names, window_stated=True)
    assert split_events(several, 0.5).train.window_stated
