"""How the budget page names a data set in the ledger file: by its file or source, its window and events, and the
start of its fingerprint, so that two files both called ``events.csv`` are two rows one can tell apart."""

from __future__ import annotations

import pandas as pd

from dphawkes_core.data.datasets import Dataset

from .words import window_words

FINGERPRINT_CHARS = 12


def ledger_label(dataset: Dataset) -> str:
    """The label a ledger keeps for ``dataset``: its name, its events and its window (e.g. ``events.csv —
    20,000 events, window [0, 1000], length 1000``)."""
    events = dataset.events
    return f"{dataset.label} — {events.n_events:,} events, window {window_words(events)}"


def ledger_table(ledgers, current: str) -> pd.DataFrame:
    """One row per data set in the ledger file: its label, fingerprint, budget and spending (``current``: the
    fingerprint of the data set on screen)."""
    return pd.DataFrame([{
        "data set": ledger.label or "(no name kept)",
        "fingerprint": ledger.key.fingerprint[:FINGERPRINT_CHARS],
        "public": ledger.public_mark.sentence() if ledger.public else "no", "budget ε": ledger.budget.epsilon,
        "composed ε spent (events)": ledger.spent(),
        "sequence-level view": sequence_view_words(ledger),
        "formal releases": len(ledger.metered), "not metered": len(ledger.unmetered),
        "current": ledger.key.fingerprint == current,
    } for ledger in ledgers])


def sequence_view_words(ledger) -> str:
    """The sequence view in a few words: closed, or open with its composed ε (every release at its per-sequence
    cost: an event-level release under a cap M as 2M events)."""
    sequence = ledger.view("sequence")
    return "closed" if sequence.closed else f"open, composed ε {sequence.spent():.3g}"
