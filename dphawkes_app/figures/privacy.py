"""Plotly figures that explain privacy (the Home page and the ε help): what (ε, δ) bounds, and what privacy
costs in accuracy. Pure functions: numbers in, ``go.Figure`` out."""

from __future__ import annotations

import math

import numpy as np
import plotly.graph_objects as go

from dphawkes_core.errors import DPHawkesError
from dphawkes_core.estimators import get_family

from .palette import NEIGHBOUR_COLORS, TRUTH_COLOR, method_color, rgba
from .sweep import log_ticks


def normal_cdf(x: float) -> float:
    """Φ(x), the standard normal distribution function."""
    return 0.5 * math.erfc(-x / math.sqrt(2.0))


def odds_factor(epsilon: float) -> float:
    """e^ε: the most an observer's odds (that one event is in the data) can be multiplied by, beyond δ."""
    return math.exp(epsilon)


def odds_text(epsilon: float) -> str:
    """e^ε for people: ``2.72``, ``20.1``, ``22,026``."""
    factor = odds_factor(epsilon)
    return f"{factor:,.0f}" if factor >= 1000 else f"{factor:.3g}"


def gaussian_delta(epsilon: float, multiplier: float) -> float:
    """The exact δ of a Gaussian release with noise ``multiplier`` = σ / sensitivity at ``epsilon``
    (Balle & Wang 2018): ``Φ(μ/2 − ε/μ) − e^ε Φ(−μ/2 − ε/μ)`` with ``μ = 1/multiplier``."""
    mu = 1.0 / multiplier
    return normal_cdf(mu / 2 - epsilon / mu) - math.exp(epsilon) * normal_cdf(-mu / 2 - epsilon / mu)


def epsilon_picture(epsilon: float, multiplier: float, delta: float) -> go.Figure:
    """What ε bounds, for one Gaussian release of a statistic that one event moves by at most 1.

    Two densities: the released number on data D (without the event), centred at 0, and on the neighbour D′
    (with it), centred at 1, both with noise σ = ``multiplier`` (calibrated for (ε, δ)). An observer sees one
    output and must guess D or D′: at every output y the ratio of the two densities is the factor by which
    the observer's odds move. It stays within e^±ε except where the curves are shaded — the outputs whose
    probability the δ term covers.
    """
    sigma = float(multiplier)
    x = np.linspace(-4 * sigma - 0.5, 4 * sigma + 1.5, 600)
    dens = [np.exp(-0.5 * ((x - centre) / sigma) ** 2) / (sigma * math.sqrt(2 * math.pi)) for centre in (0.0, 1.0)]
    cut_high = sigma**2 * epsilon + 0.5  # right of it, p_D′(y) / p_D(y) > e^ε
    cut_low = 0.5 - sigma**2 * epsilon  # left of it, p_D(y) / p_D′(y) > e^ε
    fig = go.Figure()
    for (label, color), y in zip((("output on D (without the event)", NEIGHBOUR_COLORS[0]),
                                  ("output on D′ (one event more)", NEIGHBOUR_COLORS[1])), dens):
        fig.add_trace(go.Scatter(x=x, y=y, mode="lines", name=label, line={"color": color, "width": 2.5}))
    for side, mask, y in (("high", x >= cut_high, dens[1]), ("low", x <= cut_low, dens[0])):
        if mask.any():
            fig.add_trace(go.Scatter(x=x[mask], y=y[mask], fill="tozeroy", mode="none", showlegend=side == "high",
                                     fillcolor=rgba(NEIGHBOUR_COLORS[1 if side == "high" else 0], 0.35),
                                     name="outputs where the odds move by more than e^ε (covered by δ)",
                                     hoverinfo="skip"))
    tail = normal_cdf((0.5 - sigma**2 * epsilon) / sigma)  # P_D′(y > cut_high)
    fig.add_annotation(x=0.5, xref="paper", y=1.02, yref="paper", yanchor="bottom", showarrow=False,
                       text=(f"ε = {epsilon:g}: wherever the output lands, the two curves differ by a factor of at "
                             f"most e<sup>ε</sup> = {odds_text(epsilon)}<br>except in the shaded tails "
                             f"(probability {tail:.1e} under D′; the guarantee allows δ = {delta:.0e})"))
    fig.update_layout(title="What ε bounds: one release, two neighbouring data sets", height=420,
                      xaxis_title="released number (one event moves it by 1; noise σ = "
                                  f"{sigma:.3g})", yaxis_title="probability density", yaxis={"showticklabels": False},
                      legend={"orientation": "h", "y": -0.25}, margin={"t": 110, "b": 40})
    return fig


