"""The app's one palette: every figure takes its colours from here, so a colour means one thing on every page.

All colours are colour-blind safe. Methods use Paul Tol's "muted" qualitative scheme (nine colours told apart
under the common colour-vision deficiencies, https://personal.sron.nl/~pault/), one per estimator family in the
registry's order, so the non-private reference (registered first) is always indigo. Every other role — the
truth, the two neighbouring data sets of a privacy picture, dimensions of the data, noise levels, budget lines —
uses the Okabe–Ito scheme or greys, none of which is a method's colour.
"""

from __future__ import annotations

from dphawkes_core.estimators import method_names

METHOD_PALETTE = ("#332288", "#CC6677", "#117733", "#882255", "#44AA99", "#DDCC77", "#AA4499", "#88CCEE", "#999933")
"""One colour per estimator family, in registry order (:func:`method_color`)."""
UNKNOWN_METHOD_COLOR = "#7f7f7f"
TRUTH_COLOR = "#222222"
"""The true kernels or baseline, and reference lines such as the all-zero estimate."""
NEUTRAL_COLOR = "#9e9e9e"
"""Guides that are neither data nor a method (a naive sum, medians of a panel)."""
NEIGHBOUR_COLORS = ("#0072B2", "#D55E00")
"""D without the event and D′ with it (Okabe–Ito blue and vermillion): the Home picture and the audit."""
VERDICT_COLORS = {"holds": "#0072B2", "violated": "#D55E00", "chosen": "#009E73", "other": "#7f7f7f"}
"""The audit's bars: ε within the claim, above it, the calibration audited and the others."""
HIGHLIGHT_COLOR = "#F0E442"
"""A changed cell of a table (Okabe–Ito yellow): the Home page's neighbouring data set."""
BUDGET_COLORS = {"spent": "#0072B2", "naive": NEUTRAL_COLOR, "budget": "#D55E00"}
DIMENSION_PALETTE = ("#E69F00", "#56B4E9", "#009E73", "#F0E442", "#0072B2", "#D55E00", "#CC79A7", "#000000")
"""Dimensions of the data (raster, counting process): Okabe–Ito."""
LEVEL_PALETTE = ("#E69F00", "#56B4E9", "#009E73", "#0072B2", "#D55E00", "#CC79A7")
"""Noise levels of one method (the Reproduce page's kernels): Okabe–Ito, the colour is the level, not a method."""


def method_color(method: str) -> str:
    """The colour of the family ``method`` (its name): :data:`METHOD_PALETTE` in the registry's order."""
    names = method_names()
    if method not in names:
        return UNKNOWN_METHOD_COLOR
    return METHOD_PALETTE[names.index(method) % len(METHOD_PALETTE)]


def method_colors() -> dict[str, str]:
    """``{name: colour}`` of every registered family."""
    return {name: method_color(name) for name in method_names()}


def rgba(color: str, alpha: float) -> str:
    """``#rrggbb`` as a CSS ``rgba(…)`` with opacity ``alpha`` (bands, shaded areas)."""
    r, g, b = (int(color[k:k + 2], 16) for k in (1, 3, 5))
    return f"rgba({r},{g},{b},{alpha:g})"
