"""AppTests of the Estimate page's private choice of Δ and s: the sidebar box (private data only) plans the release
through the core's session (the share of ε said before the button), the click draws the count inside the recorded
release — the session's ``release_scaled``, as the command line's ``--bin-size auto`` — and nothing read from the
data is shown for the user to confirm before it."""

import pytest
from app_tools import (
    ledger_of,
    open_estimate,
    planned_epsilon,
    release_button,
    texts,
    use_formal_method,
)
from conftest import no_problems

from dphawkes_app.guidance import time_scale
from dphawkes_core.privacy.accounting import split
from dphawkes_core.privacy.time_scale import AUTO_SCALE_SHARE, time_scale_from_count


def _auto(at):
    at.checkbox(key="dtauto").check().run()
    return at


def _on_screen(at) -> str:
    return " | ".join(texts(getattr(at, kind)) for kind in ("caption", "info", "markdown", "warning", "success"))


def test_the_plan_says_the_share_before_the_button_and_reads_nothing_from_the_data(data):
    at = _auto(use_formal_method(open_estimate(data)))
    no_problems(at)
    assert ledger_of(data) is None  # planning draws and records nothing
    count_noise = split(1.0, 1e-5, AUTO_SCALE_SHARE).selection_multiplier
    plan = texts(at.caption)
    assert f"{AUTO_SCALE_SHARE:.0%} of ε = 1 buys a noisy count of the events" in plan
    assert f"noise std {count_noise:.3g} events" in plan
    assert planned_epsilon(at) == pytest.approx(1.0, rel=1e-3)  # the count and the fit compose to the ε asked
    assert at.number_input(key="dt").disabled and at.number_input(key="s").disabled
    scale = time_scale(data.events)  # the exact count's Δ and s appear nowhere before the release
    assert f"Δ = {scale.bin_size:g}" not in _on_screen(at) and f"s = {scale.support:g}" not in _on_screen(at)
    assert not any("confirm" in c.label.lower() for c in at.sidebar.checkbox)


def test_the_click_releases_inside_the_session_and_a_rerun_replays_it(data):
    at = _auto(use_formal_method(open_estimate(data)))
    epsilon = planned_epsilon(at)
    release_button(at).click().run()
    no_problems(at)
    ledger = ledger_of(data)
    assert len(ledger.metered) == 1 and ledger.spent() == pytest.approx(epsilon, rel=1e-3)
    entry = ledger.metered[0]
    assert entry.label.endswith("(auto Δ, s)")
    assert entry.mechanisms[0].label == "event count N (time scale Δ, s)"
    assert entry.mechanisms[0].parameter == pytest.approx(split(1.0, 1e-5, AUTO_SCALE_SHARE).selection_multiplier)
    chosen = entry.result["time_scale"]
    observed = sum(seq.end_time for seq in data.events.sequences)
    assert chosen["observed_time"] == pytest.approx(observed) and chosen["share"] == AUTO_SCALE_SHARE
    rule = time_scale_from_count(observed, chosen["noisy_count"])  # the rule on the released count, not on N
    assert (chosen["bin_size"], chosen["lags"]) == (rule.bin_size, rule.lags)
    assert "Released." in texts(at.success)
    assert f"bins of Δ = {rule.bin_size:g}, p = {rule.lags} lags" in texts(at.caption)
    assert "chosen privately inside the release with 5% of ε" in texts(at.caption)
    at.run()  # the same request again: shown from the ledger, nothing drawn
    no_problems(at)
    assert "Shown again from the ledger — free" in texts(at.info)
    assert ledger_of(data).entries == ledger.entries
    at.checkbox(key="dtauto").uncheck().run()  # Δ and s as set: another request, planned again
    no_problems(at)
    assert release_button(at).label.startswith("Release (spends ε = ")
    assert "your last estimate on these data" in texts(at.caption)


def test_the_box_is_not_offered_on_public_data():
    at = open_estimate()
    no_problems(at)
    assert not any(c.key == "dtauto" for c in at.sidebar.checkbox)


def test_without_a_target_epsilon_it_says_why_in_one_line(data):
    at = _auto(use_formal_method(open_estimate(data)))
    at.radio(key="privacy").set_value("σ² directly").run()
    assert not at.exception
    assert "spend a share of ε" in texts(at.error) + texts(at.warning)
    assert ledger_of(data) is None or not ledger_of(data).metered
