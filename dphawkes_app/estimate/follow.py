"""The Estimate page's settings follow the data: when the data set changes, the sidebar's Δ and s are either
the ones proposed for the new data (applied, and said so) or the user's own (kept, and said so) — never one
claimed and another fitted. And the sequence unit never dead-ends: a family without it or an automatic C is
switched to what the unit needs, saying so.

Streamlit keeps a keyed widget's value for the whole session, across pages, so a value given to a widget as
its default is ignored once the widget exists: these functions set the widgets' session state *before* the
page draws them (allowed for widgets not yet drawn in this run).
"""

from __future__ import annotations

from collections.abc import Mapping

import streamlit as st

from dphawkes_core.data.datasets import Dataset
from dphawkes_core.estimators import FAMILIES, method_labels

from ..guidance import TimeScale, time_scale
from ..presets import WORKS_COUNT_CAP, Preset, preset_for
from .new_data import fit_settings_to, remember_time_unit

SETTINGS_FOR = "settings_for"  # the fingerprint of the data the sidebar's settings were made for
AUTO_VALUES = "auto_dt_s"  # {"dt", "s", "source": "preset"|"data"}: the Δ and s the page set itself last
NOTE_KEY = "follow_note"  # what happened to Δ and s when the data changed: {"fingerprint", "text", "dt", "s"}
UNIT_NOTE_KEY = "unit_note"
CUSTOM = "custom"


def remember(bin_size: float, support: float, source: str) -> None:
    """Record the Δ and s the page set itself (from a preset or proposed from the data)."""
    st.session_state[AUTO_VALUES] = {"dt": float(bin_size), "s": float(support), "source": source}


def users_own(values: Mapping) -> bool:
    """The sidebar's Δ and s (or p) were set by the user: they differ from what the page last set itself."""
    auto = st.session_state.get(AUTO_VALUES)
    if "dt" not in values:
        return False  # the widgets were never drawn: nothing of the user's
    if values.get("lagmode", "support s") != "support s":
        return True
    if auto is None:
        return True
    return not (_close(values.get("dt"), auto["dt"]) and _close(values.get("s"), auto["s"]))


def _close(a, b) -> bool:
    return a is not None and b is not None and abs(float(a) - float(b)) <= 1e-12 * max(1.0, abs(float(b)))


def follow_data(dataset: Dataset, fingerprint: str, wanted_preset: str, widget_values, private: bool = False) -> None:
    """Before the widgets are drawn: make the sidebar's settings follow a change of data.

    Parameters
    ----------
    dataset, fingerprint : the current data set
    wanted_preset : str
        The preset the page would start from (the URL's or the default).
    widget_values : callable
        ``widget_values(preset) -> {widget key: value}`` that reproduce a preset's fit.
    private : bool
        The data are private: nothing is proposed from them (the settings are kept).
    """
    seen = st.session_state.get(SETTINGS_FOR)
    if seen == fingerprint:
        return
    st.session_state[SETTINGS_FOR] = fingerprint
    match = preset_for(dataset.params, preferred=st.session_state.get("preset", wanted_preset))
    if seen is None and "dt" not in st.session_state:  # a first visit: the widgets take their defaults
        remember_time_unit(dataset.events.time_unit)
        if match is not None:
            remember(match.config.bin_size, match.support, "preset")
        elif dataset.scenario is None and not private:
            scale = time_scale(dataset.events)
            remember(scale.bin_size, scale.support, "data")
        return
    if match is not None:
        st.session_state["preset"] = match.key
        st.session_state.update(widget_values(match))
        remember(match.config.bin_size, match.support, "preset")
        remember_time_unit(dataset.events.time_unit)
        _note(fingerprint, f"New data: these are the data of the preset “{match.title}”, so its settings were "
                           "applied.", match.config.bin_size, match.support)
        return
    st.session_state["preset"] = CUSTOM
    _follow_other_data(dataset, fingerprint, private)


def _follow_other_data(dataset: Dataset, fingerprint: str, private: bool) -> None:
    """Data that are not a preset's: the settings made to fit them (:mod:`.new_data`), and Δ and s proposed for
    public real data unless the user set their own."""
    if dataset.scenario is not None or private:
        what = "simulated" if dataset.scenario is not None else "private"
        changed = fit_settings_to(dataset, private)
        kept = ("your other settings are kept" if changed else "your settings are kept") + (
            " — Δ and s are never proposed from private data" if private else "")
        _note(fingerprint, f"New data ({what}): " + "; ".join(changed + [kept]) + ".", None, None)
        return
    scale = time_scale(dataset.events)
    if users_own(st.session_state):
        changed = fit_settings_to(dataset, private)
        _note(fingerprint, f"New data: **kept your Δ = {st.session_state['dt']:g} and "
                           f"{_memory(st.session_state)}** (you set them)"
                           + "".join(f"; {c}" for c in changed) + f". {proposal_words(scale)}",
              st.session_state.get("dt"), st.session_state.get("s"), proposal=scale)
        return
    apply_proposal(scale)
    changed = fit_settings_to(dataset, private, convert_time=False)
    _note(fingerprint, f"New data: **Δ = {scale.bin_size:g} and s = {scale.support:g}{_unit(scale)} applied** — "
                       f"the values proposed for these data (about ¼ and 10× their mean time between events, "
                       f"{scale.mean_gap:.3g}{_unit(scale)})" + "".join(f"; {c}" for c in changed) + ".",
          scale.bin_size, scale.support)


