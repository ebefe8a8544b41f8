"""AppTests of the Data page's declared domain and polish: the
dimensions found in an upload are proposed, labelled "read from the data", and declared only on request; a real
data set's labels.csv declares them; the source radio, the upload label and the simulation size follow the
loaded data."""

from app_tools import ROOT, TIMEOUT, open_estimate, private_csv, private_dataset, texts, use_formal_method
from conftest import no_problems
from streamlit.testing.v1 import AppTest

DATA = str(ROOT / "pages" / "1_Data.py")


def upload(at: AppTest, content: bytes, end: float) -> AppTest:
    at.radio(key="data_source").set_value("Upload a CSV").run()
    at.text_input(key="upload_end").set_value(f"{end!r}").run()
    return at.file_uploader(key="upload_csv").set_value(("mine.csv", content, "text/csv")).run()


def test_an_upload_proposes_its_dimensions_and_declares_them_on_request():
    content, end = private_csv()
    at = upload(AppTest.from_file(DATA, default_timeout=TIMEOUT).run(), content, end)
    no_problems(at)
    assert not at.session_state["dataset"].events.dimensions_declared
    assert "Read from the data" in texts(at.caption)
    dims = next(t for t in at.text_input if t.key.startswith("upload_dims_"))
    assert dims.value == "0, 1"
    at.button(key="upload_declare").click().run()
    no_problems(at)
    events = at.session_state["dataset"].events
    assert events.dimensions_declared and events.n_events == private_dataset().events.n_events
    assert "Declared by you (public): d = 2" in texts(at.success)
    at = use_formal_method(open_estimate(at.session_state["dataset"]))  # a formal release is possible, on request
    assert any(b.key == "release" and b.label.startswith("Release (spends ε") for b in at.button)


def test_a_declared_dimension_list_drops_rows_outside_it():
    content, end = private_csv()
    at = upload(AppTest.from_file(DATA, default_timeout=TIMEOUT).run(), content, end)
    dims = next(t for t in at.text_input if t.key.startswith("upload_dims_"))
    dims.set_value("0").run()  # declare only dimension 0: the rows of dimension 1 are outside the domain
    at.button(key="upload_declare").click().run()
    no_problems(at)
    events = at.session_state["dataset"].events
    assert events.dim == 1 and events.outside_domain > 0 and "dropped and counted" in texts(at.success)


def test_real_data_declare_their_dimensions_by_labels(tmp_path, monkeypatch):
    for name, labels in (("with_labels", True), ("without_labels", False)):
        folder = tmp_path / name
        folder.mkdir()
        (folder / "events.csv").write_bytes(b"time,dimension\n1.5,0\n4.25,1\n7,0\n")
        (folder / "PROVENANCE.md").write_text("A test copy.")
        if labels:
            (folder / "labels.csv").write_text("dimension,label\n0,north\n1,south\n")
    monkeypatch.setenv("DPHAWKES_DATA_DIR", str(tmp_path))
    at = AppTest.from_file(DATA, default_timeout=TIMEOUT).run()
    at.radio(key="data_source").set_value("Sample data").run()
    at.selectbox(key="sample_name").set_value("with_labels").run()
    at.button(key="sample_go").click().run()
    no_problems(at)
    events = at.session_state["dataset"].events
    assert events.dimensions_declared and events.names == ("north", "south")
    assert "labels.csv" in texts(at.success)
    at.selectbox(key="sample_name").set_value("without_labels").run()
    at.button(key="sample_go").click().run()
    assert not at.session_state["dataset"].events.dimensions_declared
    at.button(key="sample_declare").click().run()
    no_problems(at)
    assert at.session_state["dataset"].events.dimensions_declared


def test_the_source_and_sizes_follow_the_loaded_data():
    at = AppTest.from_file(DATA, default_timeout=TIMEOUT)
    at.session_state["dataset"] = private_dataset()
    at.run()
    no_problems(at)
    assert at.radio(key="data_source").value == "Upload a CSV"  # not reset to "Simulate"
    at = AppTest.from_file(DATA, default_timeout=TIMEOUT).run()  # the default simulation (50,000 events)
    assert at.number_input(key="sim_events").value == at.session_state["dataset"].events.n_events
    assert "Upload a file (CSV or Parquet)" in at.radio(key="data_source").options  # Parquet works too
