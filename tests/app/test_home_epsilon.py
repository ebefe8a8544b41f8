"""The Home page's ε picture and the glossary: a caption computed from what any (ε, δ) guarantee allows (checked
at random ε against independent closed forms), δ drawn as the probability mass where the guarantee may fail,
shaded bands that show or are pointed at, axes that stay the same at every ε; the glossary on every page, each
word explained without its own name, formulas behind a switch."""

import math

import numpy as np
import pytest
from app_tools import ROOT, TIMEOUT, figures, texts
from conftest import no_problems
from scipy.optimize import brentq
from scipy.stats import norm
from streamlit.testing.v1 import AppTest

from dphawkes_app.figures.privacy import PICTURE_X, PICTURE_Y, epsilon_caption, epsilon_picture, percent
from dphawkes_app.glossary import GLOSSARY

PAGES = ["app.py", *(f"pages/{p.name}" for p in sorted((ROOT / "pages").glob("*.py")))]


def gaussian_multiplier(epsilon, delta):
    """σ/sensitivity of the Gaussian mechanism exactly (ε, δ)-DP (Balle & Wang 2018), by root finding."""
    def excess(sigma):
        mu = 1.0 / sigma
        return norm.cdf(mu / 2 - epsilon / mu) - math.exp(epsilon) * norm.cdf(-mu / 2 - epsilon / mu) - delta
    return brentq(excess, 1e-3, 1e4, xtol=1e-13)


@pytest.mark.parametrize("epsilon", np.random.default_rng(34).uniform(0.05, 12.0, 12).round(3).tolist())
def test_the_caption_states_what_epsilon_and_delta_allow_at_random_epsilon(epsilon):
    delta = 1e-5
    multiplier = gaussian_multiplier(epsilon, delta)
    caption = epsilon_caption(epsilon, multiplier, delta)
    # the best guess after a coin flip: (1 + TV)/2 with TV ≤ (e^ε − 1 + 2δ)/(e^ε + 1) (Kairouz et al. 2015)
    bound = (math.exp(epsilon) + delta) / (math.exp(epsilon) + 1)
    assert f"right at most {percent(bound)} of the time" in caption
    assert f"with these Gaussian curves: {percent(norm.cdf(0.5 / multiplier))}" in caption
    assert "δ" in caption and f"{delta:.1e}, is δ" in caption  # the shaded excess is δ itself, not a breach
    says_nobody = "nobody can tell well" in caption
    assert says_nobody == (bound < 0.6)
    if epsilon >= 3:
        assert "reveal almost surely" in caption


def test_the_axes_stay_the_same_and_the_bands_show_or_are_pointed_at():
    ranges = []
    for epsilon in (0.1, 1.0, 10.0):
        fig = epsilon_picture(epsilon, gaussian_multiplier(epsilon, 1e-5), 1e-5).to_dict()
        ranges.append((tuple(fig["layout"]["xaxis"]["range"]), tuple(fig["layout"]["yaxis"]["range"])))
        bands = [s for s in fig["layout"].get("shapes", []) if s["type"] == "rect"]
        arrows = [a for a in fig["layout"].get("annotations", []) if a.get("showarrow")]
        if epsilon == 10.0:  # the bands start at ±(σ²ε) from 1/2, inside the chart: both shaded
            assert len(bands) == 2 and all(PICTURE_X[0] <= b["x0"] < b["x1"] <= PICTURE_X[1] for b in bands)
        else:  # beyond the chart: each pointed at from its edge, with where it starts
            assert not bands and len(arrows) == 2 and all("off the chart" in a["text"] for a in arrows)
    assert len(set(ranges)) == 1


@pytest.mark.parametrize("epsilon", [0.1, 0.2, 0.5, 1.0, 2.0, 3.0, 5.0, 10.0])
def test_the_curves_read_at_every_epsilon_on_the_fixed_axes(epsilon):
    """Both curves stand clear of the bottom (their peak in the upper four fifths of the plot) and inside the
    top, at every ε of the Home slider, on one log axis whose vertical gap between the curves is their ratio."""
    fig = epsilon_picture(epsilon, gaussian_multiplier(epsilon, 1e-5), 1e-5)
    axis = fig.layout.yaxis
    assert axis.type == "log" and list(axis.range) == [math.log10(PICTURE_Y[0]), math.log10(PICTURE_Y[1])]
    low, high = axis.range
    curves = [t for t in fig.data if t.mode == "lines" and (t.name or "").startswith("output on")]
    assert len(curves) == 2
    plot_px = fig.layout.height - fig.layout.margin.t - fig.layout.margin.b
    for curve in curves:
        peak = (math.log10(max(curve.y)) - low) / (high - low)
        assert 0.2 <= peak < 1.0, (epsilon, peak)
        assert peak * plot_px >= 50  # at least 50 px above the bottom of the plot
    # the bands' key is in the legend at every ε (the same legend, so the same plot height); inside a band only "δ"
    key = "shaded or pointed at: where the guarantee can fail (δ)"
    assert [t.name for t in fig.data if t.mode == "markers"] == [key]
    assert all(list(t.text) == ["δ"] for t in fig.data if t.mode == "text")
    x = np.asarray(curves[0].x)
    gap = np.log10(np.asarray(curves[1].y)) - np.log10(np.asarray(curves[0].y))  # decades on the axis
    sigma = gaussian_multiplier(epsilon, 1e-5)
    np.testing.assert_allclose(gap, (x - 0.5) / sigma**2 / math.log(10), rtol=1e-6, atol=1e-12)


def test_home_at_epsilon_ten_does_not_say_nobody_can_tell():
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT).run()
    at.select_slider(key="home_eps").set_value(10.0).run()
    no_problems(at)
    text = next(c.value for c in at.caption if "the axes stay the same at every ε" in c.value)
    assert "nobody can tell" not in texts(at.caption) and "reveal almost surely" in text
    at.toggle(key="home_eps_details").set_value(True).run()  # the rest of the caption, behind "details"
    details = texts(at.caption)
    assert "guarantee allows δ" not in details and "is δ" in details  # δ: the failure mass, never set against a tail
    picture = next(f for f in figures(at) if any((t.get("name") or "").startswith("output on D") for t in f["data"]))
    assert picture["layout"]["xaxis"]["range"] == list(PICTURE_X)


def test_every_glossary_word_is_explained_without_its_own_name():
    names = {"ε", "δ", "σ²", "sensitivity", "count cap", "privacy unit", "kernel", "baseline", "held-out score"}
    assert {t.name.split(" (")[0] for t in GLOSSARY} == names
    for term in GLOSSARY:
        assert term.name.split(" (")[0].lower() not in term.plain.lower(), term.name


@pytest.mark.parametrize("page", PAGES)
def test_the_glossary_is_in_every_page_sidebar_with_formulas_behind_details(page):
    at = AppTest.from_file(str(ROOT / page), default_timeout=TIMEOUT).run()
    no_problems(at)
    sidebar = texts(at.sidebar.markdown)
    assert all(term.plain in sidebar for term in GLOSSARY)
    assert not any(term.formula in texts(at.sidebar.caption) for term in GLOSSARY)
    at.sidebar.toggle(key="glossary_formulas").set_value(True).run()
    assert all(term.formula in texts(at.sidebar.caption) for term in GLOSSARY)
