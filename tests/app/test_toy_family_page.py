"""A family registered at run time (the toy of ``tests/core/estimators/toy_family.py``: one module plus one
registry line) appears in the Estimate page's method choice with the controls its settings declare, and fits
on the default (public, simulated) data — with no edit to the pages."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from conftest import no_problems

from dphawkes_core.estimators import register, unregister

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "core" / "estimators"))
from app_tools import open_estimate, use_formal_method  # noqa: E402
from toy_family import ToyMeanRate  # noqa: E402


@pytest.fixture
def toy(clear_streamlit_caches):
    register(ToyMeanRate())
    yield ToyMeanRate()
    unregister(ToyMeanRate.name)


def test_the_estimate_page_offers_a_registered_family_and_its_controls(toy):
    at = open_estimate()
    assert toy.label in at.selectbox(key="method").options
    at = use_formal_method(at, toy)
    no_problems(at)
    shrink = at.number_input(key="shrink")
    assert shrink.value == 1.0 and "shrink" in shrink.label
    shrink.set_value(0.5).run()
    no_problems(at)
    assert at.get("plotly_chart"), "the toy family's fit is drawn"
