"""Headless tests of the Streamlit app with AppTest: every page, defaults and edge values, all methods."""

import re
from pathlib import Path

import numpy as np
import pytest
from app_tools import decode, error_table, figures, with_comparison
from conftest import no_problems
from streamlit.testing.v1 import AppTest

from dphawkes_app.controls import calibration_words
from dphawkes_app.guidance import method_help, methods_help
from dphawkes_app.presets import get_preset
from dphawkes_core.estimators import FitConfig, fit, get_family, method_labels
from dphawkes_core.evaluation.lag_average import fit_steps
from dphawkes_core.evaluation.metrics import compare, kernel_function_error
from dphawkes_core.validation import EPSILON_MAX

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 60



def open_page(path: str = "app.py", **query) -> AppTest:
    at = AppTest.from_file(str(ROOT / path), default_timeout=TIMEOUT)
    at.query_params.update(query)
    return at.run()


def metrics_table(at: AppTest):
    return error_table(at).reset_index()


def test_home_explains_and_links_to_every_page():
    at = open_page()
    no_problems(at)
    pages = sorted(p.stem.split("_", 1)[1] for p in (ROOT / "pages").glob("[0-9]*_*.py"))
    assert sorted(link.proto.page for link in at.main.get("page_link")) == pages
    # the sidebar menu: Home first (not "app", the file name), then every page
    menu = at.sidebar.get("page_link")
    assert [link.proto.label for link in menu][0] == "Home"
    assert sorted(link.proto.page for link in menu[1:]) == pages
    assert any("one event" in m.value.lower() for m in at.markdown)


METHOD_LABEL = method_labels()
ERROR = "error on the lag grid"
GRID_FREE = "kernel error"


def comparison_table(at: AppTest):
    with_comparison(at)
    return next(df.value for df in at.dataframe if "formal guarantee" in df.value.columns).set_index("method")


