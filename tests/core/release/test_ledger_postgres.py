"""The ledger in PostgreSQL, on a real server: the analyst's role records releases within the owner's budget; the
database itself refuses what the rights forbid (a budget or a mark changed by an analyst, a release over the budget
written in SQL by hand); its arithmetic against independent references; and the same acts give the same ledger in
the database as in the file."""

from __future__ import annotations

import dataclasses
import math
import re

import numpy as np
import pytest
from scipy.special import log_ndtr

from dphawkes_core.errors import DPHawkesError
from dphawkes_core.privacy.accounting import (
    BudgetExceeded,
    Mechanism,
    compose_epsilon,
    gaussian_multiplier,
    zcdp_rho,
)
from dphawkes_core.release.ledger import Budget, DataLook, LedgerKey, PersonPromise, PromiseRefused, utc_now
from dphawkes_core.release.ledger_file import LedgerBook
from dphawkes_core.release.ledger_postgres import PostgresLedger
from dphawkes_core.release.ledger_store import LedgerError, NoBudgetSet
from tests.references import zcdp_epsilon_reference

pytestmark = pytest.mark.postgres

DELTA = 1e-5
KEY = LedgerKey("rows-" + "a" * 64)


def gaussian(z: float, releases: int = 1) -> Mechanism:
    return Mechanism("gaussian", z, releases, "noisy statistics")


def budget_for(count: float, z: float) -> Budget:
    """A budget with room for ``count`` Gaussian releases of multiplier ``z`` (composed: μ² = count/z²)."""
    return Budget(compose_epsilon([gaussian(z * math.sqrt(1 / count))], DELTA), DELTA)


def stores(database):
    return PostgresLedger(database.owner_url), PostgresLedger(database.analyst_url)


def release(store, request: str, *mechanisms, key=KEY, max_events=None, formal=True):
    return store.record_spend(key, request, lambda: {"estimate": [1.0, float("nan")]}, label=request, formal=formal,
                              mechanisms=mechanisms or (gaussian(4.0),), max_events=max_events)


# --- the database's arithmetic, against independent references -------------------------------------------------


def test_the_databases_normal_cdf_matches_scipy(ledger_database):
    points = np.concatenate([np.linspace(-60, 9, 139), [-3.0, -3.0000001, 5.0, 5.0000001]])
    rows = ledger_database.sql("ledger_owner", "SELECT x, dphawkes_ledger.log_normal_cdf(x) "
                                               "FROM unnest(%s::float8[]) x", (list(points),))
    for x, value in rows:
        reference = float(log_ndtr(x))
        assert value == pytest.approx(reference, rel=1e-11, abs=1e-13), x


@pytest.mark.parametrize("epsilon, delta", [(0.05, 1e-5), (1.0, 1e-5), (5.0, 1e-6), (40.0, 1e-9), (2000.0, 1e-5)])
def test_the_budgets_mu_and_rho_are_the_gaussians_and_the_zcdp_conversions(ledger_database, epsilon, delta):
    """μ of the budget: the analytic Gaussian mechanism's (dp-accounting's get_sigma_gaussian, inverted); ρ: the
    largest ρ-zCDP whose conversion (dp-accounting's RDP conversion, an independent grid) is within ε."""
    from dp_accounting.gaussian_mechanism import get_sigma_gaussian

    ((mu, rho),) = ledger_database.sql("ledger_owner", "SELECT dphawkes_ledger.budget_mu(%s, %s), "
                                       "dphawkes_ledger.budget_rho(%s, %s)", (epsilon, delta, epsilon, delta))
    assert mu == pytest.approx(1.0 / get_sigma_gaussian(epsilon, delta), rel=1e-9)
    assert zcdp_epsilon_reference(rho, delta) <= epsilon * (1 + 1e-5)  # the reference's grid: ~1e-6 above its min
    assert zcdp_epsilon_reference(rho * 1.001, delta) > epsilon
    assert rho == pytest.approx(zcdp_rho(epsilon, delta), rel=1e-9)  # the program's: the same decisions


