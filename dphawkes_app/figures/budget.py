"""Plotly figure of a privacy ledger (page Privacy budget): composed ε against naive summation."""

from __future__ import annotations

import plotly.graph_objects as go

from .palette import BUDGET_COLORS
from .text_fit import FULL_WIDTH, fit_titles


def budget_figure(composed, naive, budget: float) -> go.Figure:
    """ε spent after each metered release: composed exactly (solid), summed naively (dashed), and the budget.

    Parameters
    ----------
    composed, naive : sequence of float
        Cumulative composed ε and cumulative Σε after release 1, 2, …
    budget : float
        The data set's total ε (dotted line).
    """
    releases = list(range(1, len(composed) + 1))
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=releases, y=list(naive), mode="lines+markers", name="naive Σε (what summing claims)",
                             line=dict(color=BUDGET_COLORS["naive"], dash="dash")))
    fig.add_trace(go.Scatter(x=releases, y=list(composed), mode="lines+markers", name="composed ε (exact)",
                             line=dict(color=BUDGET_COLORS["spent"])))
    fig.add_hline(y=budget, line_dash="dot", line_color=BUDGET_COLORS["budget"],
                  annotation_text=f"budget ε = {budget:g}", annotation_position="top left")
    fig.update_xaxes(title_text="release", tickmode="linear", dtick=max(1, len(releases) // 10))
    fig.update_yaxes(title_text="ε spent on this data set", rangemode="tozero")
    fig.update_layout(height=360, margin=dict(t=30, b=40), legend=dict(orientation="h", y=1.12))
    return fit_titles(fig, FULL_WIDTH)
