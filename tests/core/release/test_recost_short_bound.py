"""Releases recorded under exp's short bound (issue 40.5), read from ledgers main's CLI wrote at 31194c8
(``main_exp_ledger/README.md``): each is charged at the true ε of the noise it drew — σ (what it stored) over the
corrected S computed here from its settings —, its label, reasons and replayed note say so, a replay draws nothing,
a release where the bound did not change (or of another unit, family or recorded after the fix) is untouched, the
re-cost is written back once, and a ledger the correction takes over its budget refuses the next release saying why.
Planted bugs (re-costing at the old S, skipping the re-cost, the ceiling charged everywhere) fail the check."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

import dphawkes_core.estimators.exp.recost as exp_recost
from dphawkes_core.estimators import get_family
from dphawkes_core.estimators.exp import Exp
from dphawkes_core.estimators.exp.recost import SWAP_CEILING, short_exp_sensitivity
from dphawkes_core.estimators.exp.release import exp_sensitivity
from dphawkes_core.estimators.family import BoundCorrection
from dphawkes_core.privacy.accounting import BudgetExceeded, Mechanism, compose_epsilon
from dphawkes_core.release.ledger import DataLedger, LedgerKey
from dphawkes_core.release.ledger_file import LedgerBook, entries_from
from dphawkes_core.release.recost import RECOSTED_LABEL

HERE = Path(__file__).with_name("main_exp_ledger")
FILES = ("events.csv", "sequences.csv", "ledger.json", "over_budget.json")
COMMANDS = json.loads((HERE / "commands.json").read_text())["commands"]
DELTA = 1e-5
#: N = Σ T of each source as its fits declared it (events.csv: one window [0, 200]; sequences.csv: three [0, 100])
OBSERVED = {"events.csv": 200.0, "sequences.csv": 300.0}


def raw(name: str) -> dict:
    """A ledger file as main wrote it (the JSON itself, not read through the ledger)."""
    return json.loads((HERE / name).read_text())


def raw_ledgers(name: str = "ledger.json") -> dict:
    """``{source label: its stored ledger}`` of a file main wrote."""
    return {item["label"]: item for item in raw(name)["ledgers"]}


def stored_settings(result: dict) -> tuple:
    """(d, decays, w, C, ρ) of an exp release as main stored it."""
    return (len(result["H"]), tuple(result["info"]["decays"]), result["bin_size"], result["data_info"]["count_cap"],
            result["info"]["gram_scale"])


def is_exp_event_release(entry: dict, mechanism: dict) -> bool:
    return (entry["result"].get("method") == "exp" and entry["unit"] == "event"
            and mechanism["label"] == "noisy statistics")


def true_mechanisms(entry: dict, observed: float) -> list[Mechanism]:
    """What an entry of main's ledger truly spent: exp's event-level release at σ (the σ² it stored) over the
    corrected S of its stored settings, over N; every other mechanism as recorded."""
    out = []
    for m in entry["mechanisms"]:
        if is_exp_event_release(entry, m):
            sensitivity = exp_sensitivity(*stored_settings(entry["result"])).total / observed
            out.append(Mechanism("gaussian", math.sqrt(entry["result"]["privacy"]["sigma2"]) / sensitivity,
                                 m["releases"]))
        else:
            out.append(Mechanism(m["kind"], m["parameter"], m["releases"]))
    return out


def group(entry: dict, view: str) -> float:
    """How many of an entry's own neighbours one neighbour of ``view`` is (docs/privacy.md: a capped event-level
    release is a swap, 2, for one raw event and 2M for one sequence; an uncapped one bounds no sequence)."""
    if entry["unit"] == "sequence":
        return 1
    if entry["max_events"] is None:
        return 1 if view == "event" else math.inf
    return 2 if view == "event" else 2 * entry["max_events"]


def true_spent(item: dict, observed: float, view: str = "event") -> float:
    """The composed ε of a stored ledger's formal releases at their true noise multipliers, in ``view``."""
    mechanisms = []
    for entry in (e for e in item["entries"] if e["formal"]):
        factor = group(entry, view)
        if not math.isfinite(factor):
            return math.inf
        mechanisms += [Mechanism(m.kind, m.parameter / factor, m.releases) for m in true_mechanisms(entry, observed)]
    return compose_epsilon(mechanisms, DELTA)


def ledger_of(book: LedgerBook, label: str, unit: str = "event") -> DataLedger:
    return next(ledger for ledger in book.ledgers() if ledger.label == label).view(unit)