# --- the analyst's role records releases ------------------------------------------------------------------------


def test_the_analyst_role_records_releases_within_the_owners_budget(ledger_database):
    owner, analyst = stores(ledger_database)
    with pytest.raises(NoBudgetSet, match="no budget in the ledger database .* the data owner registers them"):
        release(analyst, "before the owner")  # rows the database does not know: no budget, no release
    owner.open(KEY, budget_for(2.5, 4.0), label="catalogue")
    first, second = release(analyst, "first"), release(analyst, "second")
    assert first.entry.state == second.entry.state == "released" and not second.replayed
    assert release(analyst, "first").replayed  # asked again: answered from the record, nothing drawn
    with pytest.raises(BudgetExceeded, match="over its budget"):
        release(analyst, "third")
    rows = ledger_database.sql("ledger_owner", "SELECT request, recorded_by, state FROM dphawkes_ledger.entries "
                               "ORDER BY seq")
    assert rows == [("first", "analyst", "released"), ("second", "analyst", "released")]
    ledger = analyst.get(KEY)
    assert ledger.spent() == pytest.approx(compose_epsilon([gaussian(4.0, 2)], DELTA))
    assert math.isnan(ledger.entries[0].result["estimate"][1])  # a stored result reads back as it was


def _acts(owner, analyst) -> None:
    """One history of acts, the owner's and the analysts', on two data sets and both units."""
    other = LedgerKey("rows-" + "b" * 64)
    owner.open(KEY, Budget(6.0, DELTA), label="catalogue")
    owner.open(other, Budget(3.0, DELTA), label="other", public=True, tool="cli", note="published")
    release(analyst, "capped", gaussian(9.0), max_events=4)
    release(analyst, "seeded", gaussian(2.0), formal=False)
    analyst.note_look(KEY, DataLook("2026-01-01T00:00:00+00:00", "cli", "dphawkes select (cls)"))
    release(analyst, "sequence", gaussian(12.0), key=LedgerKey(KEY.fingerprint, "sequence"))
    analyst.promise_person(KEY, PersonPromise("2026-01-01T00:00:00+00:00", "cli", "one patient per sequence"))
    with pytest.raises(PromiseRefused):
        release(analyst, "uncapped after the promise")
    with pytest.raises(RuntimeError):
        analyst.record_spend(KEY, "failed", lambda: (_ for _ in ()).throw(RuntimeError("disk on fire")),
                             label="failed", formal=True, mechanisms=(gaussian(20.0),), max_events=3)
    charged = analyst.charge(KEY, dataclasses.replace(release_entry("killed"), created=""))
    assert not charged.replayed
    release(analyst, "on public data", gaussian(1.0), key=other, formal=False)
    owner.open(KEY, Budget(5.5, DELTA))
    owner.open(other, public=False, tool="cli")


def release_entry(request: str):
    from dphawkes_core.release.ledger import CHARGED, Entry

    return Entry(request, request, True, (), (gaussian(30.0),), {}, "", "event", 3, CHARGED)


def _comparable(summary: dict) -> dict:
    """A ledger's summary without what differs between stores by construction: times, and who changed a setting
    (the OS user in a file, the database role in a database)."""
    summary = {**summary, "entries": [{k: v for k, v in e.items() if k != "created"} for e in summary["entries"]],
               "looks": [look["what"] for look in summary["looks"]],
               "setting_changes": [(c["tool"], c["what"]) for c in summary["setting_changes"]],
               "person_promise": re.sub(r"on \S+ \S+ UTC", "on TIME", summary["person_promise"] or "")}
    summary.pop("public_mark")
    return summary


def test_the_same_acts_give_the_same_ledger_in_the_database_as_in_the_file(ledger_database, tmp_path):
    """The accountant is one: every answer (spent, remaining, both views, states, refusals, the promise, the
    changes of the settings) is the same whichever store holds the ledger."""
    book = LedgerBook(tmp_path / "ledger.json")
    _acts(book, book)
    owner, analyst = stores(ledger_database)
    _acts(owner, analyst)
    in_file = sorted((_comparable(ledger.summary()) for ledger in book.ledgers()), key=lambda s: s["label"])
    in_database = sorted((_comparable(ledger.summary()) for ledger in analyst.ledgers()), key=lambda s: s["label"])
    assert in_database == in_file
    assert [c.who for c in analyst.get(KEY).changes] == ["database role ledger_owner (OS user "
                                                         f"{book.get(KEY).changes[0].who})"] * 2


