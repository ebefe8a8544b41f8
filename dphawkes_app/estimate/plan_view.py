"""Below the plan of a release: what it costs one person, why it would be refused with the ways out that work, and
the Release button — whose cost is the per-person figure the plan states, and nothing else (issue 43: the plan said
"ε = 146 per person" while the button read "spends ε = 1").

It reads the plan only (its ledger view, mechanisms, cap M, number of sequences and refusal): the refusal is the
core's, the advice is tried against the same check (:mod:`.advice`)."""

from __future__ import annotations

import streamlit as st

from ..words import epsilon_text
from .advice import advice, advice_sentence
from .person import PersonCost, person_cost


def release_label(plan, person: PersonCost | None, count: int = 1) -> str:
    """The button's words: the per-person cost when the plan states one, else the release's own ε."""
    what = "Release" if count == 1 else "Release the other methods"
    if plan.refusal:
        return f"{what} (refused — see above)"
    cost = person.button_text() if person is not None else f"spends ε = {epsilon_text(plan.epsilon)}"
    return f"{what} ({cost})"


def plan_button(plan, key: str, count: int = 1) -> bool:
    """The per-person line, the refusal with its followable advice, and the button; True when clicked (and
    allowed)."""
    ledger = plan.ledger
    person = person_cost(plan.mechanisms, ledger, plan.max_events, plan.sequences)
    if person is not None:
        st.markdown(person.sentence())
    if plan.refusal:
        st.warning(f"**This release would be refused** (nothing is drawn): {plan.refusal}. "
                   f"{advice_sentence(advice(plan))}", icon=":material/block:")
    return st.button(release_label(plan, person, count), type="primary", key=key, disabled=bool(plan.refusal))
