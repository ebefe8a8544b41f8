"""The release rate of the ledger's two stores, and the measurement behind the embedded default.

A *release* here is the store's share of one: :meth:`~dphawkes_core.release.ledger_store.LedgerStore.record_spend`
with a draw that does nothing — the charge (lock, read, the accountant's check, write, durable) and the settle
(the same again). Measured on a data set already holding ``n`` formal releases (10, 100, 1,000), one process:

* the JSON ledger file (the embedded default): every act rewrites the whole file (``fsync``, atomic replace), so its
  cost grows with everything the file holds;
* PostgreSQL (a throwaway cluster from Debian's package with ``fsync`` on, as deployed; or the server
  ``DPHAWKES_TEST_PGHOST`` names): one connection per act, the row lock, the accountant's check in Python and the
  database's own check (which composes every past release of the data set in SQL);
* beside the file, for the decision of the embedded default (``docs/architecture.md``, "Where ledgers live"): the
  accountant's share alone (its charge and settle in memory), and SQLite's storage alone — the same transaction shape
  written for it (``BEGIN IMMEDIATE``, read the data set's entries, write one, commit at ``synchronous=FULL``), not a
  store.

Targets: each store at least :data:`TARGET_PER_S` releases per second on a data set with :data:`TARGET_SIZE` past
releases (analysts release at human pace, a budget is spent in tens of releases, and a fit takes seconds: the store's
share of a release stays under 0.2 s on a loaded machine; quiet, both do 20–40 per second there). Both stores read
the data set's whole ledger on each act (the accountant composes every past release), so their cost grows with it:
the 1,000 row says how much.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
import tempfile
import time
from pathlib import Path

from dphawkes_core.privacy.accounting import Mechanism
from dphawkes_core.release.ledger import RELEASED, Budget, DataLedger, Entry, LedgerKey
from dphawkes_core.release.ledger_file import LedgerBook

TARGET_PER_S = 5.0
TARGET_SIZE = 100
SIZES = (10, 100, 1_000)
TIMED = 40  # releases timed per store and size
KEY = LedgerKey("rows-" + "b" * 64)


def _filled(store, size: int) -> None:
    """``size`` formal releases of tiny cost on :data:`KEY`, copied in at once (:meth:`merge`: the owner's act),
    under a budget they all fit in."""
    entries = tuple(Entry(f"past {i}", "past", True, (), (Mechanism("gaussian", 1e3),), {"estimate": [0.0] * 20},
                          "2026-01-01T00:00:00+00:00", "event", None, RELEASED) for i in range(size))
    store.merge(DataLedger(KEY, Budget(1e4, 1e-5), "bench", entries=entries))


def _rate(store, label: str) -> float:
    """Releases per second over :data:`TIMED` releases (CPU of this process and the server's waits included), after
    three not timed (imports, caches)."""
    for i in range(3):
        store.record_spend(KEY, f"{label} warm {i}", dict, label="warm", formal=True,
                           mechanisms=(Mechanism("gaussian", 1e3),))
    start = time.perf_counter()
    for i in range(TIMED):
        store.record_spend(KEY, f"{label} {i}", lambda: {"estimate": [0.0] * 20}, label="timed", formal=True,
                           mechanisms=(Mechanism("gaussian", 1e3),))
    return TIMED / (time.perf_counter() - start)


def _accountant_rate(size: int) -> float:
    """The accountant's share alone: :meth:`DataLedger.charge` and :meth:`DataLedger.settle` in memory, per second."""
    from dphawkes_core.release.ledger import CHARGED

    ledger = DataLedger(KEY, Budget(1e4, 1e-5), "bench", entries=tuple(
        Entry(f"past {i}", "past", True, (), (Mechanism("gaussian", 1e3),), {"estimate": [0.0] * 20},
              "2026-01-01T00:00:00+00:00", "event", None, RELEASED) for i in range(size)))
    start = time.perf_counter()
    for i in range(TIMED):
        entry = Entry(f"t{i}", "t", True, (), (Mechanism("gaussian", 1e3),), {}, "", "event", None, CHARGED)
        ledger = ledger.charge(entry).ledger.settle(f"t{i}", {"estimate": [0.0] * 20}).ledger
    return TIMED / (time.perf_counter() - start)


def _sqlite_rate(folder: Path, size: int) -> float:
    """The same transaction shape in SQLite (for the decision, not a store): per release, a charge and a settle,
    each ``BEGIN IMMEDIATE`` → read the data set's entries → write → commit, ``synchronous=FULL``."""
    db = sqlite3.connect(folder / f"ledger-{size}.sqlite", isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=FULL")
    db.execute("CREATE TABLE entries (fingerprint TEXT, request TEXT, state TEXT, mechanisms TEXT, result TEXT, "
               "PRIMARY KEY (fingerprint, request))")
    past = [(KEY.fingerprint, f"past {i}", "released", '[{"kind": "gaussian", "parameter": 1000.0}]',
             json.dumps({"estimate": [0.0] * 20})) for i in range(size)]
    db.executemany("INSERT INTO entries VALUES (?, ?, ?, ?, ?)", past)

    def act(statement, params):
        db.execute("BEGIN IMMEDIATE")
        rows = db.execute("SELECT mechanisms FROM entries WHERE fingerprint = ?", (KEY.fingerprint,)).fetchall()
        sum(len(json.loads(m)) for (m,) in rows)  # the accountant reads every past release
        db.execute(statement, params)
        db.execute("COMMIT")

    start = time.perf_counter()
    for i in range(TIMED):
        act("INSERT INTO entries VALUES (?, ?, 'charged', ?, '{}')", (KEY.fingerprint, f"t{i}", past[0][3]))
        act("UPDATE entries SET state = 'released', result = ? WHERE fingerprint = ? AND request = ?",
            (past[0][4], KEY.fingerprint, f"t{i}"))
    db.close()
    return TIMED / (time.perf_counter() - start)


@contextlib.contextmanager
def _database():
    """A PostgreSQL ledger as an analyst's role (the owner registers the data set), or ``None`` when no server can
    start here."""
    from benchmarks.postgres_cluster import (
        ClusterUnavailable,
        create_database,
        create_roles,
        given_server,
        temporary_cluster,
    )
    from dphawkes_core.release.ledger_postgres import PostgresLedger

    def ready(server):
        create_roles(server)
        names = []

        def fresh(size):
            name = f"bench_{size}_{int(time.time() * 1e3)}"
            create_database(server, name, "ledger_owner")
            names.append(name)
            owner = PostgresLedger(server.url("ledger_owner", name))
            owner.initialise(["analyst"])
            return owner, PostgresLedger(server.url("analyst", name))
        return fresh

    server = given_server()
    if server is not None:
        yield ready(server)
        return
    try:
        with temporary_cluster(durable=True) as server:
            yield ready(server)
    except ClusterUnavailable:
        yield None


def rows() -> list[dict]:
    out = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for size in SIZES:
            book = LedgerBook(folder / f"ledger-{size}.json")
            _filled(book, size)
            rate = _rate(book, "file")
            out.append({"benchmark": f"ledger release rate, JSON file, {size:,} past releases",
                        "measured": f"{rate:.0f} releases/s",
                        "target": f">= {TARGET_PER_S:g}/s" if size == TARGET_SIZE else "(reported)",
                        "met": size != TARGET_SIZE or rate >= TARGET_PER_S})
            accountant, sqlite_rate = _accountant_rate(size), _sqlite_rate(folder, size)
            out.append({"benchmark": f"  of which the accountant alone (in memory), {size:,} past",
                        "measured": f"{accountant:.0f} releases/s", "target": "(reported)", "met": True})
            out.append({"benchmark": f"  SQLite storage alone, the same transactions, {size:,} past",
                        "measured": f"{sqlite_rate:.0f} releases/s", "target": "(for the decision)", "met": True})
        with _database() as fresh:
            if fresh is None:
                out.append({"benchmark": "ledger release rate, PostgreSQL", "measured": "no server here",
                            "target": "PostgreSQL installed", "met": False})
                return out
            for size in SIZES:
                owner, analyst = fresh(size)
                _filled(owner, size)
                rate = _rate(analyst, "database")
                out.append({"benchmark": f"ledger release rate, PostgreSQL (analyst's role), {size:,} past releases",
                            "measured": f"{rate:.0f} releases/s",
                            "target": f">= {TARGET_PER_S:g}/s" if size == TARGET_SIZE else "(reported)",
                            "met": size != TARGET_SIZE or rate >= TARGET_PER_S})
    return out