def spent_is_true(path=HERE / "ledger.json") -> bool:
    """Every source's spent ε, in both views, read through the ledger equals its true one (relative 1e-9)."""
    book, stored = LedgerBook(path), raw_ledgers(Path(path).name)
    for label, item in stored.items():
        for view in ("event", "sequence"):
            expected, got = true_spent(item, OBSERVED[label], view), ledger_of(book, label, view).spent()
            if not (got == expected or math.isclose(got, expected, rel_tol=1e-9)):
                return False
    return True


@pytest.fixture
def copied(tmp_path, monkeypatch):
    """The data and ledgers main wrote, in a working directory of their own."""
    for name in FILES:
        shutil.copy(HERE / name, tmp_path / name)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def no_draw(monkeypatch):
    from dphawkes_core.privacy import noise

    for method in ("standard_normal", "discrete_gaussian"):
        monkeypatch.setattr(noise.SecureNoise, method, lambda *a, **k: pytest.fail("noise drawn"))


def test_main_charged_exps_releases_at_the_short_bound_kept_here():
    """The independent fact the re-cost rests on: every exp event-level release main recorded stored σ over
    :func:`short_exp_sensitivity` of its settings (main's own number), which at these settings but one is below the
    corrected S."""
    assert raw("ledger.json")["version"] == 4
    short = 0
    for label, item in raw_ledgers().items():
        for entry in item["entries"]:
            for m in entry["mechanisms"]:
                assert "bound" not in m
                if is_exp_event_release(entry, m):
                    settings, report = stored_settings(entry["result"]), entry["result"]["privacy"]
                    assert report["sensitivity"] == pytest.approx(
                        short_exp_sensitivity(*settings) / OBSERVED[label], rel=1e-12)
                    assert m["parameter"] == pytest.approx(math.sqrt(report["sigma2"]) / report["sensitivity"],
                                                           rel=1e-12)
                    short += exp_sensitivity(*settings).total > short_exp_sensitivity(*settings) * (1 + 1e-9)
    assert short == 5  # all but the release at the defaults (an insertion binds there)


def test_the_spent_epsilon_is_that_of_the_corrected_mechanisms():
    assert spent_is_true()
    book = LedgerBook(HERE / "ledger.json")
    events, sequences = raw_ledgers()["events.csv"], raw_ledgers()["sequences.csv"]
    assert ledger_of(book, "events.csv").spent() > compose_epsilon(
        [Mechanism(m["kind"], m["parameter"], m["releases"]) for e in events["entries"] if e["formal"]
         for m in e["mechanisms"]], DELTA) + 0.1  # the difference is charged (2.42 against 2.21)
    for entry, stored in zip(ledger_of(book, "sequences.csv").metered, sequences["entries"], strict=True):
        assert entry.epsilon(DELTA) == pytest.approx(compose_epsilon(true_mechanisms(stored, 300.0), DELTA),
                                                     rel=1e-9)


@pytest.mark.parametrize("plant", ["re-costed at the old S", "no re-cost", "the ceiling everywhere"])
def test_a_planted_bug_fails_the_check(plant, monkeypatch):
    if plant == "re-costed at the old S":
        monkeypatch.setattr(exp_recost, "exp_sensitivity",
                            lambda *args: SimpleNamespace(total=short_exp_sensitivity(*args)))
    elif plant == "no re-cost":
        monkeypatch.setattr(Exp, "bound_version", 1)
    else:
        monkeypatch.setattr(exp_recost, "stored_settings", lambda result: None)
    assert not spent_is_true()


