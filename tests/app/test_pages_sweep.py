"""AppTest of the Privacy–utility and Reproduce pages: defaults, a run, cache reuse, bad input."""

import json
import re
from pathlib import Path

import pytest
from app_tools import decode, texts
from conftest import no_problems
from streamlit.testing.v1 import AppTest

from dphawkes_core.data.datasets import Dataset, list_samples, load_sample
from dphawkes_core.data.io import Events
from dphawkes_core.data.kernels import get_scenario
from dphawkes_core.data.row_key import data_fingerprint
from dphawkes_core.data.simulate import simulate
from dphawkes_core.release.ledger import LedgerKey
from dphawkes_core.release.ledger_file import LedgerBook
from dphawkes_core.release.ledger_store import default_ledger_path
from dphawkes_experiments.sweep import DataSource, SweepSpec, run_sweep

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 180



class _Page:
    """Open the app, then switch to a page (the page imports ``ui_common`` from the app's folder)."""

    def __init__(self, path):
        self.path = path
        self.at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT)

    def run(self):
        self.at.run()
        self.at.switch_page(self.path)
        return self.at.run()


def page(path):
    return _Page(path)


def small_grid(at, runs=1):
    """The paper's σ² grid, small: cls and DP-PGD with B = 0.2, formal calibration with C = 5."""
    at.radio(key="pu_kind").set_value("σ² (noise variance)").run()
    at.multiselect(key="pu_methods").set_value(["cls", "pgd"])
    at.number_input(key="pu_b").set_value(0.2)
    at.number_input(key="pu_events").set_value(300)
    at.text_input(key="pu_levels_sigma2").set_value("0, 1")
    at.text_input(key="pu_bins").set_value("0.5, 1")
    at.number_input(key="pu_runs").set_value(runs)
    at.number_input(key="pu_iters").set_value(30)
    return at


@pytest.mark.slow
def test_privacy_page_runs_a_sweep_and_reuses_cells():
    at = page("pages/3_Privacy_utility.py").run()
    no_problems(at)
    assert any("Run sweep" in b.label for b in at.button)
    small_grid(at).run()
    at.button(key="pu_run").click().run()
    no_problems(at)
    store = at.session_state["sweep_store"]
    # cls + pgd at 2 levels, 2 bin sizes, 1 run.
    assert len(store) == 6
    assert len(at.get("plotly_chart")) == 2
    assert at.dataframe[0].value.shape[0] == 6
    # The page's table equals the engine run directly with the same grid and seeds.
    spec = SweepSpec(DataSource(scenario=get_scenario("paper-2d"), n_events=300, label="paper-2d"),
                     methods=("cls", "pgd"), bin_sizes=(0.5, 1.0), levels=(0.0, 1.0), runs=1, bound=0.2, iters=30,
                     calibration="formal", count_cap=5)
    direct = run_sweep(spec, None)
    assert sorted(store["relative_error"].round(12)) == sorted(direct["relative_error"].round(12))
    # Widening to 2 runs computes only the 6 new cells.
    small_grid(at, runs=2).run()
    at.button(key="pu_run").click().run()
    no_problems(at)
    assert len(at.session_state["sweep_store"]) == 12
    assert at.dataframe[0].value.shape[0] == 12
    assert any("6 reused" in (p.proto.text or "") for p in at.get("progress"))
    # The shrink warning is shown: B = 0.2 is far below ||H_true||_F for these Δ.
    assert any("pulled toward zero" in w.value for w in at.warning)


def test_privacy_page_bad_levels_are_a_friendly_error():
    at = page("pages/3_Privacy_utility.py").run()
    at.text_input(key="pu_levels_epsilon").set_value("1, lots").run()
    assert not at.exception
    assert at.error and "numbers separated by commas" in at.error[0].value


