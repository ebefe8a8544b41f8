"""AppTest of the Estimate page with ctls's width chosen inside the release: the option appears among the ctls
controls (built from its Setting), Δ and s are said to be the finest width and the longest support, and after the
release the page says which w and s were chosen (post-processing, nothing more spent)."""

import pytest
from app_tools import (
    ledger_of,
    open_estimate,
    planned_epsilon,
    private_dataset,
    release_button,
    texts,
    use_formal_method,
)
from conftest import no_problems

from dphawkes_core.estimators import get_family


def test_choosing_the_width_by_validation_releases_once_and_shows_the_chosen_w_and_s():
    data = private_dataset()
    at = use_formal_method(open_estimate(data), get_family("ctls"))
    at.number_input(key="dt").set_value(0.25).run()
    if at.radio(key="lagmode").value != "support s":
        at.radio(key="lagmode").set_value("support s").run()
    at.number_input(key="s").set_value(4.0).run()
    epsilon = planned_epsilon(at)
    at.selectbox(key="ctls_width_choice").set_value("validation").run()
    no_problems(at)
    assert "Δ above is the finest width tried and s the longest support" in texts(at.sidebar.caption)
    assert planned_epsilon(at) == pytest.approx(epsilon, rel=1e-12)  # the choice costs nothing more
    assert ledger_of(data) is None
    release_button(at).click().run()
    no_problems(at)
    ledger = ledger_of(data)
    assert len(ledger.metered) == 1 and ledger.spent() == pytest.approx(epsilon, rel=1e-3)
    info = ledger.metered[0].result["info"]
    line = (f"Width w = {info['chosen_width']:g} and support s = {info['chosen_support']:g} chosen inside the "
            "release by the validation contrast (post-processing: no extra privacy cost).")
    assert line in texts(at.caption)
    caption = next(c for c in texts(at.caption).split(" | ") if line in c)  # one story: what was set, what chosen
    assert "the finest width Δ = 0.25 and the longest support 4 it chose among" in caption
    assert "p = " not in caption