def test_ledger_show_says_which_releases_were_recosted_and_leaves_the_others(copied, capsys):
    from dphawkes_cli.main import main

    assert main(["ledger", "show", "ledger.json", "--json", "show.json"]) == 0
    shown = {item["label"]: item for item in json.loads(Path("show.json").read_text())["data_sets"]}
    for label, item in raw_ledgers().items():
        assert shown[label]["recosted_releases"] == {"events.csv": 4, "sequences.csv": 1}[label]
        assert shown[label]["over_budget"] is False
        for old, new in zip(item["entries"], shown[label]["entries"], strict=True):
            recorded = [Mechanism(m["kind"], m["parameter"], m["releases"]) for m in old["mechanisms"]]
            if any(is_exp_event_release(old, m) for m in old["mechanisms"]):
                settings = stored_settings(old["result"])
                factor = exp_sensitivity(*settings).total / short_exp_sensitivity(*settings)
            else:
                factor = 1.0
            if factor > 1 + 1e-9:
                assert new["label"] == old["label"] + RECOSTED_LABEL
                assert len(new["reasons"]) == len(old["reasons"]) + 1
                assert f"{factor:.4f}× the one it was charged at" in new["reasons"][-1]
                assert new["recost"]["epsilon_recorded"] == pytest.approx(compose_epsilon(recorded, DELTA))
                assert new["epsilon_alone"] == pytest.approx(
                    compose_epsilon(true_mechanisms(old, OBSERVED[label]), DELTA), rel=1e-9)
                assert new["epsilon_alone"] > new["recost"]["epsilon_recorded"] * 1.05
            else:  # the defaults' release, DP-SSP, the sequence unit, the seeded fit: as main recorded them
                assert (new["label"], new["reasons"]) == (old["label"], old["reasons"])
                assert "recost" not in new
                assert [m["parameter"] for m in new["mechanisms"]] == [m["parameter"] for m in old["mechanisms"]]


def test_a_replay_draws_nothing_and_its_note_and_report_say_so(copied, capsys, monkeypatch):
    from dphawkes_cli.main import main

    no_draw(monkeypatch)
    stored = raw_ledgers()["events.csv"]["entries"][0]
    assert main(COMMANDS["ledger.json"][0] + ["--ledger", "ledger.json", "--json", "out.json"]) == 0
    out = json.loads(Path("out.json").read_text())
    assert out["ledger"]["replayed"]
    note = next(n for n in out["ledger"]["notes"] if n.startswith("re-costed"))
    assert "noise multiplier 3.731 → 3.359" in note and "1.1108×" in note
    assert note in capsys.readouterr().err
    truth = compose_epsilon(true_mechanisms(stored, 200.0), DELTA)
    assert out["epsilon"] == pytest.approx(truth, rel=1e-9)  # the replayed report states the corrected ε and S
    assert out["sensitivity"] == pytest.approx(exp_sensitivity(*stored_settings(stored["result"])).total / 200.0)
    assert out["sigma2"] == stored["result"]["privacy"]["sigma2"]  # the same noise
    assert out["formal_guarantee"] is True


def test_a_release_after_the_fix_is_charged_at_its_own_bound_and_never_recosted(copied):
    from dphawkes_cli.main import main

    before = ledger_of(LedgerBook("ledger.json"), "events.csv").spent()
    command = [part if part != "1" or i != COMMANDS["ledger.json"][0].index("--epsilon") + 1 else "0.3"
               for i, part in enumerate(COMMANDS["ledger.json"][0])]
    assert main(command + ["--ledger", "ledger.json", "--json", "new.json"]) == 0
    out = json.loads(Path("new.json").read_text())
    ledger = ledger_of(LedgerBook("ledger.json"), "events.csv")
    new = ledger.entries[-1]
    assert new.recost is None and not new.label.endswith(RECOSTED_LABEL) and new.reasons == ()
    assert [m.bound for m in new.mechanisms] == ["exp/3"]
    settings = (5, (2.8, 6.0, 12.0), 4.0, 1, 12.0)
    assert new.mechanisms[0].parameter == pytest.approx(
        math.sqrt(out["sigma2"]) / (exp_sensitivity(*settings).total / 200.0), rel=1e-12)
    assert new.epsilon(DELTA) == pytest.approx(0.3, rel=1e-9)
    assert ledger.spent() == pytest.approx(compose_epsilon(
        [m for e in raw_ledgers()["events.csv"]["entries"] if e["formal"] for m in true_mechanisms(e, 200.0)]
        + list(new.mechanisms), DELTA), rel=1e-9)
    assert ledger.spent() > before


