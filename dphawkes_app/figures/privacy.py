"""Plotly figures that explain privacy (the Home page and the ε help): what (ε, δ) bounds, and what privacy
costs in accuracy. Pure functions: numbers in, ``go.Figure`` out."""

from __future__ import annotations

import math

import numpy as np
import plotly.graph_objects as go

from dphawkes_core.errors import DPHawkesError
from dphawkes_core.estimators import get_family
from dphawkes_core.privacy.distinguishability import best_guess_accuracy, best_test_power

from .palette import NEIGHBOUR_COLORS, TRUTH_COLOR, method_color, rgba
from .sweep import log_ticks
from .text_fit import FULL_WIDTH, HALF_WIDTH, fit_titles


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


PICTURE_X = (-4.0, 5.0)  # the released number's axis, in units of what one event moves it: the same at every ε
# The densities' axis, on a log scale, the same at every ε: the peaks run from 0.013 (ε = 0.1) to 0.8 (ε = 10), a
# factor 60 no linear axis shows at once; on a log scale the vertical gap between the curves is their ratio, the
# factor ε bounds.
PICTURE_Y = (10**-2.5, 1.0)
PICTURE_HEIGHT = 420
GUESS_LEVEL = 0.05  # the false-alarm rate of the test named in the caption
ARROW_HEIGHTS = {"high": 0.95, "low": 0.86}  # where on the log axis (0 bottom, 1 top) each off-chart band is named


def tail_cuts(epsilon: float, multiplier: float) -> tuple[float, float]:
    """Where the two curves' ratio reaches e^ε: right of the first, p_D′/p_D > e^ε; left of the second,
    p_D/p_D′ > e^ε (Gaussians of std ``multiplier`` centred at 0 and 1)."""
    return multiplier**2 * epsilon + 0.5, 0.5 - multiplier**2 * epsilon


def epsilon_picture(epsilon: float, multiplier: float, delta: float) -> go.Figure:
    """What ε bounds, for one Gaussian release of a statistic that one event moves by at most 1.

    Two densities: the released number on data D (without the event), centred at 0, and on the neighbour D′
    (with it), centred at 1, both with noise σ = ``multiplier`` (calibrated for (ε, δ)), on axes that stay the
    same at every ε (:data:`PICTURE_X`, :data:`PICTURE_Y`; the densities on a log scale, where the vertical gap
    between the curves is their ratio). An observer sees one output and must guess D or D′:
    at every output y the ratio of the two densities is the factor by which the observer's odds move. It stays
    within e^±ε except in the bands shaded across the chart (or, when they lie beyond it, pointed at from its
    edge): the outputs where the guarantee can fail, whose excess probability is δ.
    """
    sigma = float(multiplier)
    x = np.linspace(*PICTURE_X, 601)
    dens = [np.exp(-0.5 * ((x - centre) / sigma) ** 2) / (sigma * math.sqrt(2 * math.pi)) for centre in (0.0, 1.0)]
    cut_high, cut_low = tail_cuts(epsilon, sigma)
    fig = go.Figure()
    for (label, color), y in zip((("output on D (without the event)", NEIGHBOUR_COLORS[0]),
                                  ("output on D′ (one event more)", NEIGHBOUR_COLORS[1])), dens):
        fig.add_trace(go.Scatter(x=x, y=y, mode="lines", name=label, line={"color": color, "width": 2.5}))
    band = "where the guarantee can fail (δ)"
    fig.add_trace(go.Scatter(x=[None], y=[None], mode="markers", name=f"shaded or pointed at: {band}",  # a key
                             marker={"symbol": "square", "size": 12, "color": rgba(NEIGHBOUR_COLORS[1], 0.35)}))
    for side, start, stop, color in (("high", cut_high, PICTURE_X[1], NEIGHBOUR_COLORS[1]),
                                     ("low", PICTURE_X[0], cut_low, NEIGHBOUR_COLORS[0])):
        if start < stop:  # the band reaches into the chart: shade it over the full height
            fig.add_vrect(x0=start, x1=stop, fillcolor=rgba(color, 0.22), line_width=0, layer="below")
            fig.add_trace(go.Scatter(x=[(start + stop) / 2], y=[PICTURE_Y[1] * 0.6], mode="text", text=["δ"],
                                     showlegend=False, hoverinfo="skip", textfont={"color": color, "size": 15}))

        else:  # beyond the chart: an arrow from the edge says where it starts
            edge = PICTURE_X[1] if side == "high" else PICTURE_X[0]
            cut = cut_high if side == "high" else cut_low
            # in the top band, which no curve reaches when a band lies off the chart (ε ≤ 3: peaks below 0.3),
            # one above the other so that the two never meet on a narrow chart
            fig.add_annotation(x=edge, y=_log_axis_point(ARROW_HEIGHTS[side]), ax=-24 if side == "high" else 24,
                               ay=0, showarrow=True, arrowhead=2, arrowcolor=color,
                               xanchor="right" if side == "high" else "left",
                               text=f"δ {'beyond' if side == 'high' else 'below'} {cut:.3g}, off the chart",
                               font={"color": color, "size": 11})
    fig.update_layout(title="What ε bounds: one release, two neighbouring data sets", height=PICTURE_HEIGHT,
                      xaxis={"title": f"released number (noise σ = {sigma:.3g})", "range": list(PICTURE_X)},
                      yaxis={"title": "density (log scale)", "type": "log", "tickvals": [0.01, 0.1, 1],
                             "ticktext": ["0.01", "0.1", "1"],
                             "range": [math.log10(PICTURE_Y[0]), math.log10(PICTURE_Y[1])]},
                      legend={"orientation": "h", "yref": "container", "y": 0, "yanchor": "bottom"},
                      margin={"t": 50, "b": 110, "l": 60, "r": 20})
    return fit_titles(fig, HALF_WIDTH)


