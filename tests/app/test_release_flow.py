"""AppTests of the Estimate page on private data: opening the page or moving a widget
spends nothing; each click on "Release (spends ε = …)" is exactly one release and says what it spent; a replay
is free and says so; a refused release draws nothing and leaves the last estimate on the page; the other methods
of the comparison are released together on request."""

import pytest
from app_tools import (
    formal_family,
    ledger_of,
    open_estimate,
    planned_epsilon,
    private_dataset,
    release_button,
    texts,
    use_formal_method,
    with_comparison,
)
from conftest import no_problems

from dphawkes_app.guidance import time_scale
from dphawkes_core.data.row_key import data_fingerprint
from dphawkes_core.release.ledger import Budget, LedgerKey
from dphawkes_core.release.ledger_file import LedgerBook
from dphawkes_core.release.ledger_store import default_ledger_path


def test_opening_estimate_on_private_data_spends_nothing(data):
    at = open_estimate(data)
    no_problems(at)
    assert ledger_of(data) is None  # nothing recorded, not even an unmetered output
    assert not at.get("plotly_chart")  # nothing computed from the data either
    use_formal_method(at)
    at.number_input(key="eps").set_value(4.0).run()  # an earlier page's ε, the "+" button: still nothing
    at.number_input(key="eps").set_value(4.05).run()
    at.number_input(key="dt").set_value(0.25).run()
    no_problems(at)
    assert ledger_of(data) is None
    assert release_button(at).label.startswith("Release (spends ε = ")
    assert "Not released yet" in texts(at.info) and "Nothing is spent until you press the button" in texts(at.info)


def test_each_release_spends_exactly_once_and_says_so(data):
    at = use_formal_method(open_estimate(data))
    epsilon = planned_epsilon(at)
    assert epsilon == pytest.approx(1.0, rel=1e-3)
    release_button(at).click().run()
    no_problems(at)
    ledger = ledger_of(data)
    assert len(ledger.metered) == 1 and ledger.spent() == pytest.approx(epsilon, rel=1e-3)
    message = texts(at.success)
    assert "Released." in message and f"spent ε = {epsilon:.3g}" in message and "remaining" in message
    assert "Shown again" not in texts(at.info)  # the rerun after a release does not call it a replay (point 2)
    assert at.get("plotly_chart")  # the released estimate is shown
    assert f"spent **{ledger.spent():.3g}**" in texts(at.info)  # the budget box is current
    at.number_input(key="eps").set_value(0.5).run()  # new settings: nothing until the click
    assert len(ledger_of(data).metered) == 1
    release_button(at).click().run()
    no_problems(at)
    after = ledger_of(data)
    assert len(after.metered) == 2 and after.spent() > ledger.spent()
    assert "Released." in texts(at.success)


def test_a_replay_is_shown_free_and_says_so(data):
    at = use_formal_method(open_estimate(data))
    release_button(at).click().run()
    entries = ledger_of(data).entries
    at.run()  # the same settings again
    no_problems(at)
    assert "Shown again from the ledger — free" in texts(at.info) and "nothing spent" in texts(at.info)
    assert "Released." not in texts(at.success)
    at.number_input(key="eps").set_value(2.0).run()
    at.number_input(key="eps").set_value(1.0).run()  # back to the released settings: free again
    no_problems(at)
    assert "Shown again from the ledger — free" in texts(at.info)
    assert ledger_of(data).entries == entries
    assert not any(b.key == "release" for b in at.button)  # nothing to release


def test_a_refusal_keeps_the_last_estimate(data):
    at = use_formal_method(open_estimate(data))
    release_button(at).click().run()
    book, key = LedgerBook(default_ledger_path()), LedgerKey(data_fingerprint(data.events))
    spent = book.get(key).spent()
    shown = at.get("plotly_chart")[0].proto.spec
    book.open(key, Budget(spent + 0.05, 1e-5))
    at.number_input(key="eps").set_value(2.0).run()  # over the budget: refused before any noise
    no_problems(at)
    assert "would be refused" in texts(at.warning) and release_button(at).disabled
    assert "your last estimate on these data" in texts(at.caption)
    assert at.get("plotly_chart")[0].proto.spec == shown  # the last estimate stays
    assert len(book.get(key).metered) == 1


def test_a_release_refused_at_the_click_keeps_the_last_estimate(data):
    at = use_formal_method(open_estimate(data))
    release_button(at).click().run()
    book, key = LedgerBook(default_ledger_path()), LedgerKey(data_fingerprint(data.events))
    at.number_input(key="eps").set_value(0.5).run()  # fits the budget when planned …
    assert not release_button(at).disabled
    book.open(key, Budget(book.get(key).spent() + 0.01, 1e-5))  # … which another session then lowers
    release_button(at).click().run()  # the click's run plans again before drawing the button: refused there
    assert not at.exception
    refusals = texts(at.error) + texts(at.warning)
    assert "Refused" in refusals or "would be refused" in refusals
    assert "your last estimate on these data" in texts(at.caption) and at.get("plotly_chart")
    assert len(book.get(key).metered) == 1


def test_private_data_get_no_settings_read_from_them_and_nothing_to_confirm(data):
    at = use_formal_method(open_estimate(data))
    scale = time_scale(data.events)
    assert not release_button(at).disabled and "read from the data" not in texts(at.warning)
    assert (at.number_input(key="dt").value, at.number_input(key="s").value) != (scale.bin_size, scale.support)
    assert not any(c.key == "dts_public" for c in at.sidebar.checkbox)


def test_undeclared_dimensions_are_not_a_formal_release_and_spend_nothing():
    data = private_dataset(declared=False)
    at = use_formal_method(open_estimate(data))
    assert "Not a formal release" in texts(at.warning) and "number of dimensions d" in texts(at.warning)
    button = release_button(at)
    assert "spends nothing" in button.label
    button.click().run()
    no_problems(at)
    ledger = ledger_of(data)
    assert not ledger.metered and len(ledger.unmetered) == 1 and ledger.spent() == 0
    assert "not a formal release" in texts(at.info).lower() and at.get("plotly_chart")


def test_the_other_methods_are_released_together_on_request(data):
    at = use_formal_method(open_estimate(data))
    release_button(at).click().run()
    before = ledger_of(data)
    go = next(b for b in with_comparison(at).button if b.key == "cmp_release_go")
    assert "spends ε" in go.label and len(ledger_of(data).entries) == len(before.entries)
    go.click().run()
    no_problems(at)
    after = ledger_of(data)
    assert len(after.metered) > len(before.metered) and "Released." in texts(at.success)
    at.run()  # shown again: every method from the ledger, nothing new
    assert ledger_of(data).entries == after.entries
    assert not any(b.key == "cmp_release_go" for b in at.button)


def test_the_family_used_is_not_the_default_presets_on_purpose():
    """The helpers choose a formal family from the registry, so these tests do not follow the default preset."""
    family = formal_family()
    assert family.privacy.private and "formal" in family.privacy.calibrations
