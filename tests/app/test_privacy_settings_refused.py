"""An ε the configuration refuses (above the largest the calibrations take) is one friendly red line on the
Estimate page, before anything is computed; a valid ε again fits with no problem box."""

from __future__ import annotations

from app_tools import open_estimate, texts, use_formal_method
from conftest import no_problems

from dphawkes_core.validation import EPSILON_MAX


def test_an_epsilon_above_the_limit_is_one_friendly_line_and_nothing_is_fitted():
    at = use_formal_method(open_estimate())
    no_problems(at)
    at.number_input(key="eps").set_value(EPSILON_MAX * 5).run()
    assert not at.exception, [e.value for e in at.exception]
    assert len(at.error) == 1 and f"above {EPSILON_MAX:g}" in texts(at.error)
    assert "\n" not in texts(at.error) and "Traceback" not in texts(at.error)
    assert not at.get("plotly_chart"), "nothing is fitted with a refused setting"
    at.number_input(key="eps").set_value(1.0).run()
    no_problems(at)
    assert at.get("plotly_chart")
