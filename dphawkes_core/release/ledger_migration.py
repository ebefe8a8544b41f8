"""Format-2 ledgers (one per declaration of the data and unit) moved into the current format, once per data set and
declaration (``dphawkes ledger migrate``)."""

from __future__ import annotations

import json
from pathlib import Path

from dphawkes_core.release.ledger import Budget, DataLedger, LedgerKey, PublicMark
from dphawkes_core.release.ledger_file import FILE_FORMAT, document_checksum, entries_from
from dphawkes_core.release.ledger_store import LedgerError, LedgerStore


def read_format2(path) -> tuple[DataLedger, ...]:
    """The ledgers of a format-2 file (checksum verified), each keyed by its format-2 fingerprint and unit."""
    path = Path(path).expanduser()
    where = f"the ledger file {path}"
    try:
        document = json.loads(path.read_text())
        if document.get("format") != FILE_FORMAT or document.get("version") != 2:
            raise ValueError(f"not a {FILE_FORMAT} version 2 file")
        if document.get("checksum") != document_checksum(document["ledgers"]):
            raise ValueError("its checksum does not match its content (edited or damaged)")
        return tuple(DataLedger(LedgerKey(item["fingerprint"], item["unit"]), Budget(**item["budget"]), item["label"],
                                PublicMark("", "migration", "carried over from a format-2 ledger")
                                if item["public"] else None, entries_from(item["entries"], item["unit"]))
                     for item in document["ledgers"])
    except OSError as exc:
        raise LedgerError(f"cannot read {where}: {exc.strerror or exc}") from None
    except (ValueError, KeyError, TypeError, AttributeError, UnicodeDecodeError) as exc:
        raise LedgerError(f"{where} cannot be migrated ({exc})") from None


def migrate_format2(old_path, store: LedgerStore, fingerprint: str, legacy: str,
                    label: str = "") -> tuple[tuple[DataLedger, ...], tuple[DataLedger, ...]]:
    """Move the format-2 ledgers of one declaration of a source into ``store`` under the source's key.

    A format-2 ledger was keyed by :func:`~dphawkes_core.data.row_key.events_fingerprint` of the events as declared
    (``legacy``) and the unit; both units' ledgers with that key join the source's ledger (``fingerprint``), their
    entries keeping their unit, ε and request identities (a request of the new format is never identical to an old
    one, so a repeat is charged again: never less). The budget is the smallest of the old ones (and of the stored one,
    if any); the data stay public only if every old ledger (and the stored one) was. The old file is only read. Each
    ledger joins in one transaction of the store that adds it only if it was not migrated yet
    (:meth:`~.ledger_store.LedgerStore.absorb`), so migrations run at once count its spend once.

    Returns
    -------
    (moved, left) : tuple of DataLedger
        The format-2 ledgers moved now (or earlier), and those of other declarations or data, still to migrate.
    """
    old = read_format2(old_path)
    moved = tuple(item for item in old if item.key.fingerprint == legacy)
    public = all(item.public for item in moved)
    budget = min((item.budget for item in moved), key=lambda b: (b.epsilon, b.delta), default=None)
    for item in moved:
        store.absorb(DataLedger(LedgerKey(fingerprint), budget, label or item.label,
                                item.public_mark if public else None, item.entries), item.key.id)
    done = {name for ledger in store.ledgers() for name in ledger.migrated}
    return moved, tuple(item for item in old if item.key.id not in done)
