"""The Estimate page's controls: the preset selector and the sidebar's fit settings, read into a
:class:`~dphawkes_core.estimators.FitConfig`. Every widget whose value a link can carry is bound to the URL."""

from __future__ import annotations

from collections.abc import Mapping

import streamlit as st

from dphawkes_core.estimators import FAMILIES, FitConfig, get_family, method_labels, method_names
from dphawkes_core.privacy.count_cap import AUTO, AUTO_CAP_SHARE
from dphawkes_core.privacy.time_scale import AUTO_SCALE_SHARE, BINS_PER_GAP, GAPS_PER_SUPPORT
from dphawkes_core.statistics.binning import lags_from_support

from ..budget import budget_state
from ..caches import preset_dataset
from ..controls import (
    calibration_words,
    choice_words,
    family_controls,
    option_key,
    option_widget_values,
    privacy_unit_controls,
)
from ..guidance import method_help, methods_help
from ..presets import DEFAULT_PRESET, WORKS_COUNT_CAP, Preset, get_preset, preset_for, presets
from ..proposal import show_proposal
from ..state import current_dataset, set_dataset
from .context import PageContext
from .follow import CUSTOM, follow_data, preset_remembered

URL = {"bind": "query-params"}
PRIVACY_MODES = ("ε and δ", "σ² directly")
LAG_MODES = ("support s", "lags p")
EPSILON_HELP = ("ε bounds what anyone can learn about one event (the privacy unit) from the result: whatever they "
                "believed before, their odds that the event is in the data can move by a factor of at most e^ε — "
                "×1.1 at ε = 0.1, ×2.7 at ε = 1, ×20 at ε = 3. Smaller ε: more noise, more privacy. The Home page "
                "draws it.")
DELTA_HELP = ("δ: the small probability that the ε bound does not hold (a rare unlucky output). Keep it far below "
              "1 / (number of people in the data), e.g. 1e-5.")


def widget_values(preset: Preset) -> dict:
    """The sidebar widgets' values (by key) that reproduce ``preset``'s fit."""
    c = preset.config
    families = dict.fromkeys((c.method, *method_names()))  # the preset's own family first: its options win a key
    return {"dt": c.bin_size, "lagmode": "support s", "s": preset.support, "p": c.lags, "method": c.family.label,
            "C": {None: 0, AUTO: WORKS_COUNT_CAP}.get(c.count_cap, c.count_cap), "Cauto": c.count_cap == AUTO,
            "privacy": PRIVACY_MODES[c.epsilon is None],
            "eps": c.epsilon or 1.0, "sigma2": c.sigma2 if c.sigma2 is not None else 0.01, "delta": c.dp_delta,
            "calib": c.calibration, "unit": "event"} | option_widget_values(
        {name: preset.options_for(name) for name in families})


def apply_preset() -> None:
    """Selector callback: load the chosen preset's data and put its settings into the widgets."""
    key = st.session_state["preset"]
    if key == CUSTOM:
        return
    preset = get_preset(key)
    set_dataset(preset_dataset(key))
    st.session_state.update(widget_values(preset))
    preset_remembered(preset)
    st.session_state["settings_for"] = st.session_state["dataset_fingerprint"]


def choose_preset() -> tuple[Preset | None, Preset]:
    """The preset selector; returns the chosen preset (``None`` for the user's own data or settings) and
    the preset the widgets' defaults come from (the default one for the user's own)."""
    wanted = get_preset(st.query_params.get("preset", DEFAULT_PRESET)).key
    data, fp = current_dataset(wanted)
    private = budget_state(data, fp, st.session_state.get("unit", "event")).private
    follow_data(data, fp, wanted, widget_values, private)  # a change of data: the preset, Δ and s follow it
    if "preset" not in st.session_state:  # a new visit: the URL's preset if the data are its own
        match = preset_for(data.params, preferred=wanted)
        st.session_state["preset"] = match.key if match is not None else CUSTOM
    titles = {key: p.title for key, p in presets().items()} | {CUSTOM: "Your own data and settings"}
    key = st.selectbox("Start from", list(titles), format_func=titles.get, key="preset", on_change=apply_preset,
                       help="a preset sets the data and every fit setting together; change anything afterwards")
    if key == CUSTOM:
        if "preset" in st.query_params:
            del st.query_params["preset"]
        return None, get_preset(DEFAULT_PRESET)
    st.query_params["preset"] = key
    return get_preset(key), get_preset(key)


