"""The Privacy–utility page opens on a ready result (issue 43: it showed only controls until a 26 s sweep ended).

``sample_data/privacy_utility.json``, written by ``scripts/privacy_utility_table.py``, holds every cell of the two
sweeps the page's untouched widgets describe (:func:`~dphawkes_app.utility.controls.default_tradeoff_spec`,
:func:`~dphawkes_app.utility.controls.default_size_spec`), with each cell's key, seeds and settings. The views read
them beside the session's own finished cells (:func:`~dphawkes_app.utility.store.finished`): the default grid is
drawn at once, and a change of setting runs only the cells it adds (cells are keyed). They are seeded experiments
on public simulations, the rows a press of *Run* computes (``tests/app/test_precomputed_results.py`` recomputes
one group)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import streamlit as st

READY_FILE = Path(__file__).resolve().parents[2] / "sample_data" / "privacy_utility.json"


@st.cache_data(show_spinner=False)
def ready_table() -> tuple[pd.DataFrame, dict]:
    """The precomputed cells and the file's description (empty when the file is missing or unreadable)."""
    try:
        payload = json.loads(READY_FILE.read_text())
    except (OSError, ValueError):
        return pd.DataFrame(), {}
    frame = pd.DataFrame(payload.pop("rows"))
    return frame, payload


def ready_cells() -> pd.DataFrame:
    """The precomputed cells (empty without the file)."""
    return ready_table()[0]


def ready_note(view: pd.DataFrame) -> str | None:
    """What a view drawn from precomputed cells says about them (``None`` when it holds none)."""
    frame, _ = ready_table()
    if view.empty or frame.empty or "key" not in view or not view["key"].isin(set(frame["key"])).any():
        return None
    return ("**A ready result:** these cells were computed ahead of time with the settings above and the seeds in "
            "the table — the same numbers *Run* gives. Change a setting and press *Run* to compute your own.")
