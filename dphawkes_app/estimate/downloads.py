"""What a download of a fit on private data may hold: the release (estimate, settings, formal status, the
privacy report's numbers from public bounds), never what was computed from the raw data."""

from __future__ import annotations

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
