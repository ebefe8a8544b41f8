"""Planning a release in the core (:meth:`PrivacySession.preview`, ``dphawkes fit --plan``, the app's button): what it
would leave in the view of the release's own unit, and that planning draws and records nothing."""

import json

import numpy as np
import pytest

from dphawkes_core.data.domain import Domain
from dphawkes_core.data.io import load_csv
from dphawkes_core.data.row_key import data_fingerprint
from dphawkes_core.estimators import FitConfig
from dphawkes_core.release.ledger import Budget, LedgerKey, compose_epsilon
from dphawkes_core.release.ledger_file import LedgerBook
from dphawkes_core.release.session import PrivacySession


@pytest.mark.parametrize("unit, extra", [("sequence", {"max_events": 10}), ("event", {})])
def test_the_remaining_budget_after_a_planned_release_is_what_the_release_leaves(tmp_path, unit, extra):
    """A sequence-level plan is composed in the sequence view as a sequence-level release (it used to count as an
    event-level one there, closing the view: remaining 0)."""
    rng = np.random.default_rng(3)
    rows = "".join(f"{t:.3f},{rng.integers(2)},{s}\n" for s in range(3) for t in np.sort(rng.uniform(0, 30, 25)))
    events = load_csv(("time,dimension,sequence\n" + rows).encode(), end_time=30.0,
                      domain=Domain(dimensions=("0", "1"), sequences=("0", "1", "2")))
    book = LedgerBook(tmp_path / "ledger.json")
    fingerprint = data_fingerprint(events)
    book.open(LedgerKey(fingerprint), Budget(20.0, 1e-5))
    session = PrivacySession.for_events(events, book, fingerprint, unit)
    config = FitConfig(method="ssp", bin_size=1.0, lags=2, epsilon=1.0, count_cap=2, calibration="formal",
                       privacy_unit=unit, **extra)
    plan = session.preview([config])
    assert plan.status.formal and not plan.refusal
    answer = session.release(config)
    assert plan.remaining_after == pytest.approx(answer.ledger.remaining(), rel=1e-6) and plan.remaining_after > 0


# --- fit --plan: what would be spent and refused, nothing drawn, nothing recorded ----------------------------------


@pytest.fixture
def declared_csv(tmp_path):
    rng = np.random.default_rng(4)
    path = tmp_path / "events.csv"
    times = np.sort(rng.uniform(0, 200, 400))
    path.write_text("time,dimension\n" + "".join(f"{t:.4f},{rng.integers(2)}\n" for t in times))
    return path


def no_draws(monkeypatch):
    from dphawkes_core.privacy import noise

    for name in ("standard_normal", "discrete_gaussian"):
        monkeypatch.setattr(noise.SecureNoise, name, lambda *a, **k: pytest.fail("drawn"))


FIT = ["--method", "ssp", "--epsilon", "1", "--calibration", "formal", "--count-cap", "4", "--end-time", "200",
       "--dimensions", "2"]


@pytest.mark.parametrize("scale", [("--bin-size", "1", "--support", "4"), ("--bin-size", "auto"),
                                   ("--bin-size", "1", "--support", "4", "--count-cap", "auto")])
def test_fit_plan_draws_and_records_nothing_and_states_what_the_release_then_spends(tmp_path, capsys, monkeypatch,
                                                                                   declared_csv, scale):
    from dphawkes_cli.main import main

    ledger, out = tmp_path / "ledger.json", tmp_path / "plan.json"
    with monkeypatch.context() as patch:
        no_draws(patch)
        assert main(["fit", str(declared_csv), *FIT, *scale, "--ledger", str(ledger), "--plan", "--json",
                     str(out)]) == 0
    err = capsys.readouterr().err
    plan = json.loads(out.read_text())
    assert not ledger.exists() and plan["drawn"] is False and plan["recorded"] is False  # not even created
    assert "nothing was drawn or recorded" in err and plan["plan"]["refused"] is None
    assert plan["plan"]["epsilon"] == pytest.approx(1.0, rel=1e-6) and plan["plan"]["spent_before"] == 0
    assert main(["fit", str(declared_csv), *FIT, *scale, "--ledger", str(ledger), "--json", str(out)]) == 0
    capsys.readouterr()
    released = json.loads(out.read_text())["ledger"]
    assert released["spent_epsilon"] == pytest.approx(plan["plan"]["spent_after"], rel=1e-9)
    assert released["remaining_epsilon"] == pytest.approx(plan["plan"]["remaining_after"], rel=1e-6)


def test_fit_plan_states_a_refusal_and_leaves_the_ledger_as_it_was(tmp_path, capsys, monkeypatch, declared_csv):
    from dphawkes_cli.main import main

    ledger, out = tmp_path / "ledger.json", tmp_path / "plan.json"
    scale = ("--bin-size", "1", "--support", "4")
    assert main(["fit", str(declared_csv), *FIT, *scale, "--ledger", str(ledger), "--budget", "1.2", "--json",
                 str(out)]) == 0
    before = ledger.read_text()
    no_draws(monkeypatch)
    assert main(["fit", str(declared_csv), *FIT, "--bin-size", "0.5", "--support", "4", "--ledger", str(ledger),
                 "--plan", "--json", str(out)]) == 0
    err = capsys.readouterr().err
    plan = json.loads(out.read_text())["plan"]
    assert plan["refused"].startswith("refused: this release") and "over its budget" in plan["refused"]
    assert "it would be refused before any draw" in err and ledger.read_text() == before
    assert main(["fit", str(declared_csv), *FIT, *scale, "--plan"]) == 2
    assert "--plan previews a release through a ledger" in capsys.readouterr().err


def test_a_release_after_its_preview_calibrates_once(tmp_path, monkeypatch):
    """The plan's statistics and calibration are the release's own when nothing is chosen inside it: previewing,
    then releasing, in one session (the app's click, the CLI) calibrates once; an automatic cap is calibrated again
    on the statistics at the chosen C (its σ depends on it)."""
    import dphawkes_core.release.session as session_module

    calls = []
    real = session_module.privacy_report
    monkeypatch.setattr(session_module, "privacy_report", lambda *a, **k: calls.append(1) or real(*a, **k))
    rng = np.random.default_rng(3)
    rows = "".join(f"{t:.3f},{rng.integers(2)}\n" for t in np.sort(rng.uniform(0, 30, 60)))
    events = load_csv(("time,dimension\n" + rows).encode(), end_time=30.0, domain=Domain(dimensions=("0", "1")))
    for cap, expected in ((3, 1), ("auto", 2)):
        calls.clear()
        session = PrivacySession.for_events(events, LedgerBook(tmp_path / f"{cap}.json"), data_fingerprint(events))
        config = FitConfig(method="ssp", bin_size=1.0, lags=2, epsilon=1.0, count_cap=cap, calibration="formal")
        plan = session.preview([config])
        answer = session.release(config)
        assert len(calls) == expected
        assert compose_epsilon(answer.entry.mechanisms, 1e-5) == pytest.approx(plan.epsilon, rel=1e-9)
