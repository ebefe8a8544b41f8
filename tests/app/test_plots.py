"""Figure builders: the plotted numbers are the data (or exact reductions of them)."""

import numpy as np
import pandas as pd
import pytest

from dphawkes_app.figures.data import bin_heatmap, counting_process, event_raster
from dphawkes_app.figures.kernels import baseline_chart, kernel_grid, loss_curve, short_label
from dphawkes_app.figures.sweep import log_ticks, tradeoff_figure
from dphawkes_core.data.io import from_arrays
from dphawkes_core.data.kernels import get_scenario


@pytest.fixture
def events():
    rng = np.random.default_rng(3)
    return from_arrays([np.sort(rng.uniform(0, 100, 700)), np.sort(rng.uniform(0, 100, 300))], end_time=100.0,
                       names=["a", "b"])


def test_raster_shows_every_event_when_small(events):
    fig = event_raster(events, max_points=5000)
    assert [tr.name for tr in fig.data] == ["a", "b"]
    for tr, times in zip(fig.data, events.sequences[0].times):
        np.testing.assert_array_equal(np.asarray(tr.x), times)


def test_raster_keeps_exactly_the_first_events_of_a_window(events):
    fig = event_raster(events, max_points=100)
    shown = np.sort(np.concatenate([np.asarray(tr.x) for tr in fig.data]))
    everything = np.sort(np.concatenate(events.sequences[0].times))
    assert shown.size == 100
    np.testing.assert_array_equal(shown, everything[:100])
    assert "first 100 of 1,000" in fig.layout.title.text


def test_counting_process_points_lie_on_the_staircase(events):
    fig = counting_process(events, max_points=50)
    for tr, times in zip(fig.data, events.sequences[0].times):
        x, y = np.asarray(tr.x), np.asarray(tr.y)
        assert x[0] == 0 and y[0] == 0 and x[-1] == events.sequences[0].end_time
        assert y[-1] == times.size  # N(T) is the number of events
        # every interior point (t, k) means t is the k-th event time
        np.testing.assert_array_equal(times[y[1:-1] - 1], x[1:-1])
        assert len(x) <= 52


def test_heatmap_aggregation_preserves_totals():
    counts = np.arange(2 * 1003).reshape(1003, 2) % 5
    fig = bin_heatmap(counts, 0.1, ["x", "y"], max_columns=100)
    z = np.asarray(fig.data[0].z)
    assert z.shape[0] == 2 and z.shape[1] <= 101
    np.testing.assert_array_equal(z.sum(axis=1), counts.sum(axis=0))
    assert "groups of 11 bins" in fig.layout.title.text
    small = bin_heatmap(counts[:50], 0.1, ["x", "y"], max_columns=100)
    np.testing.assert_array_equal(np.asarray(small.data[0].z), counts[:50].T)
    np.testing.assert_allclose(np.asarray(small.data[0].x), 0.1 * np.arange(50))


def test_kernel_grid_cells_hold_the_right_kernels():
    scenario = get_scenario("paper-2d")
    lags = 0.1 * np.arange(1, 51)
    est = np.random.default_rng(0).normal(size=(2, 2, 50))
    fig = kernel_grid(lags, {"estimate": est}, ["1", "2"], scenario)
    assert len(fig.data) == 2 * 2 * 2
    for i in range(2):
        for j in range(2):
            truth_tr, est_tr = fig.data[2 * (2 * i + j)], fig.data[2 * (2 * i + j) + 1]
            # cell (i, j) is subplot number 2i + j + 1 on both axes
            axis = "x" if 2 * i + j == 0 else f"x{2 * i + j + 1}"
            assert truth_tr.xaxis == axis and est_tr.xaxis == axis
            np.testing.assert_allclose(np.asarray(est_tr.y), est[i, j])
            x = np.asarray(truth_tr.x)
            np.testing.assert_allclose(np.asarray(truth_tr.y), scenario.kernels[i][j].value(x))
    # h12 is the box 0.125·1{1 ≤ t ≤ 3}: the (1, 2) cell peaks at 0.125, the (1, 1) cell is zero
    assert np.max(np.asarray(fig.data[2].y)) == pytest.approx(0.125)
    assert np.max(np.abs(np.asarray(fig.data[0].y))) == 0
    assert sum(tr.showlegend for tr in fig.data) == 2  # one legend entry per series


