"""Streamlit glue shared by the app's pages: the current dataset, caching, friendly errors.

The pages stay thin: they read widgets, call :mod:`dphawkes_core` through the cached wrappers
below and draw the figures from :mod:`dphawkes_app.plots`. Nothing here estimates anything.

Caching: statistics (binning + ``A``, ``b``) are cached separately from fits, keyed on the
dataset's fingerprint and the binning parameters, so changing only the method, K, ε or the seed
reuses the statistics.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from pathlib import Path

import streamlit as st
from streamlit.errors import StreamlitPageNotFoundError

from dphawkes_core.data.datasets import Dataset, list_samples, load_sample, simulate_dataset
from dphawkes_core.data.kernels import get_scenario
from dphawkes_core.errors import DPHawkesError
from dphawkes_core.estimators import (
    FAMILIES,
    Family,
    FitConfig,
    Setting,
    fit_stats,
    get_family,
    prepare_stats,
)
from dphawkes_core.privacy.count_cap import AUTO
from dphawkes_core.privacy.sequence import PRIVACY_UNITS, UNIT_LABELS
from dphawkes_core.privacy.unit_conversion import unit_conversion
from dphawkes_core.release.ledger import events_fingerprint
from dphawkes_core.threads import set_blas_threads
from dphawkes_experiments.compare import compare_methods

from .glossary import glossary_sidebar
from .guidance import count_noun
from .presets import DEFAULT_PRESET, Preset, get_preset
from .url_state import (
    DATA_KEYS,
    data_params,
    fallback_note,
    ignored_note,
    ignored_params,
    parse_data_params,
)

set_blas_threads()  # the server's sessions share the cores: one BLAS thread (dphawkes_core/threads.py)

APP_DIR = Path(__file__).resolve().parent.parent  # the repository root: app.py and pages/
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


@st.cache_data(show_spinner="Simulating the preset's data…", max_entries=4)
def preset_dataset(key: str) -> Dataset:
    """The simulated data of the preset ``key`` (:mod:`dphawkes_app.presets`), cached."""
    return get_preset(key).dataset()


@st.cache_data(show_spinner="Simulating…", max_entries=8)
def simulate_cached(scenario_repr: str, _scenario, n_events, end_time, seed) -> Dataset:
    """:func:`~dphawkes_core.data.datasets.simulate_dataset`, cached on the scenario's full ``repr``."""
    return simulate_dataset(_scenario, n_events=n_events, end_time=end_time, seed=seed)


def set_dataset(dataset: Dataset) -> None:
    """Make ``dataset`` the data set of every page."""
    st.session_state[DATASET_KEY] = dataset
    st.session_state[FINGERPRINT_KEY] = fingerprint(dataset)


@st.cache_data(show_spinner="Loading the data set…", max_entries=4)
def sample_cached(name: str, start: str | None, end: str | None) -> Dataset:
    """A real data set of the data directory by name, with the stated window of a link: what the Data page loads
    (the one loader, :func:`~dphawkes_core.data.datasets.load_sample`, with the data set's labels.csv declared and the
    window bounds as the page's text)."""
    info = next(s for s in list_samples() if s.name == name)
    return load_sample(info, end_time=end, start_time=start)


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


def ignored_link_settings(link: dict) -> None:
    """Say in one line which settings of ``link`` (the URL's parameters before the widgets read them) the
    page's widgets could not use: Streamlit drops such values silently."""
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


@st.cache_data(show_spinner="Binning and computing sufficient statistics…", max_entries=16)
def stats_cached(dataset_fp: str, _events, stats_items: tuple):
    """Sufficient statistics and binning diagnostics, cached on the dataset and
    :meth:`~dphawkes_core.estimators.config.FitConfig.statistics_key`."""
    return prepare_stats(_events, FitConfig(**dict(stats_items)))


def method_label(method: str) -> str:
    """A method's label for tables: the family's label, with "(non-private)" for a family that adds no noise."""
    family = get_family(method)
    return family.label if family.private else f"{family.label} (non-private)"


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


