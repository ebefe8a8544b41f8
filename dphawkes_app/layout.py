"""The frame every page shares: the sidebar menu and the current data set, one-line descriptions of the data
and a method, and user-fixable problems shown as one red line (never a traceback)."""

from __future__ import annotations

from pathlib import Path

import streamlit as st
from streamlit.errors import StreamlitPageNotFoundError

from dphawkes_core.data.datasets import Dataset
from dphawkes_core.errors import DPHawkesError
from dphawkes_core.estimators import get_family

from .glossary import glossary_sidebar
from .guidance import count_noun
from .state import dataset_to_url, show_link_note

APP_DIR = Path(__file__).resolve().parent.parent  # the repository root: app.py and pages/


def friendly_error(exc: DPHawkesError) -> None:
    """Show a user-fixable problem as one red line (never a traceback)."""
    st.error(str(exc)[:1].upper() + str(exc)[1:], icon=":material/error:")


def dataset_caption(dataset: Dataset) -> str:
    """One line describing the loaded data."""
    ev = dataset.events
    seqs = f", {ev.n_sequences:,} sequences" if ev.n_sequences > 1 else ""
    return (f"**{dataset.label}** ({dataset.source}): {count_noun(ev.n_events, 'event')}, d = {ev.dim}{seqs}, "
            f"observed time {readable_number(ev.end_time)}{f' {ev.time_unit}' if ev.time_unit else ''}")


def readable_number(x: float) -> str:
    """A length for people, to 4 significant digits: ``73,290`` rather than ``7.329e+04``."""
    return f"{float(f'{x:.4g}'):,.0f}" if abs(x) >= 1000 else f"{x:.4g}"


def method_label(method: str) -> str:
    """A method's label for tables: the family's label, with "(non-private)" for a family that adds no noise."""
    family = get_family(method)
    return family.label if family.privacy.private else f"{family.label} (non-private)"


def app_pages() -> list[tuple[str, str]]:
    """``(path, label)`` of every page in ``pages/`` (``3_Privacy_utility.py`` -> ``Privacy utility``)."""
    return [(f"pages/{p.name}", p.stem.split("_", 1)[1].replace("_", " "))
            for p in sorted((APP_DIR / "pages").glob("[0-9]*_*.py"))]


def sidebar_navigation() -> None:
    """Our own sidebar menu (``client.showSidebarNavigation = false``): the automatic one would call the
    home page "app", after its file name; ``st.navigation`` would fix that but breaks AppTest here."""
    try:
        st.sidebar.page_link("app.py", label="Home", icon=":material/home:")
        for path, label in app_pages():
            st.sidebar.page_link(path, label=label)
    except StreamlitPageNotFoundError:
        return  # a page run as its own entry point (AppTest of one page): there is no app to link to
    st.sidebar.divider()


def sidebar_dataset(dataset: Dataset) -> None:
    """The sidebar every page shares: the menu, then the current data set (and, in the page, why a link's
    data could not be shown)."""
    show_link_note(dataset)
    dataset_to_url(dataset)  # every page's link names its data (the Estimate page then drops a preset's own)
    sidebar_navigation()
    st.sidebar.markdown("**Current data set**")
    st.sidebar.caption(dataset_caption(dataset))
    glossary_sidebar()