def words_in_link() -> None:
    """A link may name a choice by its internal value (``calib=formal``, ``ctls_width_choice=validation``, as links
    did before the choices were shown in words), which a URL-bound control showing words would drop: such a value
    is given to the control through the session state before it is drawn, so that old links keep working."""
    words = {"calib": calibration_words} | {option_key(s.name): (lambda v, n=s.name: choice_words(n, v))
                                             for family in FAMILIES.values() for s in family.settings
                                             if s.kind == "choice"}
    for key, to_words in words.items():
        value = st.query_params.get(key)
        if value is not None and to_words(value) != value and key not in st.session_state:
            st.session_state[key] = value


def read_controls(ctx: PageContext) -> FitConfig:
    """Sidebar widgets -> FitConfig (raises ConfigError on inconsistent values)."""
    words_in_link()
    sb = st.sidebar
    sb.header("Fit settings")
    bin_size, lags = _binning(sb, ctx.defaults, ctx.private)
    family = _method(sb, ctx.defaults)
    show_proposal(sb, ctx.events, ctx.private, family.privacy.private)
    kwargs = family_controls(sb, family, ctx.defaults, url=URL)
    if kwargs.get("ctls_width_choice") in ("validation", "share"):
        sb.caption("Chosen inside the release: Δ above is the finest width tried and s the longest support; the "
                   "release picks a width (a multiple of Δ) and a support up to s"
                   + (" with a share of the budget, then releases that width directly with the rest."
                      if kwargs["ctls_width_choice"] == "share" else "."))
    kwargs.update(_count_cap(sb, family, ctx.defaults))
    if family.privacy.private:
        kwargs.update(_privacy(sb, family, ctx.defaults, ctx.events.n_sequences))
    return FitConfig(method=family.name, bin_size=float(bin_size), lags=lags, **kwargs)


AUTO_SCALE_HELP = (f"spend {AUTO_SCALE_SHARE:.0%} of ε, inside the release, on a noisy count of the events; Δ ≈ "
                   f"1/{BINS_PER_GAP} and s ≈ {GAPS_PER_SUPPORT}× the mean time between events read from it (the "
                   "rest of ε goes to the fit). Needs a private method with ε, and the event unit. Nothing read from "
                   "the data is shown to you to confirm.")


def private_scale_share(ctx: PageContext) -> float | None:
    """The share of ε a private choice of Δ and s spends inside the release (``None``: Δ and s as set), from the
    sidebar's "choose Δ and s privately" box (drawn on private data only)."""
    return AUTO_SCALE_SHARE if ctx.private and st.session_state.get("dtauto") else None


def _binning(sb, defaults: Mapping, private: bool = False) -> tuple[float, int]:
    """Δ and the memory, as a support s (p = ⌈s/Δ⌉) or a number of lags p; on private data, the choice of both
    inside the release (their inputs are then unused and disabled)."""
    auto = private and sb.checkbox("choose Δ and s privately (automatic)", value=False, key="dtauto",
                                   help=AUTO_SCALE_HELP)
    if auto:
        sb.caption(f"Δ and s will be chosen inside the release ({AUTO_SCALE_SHARE:.0%} of ε); the values below are "
                   "not used.")
    bin_size = sb.number_input("bin size Δ", min_value=1e-4, value=defaults["dt"], step=0.05, format="%.4g",
                               key="dt", disabled=auto, **URL)
    lag_mode = sb.radio("memory", LAG_MODES, index=LAG_MODES.index(defaults["lagmode"]), horizontal=True,
                        key="lagmode", **URL,
                        help="how far back an event can excite: s in time units, or p = ⌈s/Δ⌉ bins")
    if lag_mode == "support s":
        support = sb.number_input("support s", min_value=1e-4, value=defaults["s"], step=0.5, format="%.4g", key="s",
                                  disabled=auto, **URL)
        return bin_size, lags_from_support(support, bin_size)
    return bin_size, int(sb.number_input("lags p", min_value=1, value=defaults["p"], step=5, key="p", disabled=auto,
                                         **URL))


