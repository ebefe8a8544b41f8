"""Process-wide caches of the app: every session opening the same public inputs shares one result.

Data sets (a preset's or a link's simulation, a real data set), statistics (binning + ``A``, ``b``) and
deterministic fits are ``st.cache_data`` entries keyed on public inputs and the data set's fingerprint
(:func:`dphawkes_app.state.fingerprint`), never on a session: eight students opening the Estimate page compute
them once. Statistics are cached apart from fits, keyed on
:meth:`~dphawkes_core.estimators.FitConfig.statistics_key`, so changing only the method, K, ε or the seed reuses
them. A fit with fresh noise is never shared: its key carries the session's noise nonce."""

from __future__ import annotations

from collections.abc import Mapping

import streamlit as st

from dphawkes_core.data.datasets import Dataset, list_samples, load_sample, simulate_dataset
from dphawkes_core.estimators import FitConfig, fit_stats, prepare_stats
from dphawkes_core.threads import set_blas_threads
from dphawkes_experiments.compare import compare_methods

from .presets import get_preset

set_blas_threads()  # the server's sessions share the cores: one BLAS thread (dphawkes_core/threads.py)


@st.cache_data(show_spinner="Simulating the preset's data…", max_entries=4)
def preset_dataset(key: str) -> Dataset:
    """The simulated data of the preset ``key`` (:mod:`dphawkes_app.presets`), cached."""
    return get_preset(key).dataset()


@st.cache_data(show_spinner="Simulating…", max_entries=8)
def simulate_cached(scenario_repr: str, _scenario, n_events, end_time, seed) -> Dataset:
    """:func:`~dphawkes_core.data.datasets.simulate_dataset`, cached on the scenario's full ``repr``."""
    return simulate_dataset(_scenario, n_events=n_events, end_time=end_time, seed=seed)


@st.cache_data(show_spinner="Loading the data set…", max_entries=4)
def sample_cached(name: str, start: str | None, end: str | None) -> Dataset:
    """A real data set of the data directory by name, with the stated window of a link: what the Data page loads
    (the one loader, :func:`~dphawkes_core.data.datasets.load_sample`, with the data set's labels.csv declared and the
    window bounds as the page's text)."""
    info = next(s for s in list_samples() if s.name == name)
    return load_sample(info, end_time=end, start_time=start)


@st.cache_data(show_spinner="Binning and computing sufficient statistics…", max_entries=16)
def stats_cached(dataset_fp: str, _events, stats_items: tuple):
    """Sufficient statistics and binning diagnostics, cached on the dataset and
    :meth:`~dphawkes_core.estimators.config.FitConfig.statistics_key`."""
    return prepare_stats(_events, FitConfig(**dict(stats_items)))


@st.cache_data(show_spinner="Fitting…", max_entries=32)
def fit_cached(dataset_fp: str, _stats, config_items: tuple):
    """Fit on cached statistics; ``config_items`` are the sorted FitConfig fields (the cache key)."""
    return fit_stats(_stats, FitConfig(**dict(config_items)))


@st.cache_data(show_spinner="Fitting the other methods at the same ε…", max_entries=16)
def compare_cached(dataset_fp: str, _stats, data_info: dict, config_items: tuple, epsilon: float, _reference,
                   public_items: tuple, methods: tuple, include_slow: bool, noise_key: tuple | None = None,
                   _events=None, _scenario=None):
    """:func:`~dphawkes_experiments.compare.compare_methods`, cached on the dataset and every setting;
    ``public_items`` are the sorted public settings (B, r, G, K) for the other families (:func:`public_items`).
    ``noise_key`` (a session's nonce and draw number) keeps unseeded fits to the session that drew them: the
    cache never shows one noise draw to everyone.

    The reference (truth or non-private fit), the events (for a family fitting its own statistics of them) and
    the process (for the grid-free error) are determined by the dataset and the config, so they are not part
    of the key.
    """
    return compare_methods(_stats, data_info, FitConfig(**dict(config_items)), epsilon, _reference,
                           dict(public_items), methods, include_slow, events=_events, scenario=_scenario)


def config_items(config: FitConfig) -> tuple:
    """Hashable, order-independent form of a :class:`FitConfig` for cache keys: the keywords that rebuild it
    (:meth:`~dphawkes_core.estimators.FitConfig.to_dict`, so ``FitConfig(**dict(items)) == config``)."""
    return tuple(sorted(config.to_dict().items()))


def public_items(public: Mapping) -> tuple:
    """Hashable, order-independent form of public settings stated for every family (a cache key)."""
    return tuple(sorted(dict(public).items()))
