"""One sequence, one person: on data with several sequences the Estimate page asks whether each sequence is one
person's — a public declaration about the data set, kept for the session beside the Data page's declared domain
(by the source's rows, so it survives leaving the page or re-declaring the dimensions) — and, once declared,
starts from the sequence unit. Before the Release button the plan states what the release costs one person."""

from __future__ import annotations

import streamlit as st

from dphawkes_core.release.ledger import person_epsilon

PERSON_KEY = "sequence_is_person"  # {rows key of the source: True (one sequence = one person) | False}
ANSWERS = ("not declared", "yes — one sequence is one person", "no")
ASSUMED_EVENTS_DEFAULT = 50


def person_declared(rows_key: str) -> bool | None:
    """The declaration for the source with ``rows_key``: True, False or ``None`` (not declared)."""
    return st.session_state.get(PERSON_KEY, {}).get(rows_key)


def default_to_sequence_unit(rows_key: str) -> None:
    """Before the unit is drawn: with one sequence declared one person and no unit chosen yet (by a widget or a
    link), start from the sequence unit."""
    if person_declared(rows_key) and "unit" not in st.session_state and "unit" not in st.query_params:
        st.session_state["unit"] = "sequence"


def _declare(rows_key: str) -> None:
    answer = st.session_state["person_answer"]
    store = st.session_state.setdefault(PERSON_KEY, {})
    if answer == ANSWERS[0]:
        store.pop(rows_key, None)
        return
    store[rows_key] = answer == ANSWERS[1]
    if store[rows_key]:
        st.session_state["unit"] = "sequence"  # declared: the unit that protects the person


def ask_person(rows_key: str, sequences: int, public: str | None = None) -> None:
    """On data with several sequences: the question, answered once and kept. On private data it is a public
    declaration about who the rows belong to; on public data (``public``: ``"simulated"`` or ``"public"``) it is
    asked too — a teacher may want the per-person cost shown — but as a choice for the lesson: nothing is spent
    there and nobody's events are in the rows."""
    if sequences <= 1:
        return
    state = person_declared(rows_key)
    st.session_state["person_answer"] = ANSWERS[0] if state is None else ANSWERS[1] if state else ANSWERS[2]
    if public is None:
        question = f"These data hold {sequences:,} sequences. Is one sequence one person?"
        why = ("a public declaration about the data set, not read from the rows: when one sequence holds one "
               "person's events, the sequence unit protects the whole person and the page starts from it")
    else:
        question = f"These {public} data hold {sequences:,} sequences. Treat one sequence as one person?"
        why = ("nothing is spent on public data, so this only sets the lesson: 'yes' starts from the sequence unit, "
               "whose ε is what a release would cost one person if these were private data with one person per "
               "sequence (on private data the same question is a declaration about who the rows belong to)")
    st.radio(question, ANSWERS, horizontal=True, key="person_answer", on_change=_declare, args=(rows_key,),
             help=why)


def person_line(mechanisms, unit: str, max_events: int | None, delta: float, sequences: int) -> str:
    """What the planned release costs one person (one sequence), in one sentence; asks for an assumed k where no cap
    bounds it (an event-level release without one). Empty on one sequence or without mechanisms."""
    if sequences <= 1 or not mechanisms:
        return ""
    if unit == "sequence":
        eps = person_epsilon(mechanisms, unit, max_events, delta)
        return (f"**Per person** (one whole sequence, any number of events): ε = **{eps:.3g}** — the sequence unit "
                "bounds it with its public cap M or clip G, enforced on the data.")
    if max_events is not None:
        eps = person_epsilon(mechanisms, unit, max_events, delta)
        return (f"**Per person** (one whole sequence, enforced cap M = {max_events}: at most {2 * max_events} capped "
                f"events move): ε = **{eps:.3g}**.")
    k = int(st.number_input("events per person k (your assumption)", min_value=1, value=ASSUMED_EVENTS_DEFAULT,
                            step=1, key="plan_k",
                            help="a public guess, not read from the data and not enforced: the most events one "
                                 "person has"))
    eps = person_epsilon(mechanisms, unit, None, delta, assumed_events=k)
    return (f"**Per person: ε = {eps:.3g} if nobody has more than k = {k} events** — an assumption, not enforced: "
            "the event unit protects single events only, and after it the budget's per-sequence view is closed. "
            "Choose the sequence unit to bound what a release costs a person.")
