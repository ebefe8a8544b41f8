"""No figure's title or axis title is cut at the widths the app draws it at (a 1100 px window with the sidebar
open; 1280 px is wider): every line of every title fits its room by the measured width of the theme's characters.
The Chromium check of the same in the real pages is in ``test_figure_titles_browser.py``."""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from dphawkes_app.figures import audit, budget, data, kernels, privacy, sweep
from dphawkes_app.figures import text_fit as fit
from dphawkes_core.data.io import from_arrays
from dphawkes_core.data.kernels import get_scenario

ROOT = Path(__file__).resolve().parents[2]
FULL_WIDTH, HALF_WIDTH, TITLE_FONT, AXIS_FONT = fit.FULL_WIDTH, fit.HALF_WIDTH, fit.TITLE_FONT, fit.AXIS_FONT
axes, axis_room, text_width, visible_lines, wrap = fit.axes, fit.axis_room, fit.text_width, fit.visible_lines, fit.wrap
ESTIMATE_TITLE = ("Kernels h<sub>ij</sub>(t): estimate = exact event times (continuous-time least squares), "
                  "non-private = CLS — column = source j (from), row = affected dimension i (to)")


def sweep_frame() -> pd.DataFrame:
    rows = []
    for method in ("cls", "pgd", "ssp", "ctls"):
        for dt in (0.5, 1.0):
            for level in ((None,) if method == "cls" else (0.1, 1.0, 10.0)):
                for run in range(3):
                    error = 0.2 + 0.1 * run + (0 if level is None else 1 / level / 10)
                    rows.append({"method": method, "bin_size": dt, "privacy": "epsilon", "level": level or 0.0,
                                 "epsilon": level, "epsilon_paper": level if level else math.inf,
                                 "relative_error": error, "relative_error_paper": error / 10,
                                 "kernel_function_error": error, "rmse": 1 + error, "heldout_gain": 0.3 - error,
                                 "zero_estimate_relative_error": 1.0, "zero_estimate_relative_error_paper": 0.1,
                                 "poisson_rmse": 2.0, "n_events_requested": 1000 * (1 + run)})
    return pd.DataFrame(rows)


def events():
    rng = np.random.default_rng(3)
    return dataclasses.replace(from_arrays([np.sort(rng.uniform(0, 100, 700)), np.sort(rng.uniform(0, 100, 300))],
                                           end_time=100.0, names=["Z0 lat 36.004-37.203N", "Z1 lat 37.203-38.402N"]),
                               time_unit="d")


def figures():
    """Every figure builder of the app, with inputs like the pages' (long titles and labels included), and the
    width it is drawn at."""
    scenario = get_scenario("paper-2d")
    lag_grid = 0.5 * np.arange(1, 11)
    truth = scenario.true_H(0.5, 10)[:, :-1].reshape(2, 2, 10, order="F")
    many = np.zeros((8, 8, 10))
    table = json.loads((ROOT / "sample_data" / "privacy_cost.json").read_text())
    frame = sweep_frame()
    result = SimpleNamespace(scores_d=np.linspace(0, 1, 50), scores_d_prime=np.linspace(0.2, 1.2, 50), threshold=0.6,
                             epsilon_by_calibration={"formal": 1.0, "paper": 0.31, "classic": 1.2},
                             calibration="formal", confidence=0.95, epsilon_audited=0.4, violated=False)
    ev = events()
    yield "kernel grid", FULL_WIDTH, kernels.kernel_grid(lag_grid, {"estimate": truth}, ev.names, scenario,
                                                         time_unit="d")
    yield "kernel grid, the Estimate page's title", FULL_WIDTH, kernels.kernel_grid(
        lag_grid, {"estimate": truth, "non-private": truth}, ev.names, time_unit="d", title=ESTIMATE_TITLE)
    yield "integrated kernels", FULL_WIDTH, kernels.kernel_mass_heatmaps(lag_grid, {"estimate": many},
                                                                         [f"dimension {k}" for k in range(8)])
    yield "baselines", HALF_WIDTH, kernels.baseline_chart(ev.names, {"estimate": [0.1, 0.2]}, time_unit="d")
    yield "loss", HALF_WIDTH, kernels.loss_curve({"estimate": np.linspace(1, 0.1, 20)})
    for epsilon in (0.1, 1.0, 10.0):
        z = float(table["multipliers"][f"{epsilon:g}"])
        yield f"ε picture at {epsilon:g}", HALF_WIDTH, privacy.epsilon_picture(epsilon, z, 1e-5)
    for metric in privacy.COST_METRICS:
        yield f"privacy cost, {metric}", FULL_WIDTH, privacy.privacy_cost_figure(
            table["rows"], "Error against ε on 50,000 simulated events of paper-2d (the default preset)", metric)
    for metric in sweep.METRIC_LABELS:
        yield f"boxplot, {metric}", FULL_WIDTH, sweep.boxplot_figure(frame, metric)
        yield f"trade-off, {metric}", FULL_WIDTH, sweep.tradeoff_figure(frame, metric)
        yield f"data size, {metric}", FULL_WIDTH, sweep.data_size_figure(frame, metric)
    yield "kernel figure", FULL_WIDTH, sweep.kernel_figure({"true_grid": lag_grid, "true_values": lag_grid,
                                                            "lag_grid": lag_grid, "curves": {"a": lag_grid},
                                                            "kernel": "h12"})
    yield "raster", FULL_WIDTH, data.event_raster(ev, max_points=100)
    yield "counting", FULL_WIDTH, data.counting_process(ev, max_points=100)
    yield "bin counts", FULL_WIDTH, data.bin_heatmap(np.ones((5000, 2), int), 0.02, ev.names, max_columns=100,
                                                     time_unit="d")
    yield "audit outputs", HALF_WIDTH, audit.audit_distributions(result)
    yield "audit ε", HALF_WIDTH, audit.audit_epsilons(result)
    yield "budget", FULL_WIDTH, budget.budget_figure([0.5, 0.9, 1.2], [0.5, 1.0, 1.5], 3.0)


