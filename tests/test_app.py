"""Headless tests of the Streamlit app with AppTest: every page, defaults and edge values, all methods."""

import base64
import json
from pathlib import Path

import numpy as np
import pytest
from conftest import no_problems
from streamlit.testing.v1 import AppTest

from dphawkes_core.datasets import default_dataset
from dphawkes_core.estimators import FitConfig, fit
from dphawkes_core.metrics import compare

ROOT = Path(__file__).resolve().parent.parent
TIMEOUT = 60


pytestmark = pytest.mark.usefixtures("clear_streamlit_caches")


def open_page(path: str = "app.py", **query) -> AppTest:
    at = AppTest.from_file(str(ROOT / path), default_timeout=TIMEOUT)
    at.query_params.update(query)
    return at.run()


def figures(at: AppTest) -> list[dict]:
    return [json.loads(chart.proto.spec) for chart in at.get("plotly_chart")]


def decode(values):
    """Plotly >= 6 encodes arrays as base64 ``{"dtype", "bdata"}``."""
    if isinstance(values, dict) and "bdata" in values:
        return np.frombuffer(base64.b64decode(values["bdata"]), dtype=values["dtype"])
    return np.asarray(values)


def metrics_table(at: AppTest):
    return next(df.value for df in at.dataframe if "relative error ‖Ĥ−H‖/‖H‖" in df.value.columns)


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


def test_estimate_defaults_match_an_independent_fit():
    at = open_page("pages/2_Estimate.py")
    no_problems(at)
    assert at.number_input(key="seed").value is None  # fresh noise by default
    at.number_input(key="seed").set_value(0).run()  # a seed, to compare with an independent fit
    assert any("not a private release" in w.value for w in at.warning)
    assert at.selectbox(key="method").value == "DP-PGD"
    assert at.number_input(key="dt").value == pytest.approx(0.1)
    assert at.number_input(key="s").value == pytest.approx(5.0)
    assert at.number_input(key="K").value == 1000
    kernels = figures(at)[0]
    assert len(kernels["data"]) == 4 * 3  # 2×2 cells: truth, estimate, non-private
    table = metrics_table(at)
    dataset = default_dataset()
    truth = dataset.scenario.true_H(0.1, 50)
    cls, _ = fit(dataset.events, FitConfig(method="cls", bin_size=0.1, lags=50))
    expected_cls = compare(cls.H, truth)
    row = table.set_index("estimate").loc["CLS (non-private)"]
    assert row["relative error ‖Ĥ−H‖/‖H‖"] == pytest.approx(expected_cls.relative_error)
    assert row["paper's relative error (÷ d(dp+1))"] == pytest.approx(expected_cls.relative_error / (2 * 101))
    zero = table.set_index("estimate").loc["all-zero reference Ĥ = 0"]
    assert zero["relative error ‖Ĥ−H‖/‖H‖"] == 1.0
    private, _ = fit(dataset.events, FitConfig(method="pgd", bin_size=0.1, lags=50, bound=0.2, iters=1000,
                                              epsilon=1.0, seed=0))
    assert table.set_index("estimate").loc["DP-PGD", "relative error ‖Ĥ−H‖/‖H‖"] == pytest.approx(
        compare(private.H, truth).relative_error)
    # the non-private trace of cell (1, 2) is the independent CLS fit of h12
    nonprivate = [tr for tr in kernels["data"] if tr["name"] == "non-private"]
    np.testing.assert_allclose(decode(nonprivate[1]["y"]), cls.kernels[0, 1], rtol=1e-9, atol=1e-12)
    # privacy: ε = 1 is the paper-calibrated target and it is labelled as not a formal guarantee
    assert at.metric[1].value == "1"
    assert any("Not a formal guarantee" in w.value for w in at.warning)


@pytest.mark.parametrize("method", ["DP-PGD", "DP-CG", "DP-SSP", "DP-PGD-clip", "CLS"])
@pytest.mark.parametrize("noise", ["ε and δ", "σ² directly"])
def test_every_method_gives_charts_and_metrics(method, noise):
    at = open_page("pages/2_Estimate.py", C="3")
    at.selectbox(key="method").set_value(method).run()
    if method != "CLS":
        at.radio(key="privacy").set_value(noise)
        if method != "DP-SSP":
            at.number_input(key="K").set_value(200)
        at.run()
    no_problems(at)
    assert len(figures(at)) == 3  # kernels, baselines, loss
    table = metrics_table(at)
    assert {"relative error ‖Ĥ−H‖/‖H‖", "paper's relative error (÷ d(dp+1))"} <= set(table.columns)
    assert "all-zero reference Ĥ = 0" in set(table["estimate"])
    assert np.isfinite(table["relative error ‖Ĥ−H‖/‖H‖"]).all()
    has_privacy = any(df.value.columns[0] == "calibration" for df in at.dataframe)
    assert has_privacy == (method != "CLS")
    assert len(at.get("download_button")) == 2
    if method in ("DP-SSP", "DP-PGD-clip"):  # formal-only methods: no calibration choice, no caveat
        assert not any(w.key == "calib" for w in at.selectbox)
        assert not any("Not a formal guarantee" in w.value for w in at.warning)


