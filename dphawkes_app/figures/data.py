"""Figures of the data (the Data page): the event raster, counting processes and bin counts.

Large data are reduced before plotting so that a figure never carries more than a few thousand points per trace:
the raster shows the first events of a window, counting processes are sampled at evenly spaced event indices
(exact points of the staircase), and bin counts are summed into at most ``max_columns`` columns. Every reduction
is stated in the figure's title.
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from dphawkes_core.data.io import Events
from dphawkes_core.statistics.binning import BinnedCounts, SparseCounts

from .palette import DIMENSION_PALETTE
from .text_fit import FULL_WIDTH, fit_titles


def _time_title(time_unit: str, what: str = "time") -> str:
    """A time axis' title, in the data's time unit when they have one ("time (d)")."""
    return f"{what} ({time_unit})" if time_unit else what


def event_raster(events: Events, sequence: int = 0, max_points: int = 5000) -> go.Figure:
    """Raster plot: one row of tick marks per dimension.

    Parameters
    ----------
    events : Events
        The data.
    sequence : int
        Which sequence to draw.
    max_points : int
        At most this many events are drawn: those of the window ``[0, t*]`` holding the first
        ``max_points`` events.

    Returns
    -------
    plotly.graph_objects.Figure
    """
    seq = events.sequences[sequence]
    total = seq.n_events
    cut = seq.end_time
    if total > max_points:
        all_times = np.sort(np.concatenate([t for t in seq.times if t.size]))
        cut = float(all_times[max_points - 1])
    fig = go.Figure()
    for j, (name, t) in enumerate(zip(events.names, seq.times)):
        shown = t[t <= cut]
        fig.add_trace(go.Scattergl(
            x=shown, y=np.full(shown.size, name), mode="markers", name=name, showlegend=False,
            marker={"symbol": "line-ns-open", "size": 14, "color": DIMENSION_PALETTE[j % len(DIMENSION_PALETTE)]},
            hovertemplate="t=%{x:.4g}<extra>" + name + "</extra>",
        ))
    title = "Event raster"
    if total > max_points:
        title += f" (first {max_points:,} of {total:,} events, t ≤ {cut:.4g})"
    fig.update_layout(title=title, xaxis_title=_time_title(events.time_unit), yaxis_title="dimension",
                      yaxis={"type": "category", "categoryorder": "array", "categoryarray": list(events.names)},
                      height=120 + 40 * events.dim, margin={"t": 50, "b": 40})
    return fit_titles(fig, FULL_WIDTH)


def counting_process(events: Events, sequence: int = 0, max_points: int = 2000) -> go.Figure:
    """Counting processes ``N_j(t)`` of one sequence, one step curve per dimension.

    Each curve keeps at most ``max_points`` of its jump points (evenly spaced in event index),
    so a long curve is drawn through exact points of the staircase.
    """
    seq = events.sequences[sequence]
    fig = go.Figure()
    reduced = False
    for j, (name, t) in enumerate(zip(events.names, seq.times)):
        counts = np.arange(1, t.size + 1)
        if t.size > max_points:
            idx = np.unique(np.linspace(0, t.size - 1, max_points).astype(int))
            t, counts = t[idx], counts[idx]
            reduced = True
        x = np.concatenate([[0.0], t, [seq.end_time]])
        y = np.concatenate([[0], counts, [counts[-1] if counts.size else 0]])
        fig.add_trace(
            go.Scatter(
                x=x,
                y=y,
                mode="lines",
                line={"shape": "hv", "color": DIMENSION_PALETTE[j % len(DIMENSION_PALETTE)]},
                name=name,
            )
        )
    title = "Counting process N(t) per dimension" + (" (sampled jump points)" if reduced else "")
    fig.update_layout(title=title, xaxis_title=_time_title(events.time_unit), yaxis_title="number of events",
                      height=340, margin={"t": 50, "b": 40}, legend_title="dimension")
    return fit_titles(fig, FULL_WIDTH)


def bin_heatmap(counts, bin_size: float, names, max_columns: int = 1500, time_unit: str = "") -> go.Figure:
    """Heatmap of bin counts ``X_k[j]`` (dimensions × bins) of one sequence.

    Parameters
    ----------
    counts : numpy.ndarray or SparseCounts
        ``(n, d)`` integer counts, or the sparse counts of one sequence (any number of bins).
    bin_size : float
        Δ.
    names : sequence of str
        Dimension names.
    max_columns : int
        When ``n`` exceeds it, consecutive bins are summed in groups of ``g = ⌈n / max_columns⌉``.
    time_unit : str
        The data's time unit, for the time axis.
    """
    if not isinstance(counts, SparseCounts):
        counts = SparseCounts.from_binned(BinnedCounts((np.asarray(counts),), bin_size, 0, 0, None))
    n = counts.lengths[0]
    group = max(1, -(-n // max_columns))
    counts = counts.grouped(0, group)
    starts = bin_size * group * np.arange(counts.shape[0])
    fig = go.Figure(go.Heatmap(
        z=counts.T, x=starts, y=list(names), colorscale="Viridis", colorbar={"title": "count"},
        hovertemplate="t=%{x:.4g}<br>dimension %{y}<br>count %{z}<extra></extra>",
    ))
    title = f"Bin counts, Δ = {bin_size:g} ({n:,} bins)"
    if group > 1:
        title += f", summed over groups of {group} bins"
    fig.update_layout(title=title, xaxis_title=_time_title(time_unit, "bin start time"), yaxis_title="dimension",
                      yaxis={"type": "category"}, height=120 + 40 * len(names), margin={"t": 50, "b": 40})
    return fit_titles(fig, FULL_WIDTH)