def test_estimate_opens_on_privacy_that_works_and_matches_independent_fits():
    at = open_page("pages/2_Estimate.py")
    no_problems(at)
    works = get_preset("works")
    ctls_label = METHOD_LABEL["ctls"]
    assert at.selectbox(key="preset").value == "works"
    assert any(works.summary in box.value for box in at.info)
    assert at.selectbox(key="method").value == ctls_label  # the formal estimator measured best there
    assert (at.number_input(key="dt").value, at.number_input(key="s").value) == (0.5, 4.0)
    assert at.checkbox(key="Cauto").value and at.number_input(key="eps").value == 1.0  # C chosen privately
    assert at.number_input(key="seed").value is None  # fresh noise by default: a formal release
    assert any("Formal (ε, δ)-DP" in box.value for box in at.success)
    at.number_input(key="seed").set_value(0).run()  # a seed, to compare with independent fits
    no_problems(at)
    assert any("not a private release" in w.value for w in at.warning)
    dataset = works.dataset()
    assert at.session_state["dataset"].label == dataset.label
    truth = dataset.scenario.true_H(0.5, 8)
    ctls_config = FitConfig(method="ctls", bin_size=0.5, lags=8, count_cap="auto", epsilon=1.0, calibration="formal",
                            seed=0)
    ctls, info = fit(dataset.events, ctls_config)
    common = dict(bin_size=0.5, lags=8, count_cap=info["count_cap"])  # the C the private choice made
    # the non-private reference beside a fit on exact times: the maximum likelihood on the same events
    mle, _ = fit(dataset.events, FitConfig(method="mle", bin_size=0.5, lags=8))  # unclipped: the same at every ε
    table = metrics_table(at).set_index("estimate")
    reference_label = f"non-private: {METHOD_LABEL['mle']}"
    assert table.loc[reference_label, ERROR] == pytest.approx(compare(mle.H, truth).relative_error)
    assert table.loc[f"estimate: {ctls_label}", ERROR] == pytest.approx(compare(ctls.H, truth).relative_error)
    assert table.loc["all-zero estimate Ĥ = 0", ERROR] == 1.0
    assert table.loc[f"estimate: {ctls_label}", GRID_FREE] == pytest.approx(  # the headline: the fair metric
        kernel_function_error(fit_steps(ctls), dataset.scenario))
    assert table.loc["all-zero estimate Ĥ = 0", GRID_FREE] == 1.0
    # the non-private trace of cell (1, 2) is the independent maximum-likelihood fit of h12
    kernels = figures(at)[0]
    nonprivate = [tr for tr in kernels["data"] if tr["name"] == "non-private"]
    np.testing.assert_allclose(decode(nonprivate[1]["y"]), mle.kernels[0, 1], rtol=1e-9,
                               atol=1e-9 * np.abs(mle.kernels).max())
    # beside it, the other methods at the same ε with the preset's public B and r, each on its own statistics
    comparison = comparison_table(at)
    assert comparison.loc[f"{ctls_label} — chosen", ERROR] == table.loc[f"estimate: {ctls_label}", ERROR]
    pgd, _ = fit(dataset.events, FitConfig(method="pgd", bound=1.0, iters=200, epsilon=1.0, calibration="formal",
                                           seed=0, **common))
    assert comparison.loc["DP-PGD", ERROR] == pytest.approx(compare(pgd.H, truth).relative_error)
    assert comparison.loc["DP-PGD", "ε"] == pytest.approx(1.0)
    assert f"from {ctls_label}'s private choice" in comparison.loc["DP-PGD", "formal guarantee"]  # the auto C
    assert "taken from the data" not in comparison.loc["DP-PGD", "formal guarantee"]
    ssp, _ = fit(dataset.events, FitConfig(method="ssp", epsilon=1.0, calibration="formal", seed=0, **common))
    assert comparison.loc["DP-SSP", ERROR] == pytest.approx(compare(ssp.H, truth).relative_error)
    # the grid-free column, and the caption naming the formal method measured best on it
    grid_free = comparison[GRID_FREE]
    assert grid_free["DP-SSP"] == pytest.approx(kernel_function_error(fit_steps(ssp), dataset.scenario))
    assert grid_free[f"{ctls_label} — chosen"] == pytest.approx(kernel_function_error(fit_steps(ctls),
                                                                                      dataset.scenario))
    assert grid_free[f"{ctls_label} — chosen"] < grid_free["DP-SSP"]
    assert f"{ctls_label}, the chosen method, is the best formal estimator" in " ".join(c.value for c in at.caption)
    cls_cell = comparison.loc["CLS (non-private)", "formal guarantee"]
    # on simulated (public) data the column says what the same settings would be on private data
    assert "would not be one on private data either: the method adds no noise (not private)" in cls_cell
    assert "C = " not in cls_cell
    assert comparison.loc["all-zero estimate Ĥ = 0", ERROR] == 1.0
    rows = {name: label if get_family(name).privacy.private else f"{label} (non-private)"  # every family has a row
            for name, label in METHOD_LABEL.items()} | {"ctls": f"{ctls_label} — chosen"}
    assert set(comparison.index) == set(rows.values()) | {"all-zero estimate Ĥ = 0"}
    references = {row: grid_free[row] for row in comparison.index if row.endswith("(non-private)")}
    best = min(references, key=references.get)  # the caption names the non-private row measured best
    assert f"The best non-private reference measured here: {best}" in " ".join(c.value for c in at.caption)
    assert {"DP-PGD", "DP-CG", "clipped DP-PGD"} <= set(comparison.index)