def test_formal_only_method_without_cap_says_what_is_missing():
    at = open_page("pages/2_Estimate.py", method="DP-SSP")
    assert not at.exception
    assert any("count cap" in e.value for e in at.error)


@pytest.mark.parametrize("calibration", ["paper", "tight-paper", "formal"])
def test_calibrations_with_a_count_cap(calibration):
    at = open_page("pages/2_Estimate.py", K="100", C="3")
    at.selectbox(key="calib").set_value(calibration).run()
    no_problems(at)
    privacy = next(df.value for df in at.dataframe if df.value.columns[0] == "calibration")
    eps = privacy["ε for this σ²"].to_numpy()
    assert np.all(eps > 0)  # with C given, every calibration has an ε
    chosen = privacy.set_index("calibration").loc[calibration]
    assert ("NOT a formal guarantee" in chosen["meaning"]) == (calibration != "formal")
    assert chosen["ε for this σ²"] == pytest.approx(1.0)  # the target ε is met under the chosen calibration
    assert any("Formal (ε, δ)-DP" in s.value for s in at.success) == (calibration == "formal")


def test_formal_calibration_without_cap_is_a_friendly_error():
    at = open_page("pages/2_Estimate.py", calib="formal")
    assert not at.exception
    assert any("count cap" in e.value for e in at.error)


@pytest.mark.parametrize("query, expected", [
    ({"dt": "0.0001"}, "limit"),  # d·p+1 far over the design limit: refused before any work
    ({"lagmode": "lags p", "p": "100000"}, "limit"),
    ({"dt": "2000"}, "no sequence is longer"),  # fewer bins than lags
])
def test_oversized_or_impossible_settings_are_refused_in_words(query, expected):
    at = open_page("pages/2_Estimate.py", **query)
    assert not at.exception
    assert any(expected in e.value.lower() for e in at.error), [e.value for e in at.error]
    assert not at.get("plotly_chart")


@pytest.mark.parametrize("query", [
    {"K": "1"}, {"lagmode": "lags p", "p": "1"}, {"dt": "3"}, {"privacy": "σ² directly", "sigma2": "0"},
    {"eps": "0.000001"}, {"method": "DP-CG", "r": "0.000001"}, {"delta": "0.5"},
])
def test_edge_values_run_without_exception(query):
    at = open_page("pages/2_Estimate.py", **query)
    no_problems(at)
    assert len(figures(at)) == 3


def test_heavy_fit_waits_for_confirmation():
    at = open_page("pages/2_Estimate.py", dt="0.02", s="20", K="2000")
    assert not at.exception
    assert any("Heavy fit" in w.value for w in at.warning)
    assert not at.get("plotly_chart")
    assert at.checkbox(key="confirm_heavy").value is False


def test_url_reproduces_the_view():
    at = open_page("pages/2_Estimate.py", data="paper-4d", n="400", dseed="2", method="CLS", dt="0.2")
    no_problems(at)
    assert at.session_state["dataset"].label == "paper-4d, 400 events, seed 2"
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
    assert at.session_state["dataset"].label == label
    assert len(figures(at)[0]["data"]) == 16 * 3
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
    assert any("no sequence is longer" in e.value.lower() for e in at.error)  # 30 bins < p = 50, said in words
    at.number_input(key="s").set_value(0.5).run()
    no_problems(at)
    assert any("No ground truth" in i.value for i in at.info)


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
    assert any("No data sets found" in i.value for i in at.info)


def test_shrinkage_is_flagged_when_the_ball_is_far_below_the_truth():
    # the paper's B = 0.2 against ||H_true||_F of about 1.1 at Δ = 0.1, s = 5
    small = open_page("pages/2_Estimate.py")
    no_problems(small)
    assert any("Shrinkage" in box.value for box in small.info)
    large = open_page("pages/2_Estimate.py", B="5")
    no_problems(large)
    assert not any("Shrinkage" in box.value for box in large.info)


def test_ssp_stabiliser_and_ridge_reach_the_fit():
    at = open_page("pages/2_Estimate.py", C="3", method="DP-SSP")
    at.radio(key="privacy").set_value("σ² directly")
    at.selectbox(key="stab").set_value("psd")
    at.number_input(key="ridge").set_value(0.5)
    at.number_input(key="seed").set_value(0)
    at.run()
    no_problems(at)
    dataset = default_dataset()
    expected, _ = fit(dataset.events, FitConfig(method="ssp", bin_size=0.1, lags=50, count_cap=3, sigma2=0.01,
                                                calibration="formal", stabiliser="psd", ridge=0.5, seed=0))
    shown = metrics_table(at).set_index("estimate").loc["DP-SSP", "relative error ‖Ĥ−H‖/‖H‖"]
    assert shown == pytest.approx(compare(expected.H, dataset.scenario.true_H(0.1, 50)).relative_error, rel=1e-9)
