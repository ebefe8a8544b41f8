"""One colour per method on every page: every trace drawn for a method, on any page's figure, is in that method's
colour of the one palette (:mod:`dphawkes_app.figures.palette`), and the palette is colour-blind safe (no two
method colours merge under the common colour-vision deficiencies)."""

from __future__ import annotations

import re

import numpy as np
import pytest
from app_tools import ROOT, TIMEOUT, figures, open_estimate
from conftest import no_problems
from streamlit.testing.v1 import AppTest

from dphawkes_app.figures.palette import METHOD_PALETTE, method_color
from dphawkes_core.estimators import get_family, method_labels, method_names
from dphawkes_core.estimators.registry import reference_method

# the Estimate page's series named by role, not by method: the estimate (and its σ² = 0 line) and the reference
ESTIMATE_ROLES = ("estimate", "σ² = 0, same post-processing")
REFERENCE_ROLE = "non-private"
SWEEP = (("number_input", "pu_events", 300), ("number_input", "pu_runs", 1), ("text_input", "pu_levels_epsilon", "1"),
         ("number_input", "pu_iters", 20))


def trace_colour(trace: dict) -> str | None:
    """The colour a trace is drawn in (``#RRGGBB``; a shade's opacity dropped): its line's, else its markers' (a
    box or bar), else its fill's."""
    for colour in ((trace.get("line") or {}).get("color"), (trace.get("marker") or {}).get("color"),
                   trace.get("fillcolor")):
        if isinstance(colour, str):
            rgba = re.fullmatch(r"rgba\((\d+),(\d+),(\d+),[\d.]+\)", colour.replace(" ", ""))
            return "#" + "".join(f"{int(v):02X}" for v in rgba.groups()) if rgba else colour.upper()
    return None


def trace_method(trace: dict, roles: dict) -> str | None:
    """The method a trace is drawn for, read from its legend name (a family's label, possibly with
    "(non-private)" or ", Δ=…" after it) or its legend group (a method's name), or from the page's roles."""
    by_label = {label: name for name, label in method_labels().items()}
    name = re.sub(r"( \(non-private\)|, Δ=.*)$", "", str(trace.get("name", "")))
    if name in roles:
        return roles[name]
    if name in by_label:
        return by_label[name]
    group = trace.get("legendgroup")
    return group if group in method_names() else None


def method_colours(at: AppTest, roles: dict | None = None) -> dict[str, set[str]]:
    """``{method: colours}`` of every method's traces on the page's figures."""
    found: dict[str, set[str]] = {}
    for figure in figures(at):
        for trace in figure["data"]:
            method, colour = trace_method(trace, roles or {}), trace_colour(trace)
            if method is not None and colour is not None:
                found.setdefault(method, set()).add(colour)
    return found


def pages_colours() -> list[tuple[str, dict]]:
    """Each page with method traces, in its default state (the Privacy–utility page after a small sweep)."""
    home = AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT).run()
    estimate = open_estimate(preset="works")
    chosen = {label: name for name, label in method_labels().items()}[estimate.selectbox(key="method").value]
    roles = {role: chosen for role in ESTIMATE_ROLES} | {REFERENCE_ROLE: reference_method(get_family(chosen))}
    sweep = AppTest.from_file(str(ROOT / "pages" / "3_Privacy_utility.py"), default_timeout=TIMEOUT).run()
    for kind, key, value in SWEEP:
        getattr(sweep, kind)(key=key).set_value(value).run()
    sweep.button(key="pu_run").click().run()
    for at in (home, estimate, sweep):
        no_problems(at)
    return [("Home", method_colours(home)), ("Estimate", method_colours(estimate, roles)),
            ("Privacy–utility", method_colours(sweep))]


def test_each_method_has_one_colour_on_every_page():
    seen = pages_colours()
    assert all(colours for _, colours in seen), "every page draws some method"
    methods = set().union(*(colours for _, colours in seen))
    assert len(methods) >= 3  # the reference, the estimate's method and the sweep's private methods at least
    for page, colours in seen:
        for method, drawn in colours.items():
            assert drawn == {method_color(method).upper()}, f"{page}: {method} drawn in {drawn}"


def _linear(channel: np.ndarray) -> np.ndarray:
    return np.where(channel <= 0.04045, channel / 12.92, ((channel + 0.055) / 1.055) ** 2.4)


def _rgb(colour: str) -> np.ndarray:
    return np.array([int(colour[k:k + 2], 16) for k in (1, 3, 5)]) / 255


# Machado, Oliveira & Fernandes (2009), severity 1.0: linear-RGB simulation of the three dichromacies
DICHROMACIES = {
    "protanopia": np.array([[0.152286, 1.052583, -0.204868], [0.114503, 0.786281, 0.099216],
                            [-0.003882, -0.048116, 1.051998]]),
    "deuteranopia": np.array([[0.367322, 0.860646, -0.227968], [0.280085, 0.672501, 0.047413],
                              [-0.011820, 0.042940, 0.968881]]),
    "tritanopia": np.array([[1.255528, -0.076749, -0.178779], [-0.078411, 0.930809, 0.147602],
                            [0.004733, 0.691367, 0.303900]]),
}


def _lab(linear_rgb: np.ndarray) -> np.ndarray:
    """CIELAB (D65) of linear sRGB."""
    xyz = np.array([[0.4124, 0.3576, 0.1805], [0.2126, 0.7152, 0.0722], [0.0193, 0.1192, 0.9505]]) @ linear_rgb
    xyz = xyz / np.array([0.95047, 1.0, 1.08883])
    f = np.where(xyz > (6 / 29) ** 3, np.cbrt(xyz), xyz / (3 * (6 / 29) ** 2) + 4 / 29)
    return np.array([116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2])])


@pytest.mark.parametrize("vision", ["typical", *DICHROMACIES])
def test_the_method_colours_stay_apart_under_colour_blindness(vision):
    """Every pair of the registered methods' colours stays at least ΔE 10 apart (CIELAB) as seen with typical
    vision and under each simulated dichromacy."""
    colours = [METHOD_PALETTE[i % len(METHOD_PALETTE)] for i in range(len(method_names()))]
    matrix = DICHROMACIES.get(vision, np.eye(3))
    seen = [_lab(np.clip(matrix @ _linear(_rgb(c)), 0, 1)) for c in colours]
    closest = min(np.linalg.norm(a - b) for k, a in enumerate(seen) for b in seen[k + 1:])
    assert closest >= 10, f"{vision}: two method colours are ΔE {closest:.1f} apart"
