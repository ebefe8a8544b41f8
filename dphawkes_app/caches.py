"""Process-wide caches of the app: every session opening the same public inputs shares one result.

Data sets (a preset's or a link's simulation, a real data set), statistics (binning + ``A``, ``b``) and
deterministic fits are ``st.cache_data`` entries keyed on public inputs and the data set's fingerprint
(:func:`dphawkes_app.state.fingerprint`), never on a session: eight students opening the Estimate page compute
them once. Statistics are cached apart from fits, keyed on
:meth:`~dphawkes_core.estimators.FitConfig.statistics_key`, so changing only the method, K, ε or the seed reuses
them. A fit with fresh noise is never shared: its key carries the session's noise nonce.

An automatic C on public data (the default preset's) is a private selection: a fresh draw in the session that
asks for it (:func:`selected_stats`), never cached, so no session sees another's draw or can reproduce it. Only
what is deterministic around it is shared: the tail counts it is drawn from and the statistics at the C drawn
(public settings once chosen, at most ``count_cap_max`` entries per Δ)."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Mapping

import streamlit as st

from dphawkes_core.data.datasets import Dataset, list_samples, load_sample, simulate_dataset
from dphawkes_core.estimators import FitConfig, fit_stats, prepare_stats
from dphawkes_core.estimators.binned import cap_noise
from dphawkes_core.privacy.count_cap import AUTO, cap_from_tails
from dphawkes_core.statistics.binning import bin_sparse, tail_counts
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


@st.cache_data(show_spinner=False, max_entries=16)
def tails_cached(dataset_fp: str, _events, bin_size: float, max_cap: int):
    """The tail counts ``T[c]``, ``c = 1 … max_cap``, of the unclipped Δ-bin counts: what an automatic C is drawn
    from (:func:`~dphawkes_core.privacy.count_cap.dp_count_cap`), exact and deterministic — cached; the draw is
    not."""
    return tail_counts(bin_sparse(_events, bin_size), int(max_cap))


def shares_selection(config: FitConfig) -> bool:
    """True when the statistics of ``config`` are its automatic C's selection followed by the statistics at the C
    chosen (the event unit, no cap M on events per sequence): :func:`selected_stats` can share the latter."""
    return (config.count_cap == AUTO and config.privacy_unit == "event" and config.max_events is None
            and config.sequence_clip != AUTO)


def selected_stats(dataset_fp: str, events, config: FitConfig):
    """``(stats, data_info)`` of ``config`` on public data, with its automatic C drawn here, afresh on every call.

    The selection is what :func:`~dphawkes_core.estimators.prepare_stats` draws — the same tail counts, noise
    source (the OS CSPRNG of an unseeded fit, the cap's own stream of a seeded one) and rule, so a seeded config
    gives the same C, statistics and data info — but only the noise is drawn per call: the tail counts and the
    statistics at the C chosen come from the shared caches. Configs whose selection is not separable
    (:func:`shares_selection`) are prepared whole, per call."""
    if not shares_selection(config):
        return prepare_stats(events, config)
    tails = tails_cached(dataset_fp, events, config.bin_size, config.count_cap_max)
    auto = cap_from_tails(tails, config.epsilon, config.dp_delta, cap_noise(config), config.count_cap_share,
                          config.family.cap_rule(config))
    chosen = config.with_selection(count_cap=auto.count_cap)
    stats, info = stats_cached(dataset_fp, events, config_items(chosen.statistics_key()))
    return stats, info.updated(auto_count_cap=auto.to_dict())


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


class RunStore:
    """The last ``kept`` finished runs by key, shared by a server's sessions (threads), the oldest dropped first.

    Every read and write of the store holds its lock, so one session dropping a run while another reads it cannot
    fail; a run itself is computed outside the lock (two sessions asking the same new key both compute it, and
    the last to finish is kept)."""

    def __init__(self, kept: int):
        self.kept = int(kept)
        self._runs: OrderedDict = OrderedDict()
        self._lock = threading.Lock()

    def get_or_compute(self, key: Hashable, compute: Callable[[], object]):
        """The finished run of ``key``, or ``compute()`` stored under it."""
        with self._lock:
            if key in self._runs:
                self._runs.move_to_end(key)
                return self._runs[key]
        result = compute()
        with self._lock:
            self._runs[key] = result
            self._runs.move_to_end(key)
            while len(self._runs) > self.kept:
                self._runs.popitem(last=False)
        return result

    def __len__(self) -> int:
        with self._lock:
            return len(self._runs)

