"""The privacy session: a replay returns the stored estimate and the stored private selections and draws
nothing; a refusal draws nothing; a new release spends exactly what was planned."""

from __future__ import annotations

import json

import numpy as np
import pytest

import dphawkes_core.estimators.binned as binned
import dphawkes_core.estimators.sequence_unit as sequence_unit
from dphawkes_cli.main import main
from dphawkes_core.data.io import save_csv
from dphawkes_core.data.kernels import get_scenario
from dphawkes_core.data.simulate import simulate
from dphawkes_core.estimators import FitConfig, prepare_stats
from dphawkes_core.release.ledger import LedgerKey, compose_epsilon
from dphawkes_core.release.ledger_file import LedgerBook
from dphawkes_core.release.session import PrivacySession

REPLAYS = 25


def _no_draws(*args, **kwargs):
    raise AssertionError("a private selection was drawn again")


@pytest.fixture
def one_sequence(tmp_path):
    events = simulate(get_scenario("paper-2d"), n_events=3000, seed=5)
    path = tmp_path / "events.csv"
    save_csv(events, path)
    return path, events.end_time


@pytest.fixture
def many_sequences(tmp_path):
    rng = np.random.default_rng(2)
    rows = ["time,dimension,sequence"]
    for s in range(40):
        times = np.sort(rng.uniform(0, 50, size=rng.integers(5, 30)))
        rows += [f"{t:.6f},{rng.integers(0, 2)},{s}" for t in times]
    path = tmp_path / "people.csv"
    path.write_text("\n".join(rows) + "\n")
    return path


def _fit(path, out, ledger, *extra):
    argv = ["fit", str(path), "--method", "ssp", "--bin-size", "1", "--lags", "3", "--epsilon", "1",
            "--calibration", "formal", "--dimensions", "2", "--ledger", str(ledger), "--json", str(out), *extra]
    assert main(argv) == 0
    return json.loads(out.read_text())


def test_replays_of_an_automatic_count_cap_draw_nothing_and_show_the_stored_c(one_sequence, tmp_path, monkeypatch):
    path, end = one_sequence
    ledger = tmp_path / "ledger.json"
    args = ("--count-cap", "auto", "--end-time", f"{end:.17g}")
    first = _fit(path, tmp_path / "first.json", ledger, *args)
    chosen, spent = first["count_cap"], first["ledger"]["spent_epsilon"]
    assert first["formal_guarantee"] and first["ledger"]["metered"] and spent > 0
    monkeypatch.setattr(binned, "dp_count_cap", _no_draws)
    for k in range(REPLAYS):
        again = _fit(path, tmp_path / f"again{k}.json", ledger, *args)
        assert again["ledger"]["replayed"] and again["count_cap"] == chosen
        assert again["auto_count_cap"] == first["auto_count_cap"]
        assert again["kernels"] == first["kernels"] and again["ledger"]["spent_epsilon"] == spent


def test_replays_of_an_automatic_clip_norm_draw_nothing_and_show_the_stored_g(many_sequences, tmp_path, monkeypatch):
    ledger = tmp_path / "ledger.json"
    args = ("--privacy-unit", "sequence", "--max-events", "40", "--sequence-clip", "auto", "--count-cap", "3",
            "--end-time", "50", "--sequences", "40")
    first = _fit(many_sequences, tmp_path / "first.json", ledger, *args)
    chosen = first["sequence_clip"]
    assert first["formal_guarantee"] and first["ledger"]["metered"]
    monkeypatch.setattr(sequence_unit, "dp_sequence_clip", _no_draws)
    for k in range(REPLAYS):
        again = _fit(many_sequences, tmp_path / f"again{k}.json", ledger, *args)
        assert again["ledger"]["replayed"] and again["sequence_clip"] == chosen
        assert again["auto_sequence_clip"] == first["auto_sequence_clip"]


def test_a_refused_release_draws_nothing(one_sequence, tmp_path, monkeypatch, capsys):
    path, end = one_sequence
    monkeypatch.setattr(binned, "dp_count_cap", _no_draws)
    code = main(["fit", str(path), "--method", "ssp", "--bin-size", "1", "--lags", "3", "--epsilon", "2",
                 "--calibration", "formal", "--count-cap", "auto", "--end-time", f"{end:.17g}", "--dimensions", "2",
                 "--ledger", str(tmp_path / "l.json"), "--budget", "1"])
    assert code == 2 and "over its budget" in capsys.readouterr().err


@pytest.mark.parametrize("cap", ["auto", 3])
def test_a_release_records_what_was_planned_and_its_selection(cap, tmp_path):
    events = simulate(get_scenario("paper-2d"), n_events=2000, seed=7)
    events = type(events)(**{**events.__dict__, "window_stated": True})
    config = FitConfig(method="ssp", bin_size=1.0, lags=3, epsilon=1.0, calibration="formal", count_cap=cap)
    session = PrivacySession.for_events(events, LedgerBook(tmp_path / "l.json"), "data")
    status, planned = session.plan(config)
    answer = session.release(config)
    assert status.formal and not answer.replayed
    delta = answer.ledger.budget.delta
    assert compose_epsilon(answer.entry.mechanisms, delta) == pytest.approx(compose_epsilon(planned, delta), rel=1e-12)
    assert answer.ledger.spent() == pytest.approx(1.0, rel=1e-3)
    stored = session.release(config)
    assert stored.replayed and stored.data_info == answer.data_info
    assert np.array_equal(stored.result.H, answer.result.H)
    if cap == "auto":
        assert answer.data_info["auto_count_cap"]["count_cap"] == answer.data_info["count_cap"]


def test_a_session_refuses_a_fit_of_the_other_unit(tmp_path):
    events = simulate(get_scenario("paper-2d"), n_events=500, seed=1)
    session = PrivacySession(lambda c: prepare_stats(events, c), LedgerBook(tmp_path / "l.json"),
                             LedgerKey("data", "sequence"), {"window_stated": True})
    with pytest.raises(Exception, match="event-level fit belongs"):
        session.release(FitConfig(method="ssp", bin_size=1.0, lags=3, epsilon=1.0, calibration="formal",
                                  count_cap=3))
