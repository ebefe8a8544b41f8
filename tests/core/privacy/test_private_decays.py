"""exp's decays chosen privately (``--decays auto``): read from the same noisy count as Δ and s, at the same share,
inside the recorded release — the rule against its closed form, the fit calibrated at the chosen decays (adversarial
neighbours through the code that runs reach its bound), the composition of the recorded mechanisms against
dp-accounting's PLD accountant, and a replay that draws nothing."""

from __future__ import annotations

import dataclasses
from functools import partial

import numpy as np
import pytest
from dp_accounting import dp_event
from dp_accounting.pld import pld_privacy_accountant

from dphawkes_core.data.kernels import get_scenario
from dphawkes_core.data.simulate import simulate
from dphawkes_core.errors import DPHawkesError
from dphawkes_core.estimators import FitConfig, get_family, prepare_stats, privacy_report
from dphawkes_core.privacy.accounting import compose_epsilon, split
from dphawkes_core.privacy.time_scale import (
    DECAY_MULTIPLES,
    DECAYS,
    TIME_SCALE,
    decays_from_count,
    time_scale_from_count,
)
from dphawkes_core.release.ledger_file import LedgerBook
from dphawkes_core.release.session import PrivacySession
from tests.configs import fit_config

FAMILY = get_family("exp")
SHARE = 0.05


def _session(tmp_path, n=3000, seed=5):
    events = dataclasses.replace(simulate(get_scenario("paper-2d"), n_events=n, seed=seed), window_stated=True)
    return events, PrivacySession.for_events(events, LedgerBook(tmp_path / "l.json"), "data")


_config = partial(fit_config, method="exp", bin_size=0.5, lags=8, count_cap=5, epsilon=1.0)


def _pld_epsilon(mechanisms, delta: float) -> float:
    accountant = pld_privacy_accountant.PLDAccountant()
    accountant.compose(dp_event.ComposedDpEvent(
        [dp_event.SelfComposedDpEvent(dp_event.GaussianDpEvent(m.parameter), m.releases) for m in mechanisms]))
    return accountant.get_epsilon(delta)


def test_the_rule_is_the_public_multiples_over_the_mean_gap():
    assert decays_from_count(100.0, 50.0) == pytest.approx(tuple(m / 2.0 for m in DECAY_MULTIPLES), rel=1e-15)
    assert decays_from_count(10.0, -4.0) == pytest.approx(tuple(m / 10.0 for m in DECAY_MULTIPLES))  # N̂ ≤ 1: one
    assert decays_from_count(3.0, 6.0, multiples=(1.0,)) == (2.0,)


def test_the_decays_are_chosen_inside_the_release_and_the_fit_is_calibrated_at_them(tmp_path):
    events, session = _session(tmp_path)
    config = _config()
    answer = session.release_scaled(config, SHARE, choices=(DECAYS,))
    scale = answer.time_scale
    assert not answer.replayed and answer.status.formal and scale.applied == (DECAYS,)
    observed = float(events.sequences[0].end_time)
    assert tuple(answer.result.info["decays"]) == pytest.approx(decays_from_count(observed, scale.noisy_count))
    assert (answer.result.bin_size, answer.result.lags) == (0.5, 8)  # the public w and p are kept
    assert abs(scale.noisy_count - events.n_events) < 6 * scale.sigma
    # the fit's noise is the one the chosen decays' sensitivity needs, at the ε the count left
    chosen = config.with_changes(**scale.config_changes())
    assert chosen.epsilon == pytest.approx(split(1.0, 1e-5, SHARE).rest_epsilon)
    stats, _ = prepare_stats(events, chosen)
    assert answer.result.privacy.sigma2 == pytest.approx(privacy_report(stats, chosen).sigma2, rel=1e-12)
    # the recorded mechanisms: the count (share·ε alone), then the release; together ε, in dp-accounting too
    mechanisms = answer.entry.mechanisms
    assert mechanisms[0].label == "event count N (decays)" and mechanisms[0].parameter == scale.sigma
    delta = answer.ledger.budget.delta
    assert compose_epsilon(mechanisms[:1], delta) == pytest.approx(SHARE, rel=1e-6)
    assert _pld_epsilon(mechanisms, delta) == pytest.approx(1.0, rel=2e-3)
    assert answer.ledger.spent() == pytest.approx(1.0, rel=2e-3)


def test_adversarial_neighbours_reach_the_bound_at_the_chosen_decays(tmp_path):
    _, session = _session(tmp_path, n=2000)
    answer = session.release_scaled(_config(), SHARE, choices=(DECAYS,))
    chosen = _config().with_changes(decays=answer.time_scale.decays, sigma2=1.0, epsilon=None)
    for d in (1, 2):
        pair = FAMILY.worst_case_events(chosen, d)
        s_d, s_n = (prepare_stats(events, chosen)[0] for events in pair)
        moved = np.linalg.norm(FAMILY.query_vector(s_n, chosen) - FAMILY.query_vector(s_d, chosen))
        assert 0.99 <= moved / privacy_report(s_d, chosen).sensitivity <= 1.0


def test_one_count_serves_both_choices_and_a_replay_draws_nothing(tmp_path, monkeypatch):
    events, session = _session(tmp_path)
    config = _config()
    both = session.release_scaled(config, SHARE, choices=(DECAYS, TIME_SCALE))  # any order: one request
    scale = both.time_scale
    observed = float(events.sequences[0].end_time)
    rule = time_scale_from_count(observed, scale.noisy_count)
    assert scale.applied == (TIME_SCALE, DECAYS)
    assert (both.result.bin_size, both.result.lags) == (rule.bin_size, rule.lags)
    assert tuple(both.result.info["decays"]) == pytest.approx(decays_from_count(observed, scale.noisy_count))
    assert sum(m.label.startswith("event count") for m in both.entry.mechanisms) == 1
    assert both.ledger.spent() == pytest.approx(1.0, rel=2e-3)

    def no_draws(*args, **kwargs):
        raise AssertionError("drawn again")

    monkeypatch.setattr("dphawkes_core.release.session.dp_time_scale", no_draws)
    again = session.release_scaled(config.with_changes(decays=(9.0,), bin_size=3.0), SHARE,
                                   choices=(TIME_SCALE, DECAYS))  # what is chosen is not read from the config
    assert again.replayed and again.time_scale == scale and np.array_equal(again.result.H, both.result.H)
    assert session.replay_scaled(config, SHARE, (TIME_SCALE, DECAYS)).time_scale == scale
    assert session.replay_scaled(config, SHARE, (DECAYS,)) is None  # another choice is another request
    with pytest.raises(AssertionError, match="drawn again"):
        session.release_scaled(config, SHARE, choices=(DECAYS,))


def test_a_family_without_decays_or_an_unknown_choice_is_refused(tmp_path):
    _, session = _session(tmp_path, n=300)
    ssp = FitConfig(method="ssp", bin_size=1.0, lags=3, epsilon=1.0, calibration="formal", count_cap=3)
    with pytest.raises(DPHawkesError, match="no decays to choose"):
        session.release_scaled(ssp, SHARE, choices=(DECAYS,))
    with pytest.raises(Exception, match="one or more of"):
        session.release_scaled(_config(), SHARE, choices=("support",))
    assert session.ledger() is None  # nothing drawn, nothing recorded
