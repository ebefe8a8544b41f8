"""AppTests of the Data page's data loading: windows, units, labels, limits and rejected files."""

import io
import tomllib
from pathlib import Path

import pandas as pd
import pytest
from conftest import no_problems
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[2]
EPOCH = 1_700_000_000


def upload_page() -> AppTest:
    at = AppTest.from_file(str(ROOT / "pages/1_Data.py"), default_timeout=60).run()
    at.radio(key="data_source").set_value("Upload a CSV").run()
    return at


def upload(at: AppTest, name: str, content: bytes, mime: str = "text/csv") -> AppTest:
    return at.file_uploader(key="upload_csv").set_value((name, content, mime)).run()


def texts(at: AppTest) -> str:
    return " ".join(m.value for m in at.markdown)


def warnings(at: AppTest) -> str:
    return " ".join(w.value for w in at.warning)


def test_the_upload_limit_is_stated_in_plain_text_with_the_way_for_bigger_data():
    at = upload_page()
    no_problems(at)
    limit = tomllib.loads((ROOT / ".streamlit/config.toml").read_text())["server"]["maxUploadSize"]
    shown = texts(at)
    assert f"limited to {limit}\u00a0MB per file" in shown and "command line" in shown and "Parquet" in shown


def test_epoch_upload_with_a_stated_window_and_a_time_unit():
    at = upload_page()
    at.text_input(key="upload_start").set_value(str(EPOCH))
    at.text_input(key="upload_end").set_value(str(EPOCH + 7200))
    at.selectbox(key="upload_unit").set_value("hours (h)").run()
    rows = f"time,dimension\n{EPOCH + 1800},0\n{EPOCH + 3600},1\n{EPOCH + 9000},0\n".encode()
    upload(at, "epoch.csv", rows)
    no_problems(at)
    events = at.session_state["dataset"].events
    assert events.window_stated and events.time_unit == "h" and events.end_time == 2.0
    assert events.sequences[0].times[0].tolist() == [0.5] and events.outside_window == 1
    assert "window [" in texts(at) and "(stated)" not in texts(at) and "1 outside the window dropped" in texts(at)
    assert "1 event outside the stated window was dropped" in warnings(at)
    assert "not a formal guarantee" not in warnings(at)


def test_datetime_upload_without_a_window_says_it_was_read_from_the_data():
    at = upload_page()
    upload(at, "dates.csv", b"time,dimension\n2024-05-01T08:00:00Z,a\n2024-05-01T09:30:00Z,b\n")
    no_problems(at)
    events = at.session_state["dataset"].events
    assert not events.window_stated and events.time_kind == "datetime"
    assert "Window read from the data — not a formal guarantee" in warnings(at)
    assert "2 dimensions: a, b" in texts(at)


def test_mixed_dimension_labels_are_reported_with_the_odd_value():
    at = upload_page()
    upload(at, "mixed.csv", b"time,dimension\n1,0\n2,1\n3,x\n4,1\n")
    no_problems(at)
    assert "3 dimensions: 0, 1, x" in texts(at)
    assert "'x' on row 4" in warnings(at)


def test_parquet_upload():
    buffer = io.BytesIO()
    pd.DataFrame({"time": [0.5, 1.0, 2.5], "dimension": [0, 1, 0]}).to_parquet(buffer)
    at = upload_page()
    at.text_input(key="upload_end").set_value("3").run()
    upload(at, "e.parquet", buffer.getvalue(), "application/octet-stream")
    no_problems(at)
    events = at.session_state["dataset"].events
    assert events.n_events == 3 and events.window_stated and events.end_time == 3.0


@pytest.mark.parametrize("content, fragment", [(b"\xb8\x9f\x00\x01random bytes", "not a text CSV file"),
                                               (b"time,dimension\n2024-01-01,0\n5,1\n", "row 3, column 'time'")])
def test_a_rejected_upload_or_window_keeps_the_previous_data(content, fragment):
    at = upload_page()
    upload(at, "good.csv", b"time,dimension\n0.5,0\n1.5,1\n")
    assert at.session_state["dataset"].label == "good.csv"
    upload(at, "bad.csv", content)
    assert not at.exception
    message = " ".join(e.value for e in at.error)
    assert fragment in message and "still loaded" in message
    assert at.session_state["dataset"].label == "good.csv"
    at.text_input(key="upload_start").set_value("yesterday").run()  # a bad window for the (bad) file: still kept
    assert at.session_state["dataset"].label == "good.csv"


def _data_dir(tmp_path, name):
    folder = tmp_path / name
    folder.mkdir()
    (folder / "events.csv").write_bytes(b"time,dimension\n10.5,0\n400.25,1\n17600,0\n")
    (folder / "PROVENANCE.md").write_text("A test copy.")
    return folder


def test_real_data_propose_their_documented_window_and_unit(tmp_path, monkeypatch):
    _data_dir(tmp_path, "mat_quakes_magnitude")
    monkeypatch.setenv("DPHAWKES_DATA_DIR", str(tmp_path))
    at = AppTest.from_file(str(ROOT / "pages/1_Data.py"), default_timeout=60).run()
    at.radio(key="data_source").set_value("Sample data").run()
    assert at.text_input(key="sample_mat_quakes_magnitude_end").value == "17532"
    assert "proposed from the provenance" in texts(at)
    at.button(key="sample_go").click().run()
    no_problems(at)
    events = at.session_state["dataset"].events
    assert events.window_stated and events.end_time == 17532.0 and events.time_unit == "d"
    assert events.outside_window == 1 and "1 outside the window dropped" in texts(at)
    at.text_input(key="sample_mat_quakes_magnitude_end").set_value("").run()
    at.button(key="sample_go").click().run()
    assert not at.session_state["dataset"].events.window_stated
    assert "Window read from the data — not a formal guarantee" in warnings(at)


def test_real_data_without_a_documented_window_start_blank(tmp_path, monkeypatch):
    _data_dir(tmp_path, "unknown_set")
    monkeypatch.setenv("DPHAWKES_DATA_DIR", str(tmp_path))
    at = AppTest.from_file(str(ROOT / "pages/1_Data.py"), default_timeout=60).run()
    at.radio(key="data_source").set_value("Sample data").run()
    assert at.text_input(key="sample_unknown_set_end").value == ""
    assert "documents none" in texts(at)
