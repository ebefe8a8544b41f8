"""The ledger in a PostgreSQL database, for a team: the second :class:`~.ledger_store.LedgerStore`.

The schema (``ledger_postgres.sql``, installed once by the data owner: ``dphawkes ledger init URL --analyst ROLE``)
gives the rights to the database's own roles. The owner's role owns the tables: it alone sets budgets and public
marks. An analyst's role reads them and records through functions that run as the owner (``SECURITY DEFINER``) and
check inside the database what they record: a release is charged only by ``dphawkes_ledger.charge``, which locks the
data set's row and refuses a release over the budget (composed in the database: Gaussian noise exactly, anything
else in zCDP), whoever calls it — this program or SQL written by hand. A trigger records every change of a budget or
a public mark with the role that made it, the OS user its client stated and the time.

Each act is one transaction on one data set: lock its row, read its ledger in one statement, apply the accountant's
transition (:mod:`.ledger` — the same rules and words as the ledger file), then write through the function (an
analyst's act) or the tables (an owner's act). The charge is committed before the release draws anything
(:meth:`~.ledger_store.LedgerStore.record_spend`). A data set has no budget until its owner sets one: a release on
rows the database does not know is refused (:class:`~.ledger_store.NoBudgetSet`).

Connections are made per act from the address (a libpq URL without a password: :mod:`.ledger_address`), so a forked
process or a thread never shares one.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
from importlib import resources
from urllib.parse import parse_qs, urlsplit

from dphawkes_core.errors import DPHawkesError
from dphawkes_core.privacy.accounting import BudgetExceeded, Mechanism
from dphawkes_core.release.ledger import (
    TOOLS,
    Budget,
    DataLedger,
    DataLook,
    Entry,
    LedgerKey,
    LedgerOutcome,
    PersonPromise,
    PromiseRefused,
    PublicMark,
    SettingChange,
    absorb,
    canonical_json,
    utc_now,
)
from dphawkes_core.release.ledger_copy import joined
from dphawkes_core.release.ledger_store import LedgerError, LedgerStore, NoBudgetSet, os_user, stamped

SCHEMA = "dphawkes_ledger"
SCHEMA_VERSION = 2  # 2: a charged release is settled only by the role that charged it
#: The functions an analyst's role may run (everything else is the owner's).
ANALYST_FUNCTIONS = ("lock_data_set(text)", "charge(text, text, text, boolean, jsonb, jsonb, text, integer)",
                     "settle(text, text, text, boolean, jsonb)", "record_look(text, text, text)",
                     "promise_person(text, text, text)", "snapshot(text)")
_THIS_ACT = "\x00this act"  # the who of a change made now: the database's trigger records it, with the real role
_REFUSALS = {"DPB01": BudgetExceeded, "DPP01": PromiseRefused, "DPN01": NoBudgetSet, "DPR01": DPHawkesError}
_NO_SCHEMA = ("3F000", "42P01", "42883")  # no schema, no table, no function


def checked_database_address(address: str) -> str:
    """``address`` when it is a PostgreSQL URL without a password; otherwise a one-line refusal that does not repeat
    it."""
    try:
        parts = urlsplit(address)
        query = parse_qs(parts.query)
        has_password = parts.password is not None or any(key.lower() == "password" for key in query)
    except ValueError:
        raise DPHawkesError("the ledger address is not a valid PostgreSQL URL (postgresql://[user@]host[:port]/"
                            "database)") from None
    if has_password:
        raise DPHawkesError("the ledger address holds a password: leave it out of the address (it would be shown "
                            "wherever the address is) and give it to libpq instead — the PGPASSWORD variable or a "
                            "password file (~/.pgpass, or PGPASSFILE)")
    return address


def masked(address: str) -> str:
    """``address`` with any password in it replaced by ``***`` (what a store with a refused address shows)."""
    try:
        parts = urlsplit(address)
        netloc = parts.netloc
        if parts.password is not None:
            netloc = f"{parts.username or ''}:***@{parts.netloc.rsplit('@', 1)[1]}"
        query = "&".join("password=***" if item.split("=", 1)[0].lower() == "password" else item
                         for item in parts.query.split("&")) if parts.query else ""
        return parts._replace(netloc=netloc, query=query).geturl()
    except ValueError:
        return "a PostgreSQL address that does not parse"


def install_script() -> str:
    """The schema's SQL (tables, the arithmetic, the analysts' functions, the triggers)."""
    return resources.files("dphawkes_core.release").joinpath("ledger_postgres.sql").read_text()


class PostgresLedger(LedgerStore):
    """Every data set's ledger in a PostgreSQL database whose roles are the owner's and the analysts' rights.

    Parameters
    ----------
    address : str
        A libpq URL, ``postgresql://[user@][host][:port]/database[?host=/socket/dir]``, without a password
        (libpq's ``PGPASSWORD`` or password file give it).
    """

    shared = True

    def __init__(self, address: str):
        try:
            self._address, self._refused = checked_database_address(address), ""
        except DPHawkesError as exc:  # refused at the first act, shown masked meanwhile (the app reports it)
            self._address, self._refused = masked(address), str(exc)

    @property
    def address(self) -> str:
        """The database's URL as given (it holds no password)."""
        return self._address

    # --- reads ---------------------------------------------------------------------------------------------------

    def ledgers(self) -> tuple[DataLedger, ...]:
        """Every data set's ledger in the database (event views)."""
        with self._transaction(read_only=True) as conn:
            return tuple(_ledger_from(row[0]) for row in conn.execute(f"SELECT * FROM {SCHEMA}.snapshot(NULL)"))

    def get(self, key: LedgerKey) -> DataLedger | None:
        """The ledger of ``key``'s source seen through its unit, or ``None`` when the database does not know it."""
        with self._transaction(read_only=True) as conn:
            return _read(conn, key)

    # --- the owner's acts ----------------------------------------------------------------------------------------

    def open(self, key: LedgerKey, budget: Budget | None = None, label: str = "", public: bool | None = None,
             tool: str = "python", note: str = "") -> DataLedger:
        """See :meth:`LedgerStore.open`: an owner's act when it changes anything (an analyst's role is refused by the
        database); a data set the database does not know is created (the default budget unless given). A ``label``
        alone names a new data set only: the owner renames one with a setting (``dphawkes ledger budget --label``)."""
        current = self.get(key)
        if current is not None and ((budget is None and public is None)
                                    or current.configured(budget, label, public, tool, note) is current):
            return current  # nothing to change: no lock, no right needed
        with self._transaction(tool) as conn:
            before = _read(conn, key, lock=True)
            after = (before or DataLedger(LedgerKey(key.fingerprint))).view(key.unit).configured(
                budget, label, public, tool, note, utc_now(), _THIS_ACT)
            _write(conn, before, after)
            return _read(conn, key)

    def absorb(self, ledger: DataLedger, name: str) -> DataLedger:
        """See :meth:`LedgerStore.absorb` (the owner's act)."""
        with self._transaction("migration") as conn:
            key = LedgerKey(ledger.key.fingerprint)
            before = _read(conn, key, lock=True)
            after = absorb(before, ledger, name, utc_now(), _THIS_ACT)
            if after is before:
                return before
            _write(conn, before, after)
            return _read(conn, key)

    def merge(self, ledger: DataLedger) -> tuple[DataLedger, int]:
        """See :meth:`LedgerStore.merge` (the owner's act)."""
        with self._transaction("cli") as conn:
            key = LedgerKey(ledger.key.fingerprint)
            before = _read(conn, key, lock=True)
            after, added = joined(before, ledger, utc_now(), _THIS_ACT)
            if after is before:
                return before, 0
            _write(conn, before, after)
            return _read(conn, key), added

    # --- the analysts' acts --------------------------------------------------------------------------------------

    def charge(self, key: LedgerKey, entry: Entry) -> LedgerOutcome:
        """See :meth:`LedgerStore.charge`: the accountant's check here (its words), then ``dphawkes_ledger.charge``
        — the database's own check and the record — in the same transaction, under the data set's row lock."""
        with self._transaction() as conn:
            ledger = self._locked(conn, key)
            outcome = ledger.charge(stamped(entry, utc_now()))
            if outcome.replayed:
                return outcome
            e = outcome.entry
            replayed, created = conn.execute(
                f"SELECT * FROM {SCHEMA}.charge(%s, %s, %s, %s, %s, %s, %s, %s)",
                (key.fingerprint, e.request, e.label, e.formal, _jsonb(list(e.reasons)), _jsonb(_mechanisms(e)),
                 e.unit, e.max_events)).fetchone()
            if replayed:
                raise LedgerError("internal error: the database answered a request the ledger did not hold")
            charged = dataclasses.replace(e, created=created)
            entries = tuple(charged if old.request == e.request else old for old in outcome.ledger.entries)
            return LedgerOutcome(charged, False, dataclasses.replace(outcome.ledger, entries=entries))

    def settle(self, key: LedgerKey, request: str, result: dict, *, failed: bool = False,
               mechanisms=None) -> LedgerOutcome:
        """See :meth:`LedgerStore.settle` (``dphawkes_ledger.settle``: a charge is never lowered)."""
        with self._transaction() as conn:
            outcome = self._locked(conn, key).settle(request, result, failed, mechanisms)
            conn.execute(f"SELECT {SCHEMA}.settle(%s, %s, %s, %s, %s)",
                         (key.fingerprint, request, canonical_json(outcome.entry.result), failed,
                          None if mechanisms is None else _jsonb(_mechanisms(outcome.entry))))
            return outcome

    def note_look(self, key: LedgerKey, look: DataLook) -> DataLedger:
        """See :meth:`LedgerStore.note_look` (``dphawkes_ledger.record_look``)."""
        with self._transaction(look.tool) as conn:
            ledger = self._locked(conn, key)
            if ledger.looked(look) is ledger:
                return ledger
            conn.execute(f"SELECT {SCHEMA}.record_look(%s, %s, %s)", (key.fingerprint, look.tool, look.what))
            return _read(conn, key)

    def promise_person(self, key: LedgerKey, promise: PersonPromise) -> DataLedger:
        """See :meth:`LedgerStore.promise_person` (``dphawkes_ledger.promise_person``)."""
        with self._transaction(promise.tool) as conn:
            ledger = self._locked(conn, key)
            if ledger.promised(promise) is ledger:
                return ledger
            conn.execute(f"SELECT {SCHEMA}.promise_person(%s, %s, %s)", (key.fingerprint, promise.tool,
                                                                         promise.note))
            return _read(conn, key)

    # --- the schema ----------------------------------------------------------------------------------------------

    def initialise(self, analysts=()) -> None:
        """Install the schema (or bring its functions up to date) as the connected role, which becomes the owner,
        and let each role of ``analysts`` read the tables and run the analysts' functions — nothing else."""
        from psycopg import sql

        with self._transaction("cli", check_schema=False) as conn:
            conn.execute(install_script())
            for role in analysts:
                name = sql.Identifier(role)
                conn.execute(sql.SQL("GRANT USAGE ON SCHEMA {} TO {}").format(sql.Identifier(SCHEMA), name))
                conn.execute(sql.SQL("GRANT SELECT ON ALL TABLES IN SCHEMA {} TO {}").format(sql.Identifier(SCHEMA),
                                                                                            name))
                for function in ANALYST_FUNCTIONS:
                    conn.execute(sql.SQL(f"GRANT EXECUTE ON FUNCTION {SCHEMA}.{function} TO {{}}").format(name))

    # --- plumbing ------------------------------------------------------------------------------------------------

    def _locked(self, conn, key: LedgerKey) -> DataLedger:
        """The data set's row locked for this transaction (an analyst's lock: ``dphawkes_ledger.lock_data_set``) and
        its ledger read under the lock; refused when the database has no budget for it."""
        if not conn.execute(f"SELECT {SCHEMA}.lock_data_set(%s)", (key.fingerprint,)).fetchone()[0]:
            raise NoBudgetSet(self.no_budget_message())
        return _read(conn, key)

    def no_budget_message(self) -> str:
        """Why a release on rows this database does not know is refused, and what to do (one line)."""
        return ("refused before any draw: these rows have no budget in the ledger database "
                f"{self._address}; the data owner registers them first with `dphawkes ledger budget "
                f"{self._address} DATA --epsilon E`")

    @contextlib.contextmanager
    def _transaction(self, tool: str = "python", read_only: bool = False, check_schema: bool = True):
        """One connection and one transaction (committed when the block ends, rolled back on an exception), with
        the tool and the OS user stated for the change log; database errors become the program's one-line ones."""
        if self._refused:
            raise LedgerError(self._refused)
        try:
            import psycopg
        except ImportError:
            raise LedgerError("a PostgreSQL ledger needs the psycopg driver: pip install 'dphawkes[postgres]'"
                              ) from None
        try:
            conn = psycopg.connect(self._address, connect_timeout=10, application_name="dphawkes")
        except psycopg.Error as exc:
            raise LedgerError(f"cannot reach the ledger database {self._address}: {_first_line(exc)}") from None
        try:
            with conn:
                if read_only:
                    conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
                conn.execute("SELECT set_config('dphawkes.tool', %s, true), set_config('dphawkes.os_user', %s, true)",
                             (tool, os_user()))
                if check_schema:
                    self._check_schema(conn)
                yield conn
        except psycopg.Error as exc:
            raise self._translated(exc) from None

    def _check_schema(self, conn) -> None:
        version = conn.execute(f"SELECT max(version) FROM {SCHEMA}.meta").fetchone()[0]
        if version != SCHEMA_VERSION:
            raise LedgerError(f"the ledger database {self._address} holds schema version {version}, not "
                              f"{SCHEMA_VERSION}: update dphawkes, or ask its owner to run `dphawkes ledger init`")

    def _translated(self, exc) -> DPHawkesError:
        """A database error as the program's refusal or error, in one line (never the address's credentials: it
        holds none)."""
        state = getattr(exc, "sqlstate", None) or ""
        message = _first_line(exc)
        if state in _REFUSALS:
            return _REFUSALS[state](message)
        if state == "42501":  # insufficient privilege
            return LedgerError(f"refused by the database: {message} — only the data owner's role sets budgets and "
                               "public marks or writes the ledger's tables; an analyst's role records releases "
                               "through the ledger's functions")
        if state in _NO_SCHEMA:
            return LedgerError(f"the database {self._address} holds no dphawkes ledger ({message}): its data owner "
                               f"creates one with `dphawkes ledger init {self._address} --analyst ROLE`")
        return LedgerError(f"the ledger database {self._address} failed: {message}")


# --- reading and writing one data set ----------------------------------------------------------------------------


def _read(conn, key: LedgerKey, lock: bool = False) -> DataLedger | None:
    """The ledger of ``key`` in one statement, or ``None``. ``lock``: an owner's lock first — the row's, and an
    advisory lock on the fingerprint, so that two owner's acts creating the same data set come one after the other."""
    if lock:
        conn.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 46))", (key.fingerprint,))
        conn.execute(f"SELECT 1 FROM {SCHEMA}.data_sets WHERE fingerprint = %s FOR UPDATE", (key.fingerprint,))
    row = conn.execute(f"SELECT * FROM {SCHEMA}.snapshot(%s)", (key.fingerprint,)).fetchone()
    return None if row is None else _ledger_from(row[0]).view(key.unit)