FIGURES = list(figures())


@pytest.mark.parametrize(("name", "width", "fig"), FIGURES, ids=[f[0] for f in FIGURES])
def test_every_title_line_fits_its_room(name, width, fig):
    for line in visible_lines(fig.layout.title.text or ""):
        assert text_width(line, TITLE_FONT) <= width - 2 * fit.TITLE_PAD, line
    for letter in ("x", "y"):
        for axis in axes(fig, letter):
            room = axis_room(fig, axis, letter, width)
            for line in visible_lines(axis.title.text or ""):
                assert text_width(line, AXIS_FONT) <= room, (letter, line, room)


def test_a_time_axis_names_the_data_time_unit():
    ev = events()
    assert data.event_raster(ev).layout.xaxis.title.text == "time (d)"
    assert data.bin_heatmap(np.ones((10, 2), int), 0.5, ev.names, time_unit="d").layout.xaxis.title.text == (
        "bin start time (d)")
    grid = kernels.kernel_grid(0.5 * np.arange(1, 4), {"estimate": np.zeros((2, 2, 3))}, ev.names, time_unit="d")
    assert {axis.title.text for axis in axes(grid, "x") if axis.title.text} == {"lag t (d)"}
    assert kernels.baseline_chart(ev.names, {"estimate": [1, 2]}, time_unit="d").layout.yaxis.title.text == (
        "rate (events / d)")


def test_wrapping_keeps_every_word_and_its_tags():
    wrapped = wrap(ESTIMATE_TITLE, 300, TITLE_FONT)
    assert wrapped.replace("<br>", " ") == ESTIMATE_TITLE
    assert all(text_width(line, TITLE_FONT) <= 300 for line in visible_lines(wrapped))
    assert wrap("short", 300, TITLE_FONT) == "short"
    assert wrap("a-very-long-word-that-cannot-break short", 50, TITLE_FONT).split("<br>")[0] == (
        "a-very-long-word-that-cannot-break")


def test_the_margin_grows_with_the_lines_added():
    plain = kernels.kernel_grid(0.5 * np.arange(1, 4), {"estimate": np.zeros((2, 2, 3))}, ["a", "b"], title="short")
    long = kernels.kernel_grid(0.5 * np.arange(1, 4), {"estimate": np.zeros((2, 2, 3))}, ["a", "b"],
                               title=ESTIMATE_TITLE)
    lines = long.layout.title.text.count("<br>")
    assert lines >= 1 and long.layout.margin.t > plain.layout.margin.t


def test_a_quartile_band_draws_no_markers():
    """The shaded quartile bands are areas: Plotly's default mode would also mark their corners in its default
    colour, stray dots that belong to no method."""
    frame = sweep_frame()
    for fig in (sweep.tradeoff_figure(frame, "relative_error"), sweep.data_size_figure(frame, "relative_error")):
        bands = [t for t in fig.data if t.fill == "toself"]
        assert bands and all(t.mode in ("lines", "none") for t in bands)
