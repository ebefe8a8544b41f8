"""AppTest of the Privacy audit page for a family fitted to exact event times (ctls): its worst case is the
family's adversarial events, said on the page, and the page reports how much of the bound the pair reaches."""

import pytest
from app_tools import ROOT, TIMEOUT, texts
from conftest import no_problems
from streamlit.testing.v1 import AppTest

from dphawkes_core.estimators import FitConfig
from dphawkes_experiments.audit import AuditConfig, prepare_audit


@pytest.mark.slow
def test_the_audit_page_runs_the_exact_time_worst_case_and_says_how_much_of_the_bound_it_reaches():
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT)
    at.run()
    at.switch_page("pages/5_Privacy_audit.py")
    at.run()
    at.selectbox(key="au_method").set_value("ctls").run()
    at.number_input(key="au_s").set_value(1.5).run()  # p = 3
    at.number_input(key="au_cap").set_value(3).run()
    at.number_input(key="au_trials").set_value(100).run()
    at.toggle(key="au_worst").set_value(True).run()
    no_problems(at)
    assert any("adversarial events" in t.label for t in at.toggle)
    assert "reaches most of its bound at p = 25" in texts(at.caption)
    at.toggle(key="au_broken").set_value(True).run()  # the default factor 10⁶: caught with few trials
    at.button(key="au_run").click().run()
    assert not at.exception and "VIOLATION" in at.error[0].value  # the verdict is drawn as an error
    result = at.session_state["audit_result"]
    assert result.violated
    # the reach shown is the audit engine's, on the same public d, B, C, w
    fit = FitConfig(method="ctls", bin_size=0.5, lags=3, epsilon=1.0, calibration="formal", count_cap=3)
    session = prepare_audit(at.session_state["dataset"].events, AuditConfig(fit, trials=20, neighbours="worst-case"))
    reached = session.info["worst_case_reached"]
    assert 0.5 < reached <= 1 + 1e-9
    assert f"the release moves by {reached:.2f} of the claimed sensitivity" in texts(at.caption)