@pytest.mark.parametrize("key", ["fig1", "fig3", "small"])
def test_each_preset_opens_with_its_data_and_settings(key):
    preset = get_preset(key)
    at = open_page("pages/2_Estimate.py", preset=key)
    no_problems(at)
    config = preset.config
    assert at.selectbox(key="preset").value == key
    assert at.session_state["dataset"].label == preset.dataset().label
    assert any(preset.summary in box.value for box in at.info)
    assert at.selectbox(key="method").value == METHOD_LABEL[config.method]
    assert at.number_input(key="dt").value == config.bin_size and at.number_input(key="s").value == preset.support
    if config.sigma2 is not None:  # the paper's figures give σ² directly, under the paper's calibration
        assert at.radio(key="privacy").value == "σ² directly"
        assert at.number_input(key="sigma2").value == config.sigma2
        assert at.selectbox(key="calib").value == "paper"
        assert any("Not a formal guarantee" in w.value for w in at.warning)
    if config.method == "pgd":
        assert at.number_input(key="B").value == config.bound and at.number_input(key="K").value == config.iters
    if config.method == "cg":
        assert at.number_input(key="r").value == config.radius and at.number_input(key="K").value == config.iters
    comparison = comparison_table(at)
    assert f"{METHOD_LABEL[config.method]} — chosen" in comparison.index
    if config.count_cap is None:  # DP-SSP needs a count cap: the table says why it did not run instead of failing
        captions = " ".join(c.value for c in at.caption)
        epsilon = float(re.search(r"Every private method at ε = ([0-9.e+]+)", captions).group(1))
        why = f"above {EPSILON_MAX:g}" if epsilon > EPSILON_MAX else "count cap"  # an ε no calibration takes: first
        assert why in comparison.loc["DP-SSP", "formal guarantee"]


def test_choosing_a_preset_sets_data_and_settings_together():
    at = open_page("pages/2_Estimate.py", preset="small")
    at.selectbox(key="preset").set_value("fig1").run()
    no_problems(at)
    fig1 = get_preset("fig1")
    assert at.session_state["dataset"].label == fig1.dataset().label
    assert at.selectbox(key="method").value == "DP-PGD" and at.number_input(key="dt").value == 0.05
    assert at.radio(key="privacy").value == "σ² directly"
    at.number_input(key="dt").set_value(0.1).run()
    no_problems(at)
    assert any("You changed Δ" in c.value for c in at.caption)
    at.selectbox(key="preset").set_value("works").run()
    no_problems(at)
    assert at.session_state["dataset"].events.n_events == get_preset("works").n_events
    assert at.selectbox(key="method").value == METHOD_LABEL["ctls"] and at.number_input(key="dt").value == 0.5
    assert not any("You changed" in c.value for c in at.caption)


def test_unknown_preset_in_the_url_opens_the_default():
    at = open_page("pages/2_Estimate.py", preset="no-such-preset", method="CLS")
    no_problems(at)
    assert at.selectbox(key="preset").value == "works"


@pytest.mark.parametrize("method", ["DP-PGD", "DP-CG", "DP-SSP", "clipped DP-PGD", "CLS"])
@pytest.mark.parametrize("noise", ["ε and δ", "σ² directly"])
def test_every_method_gives_charts_and_metrics(method, noise):
    at = open_page("pages/2_Estimate.py", preset="small", C="3")
    at.selectbox(key="method").set_value("DP-SSP").run()  # the preset fits ctls; DP-SSP's own options appear
    at.checkbox(key="Cauto").uncheck()  # the public C = 3 (an automatic C needs ε, not σ²)
    at.selectbox(key="method").set_value(method).run()
    if method != "CLS":
        at.radio(key="privacy").set_value(noise)
        if method != "DP-SSP":
            at.number_input(key="K").set_value(200)
        at.run()
    no_problems(at)
    one_shot = method in ("DP-SSP", "CLS")
    assert len(figures(at)) == 2 + (not one_shot)  # kernels, baselines, the loss of an iterative method
    assert any("No loss curve" in box.value for box in at.info) == one_shot
    table = metrics_table(at)
    assert {ERROR, "the paper's measure"} <= set(table.columns)
    assert "all-zero estimate Ĥ = 0" in set(table["estimate"])
    assert np.isfinite(table[ERROR]).all()
    has_privacy = any(df.value.columns[0] == "calibration" for df in at.dataframe)
    assert has_privacy == (method != "CLS")
    assert len(at.get("download_button")) == 2
    if method in ("DP-SSP", "clipped DP-PGD"):  # formal-only methods: no calibration choice, no caveat
        assert not any(w.key == "calib" for w in at.selectbox)
        assert not any("Not a formal guarantee" in w.value for w in at.warning)


def test_formal_only_method_without_cap_says_what_is_missing():
    at = open_page("pages/2_Estimate.py", preset="small", C="0")
    at.checkbox(key="Cauto").uncheck().run()  # neither a private choice of C nor a public one
    assert not at.exception
    assert any("count cap" in e.value for e in at.error)