def test_privacy_page_on_real_data_shows_the_heldout_gain_first():
    samples = {s.name: s for s in list_samples()}
    if "email_dyad" not in samples:
        pytest.skip("real data directory not available")
    opener = page("pages/3_Privacy_utility.py")
    sample = load_sample(samples["email_dyad"])
    # real data are private, and a sweep of private data is refused: state that these are published
    LedgerBook(default_ledger_path()).open(LedgerKey(data_fingerprint(sample.events)), public=True)
    opener.at.session_state["dataset"] = sample
    at = opener.run()
    at.radio(key="pu_source").set_value(at.radio(key="pu_source").options[1]).run()
    at.radio(key="pu_kind").set_value("σ² (noise variance)").run()
    at.multiselect(key="pu_methods").set_value(["cls", "pgd"])
    at.text_input(key="pu_bins").set_value("24")
    at.number_input(key="pu_support").set_value(240.0)
    at.text_input(key="pu_levels_sigma2").set_value("0.1")
    at.number_input(key="pu_runs").set_value(1)
    at.number_input(key="pu_iters").set_value(30)
    at.run()
    at.button(key="pu_run").click().run()
    no_problems(at)
    store = at.session_state["sweep_store"]
    assert len(store) == 2 and store["rmse"].notna().all() and store["relative_error"].isna().all()
    assert store["heldout_gain"].notna().all() and (store["heldout_events"] > 0).all()
    metric = at.radio(key="pu_metric")
    assert metric.value == "heldout_gain" and len(metric.options) == 2  # the headline, then the RMSE
    infinite = int((store["heldout_nonpositive"] > 0).sum())
    warned = [w.value for w in at.warning if "could not happen" in w.value]
    assert (warned[0].startswith(f"{infinite} of 2 runs") if infinite else not warned), (infinite, warned)


@pytest.mark.slow
def test_reproduce_page_kernel_figure_and_small_boxplot():
    at = page("pages/4_Reproduce_paper.py").run()
    no_problems(at)
    # every claim is printed before anything runs
    assert sum("The paper claims" in m.value for m in at.markdown) == 4 + bool(list_samples())
    at.button(key="run_fig1").click().run()
    no_problems(at)
    assert any("Verdict" in m.value for m in at.markdown)
    assert any("pulled toward zero" in w.value for w in at.warning)
    at.number_input(key="repro_runs").set_value(1).run()
    at.button(key="run_fig2").click().run()
    no_problems(at)
    frame = at.session_state["repro_results"]["fig2"].data["sweep"]
    assert len(frame) == 3 * (1 + 5)  # 3 Δ × (cls + 5 σ²) × 1 run
    assert len(at.get("plotly_chart")) == 3  # kernel figure + two boxplot figures


def test_reproduce_page_table1_on_small_real_data():
    if "email_dyad" not in {s.name for s in list_samples()}:
        pytest.skip("real data directory not available")
    at = page("pages/4_Reproduce_paper.py").run()
    at.selectbox(key="t1_data").set_value("email_dyad")
    at.number_input(key="t1_dt").set_value(24.0)
    at.number_input(key="t1_s").set_value(240.0)
    at.number_input(key="t1_runs").set_value(1)
    at.run()
    at.button(key="run_table1").click().run()  # real data are private here as on every page: refused, saying so
    no_problems(at)
    assert "table1" not in at.session_state["repro_results"]
    assert "treated as private" in texts(at.info) and "Table 1 is an experiment" in texts(at.info)
    at.button(key="t1_mark_public").click().run()  # the user states the catalogue is published
    at.button(key="run_table1").click().run()
    no_problems(at)
    result = at.session_state["repro_results"]["table1"]
    assert list(result.table["method"])[:3] == ["CLS (non-private)", "DP-PGD (the paper's DP-Hawkes-PGD)",
                                                "DP-CG (the paper's DP-Hawkes-CG)"]
    assert any("MIMIC-II" in w.value for w in at.warning)


@pytest.mark.slow
def test_privacy_page_without_a_private_level_says_there_is_no_curve():
    at = page("pages/3_Privacy_utility.py").run()
    small_grid(at)
    at.text_input(key="pu_levels_sigma2").set_value("0")  # σ² = 0 only: nothing is private
    at.run()
    at.button(key="pu_run").click().run()
    no_problems(at)
    assert any("no curve" in box.value for box in at.info)
    assert len(at.get("plotly_chart")) == 1  # the boxplot only