def _log_axis_point(fraction: float) -> float:
    """An annotation's y at ``fraction`` of the picture's log axis (annotations on a log axis take log10 values)."""
    low, high = (math.log10(v) for v in PICTURE_Y)
    return low + fraction * (high - low)


def percent(probability: float) -> str:
    """A probability as a percentage with the digits that tell it from 100 % (``73.1%``, ``99.995%``)."""
    if probability >= 1.0:
        return "100%"
    digits = 1 if probability < 0.99 else math.floor(-math.log10(1.0 - probability)) - 1
    return f"{100 * probability:.{digits}f}%"


def epsilon_caption(epsilon: float, multiplier: float, delta: float) -> str:
    """The picture's caption: how well one output tells D from D′, from the bounds any (ε, δ)-DP release obeys
    (:mod:`dphawkes_core.privacy.distinguishability`), with the pictured Gaussian's own value and what δ is."""
    guess = best_guess_accuracy(epsilon, delta)
    power = best_test_power(epsilon, delta, GUESS_LEVEL)
    gaussian_guess = normal_cdf(0.5 / multiplier)  # the Gaussian's best guess: say D′ when y > 1/2
    if guess < 0.6:
        verdict = "At this ε nobody can tell well, from one output, whether the event is in the data"
    elif guess < 0.9:
        verdict = "At this ε one output may give a hint whether the event is in the data, far from certainty"
    else:
        verdict = "At this ε the guarantee lets one output reveal almost surely whether the event is in the data"
    high, _ = tail_cuts(epsilon, multiplier)
    tail_d_prime, tail_d = normal_cdf((1.0 - high) / multiplier), normal_cdf(-high / multiplier)
    return (f"{verdict}. With ε = {epsilon:g} and δ = {delta:.0e}, anyone who thought it a coin flip and guesses "
            f"from one output is right at most {percent(guess)} of the time (with these Gaussian curves: "
            f"{percent(gaussian_guess)}); a test that wrongly says \"in the data\" {GUESS_LEVEL:.0%} of the time "
            f"catches it at most {percent(power)} of the time. In the shaded bands the curves differ by more than "
            f"e^ε = {odds_text(epsilon)}: beyond {high:.3g}, D′ lands with probability {tail_d_prime:.2e} and D with "
            f"{tail_d:.2e}; what D′'s exceeds e^ε times D's, {tail_d_prime - math.exp(epsilon) * tail_d:.1e}, is δ — "
            "the probability with which the guarantee may fail (the other band likewise, D and D′ swapped).")


COST_METRICS = {"kernel_function_error": "kernel error", "relative_error": "error on the lag grid"}


def privacy_cost_figure(rows, title: str = "", metric: str = "relative_error", height: int = 420) -> go.Figure:
    """Median error against ε (log axis) per private family with its interquartile band, each non-private
    reference as a dashed line and the all-zero estimate (error 1 on both metrics) as a dotted one — every line
    named in the legend, none by an annotation a curve could run through (the paper's gradient methods sit on the
    all-zero line).

    Parameters
    ----------
    rows : iterable of dict
        ``method``, ``epsilon`` (``None`` for a non-private reference) and the error ``metric`` (one per fit).
    metric : str
        ``relative_error`` (on the lag grid) or ``kernel_function_error`` (grid-free: the fair one between
        estimates on exact times and binned ones).
    height : int
        The figure's height in pixels (the Home page's first screen holds it whole).
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
    span = [min(epsilons), max(epsilons)] if epsilons else [0.1, 10.0]
    for method, values in references.items():
        level = float(np.median(values))
        fig.add_trace(go.Scatter(x=span, y=[level, level], mode="lines", name=f"{_label(method)} (non-private)",
                                 line={"color": method_color(method), "dash": "dash", "width": 1.5},
                                 hovertemplate=f"{_label(method)}, no privacy: %{{y:.3g}}<extra></extra>"))
    fig.add_trace(go.Scatter(x=span, y=[1.0, 1.0], mode="lines", name="all-zero estimate (error 1)",
                             line={"color": TRUTH_COLOR, "dash": "dot", "width": 1.5}, hoverinfo="skip"))
    ticks = log_ticks(epsilons)
    fig.update_xaxes(type="log", tickvals=ticks, ticktext=[f"{t:g}" for t in ticks],
                     title_text="ε (formal, δ = 1e-5) — smaller is more private")
    fig.update_yaxes(title_text=f"{COST_METRICS[metric]} (median, quartiles shaded)", rangemode="tozero")
    fig.update_layout(title=title or "What privacy costs", height=height, margin={"t": 50, "b": 40},
                      legend={"orientation": "v", "x": 1.02, "y": 1, "yanchor": "top"})
    return fit_titles(fig, FULL_WIDTH)


def _label(method: str) -> str:
    try:
        return get_family(method).label
    except DPHawkesError:  # a family of the table that is no longer registered: its name
        return method
