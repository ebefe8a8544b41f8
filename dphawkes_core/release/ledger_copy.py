"""Copying ledgers between stores (``dphawkes ledger copy FROM TO``): a ledger file into a team's database, a
database back into a file — every entry once, whatever was copied before.

A copied ledger is joined to the target's ledger of the same source (:func:`joined`), in one transaction of the target
(:meth:`~.ledger_store.LedgerStore.merge`): an entry is identified by its release request, so an entry the target
holds already is kept as the target holds it and never counted twice — copying again, or two copies at once, add
nothing. What the target holds of its own stays: entries, looks and setting changes are the union. The budget is the
smaller of the two and the data stay public only when both say so (the safe side of two owners' settings, as in the
format migration); a change either makes is recorded. The source is only read.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from dphawkes_core.release.ledger import DataLedger, SettingChange, budget_words, mark_words
from dphawkes_core.release.ledger_store import LedgerStore


def joined(stored: DataLedger | None, incoming: DataLedger, now: str = "",
           who: str = "") -> tuple[DataLedger, int]:
    """``incoming`` (a ledger copied from another store) joined to ``stored`` (the target's ledger of the same
    source, ``None`` when it has none): ``(the ledger after, how many entries were new)``. Entries are one per
    request identity (the target's kept where both have one), in time order; looks one per tool and words; the
    budget the smaller; public only when both are; a budget or mark the join changes is recorded as a
    :class:`~dphawkes_core.release.ledger.SettingChange` (tool ``cli``, by ``who`` at ``now``). ``stored`` itself is
    returned when nothing is new."""
    incoming = incoming if incoming.key.unit == "event" else incoming.view("event")
    if stored is None:
        return incoming, len(incoming.entries)
    stored = stored if stored.key.unit == "event" else stored.view("event")
    known = {entry.request for entry in stored.entries}
    new_entries = tuple(entry for entry in incoming.entries if entry.request not in known)
    seen_looks = {(look.tool, look.what) for look in stored.looks}
    new_looks = tuple(look for look in incoming.looks if (look.tool, look.what) not in seen_looks)
    seen_changes = set(stored.changes)
    new_changes = tuple(change for change in incoming.changes if change not in seen_changes)
    budget = min(stored.budget, incoming.budget, key=lambda b: (b.epsilon, b.delta))
    mark = stored.public_mark if stored.public and incoming.public else None
    changes = tuple(sorted(stored.changes + new_changes, key=lambda c: c.created))
    changes += ((SettingChange(now, "cli", who, budget_words(budget) + " (the smaller, on a copy)"),)
                if budget != stored.budget else ())
    changes += ((SettingChange(now, "cli", who, mark_words(mark) + " (on a copy)"),)
                if mark != stored.public_mark else ())
    person = stored.person or incoming.person
    migrated = stored.migrated + tuple(name for name in incoming.migrated if name not in stored.migrated)
    if not (new_entries or new_looks or new_changes or budget != stored.budget or mark != stored.public_mark
            or person != stored.person or migrated != stored.migrated):
        return stored, 0
    entries = tuple(sorted(stored.entries + new_entries, key=lambda e: e.created))
    return dataclasses.replace(stored, entries=entries, budget=budget, public_mark=mark, changes=changes,
                               looks=stored.looks + new_looks, person=person, migrated=migrated,
                               label=stored.label or incoming.label), len(new_entries)


@dataclass(frozen=True)
class Copied:
    """One data set copied: its ledger in the target after the copy, and how many of its entries were new there."""

    ledger: DataLedger
    added: int
    copied: int


def copy_ledgers(source: LedgerStore, target: LedgerStore) -> tuple[Copied, ...]:
    """Copy every data set's ledger of ``source`` into ``target`` (:meth:`~.ledger_store.LedgerStore.merge`, one
    transaction per data set); ``source`` is only read."""
    copied = []
    for ledger in source.ledgers():
        after, added = target.merge(ledger)
        copied.append(Copied(after, added, len(ledger.entries)))
    return tuple(copied)

