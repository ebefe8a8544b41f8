"""A refused release gets only advice that works (issue 43: "Lower ε, or raise the budget" was offered where no ε
and no budget could help). Each way out is tried against the same check that refused the plan, on real plans of a
privacy session (no AppTest: the plans are the page's, drawn from public numbers only)."""

from __future__ import annotations

import numpy as np

from dphawkes_app.estimate.advice import advice, advice_sentence
from dphawkes_core.data.domain import Domain
from dphawkes_core.data.io import load_csv
from dphawkes_core.data.row_key import data_fingerprint
from dphawkes_core.estimators import FitConfig
from dphawkes_core.release.ledger import Budget, LedgerKey
from dphawkes_core.release.ledger_file import LedgerBook
from dphawkes_core.release.session import PrivacySession

LOWER, CAP, SEQUENCE, EVENT, BUDGET = ("lower ε", "set a cap M", "choose the sequence unit", "choose the event unit",
                                       "raise the budget")


def three_sequences():
    rng = np.random.default_rng(3)
    rows = "".join(f"{t:.3f},{rng.integers(2)},{s}\n" for s in range(3) for t in np.sort(rng.uniform(0, 30, 25)))
    return load_csv(("time,dimension,sequence\n" + rows).encode(), end_time=30.0,
                    domain=Domain(dimensions=("0", "1"), sequences=("0", "1", "2")))


def session(tmp_path, unit: str, budget: float = 20.0) -> PrivacySession:
    events = three_sequences()
    book = LedgerBook(tmp_path / "ledger.json")
    fingerprint = data_fingerprint(events)
    if book.get(LedgerKey(fingerprint)) is None:
        book.open(LedgerKey(fingerprint), Budget(budget, 1e-5))
    return PrivacySession.for_events(events, book, fingerprint, unit)


def config(unit: str, epsilon: float = 1.0, **extra) -> FitConfig:
    bounds = {"max_events": 10} if unit == "sequence" else {}
    return FitConfig(method="ssp", bin_size=1.0, lags=2, epsilon=epsilon, count_cap=2, calibration="formal",
                     privacy_unit=unit, **bounds, **extra)


def named(ways: list[str]) -> set[str]:
    return {key for key in (LOWER, CAP, SEQUENCE, EVENT, BUDGET) if any(way.startswith(key) for way in ways)}


def test_over_the_budget_lower_epsilon_or_raise_the_budget(tmp_path):
    plan = session(tmp_path, "event", budget=0.5).preview([config("event")])
    assert plan.refusal
    assert named(advice(plan)) == {LOWER, BUDGET}  # same ε under a cap or per sequence costs as much: not offered


def test_a_closed_sequence_view_is_not_lifted_by_epsilon_or_budget(tmp_path):
    """After an uncapped event-level release the per-sequence view is closed: no ε and no budget reopens it; the
    event unit (whose budget counts every release) still releases."""
    session(tmp_path, "event").release(config("event"))
    plan = session(tmp_path, "sequence").preview([config("sequence")])
    assert plan.refusal
    ways = advice(plan)
    assert named(ways) == {EVENT}
    assert "lower ε" not in advice_sentence(ways) and "budget" not in advice_sentence(ways)


def test_a_broken_promise_is_lifted_by_a_cap_or_the_sequence_unit_only(tmp_path):
    """After a sequence-level release on the rows (a per-person promise) the core refuses an event-level release
    with no cap M before any draw; the ways out the same check lets through are a cap M or the sequence unit."""
    session(tmp_path, "sequence").release(config("sequence"))
    plan = session(tmp_path, "event").preview([config("event")])
    assert plan.refusal and "refused before any draw" in plan.refusal
    assert named(advice(plan)) == {CAP, SEQUENCE}


def test_the_sentence_names_each_way_and_says_when_none_works(tmp_path):
    plan = session(tmp_path, "event", budget=0.5).preview([config("event")])
    assert advice_sentence(advice(plan)) == ("To release, lower ε, or raise the budget on the *Privacy budget* "
                                             "page.")
    assert advice_sentence([]) == "Nothing on this page lifts this refusal."
