"""Plotly figures of sweep tables and paper reproductions (pages Privacy–utility and Reproduce)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from dphawkes_core.estimators import get_family, method_labels, method_names

from .palette import LEVEL_PALETTE, NEUTRAL_COLOR, TRUTH_COLOR, method_color
from .text_fit import FULL_WIDTH, fit_titles

METRIC_LABELS = {
    "relative_error_paper": "the paper's measure (the error on the lag grid per coefficient)",
    "relative_error": "error on the lag grid",
    "rmse": "held-out next-event-time RMSE",
    "heldout_gain": "held-out gain over Poisson (nats per test event)",
    "kernel_function_error": "kernel error (the kernel functions over [0, s])",
}
ZERO_REFERENCE = {"relative_error_paper": "zero_estimate_relative_error_paper",
                  "relative_error": "zero_estimate_relative_error", "rmse": "poisson_rmse",
                  "kernel_function_error": "zero_estimate_relative_error",  # both relative: the all-zero estimate is 1
                  "heldout_gain": None}  # the gain is measured against Poisson: its reference is 0 by definition
_DASHES = ("solid", "dash", "dot", "dashdot", "longdash", "longdashdot")  # one per Δ (the colour is the method)


def _label(method: str) -> str:
    """The method's display label from the registry (its name when no registered family has it)."""
    return method_labels().get(method, method)


def _references() -> set[str]:
    """Names of the non-private families (no noise: the reference every private method is measured against)."""
    return {name for name in method_names() if not get_family(name).privacy.private}


def _non_private(methods: pd.Series) -> pd.Series:
    """Which rows of a table's ``method`` column are a non-private family."""
    return methods.isin(_references())


def _level_label(privacy: str, level: float) -> str:
    return f"{'σ²' if privacy == 'sigma2' else 'ε'}={level:g}"


def reference_value(frame: pd.DataFrame, metric: str) -> float:
    """The reference line of ``metric``: the all-zero estimate's error, Poisson's RMSE, or 0 for the gain over
    Poisson."""
    column = ZERO_REFERENCE[metric]
    return 0.0 if column is None else float(frame[column].median())


def boxplot_figure(frame: pd.DataFrame, metric: str = "relative_error_paper") -> go.Figure:
    """Error per privacy level, one panel per Δ, one colour per private method (Figures 2 and 4).

    Dashed line: median of the non-private methods in the table; dotted line: the all-zero estimate
    (for the RMSE, the constant-rate Poisson reference).
    """
    bins = sorted(frame["bin_size"].unique())
    fig = make_subplots(rows=1, cols=len(bins), subplot_titles=[f"Δ = {b:g}" for b in bins], shared_yaxes=False)
    private = frame[~_non_private(frame["method"])]
    methods = sorted(private["method"].unique())
    for col, dt in enumerate(bins, start=1):
        by_method = dict(tuple(private[private.bin_size == dt].groupby("method")))
        for method in methods:
            sub = by_method.get(method, private.iloc[:0]).sort_values("level")
            fig.add_trace(go.Box(
                x=[_level_label(p, lv) for p, lv in zip(sub["privacy"], sub["level"])],
                y=sub[metric].where(np.isfinite(sub[metric])),  # −∞ (a held-out score): counted by the page
                name=_label(method), legendgroup=method, showlegend=col == 1,
                marker_color=method_color(method),
                boxpoints="all", jitter=0.3, pointpos=0,
            ), row=1, col=col)
        panel = frame[frame.bin_size == dt]
        for label, value, dash in (
            ("non-private (median)", panel.loc[_non_private(panel.method), metric].median(), "dash"),
            ("all-zero estimate" if ZERO_REFERENCE[metric] and metric != "rmse" else "Poisson reference",
             reference_value(panel, metric), "dot"),
        ):
            if np.isfinite(value):
                fig.add_hline(y=value, line_dash=dash, line_color=NEUTRAL_COLOR, row=1, col=col,
                              annotation_text=label, annotation_position="top left", annotation_font_size=10)
    fig.update_layout(boxmode="group", height=420, margin=dict(t=60, b=40), legend_title_text="method")
    fig.update_yaxes(title_text=METRIC_LABELS.get(metric, metric), row=1, col=1)
    return fit_titles(fig, FULL_WIDTH)


