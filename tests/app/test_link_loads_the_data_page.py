"""A link loads what the Data page loads: ``/Estimate?data=sample&name=…&start=…&end=…`` gives
the same events *with the same declaration* (the data set's labels.csv) as the Data page's "Load this data set",
so a formal release is possible from a shared link. Checked on a small copy (always) and on the real
``mat_quakes_magnitude`` data set of the data directory (skipped, saying why, where it is absent)."""

from __future__ import annotations

import pytest
from app_tools import ROOT, TIMEOUT, open_estimate, release_button, use_formal_method
from conftest import no_problems
from streamlit.testing.v1 import AppTest

from dphawkes_app.state import fingerprint
from dphawkes_core.data.datasets import DATA_DIR_ENV, default_data_dir
from dphawkes_core.data.row_key import data_fingerprint

DATA = str(ROOT / "pages" / "1_Data.py")


def _tiny_data_dir(root):
    """A data directory with one data set whose labels.csv declares a dimension without rows (``quiet``): read from
    the data it would have d = 2, declared d = 3."""
    folder = root / "tiny"
    folder.mkdir()
    (folder / "events.csv").write_text("time,dimension\n" + "".join(f"{0.37 * k + 0.1:.4f},{k % 2}\n"
                                                                    for k in range(60)))
    (folder / "labels.csv").write_text("dimension,label\n0,up\n1,down\n2,quiet\n")
    (folder / "PROVENANCE.md").write_text("Made up for a test.")
    return root


def _data_page_dataset(name: str, start: str, end: str):
    """The data set as the Data page loads it, with the window typed into its inputs."""
    at = AppTest.from_file(DATA, default_timeout=TIMEOUT).run()
    at.radio(key="data_source").set_value("Sample data").run()
    at.selectbox(key="sample_name").set_value(name).run()
    at.text_input(key=f"sample_{name}_start").set_value(start).run()
    at.text_input(key=f"sample_{name}_end").set_value(end).run()
    at.button(key="sample_go").click().run()
    no_problems(at)
    return at.session_state["dataset"]


def _check_the_link_loads_the_data_page(name: str, start: str, end: str, declared_d: int):
    page = _data_page_dataset(name, start, end)
    at = open_estimate(data="sample", name=name, start=start, end=end)
    no_problems(at)
    linked = at.session_state["dataset"]
    assert linked.label == page.label == name
    for field in ("names", "dimensions_declared", "sequences_declared", "window_stated", "n_events",
                  "outside_domain", "outside_window", "time_unit"):
        assert getattr(linked.events, field) == getattr(page.events, field), field
    assert linked.events.dimensions_declared and linked.events.window_stated and linked.events.dim == declared_d
    assert data_fingerprint(linked.events) == data_fingerprint(page.events)  # one budget for both
    assert fingerprint(linked) == fingerprint(page)  # and the app's caches see one data set
    at = use_formal_method(at)  # a formal release is possible from the link, on request
    assert release_button(at).label.startswith("Release (spends ε")


def test_a_link_loads_the_declaration_the_data_page_loads(tmp_path, monkeypatch):
    monkeypatch.setenv(DATA_DIR_ENV, str(_tiny_data_dir(tmp_path)))
    _check_the_link_loads_the_data_page("tiny", "0", "25", declared_d=3)


def test_the_real_earthquake_link_loads_what_the_data_page_loads():
    name = "mat_quakes_magnitude"
    if not (default_data_dir() / name / "events.csv").is_file():
        pytest.skip(f"the real data set {name} is not in {default_data_dir()} (set {DATA_DIR_ENV})")
    _check_the_link_loads_the_data_page(name, "0", "17532", declared_d=2)