def test_the_recost_is_written_back_once(copied):
    book = LedgerBook("ledger.json")
    key = ledger_of(book, "events.csv").key
    book.open(key, label="events.csv")  # nothing changes: a read is not a write
    assert json.loads(Path("ledger.json").read_text()) == raw("ledger.json")
    book.note_look(key, _look())  # a change: the file is rewritten with every ledger as the accountant reads it
    written = {item["label"]: item for item in json.loads(Path("ledger.json").read_text())["ledgers"]}
    first, original = written["events.csv"]["entries"][0], raw_ledgers()["events.csv"]["entries"][0]
    assert first["mechanisms"][0]["bound"] == "exp/3"
    assert first["mechanisms"][0]["parameter"] == pytest.approx(true_mechanisms(original, 200.0)[0].parameter)
    assert first["result"]["recost"]["recorded_mechanisms"] == [{**m, "bound": ""} for m in original["mechanisms"]]
    assert written["sequences.csv"]["entries"][1]["mechanisms"][0]["bound"] == "exp/3"  # checked, unchanged
    assert written["sequences.csv"]["entries"][1]["mechanisms"][0]["parameter"] == \
        raw_ledgers()["sequences.csv"]["entries"][1]["mechanisms"][0]["parameter"]
    again = ledger_of(LedgerBook("ledger.json"), "events.csv")
    assert again.spent() == pytest.approx(true_spent(raw_ledgers()["events.csv"], 200.0), rel=1e-9)
    assert len(again.entries[0].reasons) == 1 and again.entries[0].label.count(RECOSTED_LABEL) == 1
    assert DataLedger(again.key, again.budget, entries=again.entries).entries == again.entries  # idempotent


def _look():
    from dphawkes_core.release.ledger import DataLook

    return DataLook("2026-11-28T12:00:00+00:00", "cli", "a test's look")


def test_a_ledger_taken_over_its_budget_refuses_the_next_release_saying_why(copied, capsys, monkeypatch):
    from dphawkes_cli.main import main

    item = raw_ledgers("over_budget.json")["events.csv"]
    truth = true_spent(item, 200.0)
    assert compose_epsilon([Mechanism(**m) for m in item["entries"][0]["mechanisms"]], DELTA) <= 1.05 < truth
    ledger = ledger_of(LedgerBook("over_budget.json"), "events.csv")
    assert ledger.spent() == pytest.approx(truth, rel=1e-9) and ledger.remaining() == 0.0
    assert ledger.summary()["over_budget"] is True
    with pytest.raises(BudgetExceeded, match="over its budget ε = 1.05: one release recorded under a sensitivity "
                                             "bound later found short was re-costed"):
        ledger.check((Mechanism("gaussian", 1e3),))
    no_draw(monkeypatch)
    command = COMMANDS["over_budget.json"][0][:-2]  # without its --budget
    small = [part if part != "1" or i != command.index("--epsilon") + 1 else "0.01" for i, part in enumerate(command)]
    capsys.readouterr()
    assert main(small + ["--ledger", "over_budget.json", "--json", "refused.json"]) == 2
    err = capsys.readouterr().err
    assert f"already spent on this data set is {truth:.4g}" in err and "re-costed at the corrected bound" in err
    assert len(ledger_of(LedgerBook("over_budget.json"), "events.csv").entries) == 1  # nothing charged


def test_an_entry_without_its_settings_is_charged_at_the_proofs_ceiling():
    """A release whose entry lacks a setting (one charged and never released holds no result) is charged at
    √(5/4), the largest correction any setting needs; the sequence unit's bound did not change, whatever is
    stored."""
    stored = raw_ledgers()["events.csv"]["entries"][0]
    charged = {**stored, "result": {}, "state": "charged"}
    sequence = {**raw_ledgers()["sequences.csv"]["entries"][1], "result": {}, "state": "charged"}
    ledger = DataLedger(LedgerKey("rows-x"), entries=entries_from([charged, sequence], None))
    assert ledger.entries[0].mechanisms[0].parameter == pytest.approx(stored["mechanisms"][0]["parameter"]
                                                                      / math.sqrt(1.25), rel=1e-12)
    assert "√(5/4)" in ledger.entries[0].reasons[-1]
    assert ledger.entries[1].mechanisms[0].parameter == sequence["mechanisms"][0]["parameter"]
    assert ledger.entries[1].recost is None


def test_a_release_in_the_differences_basis_is_not_corrected():
    """The differences basis came after main with a bound that covered the swap from the start: a stamp-less entry
    of it (this round's development files) is corrected only as version 2 is (``test_recost_gram_end.py``: not at
    these settings, ρ = 12); the same entry in the decays basis is corrected."""
    stored = raw_ledgers()["events.csv"]["entries"][0]
    result = stored["result"]
    basis = {**stored, "result": {**result, "info": {**result["info"], "basis": "differences"}}}
    decays = {**stored, "result": {**result, "info": {**result["info"], "basis": "decays"}}}
    ledger = DataLedger(LedgerKey("rows-x"), entries=entries_from([basis, decays], None))
    assert ledger.entries[0].recost is None
    assert ledger.entries[0].mechanisms[0].parameter == stored["mechanisms"][0]["parameter"]
    assert ledger.entries[1].recost is not None


