"""Figures of an estimate (the Estimate page): kernels against their reference, baselines and the loss (pure
functions: data in, ``go.Figure`` out)."""

from __future__ import annotations

import copy
import functools
import textwrap
from dataclasses import dataclass

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from dphawkes_core.data.kernels import Scenario

from .palette import METHOD_PALETTE, TRUTH_COLOR, rgba
from .text_fit import FULL_WIDTH, HALF_WIDTH, fit_titles

COLORS = {"truth": TRUTH_COLOR}  # series whose colour does not depend on a method
TRUTH_POINTS = 400
MAX_GRID_DIM = 6  # a grid of curves stays readable up to 6 × 6; beyond, integrated kernels


def _color(label: str, index: int, colors: dict | None = None) -> str:
    if colors and label in colors:
        return colors[label]
    return COLORS.get(label, METHOD_PALETTE[index % len(METHOD_PALETTE)])


def _lag_title(time_unit: str) -> str:
    return f"lag t ({time_unit})" if time_unit else "lag t"


def short_label(name, width: int = 18, lines: int = 2) -> str:
    """``name`` wrapped at ``width`` characters on at most ``lines`` lines (HTML line breaks), cut with "…".

    Long dimension names (e.g. "Z0 lat 36.004-37.203N") would overlap their neighbours as one line;
    the full name stays in the hover text.
    """
    parts = textwrap.wrap(str(name), width) or [""]
    if len(parts) > lines:
        parts = parts[:lines]
        parts[-1] = parts[-1][: width - 1] + "…"
    return "<br>".join(parts)


def kernel_grid(lag_grid: np.ndarray, estimates: dict, names, scenario: Scenario | None = None,
                steps: dict | None = None, *, colors: dict | None = None, bands: dict | None = None,
                dashes: dict | None = None, time_unit: str = "", title: str | None = None) -> go.Figure:
    """d×d grid of kernel plots: each estimate on the lag grid, step estimates as step lines, the true
    kernel when known.

    Columns are labelled once across the top ("from j", the source) and rows once down the right side
    ("to i", the affected dimension), with long names wrapped; every point's hover text names the full
    pair. Above :data:`MAX_GRID_DIM` dimensions a grid of curves cannot be read: the figure shows the
    integrated kernels instead (:func:`kernel_mass_heatmaps`).

    Parameters
    ----------
    lag_grid : numpy.ndarray
        Lags ``Δ, 2Δ, …, pΔ``.
    estimates : dict
        Label -> ``(d, d, p)`` array (e.g. ``{"estimate": …, "non-private": …}``); cell ``(i, j)``
        shows ``h_ij``, the effect of dimension j on dimension i.
    names : sequence of str
        Dimension names.
    scenario : Scenario, optional
        The true process, drawn as a continuous curve on ``(0, pΔ]``.
    steps : dict, optional
        Label -> :class:`~dphawkes_core.evaluation.lag_average.StepKernels` (e.g. the estimate averaged over lags),
        each drawn as a step line over its bins. The integrated-kernel view omits them: averaging over lags
        keeps each kernel's integral.
    colors : dict, optional
        Label -> colour (:func:`method_color` of the method each series comes from); other labels take the
        palette in order.
    bands : dict, optional
        Label -> ``(low, high, colour)`` with ``(d, d, p)`` arrays: a shaded band per cell (e.g. the spread of
        several noise draws), drawn under the estimates.
    dashes : dict, optional
        Label -> Plotly dash style (e.g. ``"dash"`` for a reference).
    time_unit : str
        The data's time unit, for the lag axis ("lag t (d)").
    title : str, optional
        Replaces the default title.
    """
    names = [str(n) for n in names]
    d = len(names)
    if d > MAX_GRID_DIM:
        return kernel_mass_heatmaps(lag_grid, estimates, names, scenario)
    fine = np.linspace(0.0, float(lag_grid[-1]), TRUTH_POINTS + 1)[1:]
    truth = scenario.kernel_values(fine) if scenario is not None else None
    series = _CellSeries(estimates, steps or {}, bands or {}, colors or {}, dashes or {})
    traces = []
    for i in range(d):
        for j in range(d):
            subplot = _axis_suffix(i * d + j + 1)  # cell (i, j) is subplot i·d + j + 1
            traces += [{**trace, "xaxis": f"x{subplot}", "yaxis": f"y{subplot}"}
                       for trace in _cell_traces(lag_grid, names, i, j, fine, truth, series)]
    return go.Figure(data=traces, layout=copy.deepcopy(_grid_layout(tuple(names), title, time_unit)))


