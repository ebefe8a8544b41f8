"""The Estimate page's privacy report: σ², ε under each calibration and their ratio, with the formal status of a
release (private data) or of the settings (public data), and the guarantee read in the other privacy unit."""

from __future__ import annotations

import math

import pandas as pd
import streamlit as st

from dphawkes_core.privacy.calibration import CALIBRATIONS
from dphawkes_core.privacy.sequence import UNIT_LABELS
from dphawkes_core.release.ledger import PUBLIC_MARK_REASON

from ..budget import BudgetState
from ..controls import calibration_words, show_unit_conversion
from .release import Shown
from .sidebar import DELTA_HELP, EPSILON_HELP


def public_mark_text(budget: BudgetState) -> str:
    """The core's sentence on data marked public, with the mark (when, from which tool), or nothing."""
    mark = budget.ledger.public_mark if budget.ledger is not None else None
    return f" {PUBLIC_MARK_REASON[:1].upper()}{PUBLIC_MARK_REASON[1:]} ({mark.sentence()})." if mark else ""


def calibration_table(report) -> pd.DataFrame:
    """ε of this σ² under each calibration the method has (and the formal one), in words, with its ratio to the
    paper's."""
    eps = report.epsilon_by_calibration
    rows = []
    for name in CALIBRATIONS:
        value = eps.get(name)
        if value is None and report.calibration != name and name != "formal":
            continue  # this method has no such calibration
        rows.append({
            "calibration": calibration_words(name),
            "ε for this σ²": value if value is not None else math.nan,
            "formal calibration": "yes" if name == "formal" else "no (data-dependent)",
            "ε ÷ ε(paper)": (value / eps["paper"]) if value is not None and eps.get("paper") else math.nan,
        })
    return pd.DataFrame(rows)


def show_privacy(shown: Shown, budget: BudgetState) -> None:
    """σ², ε under each calibration and their ratio, with the formal status: a release (private data), or the
    settings' status on public data (nothing is released there), and the guarantee in the other privacy unit."""
    report, status, config = shown.result.privacy, shown.status, shown.config
    st.subheader("Privacy")
    eps = report.epsilon_by_calibration
    cols = st.columns(3)
    cols[0].metric("noise variance σ²", f"{report.sigma2:.4g}")
    cols[1].metric(f"ε ({report.calibration})", f"{report.epsilon:.4g}", help=EPSILON_HELP)
    cols[2].metric("δ", f"{report.dp_delta:.1e}", help=DELTA_HELP)
    details = st.expander("Details: ε under each calibration, and the guarantee in the other unit")
    details.dataframe(calibration_table(report), hide_index=True, key="privacy_table", placeholder="n/a")
    bounds = ("the clip G or cap M per sequence, C, d, p, the windows, the number of sequences"
              if report.privacy_unit == "sequence" else "count cap C, B or r, d, p, n")
    if status.formal:
        st.success(f"**Formal (ε, δ)-DP release** for {UNIT_LABELS[report.privacy_unit]}: the noise is calibrated "
                   f"from public bounds only ({bounds}), the domain and window were declared, the noise is fresh, and "
                   "the release is metered in this data set's ledger.")
        with details:
            show_unit_conversion(report, config.max_events or 50, config.max_events)
    elif not shown.private_data and status.settings_formal:
        st.success(f"**Formal (ε, δ)-DP settings** for {UNIT_LABELS[report.privacy_unit]}: on private data this "
                   f"would be a formal (ε, δ)-DP release — noise from public bounds only ({bounds}), a stated window, "
                   "fresh noise — released through the data set's ledger. Here the data are public (a simulation, or "
                   "data marked published): everything re-runs live and nothing is a release."
                   + public_mark_text(budget),
                   icon=":material/verified:")
        with details:
            show_unit_conversion(report, config.max_events or 50, config.max_events)
    else:
        reasons = [r for r in status.reasons if shown.private_data or not r.startswith("not released")]
        advice = "" if report.formal else " Choose the *formal* calibration (with a count cap C) for a guarantee."
        st.warning(f"**Not a formal guarantee:** {'; '.join(reasons)}.{advice}"
                   + ("" if shown.private_data else public_mark_text(budget)), icon=":material/warning:")
    if eps.get("formal") is None:
        st.caption("Set a count cap C ≥ 1 to see the formal ε for this σ².")
