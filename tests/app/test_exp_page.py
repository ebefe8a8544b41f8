"""The exponential-kernel family on the Estimate page: offered by the registry, its decays a text control built
from its settings (comma-separated), a fit drawn with them, and a bad list refused in one line."""

from __future__ import annotations

from app_tools import open_estimate, use_formal_method
from conftest import no_problems

from dphawkes_core.estimators import get_family


def test_the_estimate_page_fits_it_with_the_decays_typed_in(clear_streamlit_caches):
    family = get_family("exp")
    at = use_formal_method(open_estimate(), family)
    no_problems(at)
    decays = at.text_input(key="decays")
    assert decays.value == "0.7, 1.5, 3" and "decays" in decays.label
    decays.set_value("1, 4").run()
    no_problems(at)
    assert at.get("plotly_chart"), "the fit is drawn"
    at.text_input(key="decays").set_value("1, -4").run()
    assert any("decays" in e.value for e in at.error) and not at.exception
