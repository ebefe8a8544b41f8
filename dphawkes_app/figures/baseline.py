"""A fitted baseline that follows the clock, over its period (or over a window): one step line per dimension, in the
dimensions' colours (:mod:`dphawkes_core.data.baseline_bins`)."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from dphawkes_core.data.baseline_bins import BaselineProfile

from .palette import DIMENSION_PALETTE
from .text_fit import FULL_WIDTH, fit_titles


def baseline_profile_chart(profile: BaselineProfile, names, time_unit: str = "") -> go.Figure:
    """Each dimension's baseline ``μ_i`` on its K parts, as steps over one period (or over each window, from its
    start to its end, when the parts divide the windows)."""
    bins = profile.bins
    edges = np.linspace(0.0, bins.period if bins.period is not None else 1.0, bins.bins + 1)
    traces = []
    for i, name in enumerate(names):
        values = np.asarray(profile.values[i], float)
        traces.append({"type": "scatter", "x": np.repeat(edges, 2)[1:-1], "y": np.repeat(values, 2), "name": name,
                       "mode": "lines", "line": {"color": DIMENSION_PALETTE[i % len(DIMENSION_PALETTE)]}})
    unit = f" ({time_unit})" if time_unit else ""
    where = (f"time in the period of {bins.period:g}{unit}, from 0 on the data's axis" if bins.period is not None
             else "share of each window, from its start to its end")
    rate = f"rate (events / {time_unit})" if time_unit else "rate"
    return fit_titles(go.Figure(data=traces, layout={
        "title": {"text": f"Baselines μ<sub>i</sub>(t) on {bins.bins} parts: {bins.describe(time_unit)}"},
        "height": 320, "margin": {"t": 50, "b": 40}, "xaxis": {"title": {"text": where}},
        "yaxis": {"title": {"text": rate}, "rangemode": "tozero"}}), FULL_WIDTH)
