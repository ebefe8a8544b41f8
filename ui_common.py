"""Streamlit glue shared by the app's pages: the current dataset, caching, friendly errors.

The pages stay thin: they read widgets, call :mod:`dphawkes_core` through the cached wrappers
below and draw the figures from :mod:`dphawkes_core.plots`. Nothing here estimates anything.

Caching: statistics (binning + ``A``, ``b``) are cached separately from fits, keyed on the
dataset's fingerprint and the binning parameters, so changing only the method, K, ε or the seed
reuses the statistics.
"""

from __future__ import annotations

import dataclasses
import hashlib
from pathlib import Path

import numpy as np
import streamlit as st
from streamlit.errors import StreamlitPageNotFoundError

from dphawkes_core.compare import compare_methods
from dphawkes_core.datasets import Dataset, simulate_dataset
from dphawkes_core.errors import DPHawkesError
from dphawkes_core.estimators import FitConfig, fit_stats, prepare_stats
from dphawkes_core.kernels import SCENARIOS, get_scenario
from dphawkes_core.presets import DEFAULT_PRESET, Preset, get_preset
from dphawkes_core.threads import set_blas_threads

set_blas_threads()  # the server's sessions share the cores: one BLAS thread (dphawkes_core/threads.py)

APP_DIR = Path(__file__).resolve().parent
DATASET_KEY = "dataset"
FINGERPRINT_KEY = "dataset_fingerprint"


def fingerprint(dataset: Dataset) -> str:
    """Identity of a dataset's content (event times, windows, names), for cache keys."""
    digest = hashlib.sha1()
    digest.update(repr(dataset.events.names).encode())
    for seq in dataset.events.sequences:
        digest.update(np.float64(seq.end_time).tobytes())
        for t in seq.times:
            digest.update(np.int64(t.size).tobytes())
            digest.update(np.ascontiguousarray(t, dtype=np.float64).tobytes())
    return digest.hexdigest()


@st.cache_data(show_spinner="Simulating the preset's data…", max_entries=4)
def preset_dataset(key: str) -> Dataset:
    """The simulated data of the preset ``key`` (:mod:`dphawkes_core.presets`), cached."""
    return get_preset(key).dataset()


@st.cache_data(show_spinner="Simulating…", max_entries=8)
def simulate_cached(scenario_repr: str, _scenario, n_events, end_time, seed) -> Dataset:
    """:func:`~dphawkes_core.datasets.simulate_dataset`, cached on the scenario's full ``repr``."""
    return simulate_dataset(_scenario, n_events=n_events, end_time=end_time, seed=seed)


def set_dataset(dataset: Dataset) -> None:
    """Make ``dataset`` the data set of every page."""
    st.session_state[DATASET_KEY] = dataset
    st.session_state[FINGERPRINT_KEY] = fingerprint(dataset)


def _dataset_from_url() -> Dataset | None:
    """A preset simulation named in the URL (``?data=paper-4d&n=2000&dseed=3``), if any."""
    params = st.query_params
    if params.get("data") not in SCENARIOS:
        return None
    try:
        n_events = int(params.get("n", 1000))
        seed = int(params.get("dseed", 1))
        scenario = get_scenario(params["data"])
        return simulate_cached(repr(scenario), scenario, n_events, None, seed)
    except (ValueError, DPHawkesError):
        return None


def dataset_to_url(dataset: Dataset, preset: Preset | None = None) -> None:
    """Put a simulation's recipe in the URL (or remove a stale one) so the view can be shared.

    Data that are ``preset``'s own need no recipe: ``?preset=…`` already says it.
    """
    p = dataset.params
    implied = preset is not None and preset.matches_data(p)
    if not implied and dataset.source == "simulated" and p.get("scenario") in SCENARIOS and p.get("n_events") is not None:
        st.query_params.update({"data": p["scenario"], "n": str(p["n_events"]), "dseed": str(p["seed"])})
    else:
        for key in ("data", "n", "dseed"):
            if key in st.query_params:
                del st.query_params[key]


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


@st.cache_data(show_spinner="Binning and computing sufficient statistics…", max_entries=16)
def stats_cached(dataset_fp: str, _events, bin_size: float, lags: int, count_cap):
    """Sufficient statistics and binning diagnostics, cached on (dataset, Δ, p, C)."""
    config = FitConfig(method="cls", bin_size=bin_size, lags=lags, count_cap=count_cap)
    return prepare_stats(_events, config)


@st.cache_data(show_spinner="Fitting…", max_entries=32)
def fit_cached(dataset_fp: str, _stats, config_items: tuple):
    """Fit on cached statistics; ``config_items`` are the sorted FitConfig fields (the cache key)."""
    return fit_stats(_stats, FitConfig(**dict(config_items)))


@st.cache_data(show_spinner="Fitting the other methods at the same ε…", max_entries=16)
def compare_cached(dataset_fp: str, _stats, data_info: dict, config_items: tuple, epsilon: float, _reference,
                   public_items: tuple, methods: tuple, include_slow: bool):
    """:func:`~dphawkes_core.compare.compare_methods`, cached on the dataset and every setting.

    The reference (truth or non-private fit) is determined by the dataset and the config, so it is not
    part of the key.
    """
    return compare_methods(_stats, data_info, FitConfig(**dict(config_items)), epsilon, _reference,
                           FitConfig(**dict(public_items)), methods, include_slow)


def config_items(config: FitConfig) -> tuple:
    """Hashable, order-independent form of a :class:`FitConfig` for cache keys."""
    return tuple(sorted(dataclasses.asdict(config).items()))


def friendly_error(exc: DPHawkesError) -> None:
    """Show a user-fixable problem as one red line (never a traceback)."""
    st.error(str(exc)[:1].upper() + str(exc)[1:], icon="⚠️")


def dataset_caption(dataset: Dataset) -> str:
    """One line describing the loaded data."""
    ev = dataset.events
    seqs = f", {ev.n_sequences:,} sequences" if ev.n_sequences > 1 else ""
    return (f"**{dataset.label}** ({dataset.source}): {ev.n_events:,} events, d = {ev.dim}{seqs}, "
            f"observed time {ev.end_time:.4g}")


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
    """The sidebar every page shares: the menu, then the current data set."""
    sidebar_navigation()
    st.sidebar.markdown("**Current data set**")
    st.sidebar.caption(dataset_caption(dataset))