# --- the rights are the database's own --------------------------------------------------------------------------


@pytest.mark.parametrize("statement", [
    "UPDATE dphawkes_ledger.data_sets SET budget_epsilon = 1000",
    "UPDATE dphawkes_ledger.data_sets SET public_mark = '{\"created\": \"\", \"tool\": \"sql\", \"note\": \"\"}'",
    "UPDATE dphawkes_ledger.data_sets SET budget_mu = 1000",
    "INSERT INTO dphawkes_ledger.data_sets (fingerprint, budget_epsilon, budget_delta) VALUES ('new', 1000, 1e-5)",
    "DELETE FROM dphawkes_ledger.entries",
    "UPDATE dphawkes_ledger.entries SET formal = false",
    "DELETE FROM dphawkes_ledger.changes",
    "INSERT INTO dphawkes_ledger.entries (fingerprint, request, label, formal, reasons, mechanisms, created, unit, "
    "state) VALUES ('rows-" + "a" * 64 + "', 'x', 'x', true, '[]', '[]', '', 'event', 'released')",
    "SELECT dphawkes_ledger.locked('rows-" + "a" * 64 + "')",
    "ALTER TABLE dphawkes_ledger.data_sets DISABLE TRIGGER setting_changes",
    "SET ROLE ledger_owner",
])
def test_the_analyst_role_cannot_change_a_budget_or_a_mark(ledger_database, statement):
    import psycopg

    owner, analyst = stores(ledger_database)
    owner.open(KEY, Budget(1.0, DELTA), label="catalogue")
    release(analyst, "first")
    before = owner.get(KEY)
    with pytest.raises(psycopg.errors.InsufficientPrivilege):
        ledger_database.sql("analyst", statement)
    after = owner.get(KEY)
    assert (after.budget, after.public_mark, after.entries, after.changes) == (before.budget, before.public_mark,
                                                                               before.entries, before.changes)


@pytest.mark.parametrize("act", ["budget", "public", "undo", "copy"])
def test_the_analysts_store_is_refused_the_owners_acts_in_one_line(ledger_database, act):
    owner, analyst = stores(ledger_database)
    owner.open(KEY, Budget(1.0, DELTA), label="catalogue", public=act == "undo")
    with pytest.raises(LedgerError) as refused:
        if act == "copy":
            analyst.merge(dataclasses.replace(owner.get(KEY), budget=Budget(9.0, DELTA)))
        else:
            analyst.open(KEY, Budget(9.0, DELTA) if act == "budget" else None,
                         public={"budget": None, "public": True, "undo": False}[act])
    assert str(refused.value).startswith("refused by the database: permission denied for table")
    assert "\n" not in str(refused.value)
    assert (owner.get(KEY).budget.epsilon, owner.get(KEY).public) == (1.0, act == "undo")


def charge_by_hand(database, request: str, mechanisms: str, unit: str = "event", cap=None, formal: bool = True,
                   key: LedgerKey = KEY):
    """An analyst's SQL written by hand: the charge function called directly."""
    return database.sql("analyst", "SELECT * FROM dphawkes_ledger.charge(%s, %s, 'by hand', %s, '[]', %s::jsonb, %s, "
                                   "%s)", (key.fingerprint, request, formal, mechanisms, unit, cap))


def one_gaussian(z: float) -> str:
    return f'[{{"kind": "gaussian", "parameter": {z!r}, "releases": 1}}]'


def refused_by_hand(database, *args, **kwargs) -> str:
    import psycopg

    with pytest.raises(psycopg.Error) as refused:
        charge_by_hand(database, *args, **kwargs)
    message = refused.value.diag.message_primary
    assert message.startswith("refused by the database") and "\n" not in message
    return message


