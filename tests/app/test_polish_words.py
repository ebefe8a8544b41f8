"""The words of the Estimate, Privacy–utility, Privacy audit and Data pages that a reader at 1100–1280 px tripped
over: counts said correctly, no μ-GDP jargon outside "details", the registry's method labels and readable column
names, one ε for one release, and the person question worded for the data it is asked on."""

from __future__ import annotations

import re

import pytest
from app_tools import (
    ledger_of,
    open_estimate,
    private_dataset,
    release_button,
    texts,
    use_formal_method,
)
from conftest import no_problems

pytestmark = pytest.mark.usefixtures("clear_streamlit_caches")


@pytest.fixture(scope="module")
def data():
    return private_dataset()


def budget_box(at) -> str:
    return next(e.value for e in at.info if "Privacy budget of this data set" in e.value)


def test_the_budget_box_counts_its_releases_in_words(data):
    at = use_formal_method(open_estimate(data))
    assert "no release yet" in budget_box(at)
    release_button(at).click().run()
    no_problems(at)
    assert len(ledger_of(data).metered) == 1
    assert "in one release" in budget_box(at) and "in one release" in texts(at.success)
    at.number_input(key="eps").set_value(0.5).run()
    release_button(at).click().run()
    assert "in 2 releases" in budget_box(at) and "in 2 releases" in texts(at.success)
    shown = texts(at.info) + texts(at.success) + texts(at.caption) + texts(at.markdown)
    assert "release(s)" not in shown and not re.search(r"\b0 release", shown)
