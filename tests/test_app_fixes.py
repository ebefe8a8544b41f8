"""AppTests of the first-visit fixes (issue 12): readable kernel grids, honest links, cost prediction,
negative baselines, no meaningless loss chart, data-scaled defaults, consistent text, a quiet sweep."""

import json
from pathlib import Path

import pytest
from conftest import no_problems
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parent.parent
TIMEOUT = 180

pytestmark = pytest.mark.usefixtures("clear_streamlit_caches")


def open_app_page(path: str, **query) -> AppTest:
    """Open the app (so ``ui_common`` resolves), then the page, with ``query`` in the URL."""
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT)
    at.query_params.update(query)
    at.run()
    if path != "app.py":
        at.switch_page(path)
        at.run()
    return at


def figures(at: AppTest) -> list[dict]:
    return [json.loads(chart.proto.spec) for chart in at.get("plotly_chart")]


def test_a_sweep_leaves_no_streamlit_context_warnings_in_the_log(capfd):
    at = open_app_page("pages/3_Privacy_utility.py")
    at.number_input(key="pu_events").set_value(300)
    at.text_input(key="pu_levels_sigma2").set_value("0, 1")
    at.text_input(key="pu_bins").set_value("0.5, 1")
    at.number_input(key="pu_iters").set_value(20)
    at.run()
    capfd.readouterr()  # AppTest's own start-up, before the sweep
    at.button(key="pu_run").click().run()
    no_problems(at)
    assert len(at.session_state["sweep_store"]) == 6 * 3  # cls + pgd, 2 levels, 2 Δ, 3 runs
    log = "".join(capfd.readouterr())
    assert "ScriptRunContext" not in log and "No runtime found" not in log, log[:500]
