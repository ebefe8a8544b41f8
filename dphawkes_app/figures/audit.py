"""Plotly figures of a privacy audit (pure functions: an :class:`~dphawkes_experiments.audit.AuditResult` in,
``go.Figure`` out)."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from dphawkes_experiments.audit import AuditResult

from .palette import NEIGHBOUR_COLORS, TRUTH_COLOR, VERDICT_COLORS
from .text_fit import HALF_WIDTH, fit_titles

_D, _D_PRIME = NEIGHBOUR_COLORS


def audit_distributions(result: AuditResult, bins: int = 60) -> go.Figure:
    """Histograms of the projected outputs on D and D' (evaluation half) with the test's threshold."""
    scores = np.concatenate([result.scores_d, result.scores_d_prime])
    lo, hi = float(scores.min()), float(scores.max())
    size = (hi - lo) / bins if hi > lo else 1.0
    fig = go.Figure()
    for name, values, color in (("D (without the event)", result.scores_d, _D),
                                ("D' (one event added)", result.scores_d_prime, _D_PRIME)):
        fig.add_trace(go.Histogram(x=values, name=name, marker_color=color, opacity=0.55,
                                   xbins={"start": lo, "end": hi + size, "size": size}))
    fig.add_vline(x=result.threshold, line_dash="dash", line_color=TRUTH_COLOR,
                  annotation_text="threshold: above → guess D'", annotation_position="top")
    fig.update_layout(
        barmode="overlay",
        title={"text": "Outputs projected on the test direction<br>"
                       f"<sup>{result.scores_d.size:,} evaluation runs per data set</sup>"},
        xaxis_title="projected output", yaxis_title="runs", legend={"orientation": "h", "y": -0.2},
        margin={"t": 80},
    )
    return fit_titles(fig, HALF_WIDTH)


def audit_epsilons(result: AuditResult) -> go.Figure:
    """Claimed ε under every calibration next to the audited lower bound (the headline one,
    :attr:`~dphawkes_experiments.audit.AuditResult.epsilon_audited`, as in the verdict).

    A lower bound of 0 (the test told nothing apart) has no bar: a note in the chart says so."""
    labels, values, colors = [], [], []
    for calibration, eps in result.epsilon_by_calibration.items():
        if eps is None:
            continue
        labels.append(f"claimed: {calibration}" + (" (chosen)" if calibration == result.calibration else ""))
        values.append(float(eps) if np.isfinite(eps) else np.nan)
        colors.append(VERDICT_COLORS["other"] if calibration != result.calibration else VERDICT_COLORS["chosen"])
    bound_label = f"audited lower bound ({result.confidence:.0%})"
    if result.epsilon_audited > 0:
        labels.append(bound_label)
        values.append(result.epsilon_audited)
        colors.append(_D_PRIME if result.violated else _D)
    fig = go.Figure(go.Bar(x=values, y=labels, orientation="h", marker_color=colors,
                           text=[f"{v:.3g}" for v in values], textposition="auto"))
    if result.epsilon_audited <= 0:
        fig.add_annotation(text=f"{bound_label}: 0<br>the test could not tell D from D′ better than chance",
                           xref="paper", yref="paper", x=0, y=-0.22, xanchor="left", yanchor="top", align="left",
                           showarrow=False)
    fig.update_layout(title="ε: claims vs the audited lower bound", xaxis_title="ε",
                      margin={"l": 10, "b": 130})
    return fit_titles(fig, HALF_WIDTH)
