"""Settings read from the data say so: a non-private look at a source's rows (``dphawkes select``, ``dphawkes score``,
``fit --holdout-start``, the app's held-out table through :meth:`PrivacySession.note_look`) is recorded in its
ledger, and every formal release on those rows after it carries the look in its reasons and its note — still metered
(its noise was drawn on private rows). A release made before the look, replayed after it, is unchanged."""

from __future__ import annotations

import json

import numpy as np
import pytest

from dphawkes_cli.main import main
from dphawkes_core.data.io import save_csv
from dphawkes_core.data.kernels import get_scenario
from dphawkes_core.data.simulate import simulate
from dphawkes_core.estimators import FitConfig
from dphawkes_core.release.ledger import LedgerKey
from dphawkes_core.release.ledger_file import LedgerBook
from dphawkes_core.release.session import PrivacySession

FIT = ["--bin-size", "0.5", "--support", "2", "--method", "ssp", "--calibration", "formal", "--count-cap", "5",
       "--dimensions", "2"]


@pytest.fixture(scope="module")
def events():
    return simulate(get_scenario("paper-2d"), n_events=1200, seed=8)


@pytest.fixture
def data(tmp_path, events):
    path = tmp_path / "events.csv"
    save_csv(events, path)
    return path, events.end_time


def fit(capsys, path, end, ledger, epsilon="1", *extra):
    status = main(["fit", str(path), *FIT, "--epsilon", epsilon, "--end-time", f"{end!r}", "--ledger", str(ledger),
                   "--json", str(path.with_name("out.json")), *extra])
    err = capsys.readouterr().err
    assert status == 0, err
    return json.loads(path.with_name("out.json").read_text()), err


def test_a_width_picked_by_select_is_named_by_every_later_release(tmp_path, capsys, data):
    """The issue's case: `select` on the private rows, then a formal fit — the fit's reasons and note name the look;
    it is still a metered release; one released before the look and asked again is replayed unchanged."""
    path, end = data
    ledger = tmp_path / "ledger.json"
    before, _ = fit(capsys, path, end, ledger)
    assert before["formal_reasons"] == []
    status = main(["select", str(path), "--widths", "0.5,1", "--supports", "2,5", "--validation-start",
                   f"{0.6 * end!r}", "--end-time", f"{end!r}", "--ledger", str(ledger), "--json",
                   str(tmp_path / "select.json")])
    err = capsys.readouterr().err
    assert status == 0 and "recorded in" in err and "later releases on them name it" in err
    (look,) = LedgerBook(ledger).ledgers()[0].looks
    assert look.tool == "cli" and look.what.startswith("dphawkes select (cls: Δ and s chosen by held-out likelihood")
    after, err = fit(capsys, path, end, ledger, "0.7")
    reason = after["formal_reasons"][0]
    assert after["formal_guarantee"] and after["ledger"]["metered"] and not after["ledger"]["replayed"]
    assert "settings may have been read from the data" in reason and "dphawkes select" in reason
    assert f"ledger: {reason}" in err  # said on the command line too
    replayed, _ = fit(capsys, path, end, ledger)
    assert replayed["ledger"]["replayed"] and replayed["formal_reasons"] == []  # made before the look
    assert main(["ledger", "show", str(ledger)]) == 0
    shown = json.loads(capsys.readouterr().out)["data_sets"][0]
    assert [entry["reasons"] for entry in shown["entries"]] == [[], [reason]] and shown["looks"][0]["tool"] == "cli"


def test_score_and_a_held_out_fit_record_their_look(tmp_path, capsys, data):
    """`score` and `fit --holdout-start` read the test events: recorded; the held-out fit's own release is not named
    (the look came with it), the next release is; the look is recorded once however often it is made."""
    path, end = data
    ledger = tmp_path / "ledger.json"
    cut = f"{0.7 * end!r}"
    first, _ = fit(capsys, path, end, ledger, "1", "--holdout-start", cut)
    assert first["formal_reasons"] == [] and "heldout" in first
    for _ in range(2):
        assert main(["score", str(path.with_name("out.json")), str(path), "--holdout-start", cut, "--end-time",
                     f"{end!r}", "--ledger", str(ledger)]) == 0
    capsys.readouterr()
    looks = LedgerBook(ledger).ledgers()[0].looks
    assert [look.what.split(" ")[1] for look in looks] == ["fit", "score"]
    later, _ = fit(capsys, path, end, ledger, "0.4")
    assert "dphawkes fit --holdout-start" in later["formal_reasons"][0] and "dphawkes score" in later[
        "formal_reasons"][0]


def test_the_core_hook_for_the_app_and_other_sources(tmp_path, events):
    """`PrivacySession.note_look` (the app's held-out table calls it): later releases on the same rows name it, in
    either unit's view; releases on other rows do not."""
    book = LedgerBook(tmp_path / "ledger.json")
    session = PrivacySession.for_events(events, book, "rows-a")  # a simulation: its window and domain are declared
    other = PrivacySession.for_events(events, book, "rows-b")
    config = FitConfig(method="ssp", bin_size=0.5, lags=4, epsilon=1.0, calibration="formal", count_cap=5)
    session.note_look("the app's held-out table (held-out scores of 3 methods on the test part)", tool="app")
    session.note_look("the app's held-out table (held-out scores of 3 methods on the test part)", tool="app")
    named = session.release(config)
    assert named.status.formal and any("the app's held-out table" in r for r in named.status.reasons)
    assert any("the app's held-out table" in note for note in named.notes)
    assert len(book.get(LedgerKey("rows-a")).looks) == 1
    assert other.release(config).status.reasons == ()
    np.testing.assert_array_equal(session.release(config).result.H, named.result.H)  # replayed