def test_privacy_page_defaults_formal_epsilon_where_the_curve_moves():
    at = page("pages/3_Privacy_utility.py").run()
    no_problems(at)
    assert at.radio(key="pu_kind").value == "ε (target)"
    assert at.text_input(key="pu_levels_epsilon").value == "0.1, 0.3, 1, 3, 10"
    assert at.multiselect(key="pu_methods").value == ["cls", "ctls", "ssp", "pgd"]  # the reference, the preset's…
    assert at.selectbox(key="pu_cal").value == "formal" and at.number_input(key="pu_cap").value == 5
    assert not at.checkbox(key="pu_auto_b").value and not at.checkbox(key="pu_auto_r").value  # public B, r
    at.number_input(key="pu_events").set_value(5000)
    at.text_input(key="pu_levels_epsilon").set_value("0.1, 10")
    at.number_input(key="pu_runs").set_value(1)
    at.number_input(key="pu_iters").set_value(30)
    at.run()
    at.button(key="pu_run").click().run()
    no_problems(at)
    assert at.selectbox(key="pu_eps_col").value == "epsilon_formal"
    tradeoff = json.loads(at.get("plotly_chart")[1].proto.spec)
    assert tradeoff["layout"]["xaxis"]["type"] == "log"
    store = at.session_state["sweep_store"]
    for method in ("ssp", "ctls"):  # the private curves move with ε
        curve = store.query(f"method == '{method}'").set_index("level")["kernel_function_error"]
        assert curve[10.0] < curve[0.1] - 0.2
    assert at.radio(key="pu_metric").value == "kernel_function_error"  # ctls is in the table: grid-free first


def size_view(at):
    at.text_input(key="hd_sizes").set_value("300, 3000")
    at.multiselect(key="hd_methods").set_value(["cls", "ssp"])
    at.number_input(key="hd_runs").set_value(1)
    return at.run()


@pytest.mark.slow
def test_how_much_data_view_matches_the_sweep_run_size_by_size():
    at = size_view(page("pages/3_Privacy_utility.py").run())
    no_problems(at)
    assert any("Press **Run the data-size sweep**" in i.value for i in at.info)
    at.button(key="hd_run").click().run()
    no_problems(at)
    store = at.session_state["sweep_store"]
    assert len(store) == 2 * 2 and set(store["n_events_requested"]) == {300, 3000}
    figure = json.loads(next(c for c in at.get("plotly_chart") if "number of events" in c.proto.spec).proto.spec)
    assert figure["layout"]["xaxis"]["tickvals"] == [300, 3000]
    for n in (300, 3000):  # each size is the ordinary sweep of that size, run directly
        spec = SweepSpec(DataSource(scenario=get_scenario("paper-2d"), n_events=n, label="paper-2d"),
                         methods=("cls", "ssp"), bin_sizes=(0.5,), privacy="epsilon", levels=(1.0,), runs=1,
                         support=4.0, bound=1.0, radius=0.5, iters=200, calibration="formal", count_cap=5)
        direct = run_sweep(spec, None)
        shown = store[store["n_events_requested"] == n]
        assert sorted(shown["relative_error"].round(12)) == sorted(direct["relative_error"].round(12))
    assert not any("Run the data-size sweep" in (p.proto.text or "") for p in at.get("progress"))  # no rerun
    at.button(key="hd_run").click().run()
    assert any("nothing to run" in i.value for i in at.info)


def test_how_much_data_view_refuses_bad_sizes_in_words():
    at = page("pages/3_Privacy_utility.py").run()
    at.text_input(key="hd_sizes").set_value("10, 1000").run()
    assert not at.exception
    assert any("Numbers of events: give sizes between 50 and" in e.value for e in at.error)


def test_private_data_refuse_the_sweep_but_keep_the_data_size_view():
    samples = {s.name: s for s in list_samples()}
    if "email_dyad" not in samples:
        pytest.skip("real data directory not available")
    opener = page("pages/3_Privacy_utility.py")
    opener.at.session_state["dataset"] = load_sample(samples["email_dyad"])  # private: not marked public
    at = opener.run()
    at.radio(key="pu_source").set_value(at.radio(key="pu_source").options[1]).run()
    no_problems(at)
    assert any("refused here" in box.value for box in at.info)
    assert not any(b.key == "pu_run" for b in at.button)
    assert at.text_input(key="hd_sizes").value  # the data-size view simulates: it stays available


def multi_sequence_dataset(n_sequences=12, horizon=40.0):
    """``n_sequences`` independent paper-2d sequences on the stated window [0, horizon] (public: simulated)."""
    scenario = get_scenario("paper-2d")
    runs = [simulate(scenario, end_time=horizon, seed=seed) for seed in range(n_sequences)]
    events = Events(tuple(run.sequences[0] for run in runs), runs[0].names, window_stated=True)
    return Dataset(events=events, label=f"paper-2d, {n_sequences} sequences", source="simulated", scenario=scenario)


