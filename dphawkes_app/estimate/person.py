"""One sequence, one person: on data with several sequences the Estimate page asks whether each sequence is one
person's — a public declaration about the data set, kept for the session beside the Data page's declared domain
(by the source's rows, so it survives leaving the page or re-declaring the dimensions) — and, once declared,
starts from the sequence unit. Before the Release button the plan states what the release costs one person."""

from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

from dphawkes_core.errors import DPHawkesError
from dphawkes_core.release.ledger import PersonPromise, person_epsilon, utc_now

from ..words import epsilon_text

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


def keep_promise(rows_key: str, budget) -> bool:
    """On private (metered) data, a "yes" is the per-person promise in the data set's ledger, for the app and the
    CLI alike: from then on an event-level release with no cap M is refused before any draw, whoever asks
    (:meth:`~dphawkes_core.release.ledger_store.LedgerStore.promise_person`). Recorded once; refused by the ledger
    when an uncapped event-level release already closed the per-sequence view (said, and the answer reset). Returns
    whether the ledger changed."""
    if not (budget.metered and person_declared(rows_key)) or (budget.ledger is not None and budget.ledger.promise):
        return False
    try:
        budget.book.promise_person(budget.key, PersonPromise(utc_now(), "app", "the Estimate page's answer: one "
                                                                              "sequence is one person"))
    except DPHawkesError as exc:
        st.session_state.get(PERSON_KEY, {}).pop(rows_key, None)
        st.warning(f"The answer could not be kept as a promise: {exc}")
        return False
    return True


@dataclass(frozen=True)
class PersonCost:
    """What a planned release costs one person (one whole sequence), as the plan states it — and as its Release
    button repeats it, so the two can never differ.

    Attributes
    ----------
    epsilon : float or None
        ε at the budget's δ for one person; ``None`` when nothing bounds it (the event unit with no cap M after a
        per-person promise: the sequence question answered yes, or a sequence-level release on the rows).
    assumed_events : int or None
        The k the figure rests on when no cap enforces one (an assumption, not enforced).
    cap : int or None
        The enforced cap M of an event-level release.
    unit : str
        The release's privacy unit.
    """

    epsilon: float | None
    assumed_events: int | None = None
    cap: int | None = None
    unit: str = "event"

    def button_text(self) -> str:
        """The Release button's words for the cost: the per-person figure of :meth:`sentence`, nothing else."""
        if self.epsilon is None:
            return "per person: not bounded"
        condition = f", if nobody has more than {self.assumed_events} events" if self.assumed_events else ""
        return f"spends ε = {epsilon_text(self.epsilon)} per person{condition}"

    def sentence(self) -> str:
        """The plan's per-person line."""
        if self.epsilon is None:
            return ("**Per person: not bounded** — one sequence is one person here (declared, or released per "
                    "sequence before), and the event unit with no cap M protects single events only. Set M (\"events "
                    "kept per sequence\" in the sidebar), or choose the sequence unit.")
        eps = epsilon_text(self.epsilon)
        if self.unit == "sequence":
            return (f"**Per person** (one whole sequence, any number of events): ε = **{eps}** — the sequence unit "
                    "bounds it with its public cap M or clip G, enforced on the data.")
        if self.cap is not None:
            return (f"**Per person** (one whole sequence, enforced cap M = {self.cap}: at most {2 * self.cap} capped "
                    f"events move): ε = **{eps}**.")
        return (f"**Per person: ε = {eps} if nobody has more than k = {self.assumed_events} events** — an "
                "assumption, not enforced: the event unit protects single events only, and after it the budget's "
                "per-sequence view is closed. Choose the sequence unit, or set M, to bound what a release costs a "
                "person.")


def promised(rows_key: str, ledger) -> bool:
    """A per-person promise holds on these rows: one sequence declared one person (here, or in the ledger), or a
    sequence-level release made on them."""
    return bool(person_declared(rows_key)) or bool(ledger.promise)


def person_cost(mechanisms, ledger, max_events: int | None, sequences: int) -> PersonCost | None:
    """The per-person cost of releasing ``mechanisms`` at the view ``ledger`` sees (its unit and δ), or ``None``
    where the plan states none (one sequence, nothing spent, or sequences declared not to be people). At the
    event unit with no cap it asks for an assumed k — unless a per-person promise holds, which nothing then
    bounds."""
    rows, unit, delta = ledger.key.fingerprint, ledger.key.unit, ledger.budget.delta
    if sequences <= 1 or not mechanisms or person_declared(rows) is False:
        return None
    if unit == "sequence" or max_events is not None:
        cap = max_events if unit == "event" else None
        return PersonCost(person_epsilon(mechanisms, unit, max_events, delta), cap=cap, unit=unit)
    if promised(rows, ledger):
        return PersonCost(None, unit=unit)
    k = int(st.number_input("events per person k (your assumption)", min_value=1, value=ASSUMED_EVENTS_DEFAULT,
                            step=1, key="plan_k",
                            help="a public guess, not read from the data and not enforced: the most events one "
                                 "person has"))
    return PersonCost(person_epsilon(mechanisms, unit, None, delta, assumed_events=k), assumed_events=k, unit=unit)