def test_kernel_grid_without_truth_has_only_estimates():
    est = np.ones((3, 3, 4))
    fig = kernel_grid(np.arange(1, 5.0), {"estimate": est, "non-private": 2 * est}, ["a", "b", "c"])
    assert len(fig.data) == 9 * 2
    assert {tr.name for tr in fig.data} == {"estimate", "non-private"}


def test_baseline_and_loss_charts():
    fig = baseline_chart(["1", "2"], {"estimate": [0.2, 0.1]}, truth=(0.25, 0.125))
    assert [tr.name for tr in fig.data] == ["truth", "estimate"]
    np.testing.assert_allclose(np.asarray(fig.data[0].y), [0.25, 0.125])
    loss = loss_curve({"estimate": [4.0, 2.0, 1.0]})
    assert loss.layout.yaxis.type == "log"
    np.testing.assert_array_equal(np.asarray(loss.data[0].x), [0, 1, 2])  # L(U_0) … L(U_K)
    np.testing.assert_array_equal(np.asarray(loss.data[0].y), [4.0, 2.0, 1.0])
    assert loss_curve({"estimate": [1.0, 0.0]}).layout.yaxis.type == "linear"


def test_kernel_grid_labels_rows_and_columns_once_with_full_names_in_hover():
    names = ["Z0 lat 36.004-37.203N", "Z1 lat 37.203-38.402N", "Z2 lat 38.402-39.601N"]
    fig = kernel_grid(0.5 * np.arange(1, 5), {"estimate": np.zeros((3, 3, 4))}, names)
    notes = [a.text for a in fig.layout.annotations]
    assert len(notes) == 2 * 3  # one header per column and one label per row, no title per cell
    assert sorted(t for t in notes if t.startswith("from ")) == sorted(f"from {short_label(n)}" for n in names)
    assert sorted(t for t in notes if t.startswith("to ")) == sorted(f"to {short_label(n)}" for n in names)
    assert all(len(line) <= 18 for n in names for line in short_label(n).split("<br>"))
    # cell (i, j) = subplot 3i + j + 1 shows h_ij: its hover names the full pair
    assert fig.data[3 * 2 + 0].hovertemplate.startswith(f"from {names[0]} to {names[2]}")


def test_short_label_wraps_and_cuts_long_names():
    assert short_label("short") == "short"
    assert short_label("a rather long dimension name", 10) == "a rather<br>long…"


def test_kernel_grid_of_many_dimensions_shows_the_integrated_kernels():
    d, p = 8, 3
    est = np.random.default_rng(1).normal(size=(d, d, p))
    fig = kernel_grid(0.5 * np.arange(1, p + 1), {"estimate": est}, [str(k) for k in range(d)])
    assert [tr.type for tr in fig.data] == ["heatmap"]
    np.testing.assert_allclose(np.asarray(fig.data[0].z), est.sum(axis=2) * 0.5)


def test_epsilon_axis_ticks_are_readable_round_numbers():
    assert log_ticks([0.5, 1, 2, 8]) == [0.1, 0.3, 1, 3, 10]
    assert log_ticks([2, 5, 100]) == [1, 3, 10, 30, 100]
    assert log_ticks([1e-3, 1e6]) == [10.0**e for e in range(-3, 7)]  # only decades when there would be too many
    frame = pd.DataFrame({"method": ["pgd"] * 4 + ["cls"], "bin_size": [0.5] * 5, "level": [0.5, 1, 2, 8, 0],
                          "epsilon_paper": [0.5, 1, 2, 8, np.inf], "relative_error": [0.9, 0.7, 0.5, 0.4, 0.3]})
    fig = tradeoff_figure(frame, "relative_error", "epsilon_paper")
    assert list(fig.layout.xaxis.tickvals) == [0.1, 0.3, 1, 3, 10]
    assert list(fig.layout.xaxis.ticktext) == ["0.1", "0.3", "1", "3", "10"]
    assert fig.data[1].name == "DP-PGD, Δ=0.5"  # the one method naming
