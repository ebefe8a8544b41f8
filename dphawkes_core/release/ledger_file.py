"""The ledger file: every source's ledger in one JSON file, the first :class:`~.ledger_store.LedgerStore`.

One JSON file (with a checksum) holding every data set's ledger, locked (``fcntl`` on ``<path>.lock``) while a
ledger changes and replaced atomically (written to ``<path>.tmp``, flushed, ``os.replace``), so it survives restarts,
a process killed at any point (the file holds the state before or after an act, never half of one), and is shared by
scripted releases on one machine. A file that cannot be read, parsed or verified raises
:class:`~.ledger_store.LedgerError` — it is never reset. The file holds a hash of the raw data: keep it with the
data, do not publish it.
"""

from __future__ import annotations

import contextlib
import dataclasses
import fcntl
import hashlib
import json
import os
from collections.abc import Callable
from pathlib import Path

from dphawkes_core.privacy.accounting import Mechanism
from dphawkes_core.release.ledger import (
    RELEASED,
    Budget,
    DataLedger,
    DataLook,
    Entry,
    LedgerKey,
    LedgerOutcome,
    PersonPromise,
    PublicMark,
    SettingChange,
    absorb,
    budget_words,
    canonical_json,
    utc_now,
)
from dphawkes_core.release.ledger_copy import joined
from dphawkes_core.release.ledger_store import LedgerError, LedgerStore, os_user, stamped

FILE_FORMAT = "dphawkes-ledger"
FILE_VERSION = 6  # 3: one ledger per source's rows, entries with their unit, the public mark's provenance; 4: the
READABLE_VERSIONS = (3, 4, 5, 6)  # enforced cap M of an event-level entry (format 3 has none: read as uncapped);
# 5: each entry's state (charged before its draw), the looks at the rows and the per-person promise; 6: every change
# of the budget or the public mark, with who made it (the OS user) and when


class LedgerBook(LedgerStore):
    """Every data set's ledger in one JSON file (locked during each act, replaced atomically).

    Parameters
    ----------
    path : str or Path
        The ledger file; created on the first write. An existing file that cannot be read, parsed or
        verified raises :class:`LedgerError` on every access: it is never overwritten.
    """

    def __init__(self, path):
        self.path = Path(path).expanduser()

    @property
    def address(self) -> str:
        """The ledger file's path."""
        return str(self.path)

    def ledgers(self) -> tuple[DataLedger, ...]:
        """Every source's ledger in the file (event views)."""
        return tuple(self._load().values())

    def get(self, key: LedgerKey) -> DataLedger | None:
        """The ledger of ``key``'s source seen through its unit, or ``None`` when nothing was recorded for it."""
        ledger = self._load().get(key.fingerprint)
        return None if ledger is None else ledger.view(key.unit)

    def open(self, key: LedgerKey, budget: Budget | None = None, label: str = "", public: bool | None = None,
             tool: str = "python", note: str = "") -> DataLedger:
        """See :meth:`LedgerStore.open`."""
        def change(ledger):
            configured = ledger.configured(budget, label, public, tool, note, utc_now(), os_user())
            return configured, configured
        return self._transact(key, change, tool)

    def charge(self, key: LedgerKey, entry: Entry) -> LedgerOutcome:
        """See :meth:`LedgerStore.charge`."""
        def change(ledger):
            outcome = ledger.charge(stamped(entry, utc_now()))
            return outcome.ledger, outcome
        return self._transact(key, change)

    def settle(self, key: LedgerKey, request: str, result: dict, *, failed: bool = False,
               mechanisms=None) -> LedgerOutcome:
        """See :meth:`LedgerStore.settle`."""
        def change(ledger):
            outcome = ledger.settle(request, result, failed, mechanisms)
            return outcome.ledger, outcome
        return self._transact(key, change)

    def note_look(self, key: LedgerKey, look: DataLook) -> DataLedger:
        """See :meth:`LedgerStore.note_look`."""
        return self._transact(key, lambda ledger: (ledger.looked(look),) * 2)

    def promise_person(self, key: LedgerKey, promise: PersonPromise) -> DataLedger:
        """See :meth:`LedgerStore.promise_person`."""
        return self._transact(key, lambda ledger: (ledger.promised(promise),) * 2)

    def absorb(self, ledger: DataLedger, name: str) -> DataLedger:
        """See :meth:`LedgerStore.absorb`."""
        with self._locked() as ledgers:
            stored = ledgers.get(ledger.key.fingerprint)
            merged = absorb(stored, ledger, name, utc_now(), os_user())
            if merged is not stored:
                ledgers[ledger.key.fingerprint] = merged.view("event")
        return merged

    def merge(self, ledger: DataLedger) -> tuple[DataLedger, int]:
        """See :meth:`LedgerStore.merge`."""
        with self._locked() as ledgers:
            stored = ledgers.get(ledger.key.fingerprint)
            after, added = joined(stored, ledger, utc_now(), os_user())
            if after is not stored:
                ledgers[ledger.key.fingerprint] = after
        return after, added

    # storage

    def _transact(self, key: LedgerKey, change: Callable[[DataLedger], tuple], tool: str = "python"):
        """Under the file's lock: ``change(ledger)`` → ``(new ledger, answer)`` on the ledger of ``key`` (the stored
        one through ``key``'s unit, or a new one with the default budget); the new ledger is written (atomically)
        when it is new or changed — a new one with the budget it was opened with recorded as a change (``tool``, the
        OS user). An exception writes nothing."""
        with self._locked() as ledgers:
            stored = ledgers.get(key.fingerprint)
            current = (stored or DataLedger(LedgerKey(key.fingerprint))).view(key.unit)
            ledger, answer = change(current)
            if stored is None and not any(c.what.startswith("budget") for c in ledger.changes):
                opened = dataclasses.replace(ledger, changes=(
                    SettingChange(utc_now(), tool, os_user(), budget_words(ledger.budget)),) + ledger.changes)
                answer, ledger = opened if answer is ledger else answer, opened
            if stored is None or ledger is not current:
                ledgers[key.fingerprint] = ledger.view("event")
        return answer

    @contextlib.contextmanager
    def _locked(self):
        """Exclusive lock on ``<path>.lock``; yields the ledgers (a mutable dict) and writes them back when an entry
        was replaced or added."""
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            lock = open(self.path.with_name(self.path.name + ".lock"), "a")
        except OSError as exc:
            raise LedgerError(f"cannot open the ledger {self.path}: {exc.strerror or exc}") from None
        with lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            ledgers = self._load()
            before = {fingerprint: id(ledger) for fingerprint, ledger in ledgers.items()}
            yield ledgers
            if {fingerprint: id(ledger) for fingerprint, ledger in ledgers.items()} != before:
                self._write(ledgers)

    def _load(self) -> dict[str, DataLedger]:
        if not self.path.exists():
            return {}
        where = f"the ledger file {self.path}"
        try:
            document = json.loads(self.path.read_text())
        except OSError as exc:
            raise LedgerError(f"cannot read {where}: {exc.strerror or exc}") from None
        except (ValueError, UnicodeDecodeError) as exc:
            raise LedgerError(f"{where} is corrupted (not JSON: {exc}); it was not reset — restore it from a "
                              "backup, or move it away to start a new ledger") from None
        if isinstance(document, dict) and document.get("format") == FILE_FORMAT and document.get("version") == 1:
            raise LedgerError(f"{where} was written by an earlier dphawkes (ledger format 1), whose release "
                              "identities differ: it is not opened, so that no release is charged as new and no data "
                              "set starts a fresh budget by accident — keep using it with that version, or start a "
                              "new ledger file and carry the spent ε over with a smaller --budget")
        if isinstance(document, dict) and document.get("format") == FILE_FORMAT and document.get("version") == 2:
            raise LedgerError(f"{where} is a format-2 ledger, keyed by each declaration of the data: it is not opened "
                              "(its budgets would start over under the new keys) — migrate it with `dphawkes ledger "
                              f"migrate {self.path} NEW.json DATA` plus the --dimensions/--sequences/--start-time/"
                              "--end-time/--time-unit of its fits, once per data set and declaration, then use "
                              "NEW.json")
        try:
            if document.get("format") != FILE_FORMAT or document.get("version") not in READABLE_VERSIONS:
                raise ValueError(f"not a {FILE_FORMAT} file of version {', '.join(map(str, READABLE_VERSIONS))}")
            if document.get("checksum") != document_checksum(document["ledgers"]):
                raise ValueError("its checksum does not match its content (edited or damaged)")
            ledgers = [_ledger_from_dict(item) for item in document["ledgers"]]
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise LedgerError(f"{where} is corrupted ({exc}); it was not reset — restore it from a backup, "
                              "or move it away to start a new ledger") from None
        return {ledger.key.fingerprint: ledger for ledger in ledgers}

    def _write(self, ledgers: dict[str, DataLedger]) -> None:
        items = [_ledger_to_dict(ledger) for ledger in ledgers.values()]
        items = json.loads(canonical_json(items))  # the form the checksum is read back in
        document = {"format": FILE_FORMAT, "version": FILE_VERSION, "checksum": document_checksum(items),
                    "ledgers": items}
        temporary = self.path.with_name(self.path.name + ".tmp")
        try:
            with open(temporary, "w") as handle:
                handle.write(canonical_json(document, indent=1) + "\n")
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(temporary, self.path)
        except OSError as exc:
            raise LedgerError(f"cannot write the ledger {self.path}: {exc.strerror or exc}") from None