@functools.lru_cache(maxsize=32)
def _grid_layout(names: tuple, title: str | None, time_unit: str) -> dict:
    """The layout of a d×d kernel grid (its subplots, headers, title, legend and axes), as a dict: it depends on
    the dimension names, title and time unit only, so every session's estimate on the same data reuses it (built
    once; Plotly's subplot set-up and layout updates are most of a grid's cost)."""
    d = len(names)
    row_px = 200 if d <= 3 else 150
    height = d * row_px + 200
    fig = make_subplots(rows=d, cols=d, shared_xaxes=True, horizontal_spacing=min(0.08, 0.3 / max(d - 1, 1)),
                        vertical_spacing=24 / height)
    _label_grid(fig, list(names))
    fig.update_layout(
        title={"text": title or "Kernels h<sub>ij</sub>(t): column = source j (from), row = affected dimension i (to)"},
        height=height,
        margin={"t": 110, "b": 90, "r": 70, "l": 60},
        legend={"orientation": "h", "y": 0, "yanchor": "bottom", "yref": "container", "x": 0.5, "xanchor": "center"},
    )
    fig.update_xaxes(title_text=_lag_title(time_unit), row=d)
    fig.update_xaxes(nticks=6 if d <= 3 else 4, tickfont={"size": 11})
    fig.update_yaxes(nticks=5 if d <= 3 else 4, tickfont={"size": 10})
    fig = fit_titles(fig, FULL_WIDTH)
    layout = fig.to_dict()["layout"]
    del layout["template"]  # the default template: a new figure sets it from Plotly's own validated copy
    return layout


@dataclass(frozen=True)
class _CellSeries:
    """What every cell of a kernel grid draws: the estimates, step estimates and bands by label, and their styles."""

    estimates: dict
    steps: dict
    bands: dict
    colors: dict
    dashes: dict


def _cell_traces(lag_grid, names: list, i: int, j: int, fine, truth, series: _CellSeries) -> list:
    """The traces of cell ``(i, j)`` as dicts (validated once, by the figure that holds them), in drawing order: the
    truth, the bands, the estimates, the step estimates (the first cell's carry the legend)."""
    first = i == 0 and j == 0
    pair = f"from {names[j]} to {names[i]}<br>h(%{{x:.3g}}) = %{{y:.3g}}"
    traces = []
    if truth is not None:
        traces.append(dict(type="scatter", x=fine, y=truth[i, j], mode="lines", name="truth", legendgroup="truth",
                                 showlegend=first, line={"color": TRUTH_COLOR, "width": 2},
                                 hovertemplate=pair + "<extra>truth</extra>"))
    for label, (low, high, color) in series.bands.items():
        traces.append(dict(type="scatter", x=lag_grid, y=np.asarray(high)[i, j], mode="lines", line={"width": 0},
                                 legendgroup=label, showlegend=False, hoverinfo="skip"))
        traces.append(dict(type="scatter", x=lag_grid, y=np.asarray(low)[i, j], mode="lines", line={"width": 0},
                                 fill="tonexty", fillcolor=rgba(color, 0.22), name=label, legendgroup=label,
                                 showlegend=first, hoverinfo="skip"))
    for n_label, (label, values) in enumerate(series.estimates.items()):
        traces.append(dict(type="scatter", x=lag_grid, y=np.asarray(values)[i, j], mode="lines+markers", name=label,
                                 legendgroup=label, showlegend=first, marker={"size": 3},
                                 line={"color": _color(label, n_label, series.colors), "width": 1.5,
                                       "dash": series.dashes.get(label, "solid")},
                                 hovertemplate=pair + f"<extra>{label}</extra>"))
    for n_label, (label, step) in enumerate(series.steps.items(), start=len(series.estimates)):
        traces.append(dict(type="scatter", x=step.edges, y=np.append(step.values[i, j], step.values[i, j, -1]),
                                 mode="lines",
                                 line={"shape": "hv", "color": _color(label, n_label, series.colors), "width": 2},
                                 name=label, legendgroup=label, showlegend=first,
                                 hovertemplate=f"from {names[j]} to {names[i]}<br>h = %{{y:.3g}} on the bin "
                                 f"starting at t = %{{x:.3g}}<extra>{label}</extra>"))
    return traces


def _label_grid(fig: go.Figure, names: list) -> None:
    """Column headers "from j" above the top row, row labels "to i" right of the last column."""
    d = len(names)
    for k in range(d):
        top, right = k + 1, k * d + d  # subplot numbers of (row 1, col k+1) and (row k+1, col d)
        fig.add_annotation(text="from " + short_label(names[k]), showarrow=False, font={"size": 12},
                           xref=f"x{_axis_suffix(top)} domain", x=0.5, xanchor="center",
                           yref=f"y{_axis_suffix(top)} domain", y=1, yanchor="bottom", yshift=4)
        fig.add_annotation(text="to " + short_label(names[k]), showarrow=False, font={"size": 12}, textangle=90,
                           xref=f"x{_axis_suffix(right)} domain", x=1, xanchor="left", xshift=6,
                           yref=f"y{_axis_suffix(right)} domain", y=0.5, yanchor="middle")


def _axis_suffix(subplot: int) -> str:
    return "" if subplot == 1 else str(subplot)