@pytest.mark.parametrize("calibration", ["paper", "tight-paper", "formal"])
def test_calibrations_with_a_count_cap(calibration):
    at = open_page("pages/2_Estimate.py", preset="small", method="DP-PGD", K="100", C="3")
    at.selectbox(key="calib").set_value(calibration).run()
    no_problems(at)
    privacy = next(df.value for df in at.dataframe if df.value.columns[0] == "calibration")
    eps = privacy["ε for this σ²"].to_numpy()
    assert np.all(eps > 0)  # with C given, every calibration has an ε
    chosen = privacy.set_index("calibration").loc[calibration_words(calibration)]
    assert ("no guarantee" in calibration_words(calibration)) == (calibration != "formal")
    assert (chosen["formal calibration"] == "yes") == (calibration == "formal")
    assert chosen["ε for this σ²"] == pytest.approx(1.0)  # the target ε is met under the chosen calibration
    assert any("Formal (ε, δ)-DP" in s.value for s in at.success) == (calibration == "formal")


def test_formal_calibration_without_cap_is_a_friendly_error():
    at = open_page("pages/2_Estimate.py", preset="fig1", calib="formal")
    assert not at.exception
    assert any("count cap" in e.value for e in at.error)


@pytest.mark.parametrize("query, expected", [
    ({"dt": "0.0001"}, "limit"),  # d·p+1 far over the design limit: refused before any work
    ({"lagmode": "lags p", "p": "100000"}, "limit"),
    ({"dt": "2000"}, "no sequence is longer"),  # fewer bins than lags
])
def test_oversized_or_impossible_settings_are_refused_in_words(query, expected):
    at = open_page("pages/2_Estimate.py", preset="small", **query)
    assert not at.exception
    assert any(expected in e.value.lower() for e in at.error), [e.value for e in at.error]
    assert not at.get("plotly_chart")


@pytest.mark.parametrize("query", [
    {"K": "1"}, {"lagmode": "lags p", "p": "1"}, {"dt": "3"}, {"privacy": "σ² directly", "sigma2": "0"},
    {"eps": "0.000001"}, {"method": "DP-CG", "r": "0.000001"}, {"delta": "0.5"},
])
def test_edge_values_run_without_exception(query):
    at = open_page("pages/2_Estimate.py", **({"preset": "small", "method": "DP-PGD"} | query))
    no_problems(at)
    assert len(figures(at)) == 3


def test_heavy_fit_waits_for_confirmation():
    at = open_page("pages/2_Estimate.py", preset="small", method="DP-PGD", dt="0.02", s="20", K="2000")
    assert not at.exception
    assert any("Heavy fit" in w.value for w in at.warning)
    assert not at.get("plotly_chart")
    assert at.checkbox(key="confirm_heavy").value is False


def test_url_reproduces_the_view():
    at = open_page("pages/2_Estimate.py", data="paper-4d", n="400", dseed="2", method="CLS", dt="0.2")
    no_problems(at)
    assert at.session_state["dataset"].label == "paper-4d, 400 events, seed 2"
    assert at.selectbox(key="preset").value == "custom"  # data of no preset
    assert at.selectbox(key="method").value == "CLS"
    assert at.number_input(key="dt").value == pytest.approx(0.2)
    assert len(figures(at)[0]["data"]) == 16 * 2  # 4×4 cells: truth and CLS
    bound = {w.key: w.proto.query_param_key for w in [*at.number_input, *at.selectbox, *at.radio]}
    assert all(bound[k] == k for k in ("dt", "s", "method", "C", "lagmode"))  # widgets write back to the URL


