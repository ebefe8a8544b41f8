"""AppTests of settings that follow the data, on the usual path Home → Estimate → Data →
Estimate: the Δ and s proposed for new public data are applied (and said so) unless the user set their own (kept,
and said so) — never one claimed and another fitted; nothing is proposed from private data."""

import numpy as np
from app_tools import ROOT, TIMEOUT, texts
from conftest import no_problems
from streamlit.testing.v1 import AppTest

from dphawkes_app.guidance import time_scale
from dphawkes_core.data.row_key import data_fingerprint
from dphawkes_core.release.ledger import LedgerKey
from dphawkes_core.release.ledger_file import LedgerBook
from dphawkes_core.release.ledger_store import default_ledger_path

WEEK = 7 * 24 * 3600.0


def week_csv() -> bytes:
    """A week of events in seconds (about 20 minutes apart): its own time scale, far from the presets'."""
    rng = np.random.default_rng(0)
    times = np.sort(rng.uniform(0, WEEK, 500))
    return ("time,dimension\n" + "\n".join(f"{t:.3f},{rng.integers(0, 2)}" for t in times)).encode()


def home_estimate_data_upload(change_dt: bool = False, public: bool = True) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT).run()
    at.switch_page("pages/2_Estimate.py").run()
    no_problems(at)
    if change_dt:
        at.number_input(key="dt").set_value(0.25).run()
    at.switch_page("pages/1_Data.py").run()
    at.radio(key="data_source").set_value("Upload a CSV").run()
    at.text_input(key="upload_end").set_value(f"{WEEK:g}").run()
    at.file_uploader(key="upload_csv").set_value(("week.csv", week_csv(), "text/csv")).run()
    no_problems(at)
    assert at.session_state["dataset"].label == "week.csv"
    if public:  # an upload is private until marked public
        LedgerBook(default_ledger_path()).open(LedgerKey(data_fingerprint(at.session_state["dataset"].events)),
                                               public=True)
    return at


def back_to_estimate(at: AppTest) -> AppTest:
    return at.switch_page("pages/2_Estimate.py").run()


def test_the_proposal_for_new_data_is_applied_and_said():
    at = home_estimate_data_upload()
    scale = time_scale(at.session_state["dataset"].events)
    back_to_estimate(at)
    no_problems(at)
    assert at.number_input(key="dt").value == scale.bin_size and at.number_input(key="s").value == scale.support
    note = texts(at.info)
    assert f"Δ = {scale.bin_size:g} and s = {scale.support:g}" in note and "applied" in note
    assert at.selectbox(key="preset").value == "custom"  # the preset's sentence no longer describes these data


def test_nothing_is_proposed_from_private_data_and_nothing_asks_to_confirm_it():
    at = home_estimate_data_upload(public=False)
    before = at.session_state["dt"], at.session_state["s"]
    back_to_estimate(at)
    no_problems(at)
    assert (at.number_input(key="dt").value, at.number_input(key="s").value) == before  # not read from the data
    assert "never proposed from private data" in texts(at.info)
    assert any("not proposed from these private data" in c.value for c in at.caption)
    assert not any("public choice" in c.label for c in at.sidebar.checkbox)
    assert not at.get("button") or all(b.key != "use_proposal" for b in at.button)


def test_the_users_own_settings_are_kept_and_said_with_a_way_to_the_proposal():
    at = home_estimate_data_upload(change_dt=True)
    scale = time_scale(at.session_state["dataset"].events)
    back_to_estimate(at)
    no_problems(at)
    assert at.number_input(key="dt").value == 0.25  # the user's Δ, kept
    note = texts(at.info)
    assert "kept your Δ = 0.25" in note and f"Proposed for these data: Δ = {scale.bin_size:g}" in note
    at.button(key="use_proposal").click().run()
    no_problems(at)
    assert at.number_input(key="dt").value == scale.bin_size and at.number_input(key="s").value == scale.support


def test_the_fit_uses_the_settings_the_page_states():
    """On data marked public (so the fit runs live) the bins of the fit are those of the stated Δ."""
    at = home_estimate_data_upload()
    events = at.session_state["dataset"].events
    scale = time_scale(events)
    back_to_estimate(at)
    at.selectbox(key="method").set_value("CLS").run()
    no_problems(at)
    caption = texts(at.caption)
    assert f"bins of Δ = {scale.bin_size:g}, p = {int(np.ceil(scale.support / scale.bin_size))} lags" in caption


def test_back_to_a_presets_data_applies_the_preset():
    at = home_estimate_data_upload(change_dt=True)
    back_to_estimate(at)
    at.selectbox(key="preset").set_value("works").run()  # the selector loads the preset's data and settings
    no_problems(at)
    assert at.number_input(key="dt").value == 0.5 and at.session_state["dataset"].source == "simulated"
