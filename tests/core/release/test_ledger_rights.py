"""The owner sets budgets and public marks, an analyst spends within them — from the command line, on a ledger file
(``fit --budget`` sets only the first budget of a new data set) and on a team's PostgreSQL ledger (the database's
roles); every change recorded with who made it and when; a ledger address never carries a password."""

from __future__ import annotations

import json

import pytest

from dphawkes_cli.main import main
from dphawkes_core.data.io import source_key
from dphawkes_core.data.kernels import get_scenario
from dphawkes_core.data.simulate import simulate
from dphawkes_core.release.ledger import LedgerKey
from dphawkes_core.release.ledger_address import open_ledger
from dphawkes_core.release.ledger_file import LedgerBook
from dphawkes_core.release.ledger_postgres import SCHEMA_VERSION, checked_database_address, masked
from dphawkes_core.release.ledger_store import os_user

FIT = ("--bin-size", 0.5, "--support", 2, "--method", "ssp", "--calibration", "formal", "--count-cap", 5,
       "--end-time", 700, "--dimensions", 2)


@pytest.fixture
def events_csv(tmp_path):
    from dphawkes_core.data.io import save_csv

    path = tmp_path / "events.csv"
    save_csv(simulate(get_scenario("paper-2d"), n_events=1500, seed=4), path)
    return path


def run(capsys, *argv):
    status = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return status, out, err


def fit(capsys, events_csv, ledger, *extra, epsilon=1.0):
    return run(capsys, "fit", events_csv, *FIT, "--epsilon", epsilon, "--ledger", ledger, *extra)


def test_fit_sets_the_first_budget_of_a_new_data_set_and_never_changes_one(capsys, tmp_path, events_csv):
    ledger = tmp_path / "ledger.json"
    assert fit(capsys, events_csv, ledger, "--budget", 3)[0] == 0
    key = LedgerKey(source_key(events_csv))
    assert LedgerBook(ledger).get(key).budget.epsilon == 3
    for budget in (30, 2):  # raised (main allowed it) or lowered: the owner's, not the analyst's
        status, out, err = fit(capsys, events_csv, ledger, "--budget", budget, epsilon=0.5)
        assert status == 2 and out == "" and err.count("\n") == 1
        assert "only its data owner changes it (dphawkes ledger budget" in err and "nothing was drawn" in err
    assert len(LedgerBook(ledger).get(key).metered) == 1 and LedgerBook(ledger).get(key).budget.epsilon == 3
    assert fit(capsys, events_csv, ledger, "--budget", 3, epsilon=0.5)[0] == 0  # the same budget: a release

    status, _, err = run(capsys, "ledger", "budget", ledger, events_csv, "--epsilon", 4)
    assert status == 0 and "budget ε = 4" in err and f"by {os_user()}" in err and "from the CLI" in err
    status, out, _ = run(capsys, "ledger", "show", ledger)
    changes = json.loads(out)["data_sets"][0]["setting_changes"]
    assert [(c["what"], c["who"], c["tool"]) for c in changes] == [
        ("budget ε = 3, δ = 1e-05", os_user(), "cli"), ("budget ε = 4, δ = 1e-05", os_user(), "cli")]
    status, _, err = run(capsys, "ledger", "budget", ledger, events_csv, "--epsilon", 0.1)
    assert status == 2 and "below the ε already spent" in err and err.count("\n") == 1


def test_marking_public_and_withdrawing_are_recorded_with_who_and_when(capsys, tmp_path, events_csv):
    ledger = tmp_path / "ledger.json"
    run(capsys, "ledger", "public", ledger, events_csv, "--note", "the published catalogue")
    run(capsys, "ledger", "public", ledger, events_csv, "--undo")
    changes = LedgerBook(ledger).ledgers()[0].changes
    assert [c.what for c in changes] == ["budget ε = 5, δ = 1e-05", "marked public (note: the published catalogue)",
                                         "public mark withdrawn"]
    assert all(c.who == os_user() and c.tool == "cli" and c.created for c in changes)


@pytest.mark.parametrize("address", [
    "postgresql://analyst:hunter2@db.example/ledger", "postgres://analyst@db.example/ledger?password=hunter2",
    "postgresql://analyst@db.example/ledger?sslmode=require&PASSWORD=hunter2"])
def test_an_address_with_a_password_is_refused_and_never_repeated(capsys, tmp_path, events_csv, address):
    with pytest.raises(Exception, match="holds a password") as refused:
        checked_database_address(address)
    assert "hunter2" not in str(refused.value) and "hunter2" not in masked(address)
    assert open_ledger(address).address == masked(address)
    for argv in (("fit", events_csv, *FIT, "--epsilon", 1, "--ledger", address), ("ledger", "show", address),
                 ("ledger", "budget", address, events_csv, "--epsilon", 2), ("ledger", "init", address)):
        status, out, err = run(capsys, *argv)
        assert status == 2 and "holds a password" in err and "PGPASSWORD" in err
        assert "hunter2" not in out + err