def sequence_families() -> str:
    """Labels of the private families that offer the sequence unit (e.g. "DP-SSP and exact event times (…)")."""
    return " and ".join(f.label for f in FAMILIES.values() if f.private and "sequence" in f.units)


def privacy_unit_controls(sb, key_prefix: str = "", private_clip: bool = False, url: Mapping | None = None,
                          on_change=None) -> dict:
    """The privacy unit, chosen beside ε, and the public bounds of the sequence unit (FitConfig keywords);
    ``key_prefix`` keeps one page's widgets apart from another's; ``private_clip`` offers G chosen privately
    (``sequence_clip="auto"``); ``url`` (e.g. ``{"bind": "query-params"}``) puts the unit, M and G in the page's
    link; ``on_change`` is called when the unit changes (before the rerun)."""
    url = dict(url or {})
    unit = sb.radio("privacy unit", PRIVACY_UNITS, horizontal=True, key=f"{key_prefix}unit", format_func=str,
                    on_change=on_change, **url,
                    help="event: one event added or removed (the paper's unit); sequence: one whole sequence — "
                         f"one person — replaced ({sequence_families()} only; needs a public cap M and/or clip G, "
                         "and a public count cap C)")
    if unit == "event":
        return {}
    cap = int(sb.number_input("events kept per sequence M (0 = no cap)", min_value=0, value=40, step=5,
                              key=f"{key_prefix}seqM", **url,
                              help="public: each sequence keeps its first M events, the later ones are dropped"))
    if private_clip and sb.checkbox("choose G privately (auto)", key=f"{key_prefix}seqGauto", **url,
                                    help="5% of ε buys a noisy histogram of the sequences' norms; G clips about 5% "
                                         "of them at most (needs ε and a cap M)"):
        return {"privacy_unit": "sequence", "max_events": cap or None, "sequence_clip": AUTO}
    clip = sb.number_input("clip norm G per sequence (0 = the G that M never clips)", min_value=0.0, value=0.0,
                           format="%.4g", key=f"{key_prefix}seqG", **url,
                           help="public: each sequence's statistics are scaled to norm at most G")
    return {"privacy_unit": "sequence", "max_events": cap or None, "sequence_clip": clip or None}


def show_unit_conversion(report, default_k: int) -> None:
    """The fit's guarantee in the other unit (:func:`~dphawkes_core.privacy.unit_conversion.unit_conversion`)."""
    st.markdown(f"**Privacy unit: {UNIT_LABELS[report.privacy_unit]}.** What it means for the other unit:")
    k = int(st.number_input("events per person k", min_value=1, value=int(default_k), step=1, key="unit_k",
                            help="a public number: how many events one person contributes"))
    st.markdown("\n".join(f"- {line}" for line in unit_conversion(report, k).sentences()))


# --- a family's option controls, from its settings ------------------------------------------------------------

OPTION_KEYS = {"bound": "B", "clip": "G", "radius": "r", "iters": "K", "stabiliser": "stab"}
"""Widget keys (and URL parameters) of the options that had short ones before the controls were built from the
settings; every other option's key is its name."""


def option_key(name: str, keys: Mapping = OPTION_KEYS) -> str:
    """The widget key (without a page's prefix) of the option ``name``."""
    return keys.get(name, name)


def zero_means_none(setting: Setting) -> bool:
    """An optional number whose control shows ``None`` as 0 (said in its label)."""
    return setting.optional and setting.kind == "float"


def widget_value(setting: Setting, value):
    """The value a control of ``setting`` shows for the option ``value`` (0 for ``None`` under
    :func:`zero_means_none`; ``None`` leaves a number input empty)."""
    if value is None:
        return 0.0 if zero_means_none(setting) else None
    if setting.kind == "float":
        return float(value)
    if setting.kind == "floats":
        return ", ".join(f"{float(v):g}" for v in setting.normalise(value))
    return int(value) if setting.kind == "int" else value


def option_widget_values(options_by_family: Mapping[str, Mapping], keys: Mapping = OPTION_KEYS) -> dict:
    """``{widget key: value}`` of every registered family's options, from ``options_by_family`` (``{name: {option:
    value}}``, e.g. a preset's :meth:`~dphawkes_app.presets.Preset.options_for`); families earlier in the mapping
    win where several share a key (B, K)."""
    values = {}
    for name, options in options_by_family.items():
        for setting in get_family(name).settings:
            if setting.name in options:
                values.setdefault(option_key(setting.name, keys), widget_value(setting, options[setting.name]))
    return values