def test_privacy_page_sweeps_at_the_sequence_unit_on_multi_sequence_data():
    dataset = multi_sequence_dataset()
    opener = page("pages/3_Privacy_utility.py")
    opener.at.session_state["dataset"] = dataset
    at = opener.run()
    at.radio(key="pu_source").set_value(at.radio(key="pu_source").options[1]).run()
    at.radio(key="pu_unit").set_value("sequence").run()
    assert at.number_input(key="pu_seqM").value == 40  # the Estimate page's default cap M
    assert any(re.search(r"sequence unit is available for DP-SSP and exact event times .*, not DP-PGD", e.value)
               for e in at.error)  # DP-PGD: a default
    assert not at.exception and not any(b.key == "pu_run" for b in at.button)
    at.multiselect(key="pu_methods").set_value(["cls", "ssp"])
    at.text_input(key="pu_levels_epsilon").set_value("1, 10")
    at.text_input(key="pu_bins").set_value("0.5")
    at.number_input(key="pu_runs").set_value(1)
    at.number_input(key="pu_seqM").set_value(30)
    at.run()
    at.button(key="pu_run").click().run()
    no_problems(at)
    table = at.session_state["sweep_store"]  # every column (the page's table shows the readable ones)
    assert len(at.dataframe[0].value) == len(table) == 3 and set(table["privacy_unit"]) == {"sequence"}
    assert len(at.get("plotly_chart")) == 2  # the boxplots and the curve against ε
    # the page passed the unit and M into the sweep: the same grid run directly gives the same errors
    spec = SweepSpec(DataSource(scenario=dataset.scenario, events=dataset.events, label=dataset.label),
                     methods=("cls", "ssp"), bin_sizes=(0.5,), privacy="epsilon", levels=(1.0, 10.0), runs=1,
                     support=4.0, bound=1.0, radius=0.5, iters=200, calibration="formal", count_cap=5,
                     options=(("privacy_unit", "sequence"), ("max_events", 30)))
    direct = run_sweep(spec, None)
    assert sorted(table["relative_error"].round(12)) == sorted(direct["relative_error"].round(12))


def test_privacy_page_sequence_unit_on_one_sequence_says_why_not():
    at = page("pages/3_Privacy_utility.py").run()
    at.radio(key="pu_unit").set_value("sequence").run()  # the simulated source: one sequence per run
    assert not at.exception
    assert any("several sequences" in e.value and "each simulation here is one" in e.value for e in at.error)
    assert not any(b.key == "pu_run" for b in at.button)
    at.radio(key="pu_source").set_value(at.radio(key="pu_source").options[1]).run()  # the preset: one sequence
    assert not at.exception
    assert any("several sequences" in e.value and "is one sequence" in e.value for e in at.error)
    assert at.text_input(key="hd_sizes").value  # the data-size view is untouched


def test_how_much_data_view_compares_the_exact_time_family_grid_free():
    # ctls beside DP-SSP: the figure's metric is the grid-free kernel error by default (said on the page), and its
    # medians are the sweep's kernel_function_error column, which the engine computes for ctls on its own statistics.
    at = size_view(page("pages/3_Privacy_utility.py").run())
    at.multiselect(key="hd_methods").set_value(["ssp", "ctls"]).run()
    at.button(key="hd_run").click().run()
    no_problems(at)
    assert at.radio(key="hd_metric").value == "kernel_function_error"
    assert any("exact-time estimator is compared" in c.value for c in at.caption)
    store = at.session_state["sweep_store"]
    assert set(store["method"]) == {"ssp", "ctls"} and store["kernel_function_error"].notna().all()
    figure = json.loads(next(c for c in at.get("plotly_chart") if "number of events" in c.proto.spec).proto.spec)
    assert "grid-free" in figure["layout"]["yaxis"]["title"]["text"]
    ctls = store[store["method"] == "ctls"].sort_values("n_events_requested")["kernel_function_error"].to_numpy()
    line = next(t for t in figure["data"] if t.get("name", "").startswith("exact event times"))
    assert decode(line["y"]) == pytest.approx(ctls, rel=1e-12)  # one run per size: the median is the run
    at.radio(key="hd_metric").set_value("relative_error").run()
    no_problems(at)
