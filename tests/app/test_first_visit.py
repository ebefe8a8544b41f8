"""AppTests of the first-visit fixes: readable kernel grids, honest links, cost prediction,
negative baselines, no meaningless loss chart, data-scaled defaults, consistent text, a quiet sweep."""

import base64
import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest
from app_tools import with_comparison
from conftest import no_problems
from streamlit.testing.v1 import AppTest

from dphawkes_app.controls import calibration_words
from dphawkes_app.guidance import (
    PRIVATE_SCALE_NOTE,
    count_noun,
    loss_note,
    negative_baseline_note,
    support_note,
    time_scale,
)
from dphawkes_app.url_state import DataLink, data_params, fallback_note, ignored_note, ignored_params, parse_data_params
from dphawkes_core.data.datasets import list_samples, simulate_dataset
from dphawkes_core.data.io import from_arrays, load_csv
from dphawkes_core.data.kernels import get_scenario
from dphawkes_core.errors import DataError
from dphawkes_core.estimators import FAMILIES
from dphawkes_core.estimators.cost import estimate_fit_cost
from dphawkes_core.privacy.time_scale import nice_number
from dphawkes_experiments import reproduce

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 180


def open_app_page(path: str, **query) -> AppTest:
    """Open the app (so ``ui_common`` resolves), then the page, with ``query`` in the URL."""
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT)
    at.query_params.update(query)
    at.run()
    if path != "app.py":
        at.switch_page(path)
        at.run()
    return at


def open_page(path: str, **query) -> AppTest:
    """Open ``path`` directly with ``query`` in its URL, as a shared link to that page does."""
    at = AppTest.from_file(str(ROOT / path), default_timeout=TIMEOUT)
    at.query_params.update(query)
    return at.run()


def decode(values):
    """Plotly >= 6 encodes arrays as base64 ``{"dtype", "bdata"}``."""
    if isinstance(values, dict) and "bdata" in values:
        return np.frombuffer(base64.b64decode(values["bdata"]), dtype=values["dtype"])
    return np.asarray(values)


def figures(at: AppTest) -> list[dict]:
    return [json.loads(chart.proto.spec) for chart in at.get("plotly_chart")]


@pytest.mark.slow
def test_a_sweep_leaves_no_streamlit_context_warnings_in_the_log(capfd):
    at = open_app_page("pages/3_Privacy_utility.py")
    at.radio(key="pu_kind").set_value("σ² (noise variance)").run()
    at.multiselect(key="pu_methods").set_value(["cls", "pgd"])
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
    assert ignored_params({"Cauto": "true", "lagmode": "lags p"}, {"Cauto": True, "lagmode": "lags p"}) == []


# --- text: names, wording, figures ----------------------------------------------------------------------


def test_home_page_describes_every_page_and_the_formal_methods():
    at = open_app_page("app.py")
    no_problems(at)
    links = at.main.get("page_link")
    captions = [c.value for c in at.main.caption]
    n_pages = len(list((ROOT / "pages").glob("[0-9]*_*.py")))
    assert len(links) == n_pages
    descriptions = [c for c in captions if not c.startswith(("Bin counts", "A neighbour", "The noise", "Each method",
                                                             "At this ε", "Δ = "))]
    assert len(descriptions) == n_pages and all(len(c) > 40 for c in descriptions)  # a sentence per page
    text = " ".join(m.value for m in at.markdown) + " ".join(captions)
    assert "DP-SSP" in text and "clipped DP-PGD" in text
    assert all(word in text for word in ("sweep", "Figures 1–4", "neighbouring"))


def test_deploy_button_is_hidden():
    import tomllib

    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    assert config["client"]["toolbarMode"] in ("minimal", "viewer")


