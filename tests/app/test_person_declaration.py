"""AppTests of the per-person cost before spending on the Estimate page: on data with several sequences the page
asks whether one sequence is one person (a declaration kept for the session, also across pages), then starts from
the sequence unit; the plan states the per-person cost before the Release button (the sequence unit's own ε, or an
assumed k at the event unit, labelled so); the budget box counts every release on the rows in both views. One
assertion per message."""

import pytest
from app_tools import ledger_of, open_estimate, planned_epsilon, release_button, texts, use_formal_method
from conftest import no_problems
from test_sequence_unit_page import several_sequences

from dphawkes_app.estimate.person import PERSON_KEY
from dphawkes_core.estimators import FAMILIES
from dphawkes_core.release.ledger import person_epsilon

SEQUENCE_FAMILY = next(f for f in FAMILIES.values() if f.privacy.private and "sequence" in f.privacy.units)


def declared_page(data):
    at = use_formal_method(open_estimate(data), SEQUENCE_FAMILY)
    at.radio(key="person_answer").set_value("yes — one sequence is one person").run()
    return at


def markdown(at) -> str:
    return texts(at.markdown)


def test_the_page_asks_and_the_declaration_starts_from_the_sequence_unit():
    data = several_sequences()
    at = use_formal_method(open_estimate(data), SEQUENCE_FAMILY)
    assert at.radio(key="person_answer").value == "not declared" and at.radio(key="unit").value == "event"
    at.radio(key="person_answer").set_value("yes — one sequence is one person").run()
    no_problems(at)
    assert at.radio(key="unit").value == "sequence"


def test_the_plan_states_the_per_person_cost_before_the_button():
    data = several_sequences()
    at = declared_page(data)
    line = next(m.value for m in at.markdown if m.value.startswith("**Per person**"))
    ledger = ledger_of(data, "sequence")  # the promise is recorded, nothing spent yet
    assert f"ε = **{planned_epsilon(at):.3g}**" in line and ledger.person is not None and not ledger.metered


def test_the_event_unit_states_the_per_person_cost_as_an_assumption():
    """A person of k = 1 event is one event: the planned ε itself (a group of 1); any k is labelled an assumption."""
    data = several_sequences()
    at = use_formal_method(open_estimate(data), SEQUENCE_FAMILY)
    at.number_input(key="plan_k").set_value(1).run()
    assert f"**Per person: ε = {planned_epsilon(at):.3g} if nobody has more than k = 1 events** — an assumption, " \
        "not enforced" in markdown(at)


def test_the_declaration_is_kept_on_leaving_the_page():
    data = several_sequences()
    at = declared_page(data)
    at.switch_page("1_Data.py").run()
    at.switch_page("2_Estimate.py").run()
    assert at.radio(key="person_answer").value == "yes — one sequence is one person" and \
        list(at.session_state[PERSON_KEY].values()) == [True]


def test_the_budget_box_counts_every_release_on_the_rows_whatever_the_unit():
    data = several_sequences()
    at = declared_page(data)
    at.number_input(key="seqM").set_value(300).run()
    release_button(at).click().run()
    no_problems(at)
    at.radio(key="unit").set_value("event").run()
    assert "counted in both views: 0 event-level and 1 sequence-level; seen per sequence: spent" in texts(at.info)


def test_person_epsilon_of_the_plan_is_the_ledgers_sequence_view_charge():
    data = several_sequences()
    at = declared_page(data)
    at.number_input(key="seqM").set_value(300).run()
    release_button(at).click().run()
    view = ledger_of(data, "sequence")
    assert person_epsilon(view.metered[0].mechanisms, "sequence", 300, view.budget.delta) == \
        pytest.approx(view.spent(), rel=1e-12)


def test_an_enforced_cap_at_the_event_unit_states_the_cost_the_sequence_view_then_charges():
    """With a cap M at the event unit the plan's per-person figure is the 2M group the ledger charges per sequence
    after the click, and the released estimate's unit conversion says the same (not the assumed k·μ)."""
    data = several_sequences()
    at = use_formal_method(open_estimate(data), SEQUENCE_FAMILY)
    at.number_input(key="eps").set_value(0.05).run()
    at.number_input(key="evM").set_value(10).run()
    line = next(m.value for m in at.markdown if m.value.startswith("**Per person** (one whole sequence, enforced"))
    release_button(at).click().run()
    no_problems(at)
    charged = ledger_of(data, "sequence").spent()
    assert f"ε = **{charged:.3g}**" in line


def test_the_unit_conversion_under_an_enforced_cap_is_2m_mu():
    data = several_sequences()
    at = use_formal_method(open_estimate(data), SEQUENCE_FAMILY)
    at.number_input(key="eps").set_value(0.05).run()
    at.number_input(key="evM").set_value(10).run()
    release_button(at).click().run()
    charged = ledger_of(data, "sequence").spent()
    assert "Per person (one whole sequence, enforced cap M = 10: at most 10 kept events out and 10 in" \
        in markdown(at) and f"): ε = {charged:.3g} at δ" in markdown(at)


def test_the_plan_refuses_a_capped_release_the_sequence_view_would_refuse():
    """At ε = 1 a cap of M = 10 costs a person about ε = 34 (a group of 20): over the budget of 5 seen per sequence,
    so the plan says so and the button is off before anything is drawn."""
    data = several_sequences()
    at = use_formal_method(open_estimate(data), SEQUENCE_FAMILY)
    at.number_input(key="evM").set_value(10).run()
    assert release_button(at).disabled and "seen per sequence" in texts(at.warning) and ledger_of(data) is None


def test_a_yes_on_private_data_is_the_ledgers_promise_and_refuses_an_uncapped_event_release():
    """The answer holds in the core, not only in the session: the ledger records the promise at once (nothing
    spent), and the event unit with no cap M is then refused before any draw — in this session and in any other
    that opens the same rows (a new AppTest: no session state, only the ledger)."""
    data = several_sequences()
    at = declared_page(data)
    no_problems(at)
    ledger = ledger_of(data, "event")
    assert ledger is not None and ledger.person is not None and not ledger.metered  # promised, nothing spent
    fresh = use_formal_method(open_estimate(data), SEQUENCE_FAMILY)
    fresh.radio(key="unit").set_value("event").run()
    assert release_button(fresh).disabled
    assert "refused before any draw" in texts(fresh.warning) and "set a cap M" in texts(fresh.warning)
    assert not ledger_of(data, "event").metered
