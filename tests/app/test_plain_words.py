"""Words a user follows (issue 43.4): the rendered text of every page — on the default data, on private data with a
release planned, with ctls's width chosen by validation, on a real data set by link, and on each source of the Data
page — holds none of the internal words and formulas the issue lists (option names shown raw, "(stated)", "0 =
unset: <formula>", "d(dp+1)", "Infinity", commands and environment variables outside the "For administrators"
place, a number split from its "%"). Help tooltips are not scanned: formulas may sit behind help."""

from __future__ import annotations

import pytest
from app_tools import ROOT, TIMEOUT, open_estimate, private_dataset, use_formal_method
from conftest import no_problems
from page_text import INTERNAL, page_texts, raw_choices, word_problems
from streamlit.testing.v1 import AppTest

from dphawkes_core.data.datasets import list_samples
from dphawkes_core.estimators import FAMILIES

pytestmark = pytest.mark.usefixtures("clear_streamlit_caches")
PAGES = ["app.py", *(f"pages/{p.name}" for p in sorted((ROOT / "pages").glob("*.py")))]


def page(path: str, **query) -> AppTest:
    at = AppTest.from_file(str(ROOT / path), default_timeout=TIMEOUT)
    at.query_params.update(query)
    return at.run()


@pytest.mark.parametrize("path", PAGES)
def test_every_page_on_the_default_data_speaks_plainly(path):
    at = page(path)
    no_problems(at)
    assert not word_problems(page_texts(at))


@pytest.mark.parametrize("source", ["Simulate", "Upload a CSV", "Sample data"])
def test_every_source_of_the_data_page_speaks_plainly(source):
    at = page("pages/1_Data.py")
    at.radio(key="data_source").set_value(source).run()
    no_problems(at)
    assert not word_problems(page_texts(at))


def test_the_estimate_page_with_every_option_of_every_method_speaks_plainly():
    at = open_estimate()
    for family in FAMILIES.values():
        at.selectbox(key="method").set_value(family.label).run()
        assert not word_problems(page_texts(at)), family.label
    at.selectbox(key="method").set_value(FAMILIES["ctls"].label).run()
    at.selectbox(key="ctls_width_choice").set_value("validation").run()
    no_problems(at)
    assert not word_problems(page_texts(at))


def test_a_planned_release_on_private_data_speaks_plainly():
    at = use_formal_method(open_estimate(private_dataset()))
    no_problems(at)
    assert not word_problems(page_texts(at))


def test_a_real_data_set_by_link_speaks_plainly():
    if not any(s.name == "mat_quakes_magnitude" for s in list_samples()):
        pytest.skip("the real data directory is not available (set DPHAWKES_DATA_DIR)")
    at = page("pages/2_Estimate.py", data="sample", name="mat_quakes_magnitude", start="0", end="17532")
    no_problems(at)
    assert not word_problems(page_texts(at))


def test_the_scan_finds_what_the_issue_listed():
    """Planted: each of the issue's examples is found; a command inside "For administrators" is not."""
    examples = ["stated", "window [0, 3652 d] (stated)", "ridge λ (0 = unset: the rule 1.5·√r·ρσ√(dB+1))",
                "divides by d(dp+1) = 34", "ε = Infinity", "spent inf of 5", "a coin flip (50 %)"]
    assert all(word_problems([((), text)]) for text in examples)
    assert not word_problems([((), "width w and support s"), ((), "a coin flip (50\u00a0%)"),
                              ((), "ε spent: not bounded")])
    assert word_problems([((), "dphawkes fit events.csv --bin-size 0.1")])
    assert word_problems([((), "set DPHAWKES_DATA_DIR")])
    assert not word_problems([(("For administrators: the data folder",), "set DPHAWKES_DATA_DIR")])
    assert {"stated", "validation"} <= raw_choices() and set(INTERNAL)