COST_METRICS = {"kernel_function_error": "grid-free kernel error", "relative_error": "error ‖Ĥ−H‖/‖H‖"}


def privacy_cost_figure(rows, title: str = "", metric: str = "relative_error") -> go.Figure:
    """Median error against ε (log axis) per private family with its interquartile band, the non-private
    reference as a dashed line and the all-zero estimate (error 1 on both metrics) as a dotted one.

    Parameters
    ----------
    rows : iterable of dict
        ``method``, ``epsilon`` (``None`` for the non-private reference) and the error ``metric`` (one per fit).
    metric : str
        ``relative_error`` (on the lag grid) or ``kernel_function_error`` (grid-free: the fair one between
        estimates on exact times and binned ones).
    """
    by_method: dict[str, dict[float, list[float]]] = {}
    references: dict[str, list[float]] = {}
    for row in rows:
        if row["epsilon"] is None:
            references.setdefault(row["method"], []).append(float(row[metric]))
        else:
            by_method.setdefault(row["method"], {}).setdefault(float(row["epsilon"]), []).append(
                float(row[metric]))
    fig = go.Figure()
    epsilons: list[float] = []
    for method, levels in by_method.items():
        eps = sorted(levels)
        epsilons += eps
        q1, med, q3 = (np.array([np.quantile(levels[e], q) for e in eps]) for q in (0.25, 0.5, 0.75))
        color, label = method_color(method), _label(method)
        fig.add_trace(go.Scatter(x=eps + eps[::-1], y=np.concatenate([q3, q1[::-1]]), fill="toself", mode="none",
                                 fillcolor=rgba(color, 0.18), hoverinfo="skip", showlegend=False, legendgroup=method))
        fig.add_trace(go.Scatter(x=eps, y=med, mode="lines+markers", name=label, legendgroup=method,
                                 line={"color": color, "width": 2},
                                 hovertemplate=f"{label}<br>ε = %{{x:g}}: median error %{{y:.3g}}<extra></extra>"))
    for method, values in references.items():
        fig.add_hline(y=float(np.median(values)), line_dash="dash", line_color=method_color(method),
                      annotation_text=f"{_label(method)} (non-private)", annotation_position="bottom right",
                      annotation_font_size=11)
    fig.add_hline(y=1.0, line_dash="dot", line_color=TRUTH_COLOR, annotation_text="all-zero estimate (error 1)",
                  annotation_position="top right", annotation_font_size=11)
    ticks = log_ticks(epsilons)
    fig.update_xaxes(type="log", tickvals=ticks, ticktext=[f"{t:g}" for t in ticks],
                     title_text="ε (formal, δ = 1e-5) — smaller is more private")
    fig.update_yaxes(title_text=f"{COST_METRICS[metric]} (median, quartiles shaded)", rangemode="tozero")
    fig.update_layout(title=title or "What privacy costs", height=420, margin={"t": 50, "b": 40},
                      legend={"orientation": "h", "y": -0.2})
    return fig


def _label(method: str) -> str:
    try:
        return get_family(method).label
    except DPHawkesError:  # a family of the table that is no longer registered: its name
        return method
