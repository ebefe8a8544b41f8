"""A new data set starts from settings that fit it (issue 43: after the taxi shifts, the Japan quakes opened with the
taxi's C = 5 — removing a third of the quakes — and Δ = 0.5, hours become days without a word).

Before the sidebar is drawn on data that are not a preset's, :func:`fit_settings_to` makes the carried settings fit
the new data from public facts only, and says what it changed:

* **the time unit** — Δ and s kept from data with another known unit are converted, so they keep their duration;
* **the privacy unit** — the sequence unit needs several sequences: on one sequence the page returns to the event unit;
* **the count cap C** — a method that chooses C privately does so for the new data (a share of ε, inside the
  release); on public data without that choice C is proposed from the data (the smallest C removing at most 1 % of
  the events at the sidebar's Δ); on private data nothing is read, and the share C removes is stated beside the
  headline once an estimate is shown (:func:`removed_share_note`).
"""

from __future__ import annotations

from collections.abc import Mapping

import streamlit as st

from dphawkes_core.data.timeaxis import TIME_UNITS
from dphawkes_core.errors import DPHawkesError
from dphawkes_core.estimators import FAMILIES
from dphawkes_core.privacy.count_cap import AUTO_CAP_CLIPPED_FRACTION, AUTO_CAP_MAX, AUTO_CAP_SHARE
from dphawkes_core.statistics.binning import bin_sparse, tail_counts

from ..words import percent_text

SETTINGS_UNIT = "settings_time_unit"  # the time unit of the data the sidebar's Δ and s were made for
REMOVED_SHARE_SHOWN = 0.01  # a share of events removed by the caps above this is stated beside the headline


def remember_time_unit(unit: str | None) -> None:
    """Record the time unit the sidebar's Δ and s are now in."""
    st.session_state[SETTINGS_UNIT] = unit


def converted(value: float, from_unit: str | None, to_unit: str | None) -> float | None:
    """``value`` in ``from_unit`` expressed in ``to_unit`` (``None`` when either is unknown or they are the same)."""
    if not from_unit or not to_unit or from_unit == to_unit or {from_unit, to_unit} - set(TIME_UNITS):
        return None
    return float(f"{value * TIME_UNITS[from_unit] / TIME_UNITS[to_unit]:.4g}")


def convert_time_settings(to_unit: str | None) -> str:
    """Convert the sidebar's Δ and s from the unit they were made for into ``to_unit``; the sentence saying so (empty
    when nothing was converted)."""
    from_unit = st.session_state.get(SETTINGS_UNIT)
    remember_time_unit(to_unit)
    dt, s = st.session_state.get("dt"), st.session_state.get("s")
    if dt is None or converted(1.0, from_unit, to_unit) is None:
        return ""
    st.session_state["dt"] = converted(dt, from_unit, to_unit)
    text = f"Δ = {dt:g} {from_unit} is now Δ = {st.session_state['dt']:g} {to_unit}"
    if s is not None:
        st.session_state["s"] = converted(s, from_unit, to_unit)
        text += f" and s = {s:g} {from_unit} is now s = {st.session_state['s']:g} {to_unit}"
    return text + " (the same durations in these data's unit)"


def _family():
    by_label = {f.label: f for f in FAMILIES.values()}
    return by_label.get(st.session_state.get("method"))


def reset_count_cap(dataset, private: bool) -> str:
    """Make C fit the new data (see the module's docstring); the sentence saying what was done."""
    family = _family()
    if family is None or not family.privacy.private:
        return ""
    event_unit = st.session_state.get("unit", "event") == "event"
    if family.privacy.auto_count_cap and event_unit and st.session_state.get("privacy", "ε and δ") == "ε and δ":
        already = st.session_state.get("Cauto")
        st.session_state["Cauto"] = True
        return "" if already else f"C is chosen privately for these data ({AUTO_CAP_SHARE:.0%} of ε)".replace(
            "%", "\u00a0%")
    if private:
        return (f"C = {st.session_state.get('C')} is kept (nothing is read from private data to propose one): the "
                "share of events it removes is stated with the estimate")
    cap = proposed_cap(dataset.events, float(st.session_state.get("dt") or 1.0))
    if cap is None:
        return ""
    st.session_state["C"] = cap
    return f"C = {cap} proposed for these public data (it removes at most 1\u00a0% of their events at this Δ)"


def proposed_cap(events, bin_size: float) -> int | None:
    """The smallest count cap C removing at most 1 % of ``events`` in bins of ``bin_size`` (public data only: it
    reads the counts), or ``None`` when the counts cannot be binned."""
    try:
        tails = tail_counts(bin_sparse(events, bin_size), AUTO_CAP_MAX + 1)
    except DPHawkesError:
        return None
    total = max(float(events.n_events), 1.0)
    removed = tails[::-1].cumsum()[::-1]  # removed[c-1] = Σ_{c' ≥ c} #{X ≥ c'}: events above a cap of c − 1
    for cap in range(1, AUTO_CAP_MAX + 1):
        if removed[cap] / total <= AUTO_CAP_CLIPPED_FRACTION:
            return cap
    return AUTO_CAP_MAX


def reset_privacy_unit(dataset) -> str:
    """The sequence unit needs several sequences: on one, return to the event unit (the sentence, or empty)."""
    if st.session_state.get("unit") == "sequence" and dataset.events.n_sequences <= 1:
        st.session_state["unit"] = "event"
        return "these data are one sequence, so the privacy unit is the event again"
    return ""


def fit_settings_to(dataset, private: bool, convert_time: bool = True) -> list[str]:
    """Before the sidebar is drawn: the privacy unit, Δ and s, and C made to fit ``dataset``; the sentences of
    what changed. ``convert_time``: Δ and s are the carried ones (not a proposal made for these data)."""
    notes = [reset_privacy_unit(dataset)]
    if convert_time:
        notes.append(convert_time_settings(dataset.events.time_unit))
    else:
        remember_time_unit(dataset.events.time_unit)
    notes.append(reset_count_cap(dataset, private))
    return [note for note in notes if note]


def removed_share_note(data_info: Mapping, private: bool) -> str | None:
    """One sentence when the caps removed more than 1 % of the events (the count cap C, and a cap M on events per
    sequence), for beside the headline measure; ``None`` otherwise."""
    total = data_info.get("n_events") or 0
    by_cap = int(data_info.get("clipped_events") or 0)
    by_m = int(data_info.get("events_over_cap") or 0)
    if total <= 0 or (by_cap + by_m) / total <= REMOVED_SHARE_SHOWN:
        return None
    parts = []
    if by_cap:
        parts.append(f"{by_cap:,} by the count cap C = {data_info.get('count_cap')}")
    if by_m:
        parts.append(f"{by_m:,} by the cap M = {data_info.get('max_events')} events per sequence")
    share = percent_text((by_cap + by_m) / total)
    eyes = " (counted on the raw data: for your eyes only)" if private else ""
    return (f"**{share} of the events were removed before the fit** — {' and '.join(parts)}, of {total:,}{eyes}. "
            "The estimate sees only the rest: raise the cap to keep more of the data.")