def tradeoff_figure(
    frame: pd.DataFrame, metric: str = "relative_error", epsilon_column: str = "epsilon_paper"
) -> go.Figure:
    """Median error vs ε (log axis) per method and Δ, with the interquartile band.

    Cells with infinite ε (σ² = 0, non-private) are left out of the curve; the non-private median is
    a dashed horizontal line per Δ.
    """
    fig = go.Figure()
    private = frame[~_non_private(frame["method"])]
    finite = private[np.isfinite(private[epsilon_column].astype(float))]
    bins = sorted(finite["bin_size"].unique())
    for (method, dt), sub in finite.groupby(["method", "bin_size"]):
        stats = sub.groupby("level").agg(eps=(epsilon_column, "median"), q1=(metric, lambda v: v.quantile(0.25)),
                                         med=(metric, "median"), q3=(metric, lambda v: v.quantile(0.75)))
        stats = stats.sort_values("eps")
        color = method_color(method)
        name = f"{_label(method)}, Δ={dt:g}"
        fig.add_trace(go.Scatter(x=np.concatenate([stats.eps, stats.eps[::-1]]),
                                 y=np.concatenate([stats.q3, stats.q1[::-1]]), fill="toself", mode="lines",
                                 line=dict(width=0), fillcolor=color, opacity=0.2, hoverinfo="skip", showlegend=False,
                                 legendgroup=name))
        fig.add_trace(go.Scatter(x=stats.eps, y=stats.med, mode="lines+markers", name=name, legendgroup=name,
                                 line=dict(color=color, dash=_DASHES[bins.index(dt) % len(_DASHES)])))
    span = finite[epsilon_column].astype(float)
    for dt, sub in frame[_non_private(frame["method"])].groupby("bin_size"):
        reference_line(fig, [span.min(), span.max()] if len(span) else [1.0, 1.0], sub[metric].median(),
                       f"non-private, Δ={dt:g}", "dash")
    ticks = log_ticks(finite[epsilon_column].astype(float))
    fig.update_xaxes(type="log", tickvals=ticks, ticktext=[f"{t:g}" for t in ticks],
                     title_text=f"ε ({epsilon_column.removeprefix('epsilon_').replace('_', '-')} calibration)")
    fig.update_yaxes(title_text=f"median {METRIC_LABELS.get(metric, metric)}")
    fig.update_layout(height=420, margin=dict(t=30, b=40))
    return fit_titles(fig, FULL_WIDTH)


def data_size_figure(frame: pd.DataFrame, metric: str = "relative_error") -> go.Figure:
    """Median error against the number of events (log axis) per method, with the interquartile band.

    The non-private methods are dashed lines (their error also falls with more data); the all-zero
    estimate is a dotted horizontal line. Ticks sit at the simulated sizes.
    """
    fig = go.Figure()
    for method, sub in frame.groupby("method"):
        stats = sub.groupby("n_events_requested")[metric].quantile([0.25, 0.5, 0.75]).unstack()
        color = method_color(method)
        private = method not in _references()
        name = _label(method) + ("" if private else " (non-private)")
        fig.add_trace(go.Scatter(x=np.concatenate([stats.index, stats.index[::-1]]),
                                 y=np.concatenate([stats[0.75], stats[0.25][::-1]]), fill="toself", mode="lines",
                                 line=dict(width=0), fillcolor=color, opacity=0.2, hoverinfo="skip",
                                 showlegend=False, legendgroup=name))
        fig.add_trace(go.Scatter(x=stats.index, y=stats[0.5], mode="lines+markers", name=name, legendgroup=name,
                                 line=dict(color=color, dash="solid" if private else "dash")))
    zero = reference_value(frame, metric)
    sizes = sorted(frame["n_events_requested"].unique())
    if np.isfinite(zero):
        reference_line(fig, [sizes[0], sizes[-1]], zero, "all-zero estimate", "dot")
    fig.update_xaxes(type="log", title_text="number of events", tickvals=sizes, ticktext=[f"{n:,.0f}" for n in sizes])
    fig.update_yaxes(title_text=f"median {METRIC_LABELS.get(metric, metric)}", rangemode="tozero")
    fig.update_layout(height=420, margin=dict(t=30, b=40), legend_title_text="method")
    return fit_titles(fig, FULL_WIDTH)


def reference_line(fig: go.Figure, span, value: float, name: str, dash: str) -> None:
    """A horizontal reference over ``span`` of the x axis, named in the legend — not by an annotation, which the
    curves it is set against would run through."""
    fig.add_trace(go.Scatter(x=list(span), y=[value, value], mode="lines", name=name, hoverinfo="name+y",
                             line={"color": NEUTRAL_COLOR, "dash": dash, "width": 1.5}))


def log_ticks(values) -> list[float]:
    """Tick values 1 and 3 × 10^k (0.1, 0.3, 1, 3, 10, …) spanning ``values`` (positive, finite), plus one
    decade either side when they span less than one decade; only decades when there are more than twelve."""
    values = np.asarray(values, float)
    values = values[np.isfinite(values) & (values > 0)]
    if values.size == 0:
        return []
    lo, hi = math.floor(math.log10(values.min())), math.ceil(math.log10(values.max()))
    lo, hi = (lo - 1, hi + 1) if hi - lo < 1 else (lo, hi)
    ticks = [m * 10.0**e for e in range(lo, hi + 1) for m in (1, 3)]
    ticks = [t for t in ticks if 10.0**lo <= t <= 10.0**hi]
    if len(ticks) > 12:
        ticks = [10.0**e for e in range(lo, hi + 1)]
    return [float(f"{t:.12g}") for t in ticks]


def kernel_figure(data: dict) -> go.Figure:
    """True kernel and its estimates at each noise level (Figures 1 and 3)."""
    fig = go.Figure()
    fig.add_trace(
        go.Scatter(x=data["true_grid"], y=data["true_values"], name="truth", line=dict(color=TRUTH_COLOR, width=3))
    )
    for idx, (label, values) in enumerate(data["curves"].items()):
        fig.add_trace(go.Scatter(x=data["lag_grid"], y=values, name=label, mode="lines",
                                 line=dict(color=LEVEL_PALETTE[idx % len(LEVEL_PALETTE)], shape="hv")))
    fig.update_layout(height=380, margin=dict(t=30, b=40), xaxis_title="lag t", yaxis_title=data["kernel"] + "(t)")
    return fit_titles(fig, FULL_WIDTH)