def kernel_mass_heatmaps(lag_grid: np.ndarray, estimates: dict, names, scenario: Scenario | None = None) -> go.Figure:
    """Integrated kernels ``Σ_k h_ij(kΔ)·Δ`` (≈ the expected number of events in i triggered by one in j)
    as one heatmap per estimate (and the truth when known), side by side on one colour scale.

    Used by :func:`kernel_grid` when there are too many dimensions for a grid of curves.
    """
    names = [str(n) for n in names]
    d = len(names)
    bin_size = float(lag_grid[0])
    panels = {label: np.asarray(values).sum(axis=2) * bin_size for label, values in estimates.items()}
    if scenario is not None:
        panels["truth"] = scenario.kernel_values(np.asarray(lag_grid, float)).sum(axis=2) * bin_size
    fig = make_subplots(rows=1, cols=len(panels), subplot_titles=list(panels), horizontal_spacing=0.04)
    ticks = names if max(len(n) for n in names) <= 12 else [str(k) for k in range(1, d + 1)]  # full names in hover
    for col, (label, mass) in enumerate(panels.items(), start=1):
        fig.add_trace(go.Heatmap(z=mass, x=names, y=names, coloraxis="coloraxis", name=label,
                                 hovertemplate="from %{x} to %{y}<br>∫h = %{z:.3g}<extra>" + label + "</extra>"),
                      row=1, col=col)
    fig.update_xaxes(tickvals=names, ticktext=ticks, tickangle=-60,
                     title_text="from j (source)" + (", numbered 1…d: hover for names" if ticks is not names else ""))
    fig.update_yaxes(tickvals=names, ticktext=ticks, autorange="reversed")
    fig.update_yaxes(title_text="to i (affected)", col=1)
    fig.update_layout(title=f"Integrated kernels Σ h<sub>ij</sub>(kΔ)·Δ — {d} dimensions are too many for a grid "
                            "of curves", coloraxis={"colorscale": "RdBu", "cmid": 0, "colorbar": {"title": "∫h"}},
                      height=260 + 14 * d, margin={"t": 80})
    return fit_titles(fig, FULL_WIDTH)


def baseline_chart(names, estimates: dict, truth=None, *, colors: dict | None = None,
                   errors: dict | None = None, time_unit: str = "") -> go.Figure:
    """Grouped bars of the baselines ``η`` per dimension: each estimate and the truth when known; ``errors``
    (label -> ``(low, high)`` per dimension) draws the spread of several noise draws as error bars."""
    names = list(names)
    traces = []
    if truth is not None:
        traces.append({"type": "bar", "x": names, "y": np.asarray(truth, float), "name": "truth",
                       "marker": {"color": TRUTH_COLOR}})
    for n_label, (label, values) in enumerate(estimates.items()):
        values = np.asarray(values, float)
        bar = {"type": "bar", "x": names, "y": values, "name": label,
               "marker": {"color": _color(label, n_label, colors)}}
        if errors and label in errors:
            low, high = (np.asarray(v, float) for v in errors[label])
            bar["error_y"] = {"type": "data", "symmetric": False, "array": np.maximum(high - values, 0),
                              "arrayminus": np.maximum(values - low, 0), "color": TRUTH_COLOR}
        traces.append(bar)
    rate = f"rate (events / {time_unit})" if time_unit else "rate"
    return fit_titles(go.Figure(data=traces, layout={  # built at once: Plotly validates each property once
        "title": {"text": "Baselines η"}, "barmode": "group", "height": 320, "margin": {"t": 50, "b": 40},
        "xaxis": {"title": {"text": "dimension"}, "type": "category"}, "yaxis": {"title": {"text": rate}}}),
        HALF_WIDTH)


def loss_curve(histories: dict, colors: dict | None = None) -> go.Figure:
    """Paper loss ``L(U_k)`` against iteration k for each labelled history (log scale when positive).

    The loss ``‖UA − b‖²_F / 2`` is 0 at the exact least-squares solution, so CLS is not drawn as a
    reference: the curve shows how far the noisy iterates are from solving the normal equations. Only
    iterative methods have a curve (see :func:`dphawkes_app.guidance.loss_note` for the others); the
    x-axis spans iterations 0 … K.
    """
    traces, positive, longest = [], True, 1
    for n_label, (label, history) in enumerate(histories.items()):
        y = np.asarray(history, float)
        positive &= bool(np.all(y > 0))
        longest = max(longest, y.size)
        traces.append({"type": "scatter", "x": np.arange(y.size), "y": y, "name": label,
                       "mode": "lines" if y.size > 1 else "markers", "line": {"color": _color(label, n_label, colors)}})
    return fit_titles(go.Figure(data=traces, layout={  # built at once: Plotly validates each property once
        "title": {"text": "Loss L(U<sub>k</sub>) = ‖U<sub>k</sub>A − b‖<sup>2</sup><sub>F</sub> / 2"},
        "xaxis": {"title": {"text": "iteration k"}, "range": [0, max(longest - 1, 1)]},
        "yaxis": {"title": {"text": "loss"}, "type": "log" if positive else "linear",
                  "exponentformat": "power"},  # 3·10⁻⁴, not "300μ" (μ is also μ-GDP on these pages)
        "height": 320, "margin": {"t": 50, "b": 40}}), HALF_WIDTH)