def test_a_release_over_the_budget_is_refused_by_the_database_to_sql_by_hand(ledger_database):
    """At the budget's edge (one Gaussian release with the budget's own noise multiplier, a hair below or above),
    after a first release (the past counts), in the sequence view (a capped release's group of 2M), in a closed view,
    a promise too late and on data marked public: each refused by the database, nothing recorded."""
    import psycopg

    owner, _ = stores(ledger_database)
    owner.open(KEY, Budget(1.0, DELTA), label="catalogue")
    z_budget = gaussian_multiplier(1.0, DELTA)
    assert "over its budget ε = 1" in refused_by_hand(ledger_database, "hair over", one_gaussian(z_budget * 0.999999))
    ((replayed, created),) = charge_by_hand(ledger_database, "hair under", one_gaussian(z_budget * 1.000001))
    assert not replayed and created[:10] == utc_now()[:10]  # stamped by the database
    message = refused_by_hand(ledger_database, "after it", one_gaussian(z_budget * 100))  # the past counts
    assert "μ = " in message and "the μ of the budget" in message

    assert [e.request for e in owner.get(KEY).entries] == ["hair under"]

    other = LedgerKey("rows-" + "c" * 64)
    owner.open(other, Budget(40.0, DELTA), label="another")
    message = refused_by_hand(ledger_database, "capped", one_gaussian(2.0), cap=50, key=other)  # μ = 1 per event
    assert "seen per sequence" in message
    charge_by_hand(ledger_database, "capped, fits", one_gaussian(60.0), cap=50, key=other)
    charge_by_hand(ledger_database, "uncapped", one_gaussian(30.0), key=other)  # closes the sequence view
    assert "closed" in refused_by_hand(ledger_database, "per sequence", one_gaussian(80.0), unit="sequence", key=other)
    with pytest.raises(psycopg.Error, match="cannot be declared one person here any more"):  # too late
        ledger_database.sql("analyst", "SELECT dphawkes_ledger.promise_person(%s, 'sql', '')", (other.fingerprint,))
    owner.open(other, public=True, tool="cli")
    assert "marked public" in refused_by_hand(ledger_database, "public", one_gaussian(90.0), cap=5, key=other)
    assert [e.request for e in owner.get(other).entries] == ["capped, fits", "uncapped"]


def test_the_promise_and_malformed_mechanisms_are_refused_by_hand(ledger_database):
    owner, _ = stores(ledger_database)
    owner.open(KEY, Budget(10.0, DELTA), label="catalogue")
    ledger_database.sql("analyst", "SELECT dphawkes_ledger.promise_person(%s, 'sql', 'patients')", (KEY.fingerprint,))
    assert "one person" in refused_by_hand(ledger_database, "uncapped", one_gaussian(50.0))
    for bad in ('[{"kind": "gaussian", "parameter": -1, "releases": 1}]',
                '[{"kind": "gaussian", "parameter": 5, "releases": 0.5}]',
                '[{"kind": "free lunch", "parameter": 5, "releases": 1}]', '{"kind": "gaussian"}'):
        message = refused_by_hand(ledger_database, "bad", bad, cap=3)
        assert "is not a mechanism" in message or "must be a JSON array" in message
    assert owner.get(KEY).entries == ()


def test_a_charge_is_never_lowered_by_hand(ledger_database):
    import psycopg

    owner, _ = stores(ledger_database)
    owner.open(KEY, Budget(10.0, DELTA), label="catalogue")
    charge_by_hand(ledger_database, "r", one_gaussian(3.0))
    settle = "SELECT dphawkes_ledger.settle(%s, 'r', '{}', false, %s::jsonb)"
    with pytest.raises(psycopg.Error, match="would record less than it was charged"):
        ledger_database.sql("analyst", settle, (KEY.fingerprint, one_gaussian(30.0)))
    ledger_database.sql("analyst", settle, (KEY.fingerprint, one_gaussian(3.0)))
    with pytest.raises(psycopg.Error, match="not a charged one"):  # settled once
        ledger_database.sql("analyst", settle, (KEY.fingerprint, one_gaussian(3.0)))
    assert owner.get(KEY).entries[0].state == "released"


