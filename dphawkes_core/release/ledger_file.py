"""The ledger file: every source's ledger in one JSON file, the first :class:`~.ledger_store.LedgerStore`.

One JSON file (with a checksum) holding every data set's ledger, locked (``fcntl`` on ``<path>.lock``) while a
release is decided and replaced atomically (written to ``<path>.tmp``, flushed, ``os.replace``), so it survives
restarts and is shared by scripted releases on one machine. A file that cannot be read, parsed or verified raises
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

from dphawkes_core.errors import DPHawkesError
from dphawkes_core.privacy.accounting import BudgetExceeded, Mechanism
from dphawkes_core.release.ledger import (
    PUBLIC_MARK_REASON,
    Budget,
    DataLedger,
    Entry,
    LedgerKey,
    LedgerOutcome,
    PublicMark,
    canonical_json,
    utc_now,
)
from dphawkes_core.release.ledger_store import LedgerError, LedgerStore

FILE_FORMAT = "dphawkes-ledger"
FILE_VERSION = 4  # 3: one ledger per source's rows, entries with their unit, the public mark's provenance; 4: the
READABLE_VERSIONS = (3, 4)  # enforced cap M of an event-level entry (a format-3 entry has none: read as uncapped)


class LedgerBook(LedgerStore):
    """Every data set's ledger in one JSON file (locked during a release, replaced atomically).

    Parameters
    ----------
    path : str or Path
        The ledger file; created on the first write. An existing file that cannot be read, parsed or
        verified raises :class:`LedgerError` on every access: it is never overwritten.
    """

    def __init__(self, path):
        self.path = Path(path).expanduser()

    def ledgers(self) -> tuple[DataLedger, ...]:
        """Every source's ledger in the file (event views)."""
        return tuple(self._load().values())

    def get(self, key: LedgerKey) -> DataLedger | None:
        """The ledger of ``key``'s source seen through its unit, or ``None`` when nothing was recorded for it."""
        ledger = self._load().get(key.fingerprint)
        return None if ledger is None else ledger.view(key.unit)

    def open(self, key: LedgerKey, budget: Budget | None = None, label: str = "", public: bool | None = None,
             tool: str = "python", note: str = "") -> DataLedger:
        """The ledger of ``key``, created (default budget unless given) when new; a given ``budget`` replaces the
        stored one (a budget below what either view has already spent — the sequence view unless closed — is
        refused); ``public=True`` marks the data public
        (recording when, from which ``tool`` and the ``note``; a mark already set is kept as it was),
        ``public=False`` withdraws the mark."""
        with self._locked() as ledgers:
            ledger = (ledgers.get(key.fingerprint) or DataLedger(LedgerKey(key.fingerprint), budget or Budget(),
                                                                  label)).view(key.unit)
            if budget is not None and budget != ledger.budget:
                views = [dataclasses.replace(ledger.view(unit), budget=budget) for unit in ("event", "sequence")]
                spent = max(view.spent() for view in views if not view.closed)  # the event view is never closed
                if spent > budget.epsilon:
                    raise BudgetExceeded(f"refused: a budget of ε = {budget.epsilon:.3g} is below the ε already "
                                         f"spent on this data set ({spent:.3g} at δ = {budget.delta:.0e}, in the "
                                         "view that spent most)")
                ledger = dataclasses.replace(ledger, budget=budget)
            if public is not None and public != ledger.public:
                ledger = dataclasses.replace(ledger, public_mark=PublicMark(utc_now(), tool, note) if public else None)
            ledger = dataclasses.replace(ledger, label=label or ledger.label)
            ledgers[key.fingerprint] = ledger.view("event")
        return ledger

    def record_spend(self, key: LedgerKey, request: str, run: Callable[[], dict], *, label: str, formal: bool,
                reasons=(), mechanisms=(), recorded: Callable[[], tuple] | None = None,
                max_events: int | None = None) -> LedgerOutcome:
        """Record a request once: replay its entry if already paid for, refuse it if over budget, else run it and
        record it.

        Parameters
        ----------
        key : LedgerKey
            The source and the release's privacy unit (the view its budget is checked in).
        request : str
            :func:`~dphawkes_core.release.session.request_identity` of the data and settings.
        run : callable
            Draws the release and returns it as a JSON-able dict (called only when neither replayed nor refused).
        label, formal, reasons, mechanisms :
            As in :class:`Entry`; ``mechanisms`` must be what ``run`` will spend (the budget is checked on them).
        recorded : callable, optional
            The mechanisms to record, asked after ``run`` (the same cost, with the values chosen during the
            release: :class:`~dphawkes_core.release.session.PrivacySession`); default ``mechanisms``.
        max_events : int, optional
            An event-level release's enforced cap M on events per sequence: both views charge it (its group in each,
            :func:`group_factor`); without one, an event-level release closes the sequence view.

        Raises
        ------
        BudgetExceeded
            When the release is formal and would exceed the budget or its view is closed (nothing is run or
            recorded).
        DPHawkesError
            When a formal release is asked on data marked public (the session labels those not formal).
        """
        with self._locked() as ledgers:
            ledger = (ledgers.get(key.fingerprint) or DataLedger(LedgerKey(key.fingerprint))).view(key.unit)
            earlier = ledger.find(request)
            if earlier is not None:
                return LedgerOutcome(earlier, True, ledger)
            if formal and ledger.public:
                raise DPHawkesError(f"internal error: a formal release on data whose {PUBLIC_MARK_REASON[4:]}")
            cap = max_events if key.unit == "event" else None
            if formal:
                ledger.check(mechanisms, key.unit, cap)
            result = run()
            spent = tuple(recorded()) if recorded is not None else tuple(mechanisms)
            entry = Entry(request, label, bool(formal), tuple(reasons), spent, result, utc_now(), key.unit, cap)
            ledger = dataclasses.replace(ledger, entries=ledger.entries + (entry,))
            ledgers[key.fingerprint] = ledger.view("event")
        return LedgerOutcome(entry, False, ledger)

    def merge(self, ledger: DataLedger) -> DataLedger:
        """Add ``ledger``'s entries and migrated names to the file's ledger of its source (created with its budget,
        label and mark when new); the entries keep their own request identities. Used by :func:`migrate_format2`."""
        with self._locked() as ledgers:
            stored = ledgers.get(ledger.key.fingerprint)
            if stored is None:
                merged = ledger.view("event")
            else:
                entries = tuple(sorted(stored.entries + ledger.entries, key=lambda e: e.created))
                merged = dataclasses.replace(stored, entries=entries, migrated=stored.migrated + ledger.migrated)
            ledgers[ledger.key.fingerprint] = merged
        return merged

    # storage

    @contextlib.contextmanager
    def _locked(self):
        """Exclusive lock on ``<path>.lock``; yields the ledgers (mutable dict) and writes them back."""
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            lock = open(self.path.with_name(self.path.name + ".lock"), "a")
        except OSError as exc:
            raise LedgerError(f"cannot open the ledger {self.path}: {exc.strerror or exc}") from None
        with lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            ledgers = self._load()
            before = dict(ledgers)
            yield ledgers
            if ledgers != before:
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
                raise ValueError(f"not a {FILE_FORMAT} version {FILE_VERSION} file")
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
    return hashlib.sha256(canonical_json(items).encode()).hexdigest()


def _ledger_to_dict(ledger: DataLedger) -> dict:
    return {"fingerprint": ledger.key.fingerprint, "label": ledger.label,
            "public_mark": dataclasses.asdict(ledger.public_mark) if ledger.public_mark else None,
            "budget": dataclasses.asdict(ledger.budget), "migrated": list(ledger.migrated),
            "entries": [dataclasses.asdict(e) for e in ledger.entries]}


def _ledger_from_dict(item: dict) -> DataLedger:
    mark = item["public_mark"]
    return DataLedger(LedgerKey(item["fingerprint"]), Budget(**item["budget"]), item["label"],
                      PublicMark(**mark) if mark else None, entries_from(item["entries"], None),
                      tuple(item["migrated"]))


def entries_from(items, unit: str | None) -> tuple[Entry, ...]:
    """Entries as stored (format 3 and 4: each with its unit, and in format 4 an event-level entry's cap M; format 2:
    the ledger's ``unit``)."""
    return tuple(Entry(e["request"], e["label"], bool(e["formal"]), tuple(e["reasons"]),
                       tuple(Mechanism(**m) for m in e["mechanisms"]), dict(e["result"]), e["created"],
                       e["unit"] if unit is None else unit, e.get("max_events"))
                 for e in items)