def test_the_ceiling_bounds_every_correction_and_is_approached():
    """S_corrected/S_short <= √(5/4) on random settings (the proof in docs/privacy.md), and reached as q → 0,
    d → ∞, ρ → ∞."""
    rng = np.random.default_rng(405)
    for _ in range(300):
        decays = tuple(np.exp(rng.uniform(-4, 5, rng.integers(1, 4))))
        args = (int(rng.integers(1, 40)), decays, float(np.exp(rng.uniform(-3, 3))), int(rng.integers(1, 30)),
                float(np.exp(rng.uniform(-3, 6))))
        assert exp_sensitivity(*args).total <= SWAP_CEILING * short_exp_sensitivity(*args) * (1 + 1e-12)
    limit = (2000, (80.0,), 10.0, 1, 1e6)
    assert exp_sensitivity(*limit).total / short_exp_sensitivity(*limit) == pytest.approx(SWAP_CEILING, abs=1e-3)


def test_any_family_can_recost_its_older_releases(monkeypatch):
    """Nothing in the ledger is exp's: a family that raises its bound version and says by how much its older
    releases were short gets them re-costed the same way (DP-SSP here, planted at 1.5×)."""
    ssp = type(get_family("ssp"))
    monkeypatch.setattr(ssp, "bound_version", 2)
    monkeypatch.setattr(ssp, "bound_correction", lambda self, version, unit, result:
                        BoundCorrection(1.5, "planted") if version == 1 else None)
    ledger = ledger_of(LedgerBook(HERE / "ledger.json"), "events.csv")
    stored = raw_ledgers()["events.csv"]["entries"][-1]
    entry = ledger.entries[-1]
    assert entry.label.startswith("DP-SSP") and entry.recost is not None
    assert entry.mechanisms[0].parameter == pytest.approx(stored["mechanisms"][0]["parameter"] / 1.5, rel=1e-12)
    assert entry.mechanisms[0].bound == "ssp/2"
    assert entry.result["privacy"]["sensitivity"] == pytest.approx(stored["result"]["privacy"]["sensitivity"] * 1.5)


@pytest.mark.postgres
def test_a_ledger_copied_into_the_database_holds_the_corrected_charge_and_the_database_refuses_by_it(
        ledger_database, monkeypatch):
    """Both stores get the re-cost: a ledger main wrote, copied into PostgreSQL (`ledger copy`, through the
    accountant), is stored at the corrected mechanisms, so the database's own check — the program's planted away —
    refuses the next release on the data set the correction took over its budget. Had the short charge been copied,
    that tiny release would fit (1.0 + 0.0002 < 1.05)."""
    from dphawkes_core.release.ledger_copy import copy_ledgers
    from dphawkes_core.release.ledger_postgres import PostgresLedger

    owner, analyst = PostgresLedger(ledger_database.owner_url), PostgresLedger(ledger_database.analyst_url)
    copy_ledgers(LedgerBook(HERE / "over_budget.json"), owner)
    item = raw_ledgers("over_budget.json")["events.csv"]
    (mechanisms,), = ledger_database.sql("ledger_owner", "SELECT mechanisms FROM dphawkes_ledger.entries")
    assert [m["bound"] for m in mechanisms] == ["exp/3"]
    assert mechanisms[0]["parameter"] == pytest.approx(true_mechanisms(item["entries"][0], 200.0)[0].parameter,
                                                       rel=1e-12)
    (over,) = analyst.ledgers()
    assert over.spent() == pytest.approx(true_spent(item, 200.0), rel=1e-9)
    monkeypatch.setattr(DataLedger, "check", lambda self, *args, **kwargs: None)
    tiny = Mechanism("gaussian", 1e3, 1, "noisy statistics", "exp/3")
    recorded = [Mechanism(m["kind"], m["parameter"], m["releases"]) for m in item["entries"][0]["mechanisms"]]
    assert compose_epsilon(recorded + [tiny], DELTA) < 1.05
    with pytest.raises(BudgetExceeded, match="refused by the database"):
        analyst.record_spend(over.key, "one more", dict, label="one more", formal=True, mechanisms=(tiny,))
    assert len(owner.get(over.key).entries) == 1
