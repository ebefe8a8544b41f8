"""AppTests of the first-visit fixes (issue 12): readable kernel grids, honest links, cost prediction,
negative baselines, no meaningless loss chart, data-scaled defaults, consistent text, a quiet sweep."""

import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest
from conftest import no_problems
from streamlit.testing.v1 import AppTest

from dphawkes_core.datasets import simulate_dataset
from dphawkes_core.events import from_arrays
from dphawkes_core.guidance import (count_noun, loss_note, negative_baseline_note, nice_number, support_note,
                                    time_scale)
from dphawkes_core.kernels import get_scenario
from dphawkes_core.url_state import (DataLink, data_params, fallback_note, ignored_note, ignored_params,
                                     parse_data_params)

ROOT = Path(__file__).resolve().parent.parent
TIMEOUT = 180

pytestmark = pytest.mark.usefixtures("clear_streamlit_caches")


def open_app_page(path: str, **query) -> AppTest:
    """Open the app (so ``ui_common`` resolves), then the page, with ``query`` in the URL."""
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT)
    at.query_params.update(query)
    at.run()
    if path != "app.py":
        at.switch_page(path)
        at.run()
    return at


def figures(at: AppTest) -> list[dict]:
    return [json.loads(chart.proto.spec) for chart in at.get("plotly_chart")]


def test_a_sweep_leaves_no_streamlit_context_warnings_in_the_log(capfd):
    at = open_app_page("pages/3_Privacy_utility.py")
    at.number_input(key="pu_events").set_value(300)
    at.text_input(key="pu_levels_sigma2").set_value("0, 1")
    at.text_input(key="pu_bins").set_value("0.5, 1")
    at.number_input(key="pu_iters").set_value(20)
    at.run()
    capfd.readouterr()  # AppTest's own start-up, before the sweep
    at.button(key="pu_run").click().run()
    no_problems(at)
    assert len(at.session_state["sweep_store"]) == 6 * 3  # cls + pgd, 2 levels, 2 Δ, 3 runs
    log = "".join(capfd.readouterr())
    assert "ScriptRunContext" not in log and "No runtime found" not in log, log[:500]


# --- core pieces the pages call -------------------------------------------------------------------------


def test_count_noun_and_nice_numbers():
    assert (count_noun(1, "event"), count_noun(2, "event"), count_noun(1500, "event")) == \
        ("1 event", "2 events", "1,500 events")
    assert [nice_number(x) for x in (0.375, 15, 0.146, 7, 1.0)] == [0.5, 20, 0.2, 5, 1]


def test_time_scale_follows_the_mean_gap_between_events():
    # 400 events on [0, 2000] in two sequences of 1000: mean gap 5 time units
    first = from_arrays([np.linspace(1, 999, 100), np.linspace(2, 998, 100)], end_time=1000.0)
    second = from_arrays([np.linspace(1, 999, 150), np.linspace(3, 997, 50)], end_time=1000.0)
    events = dataclasses.replace(first, sequences=first.sequences + second.sequences)
    assert events.n_events == 400
    scale = time_scale(events)
    assert scale.mean_gap == pytest.approx(5.0)
    assert (scale.bin_size, scale.support) == (1.0, 50.0)  # 5/4 → 1 and 10·5 = 50
    assert "mean time between events (5)" in scale.describe()


def test_support_shorter_than_a_bin_is_said_not_silently_raised():
    assert "shorter than one bin" in support_note(5, 10) and "covers 10" in support_note(5, 10)
    assert "17 lags cover 5.1" in support_note(5, 0.3)
    assert support_note(5, 0.1) is None and support_note(3, 0.1) is None


def test_negative_baseline_note_names_only_the_negative_rates():
    assert negative_baseline_note([0.2, 0.1], ["a", "b"]) is None
    note = negative_baseline_note([0.2, -0.12], ["a", "b"])
    assert "η of b = -0.12" in note and "η of a" not in note and "cannot be below zero" in note


def test_loss_note_only_for_one_shot_methods():
    assert loss_note("pgd") is None and loss_note("cg") is None and loss_note("pgd-clip") is None
    assert "CLS" in loss_note("cls") and "DP-SSP" in loss_note("ssp")


def test_data_params_round_trip_through_a_link():
    dataset = simulate_dataset(get_scenario("paper-4d"), n_events=300, seed=2)
    params = data_params(dataset)
    assert params == {"data": "paper-4d", "n": "300", "dseed": "2"}
    assert parse_data_params(params, []) == DataLink(scenario="paper-4d", n_events=300, seed=2)
    horizon = simulate_dataset(get_scenario("paper-2d"), end_time=50.0, seed=0)
    assert parse_data_params(data_params(horizon), []) == DataLink(scenario="paper-2d", end_time=50.0, seed=0)
    assert parse_data_params({"data": "sample", "name": "quakes"}, ["quakes"]) == DataLink(sample="quakes")
    assert parse_data_params({"method": "CLS"}, []) is None


@pytest.mark.parametrize("params, words", [
    ({"data": "upload", "file": "mine.csv"}, "uploaded file (“mine.csv”)"),
    ({"data": "custom"}, "built on the Data page"),
    ({"data": "sample", "name": "gone"}, "“gone”, which is not in this app's data directory"),
    ({"data": "paper-9d"}, "“paper-9d”"),
    ({"data": "paper-2d", "n": "many"}, "n=many"),
    ({"data": "paper-2d", "n": "-5"}, "out of range"),
])
def test_links_that_cannot_be_reproduced_say_why(params, words):
    link = parse_data_params(params, ["quakes"])
    assert link.scenario is None and link.sample is None and words in link.problem
    assert fallback_note(link.problem, "paper-2d").endswith("; showing paper-2d instead.")


def test_ignored_params_are_the_ones_the_widgets_did_not_take():
    link = {"method": "bogus", "eps": "-1", "dt": "abc", "K": "50", "s": "5", "r": "0.3"}
    values = {"method": "DP-PGD", "eps": 1.0, "dt": 0.1, "K": 50, "s": 5.0}  # r: widget not drawn
    assert ignored_params(link, values) == ["method=bogus", "eps=-1", "dt=abc"]
    assert "method=bogus, eps=-1, dt=abc" in ignored_note(ignored_params(link, values))
    assert ignored_note([]) is None