def test_switching_pages_keeps_the_simulated_dataset():
    at = open_page()
    at.switch_page("pages/1_Data.py").run()
    at.selectbox(key="sim_preset").set_value("paper-4d")
    at.number_input(key="sim_events").set_value(500)
    at.number_input(key="sim_seed").set_value(4)
    at.run()
    at.button(key="sim_go").click().run()
    no_problems(at)
    label = "paper-4d, 500 events, seed 4"
    assert at.session_state["dataset"].label == label
    at.switch_page("pages/2_Estimate.py").run()
    no_problems(at)
    assert at.session_state["dataset"].label == label  # the user's data are kept, not replaced by a preset's
    assert at.selectbox(key="preset").value == "custom"
    assert len(figures(at)[0]["data"]) == 16 * 4  # truth, CLS, estimate and its σ² = 0 line
    at.switch_page("app.py").run()
    at.switch_page("pages/1_Data.py").run()
    assert at.session_state["dataset"].label == label


GOOD_CSV = b"time,dimension\n0.5,0\n1.0,1\n1.7,0\n2.5,1\n3.0,0\n"
BAD_CSV = b"time,dimension\n0.5,0\nabc,1\n"


def test_rejected_upload_keeps_previous_data():
    at = open_page()
    at.switch_page("pages/1_Data.py").run()
    at.radio(key="data_source").set_value("Upload a CSV").run()
    at.file_uploader(key="upload_csv").set_value(("good.csv", GOOD_CSV, "text/csv")).run()
    no_problems(at)
    assert at.session_state["dataset"].label == "good.csv"
    assert at.session_state["dataset"].events.n_events == 5
    at.file_uploader(key="upload_csv").set_value(("bad.csv", BAD_CSV, "text/csv")).run()
    assert not at.exception
    message = " ".join(e.value for e in at.error)
    assert "row 3" in message and "'time'" in message and "still loaded" in message
    assert at.session_state["dataset"].label == "good.csv"
    at.switch_page("pages/2_Estimate.py").run()
    assert at.session_state["dataset"].label == "good.csv"
    # uploads are private: nothing is fitted, so nothing refused, until the "Show it" click
    assert not at.error and not at.get("plotly_chart")
    at.button(key="release").click().run()
    assert not at.exception
    assert any("no sequence is longer" in e.value.lower() for e in at.error)  # 15 bins < p = 25, said in words
    at.number_input(key="s").set_value(0.5).run()
    at.button(key="release").click().run()
    no_problems(at)
    assert any("No ground truth" in c.value for c in at.caption)  # in the "Distance to the non-private" expander


def test_custom_builder_refuses_explosive_settings():
    at = open_page("pages/1_Data.py")
    at.selectbox(key="sim_preset").set_value("custom").run()
    at.number_input(key="cust_exponential_alpha_0_0").set_value(1.2).run()
    assert not at.exception
    assert any("Explosive" in e.value and "1.2" in e.value for e in at.error)
    assert at.button(key="sim_go").disabled
    at.number_input(key="cust_exponential_alpha_0_0").set_value(0.5).run()
    assert not at.error and not at.button(key="sim_go").disabled


@pytest.mark.parametrize("d", [1, 6])
def test_custom_builder_extreme_dimensions_simulate(d):
    at = open_page("pages/1_Data.py")
    at.selectbox(key="sim_preset").set_value("custom").run()
    at.number_input(key="cust_d").set_value(d).run()
    at.selectbox(key="cust_fam_0_0").set_value("box").run()
    at.number_input(key="sim_events").set_value(300).run()
    at.button(key="sim_go").click().run()
    no_problems(at)
    dataset = at.session_state["dataset"]
    assert dataset.events.dim == d and dataset.events.n_events == 300
    assert len(figures(at)) == 3  # raster, counting process, heatmap


def test_horizon_mode_and_heatmap_bin_size():
    at = open_page("pages/1_Data.py")
    at.radio(key="sim_size_mode").set_value("horizon").run()
    at.number_input(key="sim_horizon").set_value(200.0).run()
    at.button(key="sim_go").click().run()
    no_problems(at)
    assert at.session_state["dataset"].events.end_time == pytest.approx(200.0)
    at.number_input(key="plot_bin_size").set_value(1.0).run()
    heatmap = figures(at)[2]
    z = np.asarray([decode(row) for row in heatmap["data"][0]["z"]]) if isinstance(
        heatmap["data"][0]["z"], list) else decode(heatmap["data"][0]["z"]).reshape(2, -1)
    assert z.shape == (2, 200)
    assert z.sum() == at.session_state["dataset"].events.n_events