def _ledger_from(document: dict) -> DataLedger:
    mark, person = document["public_mark"], document["person"]
    entries = tuple(Entry(e["request"], e["label"], bool(e["formal"]), tuple(e["reasons"]),
                          tuple(Mechanism(**m) for m in e["mechanisms"]), json.loads(e["result"]), e["created"],
                          e["unit"], e["max_events"], e["state"]) for e in document["entries"])
    changes = tuple(SettingChange(c["created"], c["tool"] if c["tool"] in TOOLS else "sql", _who(c), c["what"])
                    for c in document["changes"])
    return DataLedger(LedgerKey(document["fingerprint"]), Budget(**document["budget"]), document["label"],
                      PublicMark(**mark) if mark else None, entries, tuple(document["migrated"]),
                      tuple(DataLook(**look) for look in document["looks"]),
                      PersonPromise(**person) if person else None, changes)


def _who(change: dict) -> str:
    """Who made a change: as copied from another ledger, or the database role (and the OS user its client stated)."""
    if change.get("who"):
        return change["who"]
    return f"database role {change['role']}" + (f" (OS user {change['os_user']})" if change["os_user"] else "")


def _write(conn, before: DataLedger | None, after: DataLedger) -> None:
    """An owner's act: write what ``after`` adds to or changes in ``before`` (entries are added or updated, never
    removed; the trigger records the changes of the budget and the mark made now)."""
    mark = None if after.public_mark is None else _jsonb(dataclasses.asdict(after.public_mark))
    settings = (after.label, after.budget.epsilon, after.budget.delta, mark, list(after.migrated))
    if before is None:
        conn.execute(f"INSERT INTO {SCHEMA}.data_sets (label, budget_epsilon, budget_delta, public_mark, migrated, "
                     "fingerprint) VALUES (%s, %s, %s, %s, %s, %s)", (*settings, after.key.fingerprint))
    elif (before.label, before.budget, before.public_mark, before.migrated) != (after.label, after.budget,
                                                                                 after.public_mark, after.migrated):
        conn.execute(f"UPDATE {SCHEMA}.data_sets SET label = %s, budget_epsilon = %s, budget_delta = %s, "
                     "public_mark = %s, migrated = %s WHERE fingerprint = %s", (*settings, after.key.fingerprint))
    fingerprint = after.key.fingerprint
    if after.person is not None and (before is None or before.person is None):
        conn.execute(f"INSERT INTO {SCHEMA}.promises (fingerprint, created, tool, note) VALUES (%s, %s, %s, %s)",
                     (fingerprint, after.person.created, after.person.tool, after.person.note))
    old_looks = {(look.tool, look.what) for look in (before.looks if before else ())}
    for look in after.looks:
        if (look.tool, look.what) not in old_looks:
            conn.execute(f"INSERT INTO {SCHEMA}.looks (fingerprint, created, tool, what) VALUES (%s, %s, %s, %s) "
                         "ON CONFLICT DO NOTHING", (fingerprint, look.created, look.tool, look.what))
    old_changes = set(before.changes if before else ())
    for change in after.changes:
        if change.who != _THIS_ACT and change not in old_changes:  # history copied from another ledger
            conn.execute(f"INSERT INTO {SCHEMA}.changes (fingerprint, created, tool, who, what) "
                         "VALUES (%s, %s, %s, %s, %s)", (fingerprint, change.created, change.tool, change.who,
                                                         change.what))
    old_entries = {entry.request: entry for entry in (before.entries if before else ())}
    for entry in after.entries:
        values = (entry.label, entry.formal, _jsonb(list(entry.reasons)), _jsonb(_mechanisms(entry)),
                  canonical_json(entry.result), entry.created, entry.unit, entry.max_events, entry.state)
        if entry.request not in old_entries:
            conn.execute(f"INSERT INTO {SCHEMA}.entries (label, formal, reasons, mechanisms, result, created, unit, "
                         "max_events, state, fingerprint, request) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, "
                         "%s)", (*values, fingerprint, entry.request))
        elif not _same_entry(old_entries[entry.request], entry):
            conn.execute(f"UPDATE {SCHEMA}.entries SET label = %s, formal = %s, reasons = %s, mechanisms = %s, "
                         "result = %s, created = %s, unit = %s, max_events = %s, state = %s WHERE fingerprint = %s "
                         "AND request = %s", (*values, fingerprint, entry.request))


def _same_entry(a: Entry, b: Entry) -> bool:
    return a == b and canonical_json(a.result) == canonical_json(b.result)


def _mechanisms(entry: Entry) -> list[dict]:
    return [dataclasses.asdict(m) for m in entry.mechanisms]


def _jsonb(value):
    from psycopg.types.json import Jsonb

    return Jsonb(value)


def _first_line(exc) -> str:
    diag = getattr(exc, "diag", None)
    message = (diag.message_primary if diag is not None else None) or str(exc)
    return message.strip().splitlines()[0] if message.strip() else type(exc).__name__
