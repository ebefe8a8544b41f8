"""Migrating format-2 ledgers (one per declaration and unit) into the source's ledger: the smallest old budget, public
only if every old ledger was, and the old spend counted once even when migrations run at once (main double-charged
in 2 of 7 runs)."""

from __future__ import annotations

import json
import multiprocessing
import time

import pytest

from dphawkes_core.privacy.accounting import Mechanism, compose_epsilon
from dphawkes_core.release.ledger import Budget, DataLedger, LedgerKey
from dphawkes_core.release.ledger_file import LedgerBook, document_checksum
from dphawkes_core.release.ledger_migration import migrate_format2

DELTA = 1e-5
LEGACY, SOURCE = "f" * 64, "rows-source"


def format2_file(path, ledgers) -> None:
    """A format-2 file holding ``ledgers``: ``(unit, budget ε, public, z)`` each, all of the declaration LEGACY."""
    items = [{"fingerprint": LEGACY, "unit": unit, "label": "events.csv", "public": public,
              "budget": {"epsilon": budget, "delta": DELTA},
              "entries": [{"request": f"old {unit}", "label": "old fit", "formal": not public, "reasons": [],
                           "mechanisms": [{"kind": "gaussian", "parameter": z, "releases": 1, "label": ""}],
                           "result": {}, "created": f"2026-01-0{k + 1}T00:00:00+00:00"}]}
             for k, (unit, budget, public, z) in enumerate(ledgers)]
    items = json.loads(json.dumps(items, sort_keys=True))
    path.write_text(json.dumps({"format": "dphawkes-ledger", "version": 2, "checksum": document_checksum(items),
                                "ledgers": items}))


def migrated(tmp_path, ledgers, stored: Budget | None = None) -> DataLedger:
    old, book = tmp_path / "old.json", LedgerBook(tmp_path / "new.json")
    format2_file(old, ledgers)
    if stored is not None:
        book.open(LedgerKey(SOURCE), stored)
    migrate_format2(old, book, SOURCE, LEGACY)
    return book.get(LedgerKey(SOURCE))


@pytest.mark.parametrize("budgets", [(3.0, 2.0), (2.0, 3.0)])
def test_the_smallest_old_budget_is_kept(tmp_path, budgets):
    ledger = migrated(tmp_path, [("event", budgets[0], False, 4.0), ("sequence", budgets[1], False, 5.0)])
    assert ledger.budget == Budget(2.0, DELTA) and len(ledger.metered) == 2


def test_a_stored_budget_larger_than_the_old_one_gives_way(tmp_path):
    """The new file already held the source with the default budget: the old owner's smaller budget wins."""
    ledger = migrated(tmp_path, [("event", 3.0, False, 4.0)], stored=Budget(5.0, DELTA))
    assert ledger.budget.epsilon == 3.0


@pytest.mark.parametrize("marks, public", [((True, False), False), ((False, True), False), ((True, True), True)])
def test_public_only_if_every_old_ledger_was(tmp_path, marks, public):
    ledger = migrated(tmp_path, [("event", 3.0, marks[0], 4.0), ("sequence", 3.0, marks[1], 5.0)])
    assert ledger.public is public
    if not public:
        assert ledger.spent() == pytest.approx(compose_epsilon(
            [Mechanism("gaussian", z) for z, mark in zip((4.0, 5.0), marks, strict=True) if not mark], DELTA))


def test_private_stored_data_stay_private_after_a_public_old_ledger(tmp_path):
    ledger = migrated(tmp_path, [("event", 3.0, True, 4.0)], stored=Budget(5.0, DELTA))
    assert not ledger.public


# --- migrations run at once ---------------------------------------------------------------------------------------


def _migrate_at_once(old, new, barrier, slow_read: float):
    """One of several processes migrating the same old file at the same moment; every read of the new file takes
    ``slow_read`` seconds more (the window in which a check-then-write migration races)."""
    real_load = LedgerBook._load

    def slow_load(self):
        ledgers = real_load(self)
        time.sleep(slow_read)
        return ledgers

    LedgerBook._load = slow_load
    barrier.wait(timeout=30)
    migrate_format2(old, LedgerBook(new), SOURCE, LEGACY)


def race(tmp_path, name: str, processes: int = 6) -> DataLedger:
    old, new = tmp_path / f"{name}-old.json", tmp_path / f"{name}-new.json"
    format2_file(old, [("event", 3.0, False, 4.0), ("sequence", 3.0, False, 5.0)])
    context = multiprocessing.get_context("fork")
    barrier = context.Barrier(processes)
    workers = [context.Process(target=_migrate_at_once, args=(old, new, barrier, 0.05)) for _ in range(processes)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=60)
        assert worker.exitcode == 0
    return LedgerBook(new).get(LedgerKey(SOURCE))


def test_migrations_run_at_once_count_the_old_spend_once(tmp_path):
    """Six processes migrate the same declaration at once, three times over: each old ledger joins once."""
    for round_ in range(3):
        ledger = race(tmp_path, f"round{round_}")
        assert sorted(e.request for e in ledger.entries) == ["old event", "old sequence"]
        assert sorted(ledger.migrated) == [f"event:{LEGACY}", f"sequence:{LEGACY}"]
        assert ledger.spent() == pytest.approx(compose_epsilon([Mechanism("gaussian", 4.0),
                                                                Mechanism("gaussian", 5.0)], DELTA))


def test_the_race_catches_a_migration_that_checks_before_it_writes(tmp_path, monkeypatch):
    """The planted bug (main's order): read whether it was migrated, then join it in another transaction. In the
    same race the old spend is then counted several times."""
    def check_then_write(self, ledger, name):
        stored = self.get(LedgerKey(ledger.key.fingerprint))
        if stored is not None and name in stored.migrated:
            return stored
        with self._locked() as ledgers:
            now = ledgers.get(ledger.key.fingerprint)
            entries = (now.entries if now else ()) + ledger.entries
            migrated_names = (now.migrated if now else ()) + (name,)
            ledgers[ledger.key.fingerprint] = DataLedger(LedgerKey(ledger.key.fingerprint), ledger.budget,
                                                         ledger.label, None, entries, migrated_names)
        return ledgers[ledger.key.fingerprint]

    monkeypatch.setattr(LedgerBook, "absorb", check_then_write)
    ledger = race(tmp_path, "planted")
    assert len(ledger.entries) > 2