def _method(sb, defaults: Mapping):
    """The method selector (labels are also the URL values), with what each kind of method fits."""
    methods = {label: name for name, label in method_labels().items()}
    labels = list(methods)
    chosen = sb.selectbox("method", labels, index=labels.index(defaults["method"]) if defaults["method"] in labels
                          else 0, key="method", **URL, help=methods_help(get_family(n) for n in methods.values()))
    family = get_family(methods[chosen])
    sb.caption(method_help(family))
    return family


def _count_cap(sb, family, defaults: Mapping) -> dict:
    """The count cap C: public, or chosen privately (auto) by a family that offers it."""
    auto_cap = family.privacy.auto_count_cap and sb.checkbox(
        "choose C privately (auto)", value=defaults["Cauto"], key="Cauto", **URL,
        help=f"spend {AUTO_CAP_SHARE:.0%} of ε on a private choice of C (a fixed count of clipped bins per unit "
             "of the release's noise: C grows with the data), the rest on the statistics; needs ε, not σ², and "
             "the event unit")
    if auto_cap:
        return {"count_cap": AUTO}
    cap = int(sb.number_input("count cap C (0 = no clipping)", min_value=0, value=defaults["C"], step=1, key="C",
                              **URL, help="every bin count is clipped at C; the formal calibration needs C ≥ 1"))
    return {"count_cap": cap or None}


def _privacy(sb, family, defaults: Mapping, sequences: int = 1) -> dict:
    """ε and δ (or σ²), the privacy unit, the calibration and the noise seed of a private family."""
    sb.subheader("Privacy")
    kwargs = {}
    mode = sb.radio("noise from", PRIVACY_MODES, index=PRIVACY_MODES.index(defaults["privacy"]), horizontal=True,
                    key="privacy", **URL)
    if mode == "ε and δ":
        kwargs["epsilon"] = sb.number_input("ε", min_value=1e-6, value=defaults["eps"], format="%.4g", key="eps",
                                            help=EPSILON_HELP, **URL)
    else:
        kwargs["sigma2"] = sb.number_input("σ² per noisy entry", min_value=0.0, value=defaults["sigma2"],
                                           format="%.4g", key="sigma2", **URL)
    kwargs["dp_delta"] = sb.number_input("δ", min_value=1e-12, max_value=0.5, value=defaults["delta"],
                                         format="%.1e", key="delta", help=DELTA_HELP, **URL)
    kwargs.update(privacy_unit_controls(sb, private_clip=True, url=URL, sequences=sequences))
    if family.formal_only:
        kwargs["calibration"] = "formal"
        sb.caption("calibration: formal (the only one this method has)")
    else:
        calibrations = list(family.privacy.calibrations)
        kwargs["calibration"] = sb.selectbox(
            "calibration", calibrations, key="calib", **URL, format_func=calibration_words,
            index=calibrations.index(defaults["calib"]) if defaults["calib"] in calibrations else 0,
            help="how the noise is set: the formal calibration from public bounds only (a guarantee); the paper's "
                 "from a bound read from the data (Theorems 1 and 3: not a formal guarantee)")
    seed = sb.number_input("noise seed (empty = fresh noise)", min_value=0, value=None, step=1, key="seed",
                           help="leave empty for a private release; a seed makes the noise reproducible by "
                                "anyone who knows it: not a private release (for teaching and tests)")
    kwargs["seed"] = None if seed is None else int(seed)
    return kwargs


def read_averaging(bin_size: float) -> int | None:
    """The sidebar's lag averaging (off by default): m lags per bin of width w = mΔ, or ``None``."""
    sb = st.sidebar
    if not sb.checkbox("average the kernel over lags of width w", value=False, key="avg", **URL,
                       help="post-processing of the estimate (no privacy cost): the kernel averaged over bins of m "
                            "consecutive lags. Fit at a fine Δ (little bias), then average: less variance"):
        return None
    block = int(sb.number_input("lags per bin m", min_value=1, value=5, step=1, key="avgm", **URL))
    sb.caption(f"w = m × Δ = {block * bin_size:g}")
    return block