def apply_proposal(scale: TimeScale) -> None:
    """Put the proposed Δ and s into the sidebar (before it is drawn, or from a button's callback)."""
    st.session_state.update(dt=float(scale.bin_size), s=float(scale.support), lagmode="support s")
    remember(scale.bin_size, scale.support, "data")


def proposal_words(scale: TimeScale) -> str:
    return (f"Proposed for these data: Δ = {scale.bin_size:g}, s = {scale.support:g}{_unit(scale)} (about ¼ and "
            f"10× their mean time between events).")


def _memory(values: Mapping) -> str:
    if values.get("lagmode", "support s") != "support s":
        return f"p = {values.get('p')} lags"
    return f"s = {values.get('s'):g}"


def _unit(scale: TimeScale) -> str:
    return f" {scale.unit}" if scale.unit else ""


def _note(fingerprint: str, text: str, dt, s, proposal: TimeScale | None = None) -> None:
    st.session_state[NOTE_KEY] = {"fingerprint": fingerprint, "text": text, "dt": dt, "s": s,
                                  "proposal": (proposal.mean_gap, proposal.bin_size, proposal.support, proposal.unit)
                                  if proposal is not None else None}


def show_note(fingerprint: str) -> None:
    """The note of the last change of data, while its values are still the sidebar's; with a button that applies
    the proposal when the user's own values were kept."""
    note = st.session_state.get(NOTE_KEY)
    if not note or note["fingerprint"] != fingerprint:
        return
    if note["dt"] is not None and not (_close(st.session_state.get("dt"), note["dt"])
                                       and (_close(st.session_state.get("s"), note["s"])
                                            or st.session_state.get("lagmode") != "support s")):
        return
    st.info(note["text"], icon=":material/sync:")
    if note["proposal"] is not None:
        st.button("Use the proposed Δ and s", key="use_proposal", on_click=_use_proposal, args=(note["proposal"],))


def _use_proposal(proposal) -> None:
    apply_proposal(TimeScale(*proposal))
    st.session_state.pop(NOTE_KEY, None)


# --- the sequence unit from every starting point -------------------------------------------------------------


def _effective(key: str, default):
    """A widget's value before it is drawn: its session state, else the URL's, else ``default``."""
    if key in st.session_state:
        return st.session_state[key]
    text = st.query_params.get(key)
    if text is None:
        return default
    if isinstance(default, bool):
        return text.lower() == "true"
    return text


def sequence_unit_ready(defaults: Mapping) -> None:
    """Before the widgets: with the sequence unit chosen (by the user or a link), switch what it cannot use — a
    method without the sequence unit to the first registered one that has it, an automatic C to a public C —
    and say so (the note is shown by :func:`show_unit_note`)."""
    if _effective("unit", "event") != "sequence":
        return
    notes = []
    labels = method_labels()
    by_label = {label: name for name, label in labels.items()}
    method = FAMILIES.get(by_label.get(_effective("method", defaults["method"]), ""))
    if method is not None and method.privacy.private and "sequence" not in method.privacy.units:
        target = next((f for f in FAMILIES.values() if f.privacy.private and "sequence" in f.privacy.units), None)
        if target is not None:
            st.session_state["method"] = target.label
            notes.append(f"{method.label} has no sequence unit: the method was switched to {target.label}, which "
                         "has it")
            method = target
    if method is not None and method.privacy.auto_count_cap and _effective("Cauto", bool(defaults["Cauto"])):
        cap = int(_effective("C", defaults["C"]) or WORKS_COUNT_CAP)
        st.session_state["Cauto"] = False
        st.session_state["C"] = cap
        notes.append(f"an automatic C is not available with the sequence unit (each sequence's statistics are "
                     f"clipped at a public bound before the release), so C is now the public C = {cap} — change it "
                     "in the sidebar")
    if notes:
        st.session_state[UNIT_NOTE_KEY] = notes


def show_unit_note() -> None:
    """What :func:`sequence_unit_ready` switched, once."""
    notes = st.session_state.pop(UNIT_NOTE_KEY, None)
    if notes:
        text = "; ".join(notes)
        st.info(f"**Sequence unit:** {text}.", icon=":material/swap_horiz:")


def preset_remembered(preset: Preset) -> None:
    """A preset chosen in the selector sets Δ and s itself (a preset's data have no time unit)."""
    remember(preset.config.bin_size, preset.support, "preset")
    remember_time_unit(None)
