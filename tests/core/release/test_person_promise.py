"""The per-person promise, kept by the core for the CLI and the app alike: once one sequence is declared one person
(``dphawkes ledger person``, :meth:`PrivacySession.promise_person`) or a sequence-level release was recorded on the
rows, a release that would leave the per-person ε unbounded — event unit, no cap M — is refused before any draw, with
advice that can be followed (a cap M, or the sequence unit; following it works) and no "inf" anywhere. Main let it
through and closed the per-person view for good (issue 43, item 1)."""

from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd
import pytest

from dphawkes_cli.main import main
from dphawkes_core.data.domain import Domain
from dphawkes_core.data.io import load_csv
from dphawkes_core.data.row_key import data_fingerprint
from dphawkes_core.estimators import FitConfig
from dphawkes_core.privacy import noise
from dphawkes_core.release.ledger import Budget, BudgetExceeded, PromiseRefused
from dphawkes_core.release.ledger_file import LedgerBook
from dphawkes_core.release.session import PrivacySession

DECLARED = ["--dimensions", "2", "--sequences", "6", "--end-time", "50"]
FIT = ["--bin-size", "0.5", "--support", "2", "--method", "ssp", "--calibration", "formal", "--count-cap", "3"]


@pytest.fixture
def people(tmp_path):
    rng = np.random.default_rng(11)
    frames = [pd.DataFrame({"sequence": s, "time": np.sort(rng.uniform(0, 50, 30)).round(4),
                            "dimension": rng.integers(0, 2, 30)}) for s in range(6)]
    path = tmp_path / "people.csv"
    pd.concat(frames).to_csv(path, index=False)
    return path


def says_inf(text: str) -> bool:
    """``inf``, ``Infinity`` or ``∞`` as a word of ``text``."""
    return bool(re.search(r"\binf(inity)?\b|∞", text, re.IGNORECASE))


def run(capsys, *argv):
    status = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return status, out, err


def no_draws(monkeypatch):
    for name in ("standard_normal", "discrete_gaussian"):
        monkeypatch.setattr(noise.SecureNoise, name, lambda *a, **k: pytest.fail("drawn"))


def test_the_cli_declaration_refuses_an_uncapped_event_release_and_its_advice_works(tmp_path, capsys, people,
                                                                                     monkeypatch):
    ledger = tmp_path / "ledger.json"
    status, _, err = run(capsys, "ledger", "person", ledger, people, "--note", "one driver per sequence")
    assert status == 0 and "declared one person's" in err and "--max-events" in err
    before = LedgerBook(ledger).ledgers()[0]
    with monkeypatch.context() as patch:
        no_draws(patch)
        status, out, err = run(capsys, "fit", people, *FIT, *DECLARED, "--epsilon", 1, "--ledger", ledger,
                               "--json", tmp_path / "out.json")
    assert status == 2 and out == "" and err.count("\n") == 1 and not says_inf(err)
    assert "refused before any draw" in err and "one driver per sequence" in err
    assert "--max-events M, or --privacy-unit sequence" in err
    assert LedgerBook(ledger).ledgers()[0].entries == before.entries == ()
    assert run(capsys, "ledger", "budget", ledger, people, "--epsilon", 1000)[0] == 0  # the owner's act
    for advice in (("--max-events", 30), ("--privacy-unit", "sequence", "--max-events", 30)):
        status, _, err = run(capsys, "fit", people, *FIT, *DECLARED, "--epsilon", 0.5, "--ledger", ledger,
                             "--json", tmp_path / "out.json", *advice)
        payload = json.loads((tmp_path / "out.json").read_text())
        assert status == 0 and payload["formal_guarantee"], err
    status, out, _ = run(capsys, "ledger", "show", ledger)
    shown = json.loads(out)["data_sets"][0]
    assert not shown["sequence_view"]["closed"] and shown["sequence_view"]["spent_epsilon"] > 0
    assert not says_inf(out) and "one driver per sequence" in shown["person_promise"]


def test_a_sequence_level_release_is_a_promise_and_the_plan_says_it_would_refuse(tmp_path, monkeypatch):
    """Through the session (the app's path): no declaration, a sequence-level release; then the preview of an
    uncapped event-level release states the refusal (and no per-person figure, not ∞), and releasing it is refused
    before anything is drawn."""
    rng = np.random.default_rng(2)
    rows = "".join(f"{t:.3f},{rng.integers(2)},{s}\n" for s in range(3) for t in np.sort(rng.uniform(0, 30, 25)))
    events = load_csv(("time,dimension,sequence\n" + rows).encode(), end_time=30.0,
                      domain=Domain(dimensions=("0", "1"), sequences=("0", "1", "2")))
    book, fingerprint = LedgerBook(tmp_path / "ledger.json"), data_fingerprint(events)
    ssp = dict(method="ssp", bin_size=1.0, lags=2, epsilon=1.0, count_cap=2, calibration="formal")
    sequence = PrivacySession.for_events(events, book, fingerprint, "sequence")
    assert sequence.release(FitConfig(**ssp, privacy_unit="sequence", max_events=25)).entry.formal
    event = PrivacySession.for_events(events, book, fingerprint)
    plan = event.preview([FitConfig(**ssp)])
    assert "sequence-level release was made on these rows" in plan.refusal and plan.per_person is None
    assert not says_inf(json.dumps(plan.to_dict()))
    capped = event.preview([FitConfig(**ssp, max_events=25)], budget=Budget(1000.0, 1e-5))  # as --budget would
    assert capped.refusal == "" and capped.epsilon < capped.per_person < float("inf")  # 2M = 50 capped events
    before = book.path.read_text()
    no_draws(monkeypatch)
    with pytest.raises(PromiseRefused, match="set a cap M on the events of each sequence, or release at the sequence"):
        event.release(FitConfig(**ssp))
    assert book.path.read_text() == before


def test_the_apps_declaration_and_a_promise_that_could_not_be_kept(tmp_path, people):
    """``promise_person`` (what the app's "yes" calls) records the declaration once; on rows whose per-person view an
    uncapped event-level release already closed it is refused, in words without "inf"."""
    events = load_csv(people, end_time="50", domain=Domain(dimensions=("0", "1"),
                                                           sequences=tuple(str(s) for s in range(6))))
    ssp = FitConfig(method="ssp", bin_size=0.5, lags=4, epsilon=1.0, count_cap=3, calibration="formal")
    promised = PrivacySession.for_events(events, LedgerBook(tmp_path / "a.json"), data_fingerprint(events))
    first = promised.promise_person(tool="app")
    assert promised.promise_person(tool="app").person == first.person and first.person.tool == "app"
    with pytest.raises(PromiseRefused):
        promised.release(ssp)
    closed = PrivacySession.for_events(events, LedgerBook(tmp_path / "b.json"), data_fingerprint(events))
    closed.release(ssp)
    with pytest.raises(BudgetExceeded, match="cannot be declared one person here any more") as refusal:
        closed.promise_person(tool="app")
    assert not says_inf(str(refusal.value)) and closed.ledger().person is None