def test_only_the_role_that_charged_a_release_settles_it(ledger_database):
    """A second analyst's role, granted the same functions, cannot write a result into (or fail) a release another
    role charged — refused by the database in one line — while the role that charged it can."""
    import psycopg

    from benchmarks.postgres_cluster import create_roles

    server = ledger_database.server
    create_roles(server, ("analyst_two",))
    owner, _ = stores(ledger_database)
    PostgresLedger(ledger_database.owner_url).initialise(["analyst_two"])
    owner.open(KEY, Budget(10.0, DELTA), label="catalogue")
    charge_by_hand(ledger_database, "r", one_gaussian(3.0))
    settle = "SELECT dphawkes_ledger.settle(%s, 'r', %s, %s, NULL)"
    for failed in (False, True):
        with pytest.raises(psycopg.Error, match="charged by the role analyst; only that role settles it"):
            ledger_database.sql("analyst_two", settle, (KEY.fingerprint, '{"estimate": "junk"}', failed))
    assert owner.get(KEY).entries[0].state == "charged"
    ledger_database.sql("analyst", settle, (KEY.fingerprint, '{"estimate": [1.0]}', False))
    (entry,) = owner.get(KEY).entries
    assert entry.state == "released" and entry.result == {"estimate": [1.0]}


def test_a_database_of_the_first_schema_is_refused_until_its_owner_runs_init_again(ledger_database):
    """Version 1 let any analyst's role settle any charged release: a client refuses such a database (one line,
    saying what to do) and the owner's `ledger init` (the install script run again) brings it to version 2."""
    owner, analyst = stores(ledger_database)
    owner.open(KEY, Budget(10.0, DELTA), label="catalogue")
    ledger_database.sql("ledger_owner", "DELETE FROM dphawkes_ledger.meta; "
                                        "INSERT INTO dphawkes_ledger.meta (version) VALUES (1)")
    with pytest.raises(LedgerError, match="schema version 1, not 2.*ledger init"):
        release(analyst, "on version 1")
    PostgresLedger(ledger_database.owner_url).initialise(["analyst"])
    assert not release(analyst, "after init").replayed
    assert [e.request for e in owner.get(KEY).entries] == ["after init"]


def test_stale_snapshots_by_hand_cannot_both_slip_under_the_budget(ledger_database):
    """Two analysts' transactions at REPEATABLE READ, each reading the ledger before the other's charge commits:
    the second fails to serialise (the charge updates the data set's row) instead of charging on a stale ledger."""
    import psycopg

    owner, _ = stores(ledger_database)
    owner.open(KEY, budget_for(1.5, 5.0), label="catalogue")
    first = psycopg.connect(ledger_database.analyst_url)
    second = psycopg.connect(ledger_database.analyst_url)
    try:
        for conn in (first, second):
            conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
            conn.execute("SELECT count(*) FROM dphawkes_ledger.entries").fetchone()  # the snapshot is taken
        call = "SELECT * FROM dphawkes_ledger.charge(%s, %s, 'x', true, '[]', %s::jsonb, 'event', NULL)"
        first.execute(call, (KEY.fingerprint, "one", one_gaussian(5.0)))
        first.commit()
        with pytest.raises(psycopg.errors.SerializationFailure):
            second.execute(call, (KEY.fingerprint, "two", one_gaussian(5.0)))
    finally:
        first.close()
        second.close()
    assert [e.request for e in owner.get(KEY).entries] == ["one"]


