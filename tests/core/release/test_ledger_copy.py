"""``dphawkes ledger copy``: a ledger copied between stores (file → database → file) keeps every entry once, however
often or concurrently it is copied; what the target holds of its own stays; the budget is the smaller and the data
public only when both say so."""

from __future__ import annotations

import dataclasses
import multiprocessing

import pytest

from dphawkes_core.privacy.accounting import Mechanism
from dphawkes_core.release.ledger import Budget, DataLook, LedgerKey, PersonPromise
from dphawkes_core.release.ledger_copy import copy_ledgers, joined
from dphawkes_core.release.ledger_file import LedgerBook

DELTA = 1e-5
KEYS = [LedgerKey("rows-" + c * 64) for c in "abc"]


def filled(book) -> None:
    """Three data sets: releases of both units, a failed and a charged one, an unmetered output, a look, a promise,
    a public mark and changes of the budget."""
    book.open(KEYS[0], Budget(40.0, DELTA), label="first")
    book.open(KEYS[1], Budget(4.0, DELTA), label="second", public=True, tool="cli", note="published")
    book.open(KEYS[2], Budget(3.0, DELTA), label="third")
    for i, z in enumerate((5.0, 7.0, 9.0)):
        book.record_spend(KEYS[0], f"fit {i}", lambda i=i: {"estimate": [float(i)]}, label=f"fit {i}", formal=True,
                          mechanisms=(Mechanism("gaussian", z),), max_events=4)
    book.record_spend(LedgerKey(KEYS[0].fingerprint, "sequence"), "per person", dict, label="per person",
                      formal=True, mechanisms=(Mechanism("discrete-gaussian", 20.0),))
    with pytest.raises(ValueError):
        book.record_spend(KEYS[2], "failed", lambda: (_ for _ in ()).throw(ValueError("no")), label="failed",
                          formal=True, mechanisms=(Mechanism("gaussian", 6.0),), max_events=3)
    book.record_spend(KEYS[1], "seeded", dict, label="seeded", formal=False, mechanisms=())
    book.note_look(KEYS[2], DataLook("2026-01-01T00:00:00+00:00", "cli", "dphawkes select"))
    book.promise_person(KEYS[2], PersonPromise("2026-01-01T00:00:00+00:00", "cli", "patients"))
    book.open(KEYS[2], Budget(3.5, DELTA))


def same(copied, source) -> bool:
    """The same ledgers: budgets, marks, entries (every field), looks and promises; every change of the settings
    copied along (a database adds its own record of the copy setting the budget)."""
    def key(ledger):
        return (ledger.key.fingerprint, ledger.label, ledger.budget, ledger.public, ledger.entries,
                [e.result for e in ledger.entries], [look.what for look in ledger.looks], bool(ledger.person))
    def by_key(ledgers):
        return sorted(ledgers, key=lambda ledger: ledger.key.fingerprint)

    changes_kept = all(set(theirs.changes) <= set(ours.changes) for ours, theirs in zip(by_key(copied),
                                                                                        by_key(source)))
    return sorted(map(key, copied), key=str) == sorted(map(key, source), key=str) and changes_kept


def test_a_ledger_copied_into_an_empty_file_is_the_same_and_a_second_copy_adds_nothing(tmp_path):
    source, target = LedgerBook(tmp_path / "source.json"), LedgerBook(tmp_path / "target.json")
    filled(source)
    first = copy_ledgers(source, target)
    assert [c.added for c in first] == [len(ledger.entries) for ledger in source.ledgers()]
    assert same(target.ledgers(), source.ledgers())
    before = (tmp_path / "target.json").read_text()
    assert [c.added for c in copy_ledgers(source, target)] == [0, 0, 0]
    assert (tmp_path / "target.json").read_text() == before  # nothing written