def family_controls(sb, family: Family, defaults: Mapping, key_prefix: str = "", url: Mapping | None = None,
                    keys: Mapping = OPTION_KEYS, columns: int = 0) -> dict:
    """The controls of ``family``'s options, built from its :attr:`~dphawkes_core.estimators.Family.settings`;
    returns ``{option: value}`` for :class:`~dphawkes_core.estimators.FitConfig`.

    A number is a ``number_input`` with the setting's range, step and help; a choice a ``selectbox``; a bool a
    ``checkbox``; a list of numbers a ``text_input`` (comma-separated). An optional float shows ``None`` as 0 and says
    what that means in its label
    (``setting.none_means``); an optional choice or whole number has an empty entry. The primary options
    (:attr:`Setting.primary`: the public bounds B, r, G, and e.g. K or the ridge) are drawn in ``sb`` (across
    ``columns`` columns when given); every other option in
    a collapsed "more options" expander, so the default view stays short.

    Parameters
    ----------
    sb : container
        Where the controls go (``st.sidebar``, ``st``, a column).
    family : Family
        The chosen family.
    defaults : mapping
        Initial values by widget key without ``key_prefix`` (the option's value, ``None`` allowed); an option
        absent from it starts at its setting's default.
    key_prefix : str
        Keeps one page's widgets apart from another's.
    url : mapping, optional
        Extra widget keywords, e.g. ``{"bind": "query-params"}`` to put the values in the page's URL.
    keys : mapping
        ``{option: widget key}`` for options whose key is not their name (:data:`OPTION_KEYS`).
    columns : int
        Lay the main controls out in this many columns (0: one under the other).
    """
    main = [s for s in family.settings if s.primary]
    more = [s for s in family.settings if s not in main]
    slots = sb.columns(columns) if columns and main else None
    values = {}
    for i, setting in enumerate(main):
        target = slots[i % columns] if slots else sb
        values[setting.name] = _option_control(target, setting, defaults, key_prefix, url or {}, keys)
    if more:
        box = sb.expander("more options")
        for setting in more:
            values[setting.name] = _option_control(box, setting, defaults, key_prefix, url or {}, keys)
    return values


def _option_control(target, setting: Setting, defaults: Mapping, key_prefix: str, url: Mapping, keys: Mapping):
    """One option's widget in ``target``; returns the option's value."""
    name = option_key(setting.name, keys)
    value = widget_value(setting, defaults.get(name, setting.default))
    common = dict(key=key_prefix + name, help=setting.help or None, **url)
    if setting.kind == "choice":
        options = [*([None] if setting.optional else []), *setting.choices]
        return target.selectbox(setting.label, options, index=options.index(value) if value in options else 0,
                                format_func=lambda c: (setting.none_means or "none") if c is None else str(c), **common)
    if setting.kind == "bool":
        return bool(target.checkbox(setting.label, value=bool(value), **common))
    if setting.kind == "floats":  # text; the family's options parse it and refuse a bad list in one line
        return target.text_input(setting.label + " (comma-separated)", value=value or "", **common)
    whole = setting.kind == "int"
    cast = int if whole else float
    label = setting.label + (f" (0 = unset: {setting.none_means})" if zero_means_none(setting) else
                             f" (empty = {setting.none_means})" if setting.optional and setting.none_means else "")
    minimum = setting.minimum
    if zero_means_none(setting):
        minimum = 0.0 if minimum is None else min(float(minimum), 0.0)
    number = target.number_input(
        label, min_value=None if minimum is None else cast(minimum),
        max_value=None if setting.maximum is None else cast(setting.maximum), value=value,
        step=cast(setting.step) if setting.step is not None else (1 if whole else None),
        format=None if whole else "%.4g", **common)
    if number is None:
        return None
    number = cast(number)
    return None if zero_means_none(setting) and number == 0 else number
