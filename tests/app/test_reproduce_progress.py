"""The Reproduce page's runs show their progress: a status box with a progress bar per step (Figures 1 and 3, Table
1; Figures 2 and 4 count their fits), closed at the end with the time the run took."""

from __future__ import annotations

import pytest
from app_tools import ROOT
from conftest import no_problems
from streamlit.testing.v1 import AppTest

from dphawkes_core.data.datasets import list_samples


def finished_status(at: AppTest, title: str):
    """The status box of run ``title``, checked to be complete, closed and to hold a full progress bar."""
    boxes = [s for s in at.get("status") if s.proto.label.startswith(f"{title}: done in ")]
    assert len(boxes) == 1, [s.proto.label for s in at.get("status")]
    box = boxes[0]
    assert box.proto.state == box.proto.COMPLETE and not box.proto.expanded
    bars = [child for child in box.children.values() if child.type == "progress"]
    assert [bar.value for bar in bars] == [100]
    return box


def page() -> AppTest:
    return AppTest.from_file(str(ROOT / "pages/4_Reproduce_paper.py"), default_timeout=300).run()


@pytest.mark.parametrize("figure", ["1", "3"])
def test_a_kernel_figure_runs_under_a_progress_bar(figure):
    at = page()
    assert not at.get("status")  # nothing runs before the click
    at.button(key=f"run_fig{figure}").click().run()
    no_problems(at)
    finished_status(at, f"Figure {figure}")
    assert f"fig{figure}" in at.session_state["repro_results"]


def test_a_finished_run_is_shown_again_in_a_new_session_with_a_full_bar():
    first = page()
    first.button(key="run_fig3").click().run()
    result = first.session_state["repro_results"]["fig3"]
    second = page()  # another visitor with the same settings: the finished run, not a second one
    second.button(key="run_fig3").click().run()
    no_problems(second)
    finished_status(second, "Figure 3")
    assert second.session_state["repro_results"]["fig3"] is result


def test_table1_runs_under_a_progress_bar():
    if "email_dyad" not in {s.name for s in list_samples()}:
        pytest.skip("real data directory not available")
    at = page()
    at.selectbox(key="t1_data").set_value("email_dyad")
    at.number_input(key="t1_dt").set_value(24.0)
    at.number_input(key="t1_s").set_value(240.0)
    at.number_input(key="t1_runs").set_value(1)
    at.run()
    at.button(key="run_table1").click().run()  # refused: real data are private until marked public
    assert not at.get("status") and "table1" not in at.session_state["repro_results"]
    at.button(key="t1_mark_public").click().run()
    at.button(key="run_table1").click().run()
    no_problems(at)
    finished_status(at, "Table 1")