def test_audit_page_uses_method_names_and_has_no_empty_bar_at_zero():
    at = open_app_page("pages/5_Privacy_audit.py")
    method = at.selectbox(key="au_method")
    private = [family.label for family in FAMILIES.values() if family.privacy.private]  # the registry's private ones
    assert method.options == private and private[:4] == ["DP-PGD", "DP-CG", "DP-SSP", "clipped DP-PGD"]  # labels
    assert all("_" not in w.label.replace("$", "").split("\\")[0] for w in at.number_input)
    at.number_input(key="au_trials").set_value(40).run()
    at.number_input(key="au_K").set_value(5).run()
    at.button(key="au_run").click().run()
    no_problems(at)
    dist, eps = figures(at)
    title = dist["layout"]["title"]["text"]
    assert "<br>" in title and len(title.split("<br>")[0]) <= 45  # the long part on its own line
    bound = at.session_state["audit_result"].epsilon_lower_bound
    bars = eps["data"][0]["y"]
    assert any("audited lower bound" in b for b in bars) == (bound > 0)
    if bound == 0:
        assert "audited lower bound" in eps["layout"]["annotations"][0]["text"]


def test_reproduce_page_in_the_paper_order_with_readable_tables_and_one_claim():
    at = open_app_page("pages/4_Reproduce_paper.py")
    no_problems(at)
    headers = [h.value for h in at.header]
    assert [h.split(":")[0] for h in headers[:4]] == ["Figure 1", "Figure 2", "Figure 3", "Figure 4"]
    at.button(key="run_fig1").click().run()
    no_problems(at)
    claim = reproduce.CLAIMS["1"]
    assert sum(claim in m.value for m in at.markdown) == 1
    table = next(df.value for df in at.dataframe if "σ²" in df.value.columns)
    assert "relative error of this kernel" in table.columns and "_" not in "".join(table.columns)
    assert set(table["fit"]) == {"CLS", "DP-PGD"}


# --- cost model: clipped DP-PGD ---------------------------------------------------------------------------


def test_clipped_pgd_cost_follows_the_informative_rows():
    dense = estimate_fit_cost(15_000, 2, 50, "clipped", 1000, n_events=1000)
    sparse_data = estimate_fit_cost(15_000, 2, 50, "clipped", 1000, n_events=20)  # ≤ 20·51 rows
    assert sparse_data.seconds < dense.seconds / 5
    assert estimate_fit_cost(15_000, 2, 50, "clipped", 2000, n_events=1000).seconds > 1.8 * dense.seconds


@pytest.mark.slow
def test_slow_clipped_pgd_asks_for_confirmation():
    """K = 1000 on the default data took seconds (36 s under load) but was predicted at 1.2 s."""
    at = open_page("pages/2_Estimate.py", preset="fig1")  # paper-2d, 1000 events, Δ = 0.1, s = 5
    assert at.session_state["dataset"].events.n_events == 1000
    method = at.selectbox(key="method")
    method.set_value(next(o for o in method.options if "clip" in o.lower())).run()
    at.number_input(key="C").set_value(3)
    at.number_input(key="K").set_value(100).run()
    no_problems(at)
    assert not any("Heavy fit" in w.value for w in at.warning)
    at.number_input(key="K").set_value(1000).run()
    assert not at.exception
    assert any("Heavy fit" in w.value for w in at.warning), [w.value for w in at.warning]
    assert at.checkbox(key="confirm_heavy").value is False and not at.get("plotly_chart")


# --- Estimate page: links, defaults, notes ----------------------------------------------------------------


def test_bad_link_values_are_named_in_one_line():
    at = open_page("pages/2_Estimate.py", method="bogus", eps="-1", dt="abc", K="50")
    no_problems(at)
    notes = [box.value for box in at.info if box.value.startswith("Ignored")]
    assert len(notes) == 1 and "method=bogus, eps=-1, dt=abc" in notes[0] and "K=" not in notes[0]