def test_the_target_keeps_its_own_and_the_safe_side_of_both_settings(tmp_path):
    source, target = LedgerBook(tmp_path / "source.json"), LedgerBook(tmp_path / "target.json")
    filled(source)
    target.open(KEYS[0], Budget(2.0, DELTA), label="mine", public=True, tool="cli")
    target.open(KEYS[1], Budget(9.0, DELTA), label="theirs")
    target.record_spend(KEYS[1], "its own", dict, label="its own", formal=True,
                        mechanisms=(Mechanism("gaussian", 9.0),))
    copy_ledgers(source, target)
    first, second = target.get(KEYS[0]), target.get(KEYS[1])
    assert first.budget.epsilon == 2.0 and not first.public  # the smaller; public only if both were
    assert second.budget.epsilon == 4.0 and not second.public and second.label == "theirs"
    assert {e.request for e in second.entries} == {"its own", "seeded"}
    assert "the smaller, on a copy" in second.changes[-1].what
    assert first.changes[-1].what == "public mark withdrawn (on a copy)"


def test_joining_twice_or_in_either_order_counts_each_entry_once(tmp_path):
    book = LedgerBook(tmp_path / "l.json")
    filled(book)
    ledger = book.get(KEYS[0])
    once, added = joined(None, ledger)
    assert added == len(ledger.entries)
    again, added_again = joined(once, ledger)
    assert again is once and added_again == 0
    half = dataclasses.replace(ledger, entries=ledger.entries[:2])
    rest = dataclasses.replace(ledger, entries=ledger.entries[1:])
    both, _ = joined(joined(None, half)[0], rest)
    assert [e.request for e in both.entries] == [e.request for e in ledger.entries]


@pytest.mark.postgres
def test_file_to_database_to_file_keeps_every_entry_once(tmp_path, ledger_database, capsys):
    from dphawkes_cli.main import main
    from dphawkes_core.release.ledger_postgres import PostgresLedger

    source = LedgerBook(tmp_path / "source.json")
    filled(source)
    url = ledger_database.owner_url
    assert main(["ledger", "copy", str(tmp_path / "source.json"), url]) == 0
    err = capsys.readouterr().err
    assert "copied 3 data set(s)" in err and "first: 4 of 4 entries new" in err
    assert main(["ledger", "copy", str(tmp_path / "source.json"), url]) == 0
    assert "first: 0 of 4 entries new" in capsys.readouterr().err
    assert same(PostgresLedger(url).ledgers(), source.ledgers())
    assert main(["ledger", "copy", url, str(tmp_path / "back.json")]) == 0
    assert same(LedgerBook(tmp_path / "back.json").ledgers(), source.ledgers())
    changes = PostgresLedger(url).get(KEYS[2]).changes  # who made them, copied along; and the copy's own record
    who = source.get(KEYS[2]).changes[0].who
    assert sorted(c.who for c in changes) == [f"database role ledger_owner (OS user {who})", who, who]
    assert main(["ledger", "copy", str(tmp_path / "source.json"), ledger_database.analyst_url]) == 2
    assert "refused by the database" in capsys.readouterr().err  # copying in is the owner's act


def _copy(source, target, barrier):
    from dphawkes_core.release.ledger_address import open_ledger

    barrier.wait(timeout=60)
    copy_ledgers(LedgerBook(source), open_ledger(target))


@pytest.mark.postgres
@pytest.mark.parametrize("into", ["file", "database"])
def test_concurrent_copies_count_every_entry_once(tmp_path, ledger_database, into):
    source = LedgerBook(tmp_path / "source.json")
    filled(source)
    target = str(tmp_path / "target.json") if into == "file" else ledger_database.owner_url
    context = multiprocessing.get_context("fork")
    barrier = context.Barrier(3)
    workers = [context.Process(target=_copy, args=(tmp_path / "source.json", target, barrier)) for _ in range(3)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=60)
    from dphawkes_core.release.ledger_address import open_ledger

    assert all(worker.exitcode == 0 for worker in workers)
    assert same(open_ledger(target).ledgers(), source.ledgers())
