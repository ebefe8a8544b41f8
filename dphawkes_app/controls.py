"""Widgets shared by several pages, built from the core's declarations: a family's option controls (from its
:attr:`~dphawkes_core.estimators.Family.settings`), the privacy unit with its public bounds, and the guarantee
read in the other unit."""

from __future__ import annotations

from collections.abc import Mapping

import streamlit as st

from dphawkes_core.estimators import FAMILIES, Family, Setting, get_family
from dphawkes_core.privacy.count_cap import AUTO
from dphawkes_core.privacy.sequence import PRIVACY_UNITS, UNIT_LABELS
from dphawkes_core.privacy.unit_conversion import unit_conversion

OPTION_KEYS = {"bound": "B", "clip": "G", "radius": "r", "iters": "K", "stabiliser": "stab"}
"""Widget keys (and URL parameters) of the options that had short ones before the controls were built from the
settings; every other option's key is its name."""


CHOICE_WORDS = {  # a choice option's values in words (the values themselves are the core's internal names)
    ("ctls_width_choice", "stated"): "as set: Δ and s in the sidebar",
    ("ctls_width_choice", "validation"): "chosen inside the release, by validation",
    ("ctls_width_choice", "share"): "chosen with a share of the budget, then released directly",
    ("ctls_choice_score", "contrast"): "how well each candidate predicts the other block",
    ("ctls_choice_score", "risk"): "an estimate of each candidate's kernel error",
    ("exp_basis", "decays"): "one feature per decay",
    ("exp_basis", "differences"): "differences of the decays' exponentials (better conditioned)",
    ("exp_gram", "released"): "released beside the values (over ρ)",
    ("exp_gram", "derived"): "derived from the released values (the whole budget on them)",
    ("stabiliser", "ridge"): "add λ to its diagonal",
    ("stabiliser", "psd"): "raise its eigenvalues to at least λ",
    ("ssp_release", "lagged"): "the lagged products (less noise)",
    ("ssp_release", "full"): "the whole matrix and vector",
    ("step", "theorem"): "the paper's rule (its Theorem 2)",
    ("step", "constant"): "one constant step",
    ("fw_step", "paper"): "as the paper's Algorithm 2",
    ("fw_step", "classic"): "the classic Frank–Wolfe rule",
}
"""What a control shows for each choice of a family's options (``tests/app/test_plain_words.py`` checks that every
registered choice has its words)."""

CALIBRATION_WORDS = {
    "formal": "formal: from public bounds",
    "paper": "the paper's: from the data (no guarantee)",
    "tight-paper": "the paper's, accounted exactly: from the data (no guarantee)",
}
"""The calibrations in words, for selectors and tables."""


def choice_words(setting_name: str, value) -> str:
    """A choice's words (:data:`CHOICE_WORDS`), or the value itself for a choice not listed."""
    return CHOICE_WORDS.get((setting_name, value), str(value))


def calibration_words(name: str) -> str:
    """A calibration's words (:data:`CALIBRATION_WORDS`)."""
    return CALIBRATION_WORDS.get(name, name)


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
    common = dict(key=key_prefix + name, help=option_help(setting), **url)
    if setting.kind == "choice":
        options = [*([None] if setting.optional else []), *setting.choices]
        return target.selectbox(setting.label, options, index=options.index(value) if value in options else 0,
                                format_func=lambda c: (setting.none_means or "none") if c is None else
                                choice_words(setting.name, c), **common)
    if setting.kind == "bool":
        return bool(target.checkbox(setting.label, value=bool(value), **common))
    if setting.kind == "floats":  # text; the family's options parse it and refuse a bad list in one line
        return target.text_input(setting.label + " (comma-separated)", value=value or "", **common)
    whole = setting.kind == "int"
    cast = int if whole else float
    label = setting.label + (" (0 = default)" if zero_means_none(setting) else
                             " (empty = default)" if setting.optional and setting.none_means else "")
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


def option_help(setting: Setting) -> str | None:
    """An option's help: its sentence, and what its default (0 or empty) stands for — formulas live here, behind
    the help, not in the label."""
    default = ""
    if setting.optional and setting.none_means:
        default = f" {'0' if zero_means_none(setting) else 'Empty'} = default: {setting.none_means}."
    text = (setting.help[:1].upper() + setting.help[1:] + "." if setting.help else "") + default
    return text.strip() or None


def sequence_families() -> str:
    """Labels of the private families that offer the sequence unit (e.g. "DP-SSP and exact event times (…)")."""
    return " and ".join(f.label for f in FAMILIES.values() if f.privacy.private and "sequence" in f.privacy.units)


def privacy_unit_controls(sb, key_prefix: str = "", private_clip: bool = False, url: Mapping | None = None,
                          on_change=None, sequences: int = 1) -> dict:
    """The privacy unit, chosen beside ε, and the public bounds of the sequence unit (FitConfig keywords);
    ``key_prefix`` keeps one page's widgets apart from another's; ``private_clip`` offers G chosen privately
    (``sequence_clip="auto"``); ``url`` (e.g. ``{"bind": "query-params"}``) puts the unit, M and G in the page's
    link; ``on_change`` is called when the unit changes (before the rerun); on data with several ``sequences`` the
    event unit offers an enforced cap M too (what a release then costs one person is bounded: 2M events)."""
    url = dict(url or {})
    unit = sb.radio("privacy unit", PRIVACY_UNITS, horizontal=True, key=f"{key_prefix}unit", format_func=str,
                    on_change=on_change, **url,
                    help="event: one event added or removed (the paper's unit); sequence: one whole sequence — "
                         f"one person — replaced ({sequence_families()} only; needs a public cap M and/or clip G, "
                         "and a public count cap C)")
    if unit == "event":
        if sequences <= 1:
            return {}
        cap = int(sb.number_input("events kept per sequence M at the event unit (0 = no cap)", min_value=0, value=0,
                                  step=5, key=f"{key_prefix}evM", **url,
                                  help="public: each sequence keeps its first M events before the statistics; a "
                                       "person (one sequence) then costs at most 2M events' worth of ε, and the "
                                       "budget's per-sequence view stays open"))
        return {"max_events": cap} if cap else {}
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


def show_unit_conversion(report, default_k: int, max_events: int | None = None) -> None:
    """The fit's guarantee in the other unit (:func:`~dphawkes_core.privacy.unit_conversion.unit_conversion`): per
    person from the enforced cap M of an event-level fit (``max_events``: 2M·μ), else for an assumed k events."""
    st.markdown(f"**Privacy unit: {UNIT_LABELS[report.privacy_unit]}.** What it means for the other unit:")
    capped = max_events if report.privacy_unit == "event" else None
    k = default_k if capped else int(st.number_input(
        "events per person k", min_value=1, value=int(default_k), step=1, key="unit_k",
        help="a public number: how many events one person contributes (an assumption, not enforced)"))
    conversion = unit_conversion(report, k, max_events=capped)
    figures = st.toggle("details: the accounting's figures (μ, ρ)", key="unit_figures",
                        help="the same guarantees with the numbers they are computed from")
    st.markdown("\n".join(f"- {line}" for line in conversion.sentences(formulas=figures)))
    if figures:
        st.caption("μ: the noise's strength in Gaussian differential privacy (sensitivity over noise std, "
                   "composed over the noisy steps); ρ: the same for discrete Gaussian noise (zero-concentrated "
                   "DP). ε at δ is computed from them.")
