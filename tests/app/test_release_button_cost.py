"""The Release button says what the plan says a person pays, and nothing else (issue 43: the plan read "ε = 146 per
person" while the button read "spends ε = 1"); no ε on the page is ever "inf" (a closed per-sequence view reads
"closed"/"not bounded")."""

import math
import re

import pytest
from app_tools import open_estimate, release_button, use_formal_method
from conftest import no_problems
from test_person_declaration import SEQUENCE_FAMILY
from test_sequence_unit_page import several_sequences

from dphawkes_app.estimate.person import PersonCost
from dphawkes_app.estimate.plan_view import release_label

pytestmark = pytest.mark.usefixtures("clear_streamlit_caches")
LINE = re.compile(r"Per person[^ε]*ε = \**([0-9.e+-]+)")


def person_figure(at) -> str:
    """The per-person ε of the plan's line, as printed."""
    line = next(m.value for m in at.markdown if m.value.startswith("**Per person"))
    return LINE.search(line).group(1)


def button_figure(at) -> str:
    label = release_button(at).label
    assert "per person" in label, label
    return re.search(r"spends ε = ([0-9.e+-]+) per person", label).group(1)


def test_the_button_repeats_the_plans_per_person_figure_in_every_unit():
    at = use_formal_method(open_estimate(several_sequences()), SEQUENCE_FAMILY)
    at.number_input(key="plan_k").set_value(7).run()  # event unit, no cap: an assumed k, said on both
    assert button_figure(at) == person_figure(at)
    assert "if nobody has more than 7 events" in release_button(at).label
    at.number_input(key="eps").set_value(0.05).run()
    at.number_input(key="evM").set_value(10).run()  # an enforced cap M: the 2M group
    assert button_figure(at) == person_figure(at) and "nobody" not in release_button(at).label
    at.radio(key="unit").set_value("sequence").run()  # the sequence unit: its own ε
    at.number_input(key="seqM").set_value(300).run()
    no_problems(at)
    assert button_figure(at) == person_figure(at)


def test_after_yes_an_uncapped_event_release_is_not_bounded_per_person_on_the_line_and_the_button():
    at = use_formal_method(open_estimate(several_sequences()), SEQUENCE_FAMILY)
    at.radio(key="person_answer").set_value("yes — one sequence is one person").run()
    at.radio(key="unit").set_value("event").run()
    no_problems(at)
    assert any(m.value.startswith("**Per person: not bounded**") for m in at.markdown)
    # the "yes" is the ledger's promise: the core refuses the release before any draw, and the button says so
    assert release_button(at).disabled and "spends" not in release_button(at).label
    assert not any(n.key == "plan_k" for n in at.number_input)  # no assumption asked where nothing bounds it


def shown_text(at) -> str:
    """Every text the page shows (messages, labels, captions, table cells)."""
    kinds = ("markdown", "caption", "info", "warning", "error", "success")
    parts = [e.value for kind in kinds for e in getattr(at, kind)]
    parts += [b.label for b in at.button] + [m.label + " " + str(m.value) for m in at.metric]
    parts += [df.value.to_string() for df in at.dataframe]
    return " | ".join(parts)


def test_a_closed_per_sequence_view_shows_no_infinite_epsilon():
    """An uncapped event-level release (nothing declared) closes the per-sequence view: seen per sequence, the budget
    box and the plan say "closed"/"not bounded", never inf."""
    data = several_sequences()
    at = use_formal_method(open_estimate(data), SEQUENCE_FAMILY)
    release_button(at).click().run()
    no_problems(at)
    at.radio(key="unit").set_value("sequence").run()
    at.number_input(key="seqM").set_value(300).run()
    text = shown_text(at)
    assert "closed" in text and release_button(at).disabled
    assert not re.search(r"\binf\b|Infinity|∞", text), text
    assert all(math.isfinite(v) for df in at.dataframe for v in df.value.select_dtypes("number").to_numpy().ravel()
               if not (isinstance(v, float) and math.isnan(v)))


@pytest.mark.parametrize("person, expected", [
    (None, "Release (spends ε = 1.5)"),
    (PersonCost(3.25, unit="sequence"), "Release (spends ε = 3.25 per person)"),
    (PersonCost(146.0, assumed_events=50), "Release (spends ε = 146 per person, if nobody has more than 50 events)"),
    (PersonCost(None), "Release (per person: not bounded)"),
])
def test_release_label_is_the_per_person_cost_or_the_release_own(person, expected):
    plan = type("Plan", (), {"refusal": "", "epsilon": 1.5})()
    assert release_label(plan, person) == expected
    refused = type("Plan", (), {"refusal": "refused: over the budget", "epsilon": 1.5})()
    assert release_label(refused, person) == "Release (refused — see above)"