def test_init_is_for_a_database(capsys, tmp_path):
    status, _, err = run(capsys, "ledger", "init", tmp_path / "ledger.json")
    assert status == 2 and "postgresql://" in err


@pytest.mark.postgres
def test_the_owner_and_the_analyst_from_the_command_line_on_a_team_database(capsys, tmp_path, events_csv,
                                                                            ledger_database):
    owner, analyst = ledger_database.owner_url, ledger_database.analyst_url
    status, _, err = fit(capsys, events_csv, analyst)  # rows the database does not know
    assert status == 2 and err.count("\n") == 1 and "no budget in the ledger database" in err
    status, _, err = run(capsys, "fit", events_csv, *FIT, "--epsilon", 1, "--ledger", analyst, "--plan")
    assert status == 2 and "it would be refused before any draw" in err
    status, _, err = run(capsys, "ledger", "budget", analyst, events_csv, "--epsilon", 50)
    assert status == 2 and err.count("\n") == 1 and "refused by the database: permission denied" in err

    status, _, err = run(capsys, "ledger", "budget", owner, events_csv, "--epsilon", 1.5)
    assert status == 0 and "database role ledger_owner" in err
    status, out, err = fit(capsys, events_csv, analyst)
    assert status == 0 and json.loads(out)["ledger"]["path"] == analyst and "recorded" in err
    assert json.loads(out)["ledger"]["format"] == f"postgresql-{SCHEMA_VERSION}"
    assert json.loads(fit(capsys, events_csv, analyst)[1])["ledger"]["replayed"]
    status, _, err = fit(capsys, events_csv, analyst, epsilon=1.2)
    assert status == 2 and "over its budget" in err
    status, _, err = fit(capsys, events_csv, analyst, "--budget", 9, epsilon=1.2)
    assert status == 2 and "only its data owner changes it" in err
    status, _, err = run(capsys, "ledger", "public", analyst, events_csv)
    assert status == 2 and "refused by the database" in err

    status, _, err = run(capsys, "select", events_csv, "--widths", "0.5,1", "--supports", "2,5",
                         "--validation-start", 420, "--end-time", 700, "--ledger", analyst, "--json",
                         tmp_path / "select.json")
    assert status == 0, err
    status, out, _ = run(capsys, "ledger", "show", analyst)
    (shown,) = json.loads(out)["data_sets"]
    assert shown["budget_epsilon"] == 1.5 and shown["metered_releases"] == 1 and len(shown["looks"]) == 1
    assert shown["setting_changes"][0]["who"].startswith("database role ledger_owner (OS user ")
    assert ledger_database.sql("ledger_owner", "SELECT role, what FROM dphawkes_ledger.changes") == [
        ("ledger_owner", "budget ε = 1.5, δ = 1e-05")]


@pytest.mark.postgres
def test_init_gives_a_role_the_analysts_rights_only(capsys, ledger_database, postgres_server):
    from benchmarks.postgres_cluster import create_roles

    create_roles(postgres_server, ("second_analyst",))
    status, _, err = run(capsys, "ledger", "init", ledger_database.owner_url, "--analyst", "second_analyst")
    assert status == 0 and "analysts' roles: second_analyst" in err
    rows = ledger_database.sql("ledger_owner", "SELECT privilege_type FROM information_schema.role_table_grants "
                               "WHERE grantee = 'second_analyst' ORDER BY 1")
    assert {row[0] for row in rows} == {"SELECT"}
    routines = ledger_database.sql("ledger_owner", "SELECT DISTINCT routine_name FROM "
                                   "information_schema.role_routine_grants WHERE grantee = 'second_analyst'")
    assert {row[0] for row in routines} == {"lock_data_set", "charge", "settle", "record_look", "promise_person",
                                            "snapshot"}
    definers = ledger_database.sql("ledger_owner", "SELECT p.proname FROM pg_proc p JOIN pg_namespace n ON "
                                   "n.oid = p.pronamespace WHERE n.nspname = 'dphawkes_ledger' AND p.prosecdef")
    assert {row[0] for row in definers} == {row[0] for row in routines} - {"snapshot"}  # run as the owner
    status, _, err = run(capsys, "ledger", "init", ledger_database.analyst_url)  # the schema is the owner's
    assert status == 2 and "refused by the database" in err and err.count("\n") == 1