def test_a_link_from_uploaded_data_says_why_it_shows_other_data():
    at = open_page("pages/2_Estimate.py", data="upload", file="mine.csv", method="CLS")
    no_problems(at)
    shown = at.session_state["dataset"].label
    assert any("uploaded file (“mine.csv”)" in box.value and f"showing {shown} instead" in box.value
               for box in at.info)


def test_a_link_reproduces_a_real_data_set_with_defaults_not_read_from_it():
    info = next((s for s in list_samples() if s.name == "japan_quakes_zones"), None)
    if info is None:
        pytest.skip("real data directory not available")
    at = open_page("pages/2_Estimate.py", data="sample", name=info.name, method="CLS")
    no_problems(at)
    dataset = at.session_state["dataset"]
    assert dataset.label == info.name and dataset.events.dim == 5
    scale = time_scale(dataset.events)  # real data are private: Δ and s are not read from them
    assert (at.number_input(key="dt").value, at.number_input(key="s").value) != (scale.bin_size, scale.support)
    assert any(PRIVATE_SCALE_NOTE == c.value for c in at.caption)
    assert at.query_params["data"] == "sample" and at.query_params["name"] == info.name
    # real data are private: nothing is fitted until the user asks; CLS is shown, spending nothing
    assert not at.get("plotly_chart")
    at.button(key="release").click().run()
    no_problems(at)
    kernels = figures(at)[0]
    notes = [a["text"] for a in kernels["layout"]["annotations"]]
    assert sum(t.startswith("from ") for t in notes) == 5 and sum(t.startswith("to ") for t in notes) == 5


def test_support_shorter_than_the_bin_is_said():
    at = open_page("pages/2_Estimate.py", preset="fig1", dt="2", s="1")
    assert not at.exception
    assert any("shorter than one bin" in w.value for w in at.warning)


def test_negative_baselines_are_flagged_on_the_page():
    # two quiet dimensions, few events, a large private noise: DP-PGD's baselines come out below zero
    at = open_page("pages/2_Estimate.py", preset="fig1", method="DP-PGD", privacy="σ² directly", sigma2="100",
                   K="50", B="50")
    no_problems(at)
    estimate = next(tr for tr in figures(at)[1]["data"] if tr["name"] == "estimate")["y"]
    negative = [name for name, v in zip(["1", "2"], decode(estimate)) if v < 0]
    flags = [w.value for w in at.warning if "Negative baseline rate" in w.value]
    assert bool(flags) == bool(negative)  # the noise is fresh: either way, the page must say it when it happens
    assert all(f"η of {name} =" in flags[0] for name in negative)


@pytest.mark.parametrize("csv, message", [
    (b"when,where\n1,0\n", "missing columns 'time' and 'dimension'"),
    (b"time\n1\n", "missing column 'dimension';"),
    (b"time,dimension,a,b\n1,0,2,3\n", "unexpected columns 'a' and 'b'"),
])
def test_column_messages_read_as_english(csv, message):
    with pytest.raises(DataError, match=message):
        load_csv(csv)


def test_data_page_heatmap_bin_follows_the_data():
    at = open_app_page("pages/1_Data.py")
    no_problems(at)
    events = at.session_state["dataset"].events
    assert at.number_input(key="plot_bin_size").value == time_scale(events).bin_size


def test_missing_numbers_in_the_tables_read_n_a_not_none():
    at = open_page("pages/2_Estimate.py", preset="fig1")  # no count cap: the formal ε does not exist
    no_problems(at)
    privacy = next(df for df in at.dataframe if df.value.columns[0] == "calibration")
    formal = calibration_words("formal")
    assert privacy.value.set_index("calibration").loc[formal, "ε for this σ²"] != privacy.value.set_index(
        "calibration").loc[formal, "ε for this σ²"]  # NaN: shown as the placeholder
    assert privacy.proto.placeholder == "n/a"
    comparison = next(df for df in with_comparison(at).dataframe if "formal guarantee" in df.value.columns)
    assert comparison.proto.placeholder == "—"