def document_checksum(items) -> str:
    """SHA-256 of the ledgers' canonical JSON: what the file's ``checksum`` holds."""
    return hashlib.sha256(canonical_json(items).encode()).hexdigest()


def _ledger_to_dict(ledger: DataLedger) -> dict:
    return {"fingerprint": ledger.key.fingerprint, "label": ledger.label,
            "public_mark": dataclasses.asdict(ledger.public_mark) if ledger.public_mark else None,
            "budget": dataclasses.asdict(ledger.budget), "migrated": list(ledger.migrated),
            "looks": [dataclasses.asdict(look) for look in ledger.looks],
            "person": dataclasses.asdict(ledger.person) if ledger.person else None,
            "changes": [dataclasses.asdict(change) for change in ledger.changes],
            "entries": [dataclasses.asdict(e) for e in ledger.entries]}


def _ledger_from_dict(item: dict) -> DataLedger:
    mark, person = item["public_mark"], item.get("person")
    return DataLedger(LedgerKey(item["fingerprint"]), Budget(**item["budget"]), item["label"],
                      PublicMark(**mark) if mark else None, entries_from(item["entries"], None),
                      tuple(item["migrated"]), tuple(DataLook(**look) for look in item.get("looks", ())),
                      PersonPromise(**person) if person else None,
                      tuple(SettingChange(**change) for change in item.get("changes", ())))


def entries_from(items, unit: str | None) -> tuple[Entry, ...]:
    """Entries as stored (format 3 to 5: each with its unit; from format 4 an event-level entry's cap M; from format 5
    its state — earlier entries were recorded released; format 2: the ledger's ``unit``)."""
    return tuple(Entry(e["request"], e["label"], bool(e["formal"]), tuple(e["reasons"]),
                       tuple(Mechanism(**m) for m in e["mechanisms"]), dict(e["result"]), e["created"],
                       e["unit"] if unit is None else unit, e.get("max_events"), e.get("state", RELEASED))
                 for e in items)
