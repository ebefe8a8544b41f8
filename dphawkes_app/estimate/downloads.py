"""The Estimate page's downloads, and what a download of a fit on private data may hold: the release (estimate,
settings, formal status, the privacy report's numbers from public bounds), never what was computed from the raw
data."""

from __future__ import annotations

import streamlit as st

from dphawkes_core.evaluation.lag_average import add_lag_average
from dphawkes_core.release.export import fit_payload, to_csv, to_json

from .context import PageContext
from .release import Shown

PUBLIC_INFO = ("n_bins", "window_stated", "dimensions_declared", "sequences_declared", "count_cap", "auto_count_cap",
               "privacy_unit", "sequence_clip", "max_events", "sequences", "auto_sequence_clip")
# What of a data info is public on private data: fixed by the declared domain and the settings, or released
# (an automatic C or G). Event, dropped and clipped counts are computed from the raw data.
RELEASED_KEYS = (
    "format_version",
    "method",
    "config",
    "support",
    "dimension_names",
    "lag_grid",
    "baseline",
    "kernels",
    "kernel_functions",
    "formal_guarantee",
    "formal_reasons",
    "formal_settings",
    "private_fields",
    "release_note",
    "seed",
    "lag_average",
)


def released_only(payload: dict) -> dict:
    """A private data set's download: the release (estimate, settings, formal status, the privacy report's
    numbers from public bounds) without what was computed from the raw data (loss, counts, R and the paper's
    data-dependent ε, solver diagnostics, the file's name)."""
    out = {key: payload[key] for key in RELEASED_KEYS if key in payload}
    out["data_info"] = {key: value for key, value in payload.get("data_info", {}).items() if key in PUBLIC_INFO}
    privacy = payload.get("privacy")
    if isinstance(privacy, dict):
        keep = {"sigma2", "epsilon", "dp_delta", "calibration", "sensitivity", "formal", "iters", "note",
                "budget_split", "privacy_unit", "noise", "formal_guarantee", "formal_reasons", "formal_settings"}
        out["privacy"] = {key: value for key, value in privacy.items() if key in keep}
        if privacy.get("calibration") == "formal":
            out["privacy"]["epsilon_by_calibration"] = {
                "formal": privacy.get("epsilon_by_calibration", {}).get("formal")
            }
    out["left_out"] = ("computed from the raw data, not private: loss_history, event/dropped/clipped counts, R and "
                       "the paper's data-dependent ε, solver diagnostics")
    return out


def show_export(ctx: PageContext, shown: Shown, truth, averaged) -> None:
    """Download buttons for the estimate (and its lag average) and every parameter needed to reproduce it; on
    private data the release only (:func:`released_only`), with the status it was recorded with."""
    result, config, data_info = shown.result, shown.config, shown.data_info
    status = shown.status if shown.private_data else None  # public data: the core's "not released" status
    payload = fit_payload(result, config, dict(data_info), ctx.events.names, ctx.dataset.params, truth, status=status)
    if averaged is not None:
        add_lag_average(payload, result, averaged, ctx.scenario)
    if shown.private_data:
        payload = released_only(payload)
        st.caption("The downloads hold the release only: the estimate, its settings and its formal status — not the "
                   "loss, the event counts or anything else computed from the raw data.")
    c = st.columns(2)
    c[0].download_button("Download JSON", to_json(payload), file_name=f"dphawkes_{result.method}.json",
                         mime="application/json", key="dl_json")
    c[1].download_button("Download CSV", to_csv(result, config, ctx.events.names, truth, dict(data_info),
                                                status=status),
                         file_name=f"dphawkes_{result.method}.csv", mime="text/csv", key="dl_csv")

