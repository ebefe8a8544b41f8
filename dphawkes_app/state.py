"""The data set every page shows and the URL that names it: the session's data set and its fingerprint, a link's
data (or why they cannot be shown), and the data parameters written back into the URL.

A new session (a direct link to any page) starts from the link's data or a preset's; data sets are made through
the process-wide caches of :mod:`dphawkes_app.caches`, so sessions opening the same data share one copy."""

from __future__ import annotations

import hashlib

import streamlit as st

from dphawkes_core.data.datasets import Dataset, list_samples
from dphawkes_core.data.kernels import get_scenario
from dphawkes_core.data.row_key import events_fingerprint
from dphawkes_core.errors import DPHawkesError

from .caches import preset_dataset, sample_cached, simulate_cached
from .presets import DEFAULT_PRESET, Preset
from .url_state import DATA_KEYS, data_params, fallback_note, ignored_note, ignored_params, parse_data_params

DATASET_KEY = "dataset"
FINGERPRINT_KEY = "dataset_fingerprint"
LINK_NOTE_KEY = "link_note"  # why the data of the link that opened the session are not shown


def fingerprint(dataset: Dataset) -> str:
    """Cache key of a data set: the identity of its loaded events
    (:func:`~dphawkes_core.release.ledger.events_fingerprint`,
    the view of a release's identity; the ledger's key is the source's rows) with what the app's caches depend on
    besides: the names and what of the domain is declared (the same events with declared dimensions give other
    statistics' data info)."""
    ev = dataset.events
    extras = repr((ev.names, ev.window_stated, ev.dimensions_declared, ev.sequences_declared, ev.outside_domain))
    return hashlib.sha256((events_fingerprint(ev) + extras).encode()).hexdigest()


def set_dataset(dataset: Dataset) -> None:
    """Make ``dataset`` the data set of every page."""
    st.session_state[DATASET_KEY] = dataset
    st.session_state[FINGERPRINT_KEY] = fingerprint(dataset)


def _dataset_from_url() -> Dataset | None:
    """The data a link names (:mod:`dphawkes_app.url_state`), if any; when they cannot be shown, the
    reason is kept for :func:`show_link_note`."""
    link = parse_data_params(st.query_params.to_dict(), [s.name for s in list_samples()])
    if link is None:
        return None
    problem = link.problem
    if not problem:
        try:
            if link.sample is not None:
                return sample_cached(link.sample, link.start, link.end)
            scenario = get_scenario(link.scenario)
            return simulate_cached(repr(scenario), scenario, link.n_events, link.end_time, link.seed)
        except DPHawkesError as exc:
            problem = f"this link's data could not be made ({exc})"
    st.session_state[LINK_NOTE_KEY] = problem
    return None


def show_link_note(dataset: Dataset) -> None:
    """Say why a link's data are not shown, while the data shown instead are still loaded."""
    note = st.session_state.get(LINK_NOTE_KEY)
    if isinstance(note, str):  # first run: remember which data replaced the link's
        note = st.session_state[LINK_NOTE_KEY] = (fallback_note(note, dataset.label), fingerprint(dataset))
    if note and note[1] == st.session_state.get(FINGERPRINT_KEY):
        st.info(note[0], icon=":material/link_off:")


LINK_READ_KEY = "link_settings_read"  # the link's settings were compared with the widgets once in this session


def ignored_link_settings(link: dict) -> None:
    """Say in one line which settings of ``link`` (the URL's parameters before the widgets read them) the
    page's widgets could not use: Streamlit drops such values silently. Only on the session's first run: later the
    URL carries what the widgets held on the run before, which the page may have changed itself (a new data set's
    settings, the sequence unit's switches) — not a link's setting that was ignored."""
    if st.session_state.get(LINK_READ_KEY):
        return
    st.session_state[LINK_READ_KEY] = True
    values = {key: st.session_state[key] for key in link if key in st.session_state}
    note = ignored_note(ignored_params(link, values))
    if note:
        st.info(note, icon=":material/link_off:")


def dataset_to_url(dataset: Dataset, preset: Preset | None = None) -> None:
    """Put the data source in the URL (:func:`~dphawkes_app.url_state.data_params`) so the view can be
    shared, and remove stale data parameters.

    Data that are ``preset``'s own need no recipe: ``?preset=…`` already says it.
    """
    implied = preset is not None and preset.matches_data(dataset.params)
    wanted = {} if implied else data_params(dataset)
    for key in DATA_KEYS:
        if key in st.query_params and key not in wanted:
            del st.query_params[key]
    st.query_params.update(wanted)


def current_dataset(preset_key: str = DEFAULT_PRESET) -> tuple[Dataset, str]:
    """The data set in session state and its fingerprint.

    A new session starts from the simulation named in the URL, or the data of the preset ``preset_key``
    (the Estimate page's ``?preset=…``; the default preset elsewhere).
    """
    if DATASET_KEY not in st.session_state:
        set_dataset(_dataset_from_url() or preset_dataset(preset_key))
    if FINGERPRINT_KEY not in st.session_state:
        st.session_state[FINGERPRINT_KEY] = fingerprint(st.session_state[DATASET_KEY])
    return st.session_state[DATASET_KEY], st.session_state[FINGERPRINT_KEY]
