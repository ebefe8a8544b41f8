"""The time scale Δ, s chosen privately: the count's sensitivity on adversarial neighbours, the budget split
against dp-accounting's PLD accountant, the rule against its closed form, and the session drawing it inside the
recorded release (a replay draws nothing)."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from dp_accounting import dp_event
from dp_accounting.pld import pld_privacy_accountant

import dphawkes_core.privacy.time_scale as selection
from dphawkes_core.data.kernels import get_scenario
from dphawkes_core.data.simulate import simulate
from dphawkes_core.errors import ConfigError
from dphawkes_core.estimators import FitConfig
from dphawkes_core.privacy.accounting import BudgetExceeded, compose_epsilon, split, zcdp_epsilon, zcdp_rho
from dphawkes_core.privacy.time_scale import (
    dp_time_scale,
    nice_number,
    scale_rng,
    time_scale_from_count,
)
from dphawkes_core.release.ledger_file import LedgerBook
from dphawkes_core.release.session import PrivacySession

DELTA = 1e-5


def _pld_epsilon(multipliers: list[tuple[float, int]], delta: float) -> float:
    accountant = pld_privacy_accountant.PLDAccountant()
    accountant.compose(dp_event.ComposedDpEvent(
        [dp_event.SelfComposedDpEvent(dp_event.GaussianDpEvent(m), k) for m, k in multipliers]))
    return accountant.get_epsilon(delta)


def _declared(events):
    return dataclasses.replace(events, window_stated=True)


def _count(events) -> int:
    return events.n_events


@pytest.mark.parametrize("seed", range(5))
def test_adding_or_removing_any_one_event_moves_the_released_count_by_at_most_one(seed):
    events = simulate(get_scenario("paper-2d"), n_events=400, seed=seed)
    rng = np.random.default_rng(seed)
    seq = events.sequences[0]
    worst = 0
    for _ in range(50):  # adversarial neighbours: drop an event of the busiest dimension, or add a burst's copy
        j = int(np.argmax([len(t) for t in seq.times]))
        k = int(rng.integers(len(seq.times[j])))
        removed = tuple(np.delete(t, k) if i == j else t for i, t in enumerate(seq.times))
        added = tuple(np.sort(np.append(t, t[k])) if i == j else t for i, t in enumerate(seq.times))
        for times in (removed, added):
            neighbour = dataclasses.replace(events, sequences=(dataclasses.replace(seq, times=times),))
            worst = max(worst, abs(_count(neighbour) - _count(events)))
    assert worst == 1  # the bound (sensitivity 1) is reached, never exceeded


@pytest.mark.parametrize(("epsilon", "share"), [(1.0, 0.05), (1.0, 0.2), (8.0, 0.05), (0.3, 0.1)])
def test_the_count_and_the_fit_compose_to_epsilon_in_dp_accounting(epsilon, share):
    shares = split(epsilon, DELTA, share)
    assert shares.rest_epsilon < epsilon
    count = _pld_epsilon([(shares.selection_multiplier, 1)], DELTA)
    assert count == pytest.approx(share * epsilon, rel=2e-3)
    from dp_accounting.gaussian_mechanism import get_sigma_gaussian

    for releases in (1, 30):  # the fit calibrated at its ε: one release, or K noisy gradients
        fit_multiplier = get_sigma_gaussian(shares.rest_epsilon, DELTA) * math.sqrt(releases)
        total = _pld_epsilon([(shares.selection_multiplier, 1), (fit_multiplier, releases)], DELTA)
        assert total == pytest.approx(epsilon, rel=2e-3)
        assert total <= epsilon * (1 + 2e-3)


def test_a_discrete_split_adds_up_in_zcdp():
    shares = split(1.0, DELTA, 0.05, discrete=True)
    rho_count = 1 / (2 * shares.selection_multiplier**2)
    assert rho_count == pytest.approx(zcdp_rho(0.05, DELTA), rel=1e-12)
    assert zcdp_epsilon(rho_count + zcdp_rho(shares.rest_epsilon, DELTA), DELTA) == pytest.approx(1.0, rel=1e-6)


def test_a_share_that_leaves_nothing_is_refused():
    with pytest.raises(ConfigError, match="share"):
        split(1.0, DELTA, 1.0)


@pytest.mark.parametrize(("x", "nice"), [(0.26, 0.2), (0.4, 0.5), (7.0, 5.0), (7.2, 10.0), (1.4, 1.0), (1.5, 2.0)])
def test_nice_numbers_are_the_nearest_1_2_5_on_a_log_scale(x, nice):
    assert nice_number(x) == pytest.approx(nice)


def test_the_rule_reads_a_mean_gap_of_t_over_n():
    scale = time_scale_from_count(1000.0, 500.0)  # gap 2: Δ = nice(0.5), s = nice(20)
    assert (scale.mean_gap, scale.bin_size, scale.support, scale.lags) == (2.0, 0.5, 20.0, 40)
    assert time_scale_from_count(10.0, -3.0).mean_gap == 10.0  # a noisy count ≤ 1 reads as one event


def test_the_noisy_count_has_the_stated_spread():
    shares = split(1.0, DELTA, 0.05)
    rng = scale_rng(3)
    counts = np.array([dp_time_scale(10_000, 5000.0, shares, rng).noisy_count for _ in range(4000)])
    assert abs(counts.mean() - 10_000) < 5 * shares.selection_multiplier / math.sqrt(counts.size)
    assert counts.std() == pytest.approx(shares.selection_multiplier, rel=0.05)


def _session(tmp_path, n=3000, seed=5):
    events = _declared(simulate(get_scenario("paper-2d"), n_events=n, seed=seed))
    return events, PrivacySession.for_events(events, LedgerBook(tmp_path / "l.json"), "data")


def test_the_session_draws_the_scale_inside_the_release_and_a_replay_draws_nothing(tmp_path, monkeypatch):
    events, session = _session(tmp_path)
    config = FitConfig(method="ssp", bin_size=0.1, lags=5, epsilon=1.0, calibration="formal", count_cap="auto")
    answer = session.release_scaled(config, 0.05)
    scale = answer.time_scale
    assert not answer.replayed and answer.status.formal
    assert (answer.result.bin_size, answer.result.lags) == (scale.bin_size, scale.lags)
    assert scale.lags == math.ceil(scale.support / scale.bin_size - 1e-9)
    exact = time_scale_from_count(float(events.sequences[0].end_time), events.n_events)
    assert abs(scale.noisy_count - events.n_events) < 6 * scale.sigma
    assert scale.bin_size in (exact.bin_size / 2.5, exact.bin_size / 2, exact.bin_size, exact.bin_size * 2,
                              exact.bin_size * 2.5)
    delta = answer.ledger.budget.delta
    assert answer.ledger.spent() == pytest.approx(1.0, rel=2e-3)  # the count and the fit: ε in total
    kinds = [m.label for m in answer.entry.mechanisms]
    assert kinds[0].startswith("event count") and len(kinds) == 3  # N̂, the count cap C, the statistics
    assert compose_epsilon(answer.entry.mechanisms[:1], delta) == pytest.approx(0.05, rel=1e-6)

    def no_draws(*args, **kwargs):
        raise AssertionError("the time scale was drawn again")

    monkeypatch.setattr("dphawkes_core.release.session.dp_time_scale", no_draws)
    for _ in range(5):
        again = session.release_scaled(config, 0.05)
        assert again.replayed and again.time_scale == scale
        assert np.array_equal(again.result.H, answer.result.H)
    assert session.ledger().spent() == pytest.approx(answer.ledger.spent(), rel=1e-12)
    other_start = config.with_changes(bin_size=7.0, lags=2)  # the config's own Δ, p are not read
    assert session.release_scaled(other_start, 0.05).replayed
    with pytest.raises(AssertionError, match="drawn again"):
        session.release_scaled(config, 0.1)  # another share is another release


def test_the_session_refuses_a_scale_without_a_target_epsilon_or_for_the_sequence_unit(tmp_path):
    _, session = _session(tmp_path, n=300)
    with pytest.raises(Exception, match="target ε"):
        session.release_scaled(FitConfig(method="ssp", bin_size=1.0, lags=3, sigma2=1.0, calibration="formal",
                                         count_cap=3))
    with pytest.raises(Exception, match="target ε"):
        session.release_scaled(FitConfig(method="cls", bin_size=1.0, lags=3))
    with pytest.raises(Exception, match="event unit only"):
        session.release_scaled(FitConfig(method="ssp", bin_size=1.0, lags=3, epsilon=1.0, calibration="formal",
                                         count_cap=3, privacy_unit="sequence", max_events=50))


def test_the_choice_is_read_back_from_the_ledger_file_and_a_refusal_draws_nothing(tmp_path, monkeypatch):
    events, session = _session(tmp_path, n=1500)
    config = FitConfig(method="ssp", bin_size=1.0, lags=3, epsilon=1.0, calibration="formal", count_cap=3)
    first = session.release_scaled(config)
    fresh = PrivacySession.for_events(events, LedgerBook(tmp_path / "l.json"), "data")  # a new process, same file

    def no_draws(*args, **kwargs):
        raise AssertionError("drawn")

    monkeypatch.setattr("dphawkes_core.release.session.dp_time_scale", no_draws)
    again = fresh.release_scaled(config)
    assert again.replayed and again.time_scale == first.time_scale
    assert again.entry.mechanisms == first.entry.mechanisms
    with pytest.raises(BudgetExceeded):
        fresh.release_scaled(config.with_changes(epsilon=8.0))  # over the default budget of 5: nothing drawn


def test_a_seeded_scaled_fit_is_reproducible_and_not_formal(tmp_path):
    events, session = _session(tmp_path, n=1000)
    config = FitConfig(method="ssp", bin_size=1.0, lags=3, epsilon=1.0, calibration="formal", count_cap=3, seed=4)
    first = session.release_scaled(config)
    _, other = _session(tmp_path / "b", n=1000)
    assert not first.status.formal
    assert other.release_scaled(config).time_scale == first.time_scale
    assert selection.AUTO_SCALE_SHARE == first.time_scale.share