def test_discrete_gaussians_compose_in_zcdp_in_the_database_as_in_the_program(ledger_database):
    """With a discrete Gaussian in the ledger both compose in zCDP: the database refuses the same release the
    program does; with a Laplace step the database's zCDP bound is never looser than a valid guarantee."""
    owner, analyst = stores(ledger_database)
    owner.open(KEY, Budget(2.0, DELTA), label="catalogue")
    count = 0
    with pytest.raises(BudgetExceeded):
        while count < 50:
            release(analyst, f"r{count}", Mechanism("discrete-gaussian", 6.0), Mechanism("gaussian", 9.0))
            count += 1
    in_program = sum(1 for k in range(1, 60) if compose_epsilon(
        [Mechanism("discrete-gaussian", 6.0, k), Mechanism("gaussian", 9.0, k)], DELTA) <= 2.0)
    assert count == in_program > 1
    # past the program's check, the database's own: a Laplace step no valid zCDP bound fits is refused by hand
    owner.open(KEY, Budget(9.0, DELTA))
    message = refused_by_hand(ledger_database, "laplace", '[{"kind": "laplace", "parameter": 0.05, "releases": 3}]')
    assert "the zCDP ρ of the budget" in message
    ((rho,),) = ledger_database.sql("ledger_owner", "SELECT budget_rho FROM dphawkes_ledger.data_sets")
    assert zcdp_epsilon_reference(rho, DELTA) <= 9.0 * (1 + 1e-6)


def test_looks_and_promises_go_through_the_analysts_functions(ledger_database):
    owner, analyst = stores(ledger_database)
    with pytest.raises(NoBudgetSet):
        analyst.note_look(KEY, DataLook(utc_now(), "cli", "dphawkes score"))
    owner.open(KEY, Budget(3.0, DELTA), label="catalogue")
    analyst.note_look(KEY, DataLook(utc_now(), "cli", "dphawkes score"))
    analyst.note_look(KEY, DataLook(utc_now(), "cli", "dphawkes score"))  # once
    ledger = analyst.promise_person(KEY, PersonPromise(utc_now(), "cli", "patients"))
    assert [look.what for look in ledger.looks] == ["dphawkes score"] and "patients" in ledger.promise
    assert ledger_database.sql("ledger_owner", "SELECT recorded_by FROM dphawkes_ledger.looks UNION ALL "
                               "SELECT recorded_by FROM dphawkes_ledger.promises") == [("analyst",), ("analyst",)]


def test_a_database_without_the_ledger_and_an_unreachable_one_say_so_in_one_line(ledger_database, postgres_server):
    from benchmarks.postgres_cluster import create_database, drop_database

    create_database(postgres_server, "empty_" + ledger_database.name, "ledger_owner")
    try:
        with pytest.raises(LedgerError, match="holds no dphawkes ledger .*`dphawkes ledger init"):
            PostgresLedger(postgres_server.url("ledger_owner", "empty_" + ledger_database.name)).get(KEY)
    finally:
        drop_database(postgres_server, "empty_" + ledger_database.name)
    with pytest.raises(LedgerError, match="cannot reach the ledger database") as refused:
        PostgresLedger(postgres_server.url("ledger_owner", "no_such_database")).ledgers()
    assert "\n" not in str(refused.value)


@pytest.mark.parametrize("refusal, kind", [("budget", BudgetExceeded), ("promise", PromiseRefused),
                                            ("public", DPHawkesError)])
def test_the_databases_refusals_keep_their_kinds_when_the_programs_check_is_skipped(ledger_database, monkeypatch,
                                                                                   refusal, kind):
    """With the program's own check planted away, the database's refusal still reaches the caller as the program's
    kind of refusal (the CLI's exit 2, the app's "Refused"), in one line, and nothing is recorded."""
    from dphawkes_core.release.ledger import DataLedger

    owner, analyst = stores(ledger_database)
    owner.open(KEY, Budget(1.0, DELTA), label="catalogue", public=refusal == "public")
    if refusal == "promise":
        analyst.promise_person(KEY, PersonPromise(utc_now(), "cli", "patients"))
    monkeypatch.setattr(DataLedger, "check", lambda self, *args, **kwargs: None)
    monkeypatch.setattr(DataLedger, "public", property(lambda self: False))
    with pytest.raises(kind) as refused:
        release(analyst, "past every check here", gaussian(0.5 if refusal == "budget" else 50.0))
    assert str(refused.value).startswith("refused by the database") and "\n" not in str(refused.value)
    assert owner.get(KEY).entries == ()