def test_sample_data_with_provenance(tmp_path, monkeypatch):
    folder = tmp_path / "tiny"
    folder.mkdir()
    (folder / "events.csv").write_bytes(b"sequence,time,dimension\n0,0.1,0\n0,0.4,1\n1,0.2,1\n1,0.9,0\n")
    (folder / "labels.csv").write_text("dimension,label\n0,up\n1,down\n")
    (folder / "PROVENANCE.md").write_text("Made up for a test, licence CC0.")
    monkeypatch.setenv("DPHAWKES_DATA_DIR", str(tmp_path))
    at = open_page("pages/1_Data.py")
    at.radio(key="data_source").set_value("Sample data").run()
    assert any("licence CC0" in m.value for m in at.markdown)
    at.button(key="sample_go").click().run()
    no_problems(at)
    dataset = at.session_state["dataset"]
    assert dataset.label == "tiny" and dataset.events.names == ("up", "down")
    assert dataset.events.n_sequences == 2
    at.number_input(key="plot_sequence").set_value(1).run()
    no_problems(at)


def test_empty_data_dir_explains_how_to_set_it(tmp_path, monkeypatch):
    monkeypatch.setenv("DPHAWKES_DATA_DIR", str(tmp_path))
    at = open_page("pages/1_Data.py")
    at.radio(key="data_source").set_value("Sample data").run()
    no_problems(at)
    assert any("No real data sets are installed" in i.value for i in at.info)
    admin = next(e for e in at.expander if e.label.startswith("For administrators"))
    assert any("DPHAWKES_DATA_DIR" in c.value for c in admin.get("code"))  # how to set it, for whoever runs the app


def test_shrinkage_is_flagged_when_the_ball_is_far_below_the_truth():
    # Figure 1's B = 0.2 against ||H_true||_F at Δ = 0.05, s = 4
    small = open_page("pages/2_Estimate.py", preset="fig1")
    no_problems(small)
    assert any("Shrinkage" in box.value for box in small.info)
    large = open_page("pages/2_Estimate.py", preset="fig1", B="5")
    no_problems(large)
    assert not any("Shrinkage" in box.value for box in large.info)


def test_ssp_stabiliser_and_ridge_reach_the_fit():
    at = open_page("pages/2_Estimate.py", preset="small", C="3")
    at.selectbox(key="method").set_value("DP-SSP").run()  # the preset fits ctls; DP-SSP's own options appear
    at.checkbox(key="Cauto").uncheck()
    at.radio(key="privacy").set_value("σ² directly")
    at.selectbox(key="stab").set_value("psd")
    at.number_input(key="ridge").set_value(0.5)
    at.number_input(key="seed").set_value(0)
    at.run()
    no_problems(at)
    dataset = get_preset("small").dataset()
    expected, _ = fit(dataset.events, FitConfig(method="ssp", bin_size=0.5, lags=8, count_cap=3, sigma2=0.01,
                                                calibration="formal", stabiliser="psd", ridge=0.5, seed=0))
    shown = metrics_table(at).set_index("estimate").loc["estimate: DP-SSP", ERROR]
    assert shown == pytest.approx(compare(expected.H, dataset.scenario.true_H(0.5, 8)).relative_error, rel=1e-9)


def test_each_method_says_what_it_fits():
    # what each method reads, from the family's declared statistics, and how it fits, without its own name
    at = open_page("pages/2_Estimate.py")
    no_problems(at)
    assert method_help(get_family("ctls")) in [c.value for c in at.caption]
    assert method_help(get_family("ctls")).startswith("Fits the exact event times. ")
    method = at.selectbox(key="method")
    assert method.help == methods_help(get_family(name) for name in method_labels())
    assert "the counts of events in bins of width Δ: CLS, DP-PGD" in method.help
    method.set_value("DP-SSP").run()
    no_problems(at)
    assert method_help(get_family("ssp")) in [c.value for c in at.caption]
    assert method_help(get_family("ssp")).startswith("Fits the counts of events in bins of width Δ. ")
