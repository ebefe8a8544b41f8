"""The Estimate page's proposal: what the user declares decides it, with the rule's reason on the page; on private
data the size is the user's statement (a radio), never the data's count; the held-out score never enters."""

from __future__ import annotations

import pytest
from app_tools import open_estimate, private_dataset, texts, use_formal_method
from conftest import no_problems

from dphawkes_core.estimators import get_family
from dphawkes_core.estimators.proposal import SMOOTH, propose_family

pytestmark = pytest.mark.usefixtures("clear_streamlit_caches")


def _proposed(at) -> str:
    return next(c.value for c in at.sidebar.caption if c.value.startswith("Proposed: "))


def test_the_declared_shape_and_size_decide_the_proposal_on_private_data():
    data = private_dataset(n_events=60_000)  # more than the rule's threshold: the count must not be read
    at = use_formal_method(open_estimate(data))
    no_problems(at)
    assert {r.key for r in at.sidebar.radio} >= {"kernel_shape", "declared_size"}
    expected = propose_family(True, "unknown", None)  # size not stated: not the data's 60,000 events
    assert f"**{get_family(expected.method).label}**" in _proposed(at) and expected.reason in _proposed(at)
    at.radio(key="declared_size").set_value("above").run()
    assert f"**{get_family('ctls').label}**" in _proposed(at)
    at.radio(key="kernel_shape").set_value(SMOOTH).run()
    no_problems(at)
    assert f"**{get_family('exp').label}**" in _proposed(at) and "Gram derived" not in _proposed(at)
    at.radio(key="declared_size").set_value("far above").run()  # 10⁵ or more, stated: the derived Gram
    no_problems(at)
    assert "Gram derived" in _proposed(at) and propose_family(True, SMOOTH, 100_000).reason in _proposed(at)
    assert "held-out" not in _proposed(at) and "accuracy notes" in texts(at.sidebar.caption)
