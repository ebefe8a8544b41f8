"""A PrivacySession release of ctls with the width chosen by validation: the option is part of the request's
identity, the release is recorded with its choice, and a replay draws nothing and returns the same choice."""

from __future__ import annotations

import numpy as np

import dphawkes_core.estimators.grid_free.width_choice as width_choice
from dphawkes_core.data.domain import Domain
from dphawkes_core.data.io import load_csv, save_csv
from dphawkes_core.data.kernels import get_scenario
from dphawkes_core.data.simulate import simulate
from dphawkes_core.estimators import FitConfig
from dphawkes_core.release.ledger_file import LedgerBook
from dphawkes_core.release.session import PrivacySession


def _no_draws(*args, **kwargs):
    raise AssertionError("the release of the two blocks was drawn again")


def test_a_replay_draws_nothing_and_returns_the_same_choice(tmp_path, monkeypatch):
    simulated = simulate(get_scenario("paper-2d"), n_events=3000, seed=4)
    save_csv(simulated, tmp_path / "events.csv")
    events = load_csv(tmp_path / "events.csv", end_time=float(simulated.end_time),
                      domain=Domain(dimensions=("0", "1")))
    config = FitConfig(method="ctls", bin_size=0.25, lags=16, epsilon=1.0, calibration="formal", count_cap=3,
                       ctls_width_choice="validation")
    session = PrivacySession.for_events(events, LedgerBook(tmp_path / "l.json"), "data")
    assert session.request(config) != session.request(config.with_changes(ctls_width_choice="stated"))
    assert session.request(config) != session.request(config.with_changes(ctls_validation_share=40.0))
    first = session.release(config)
    assert not first.replayed and first.status.formal and first.ledger.spent() > 0
    monkeypatch.setattr(width_choice, "release_blocks", _no_draws)
    again = session.release(config)
    assert again.replayed
    assert (again.result.info["chosen_width"], again.result.info["chosen_support"]) == (
        first.result.info["chosen_width"], first.result.info["chosen_support"])
    assert again.result.info["candidates"] == first.result.info["candidates"]
    np.testing.assert_array_equal(again.result.H, first.result.H)
    assert again.ledger.spent() == first.ledger.spent()


# The request identity of CONFIG_BEFORE on LedgerKey("f" * 64) with view "v", as written by main at 13d8615 (before
# the options ctls_width_choice and ctls_validation_share existed): what a ledger of that time holds.
CONFIG_BEFORE = dict(method="ctls", bin_size=0.5, lags=10, epsilon=1.0, dp_delta=1e-5, count_cap=3,
                     calibration="formal")
IDENTITY_BEFORE = "0b89f6250f77ea86320996b11852a2d1bdc292ac81e3708a7fe1eb7a5d9f1bdd"


def test_a_ctls_request_recorded_before_the_width_choice_still_replays():
    """The two options are added later: at their defaults they leave a request's identity as ledgers written before
    them hold it (so those entries replay instead of drawing and spending again); set, they change it."""
    from dphawkes_core.release.ledger import LedgerKey
    from dphawkes_core.release.session import request_identity

    key, config = LedgerKey("f" * 64), FitConfig(**CONFIG_BEFORE)
    assert request_identity(key, config, view="v") == IDENTITY_BEFORE
    assert request_identity(key, config.with_changes(ctls_validation_share=30.0), view="v") == IDENTITY_BEFORE
    for changed in (dict(ctls_width_choice="validation"), dict(ctls_validation_share=40.0)):
        assert request_identity(key, config.with_changes(**changed), view="v") != IDENTITY_BEFORE
