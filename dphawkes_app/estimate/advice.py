"""Advice that can be followed, for a release the plan refuses: each way out is offered only when the same check
that refused the release lets it through (issue 43: "Lower ε, or raise the budget" was offered under a refusal no
ε and no budget could lift).

The refusal itself is the core's (the plan's ``refusal``: the budget, a closed per-sequence view, or a per-person
promise an uncapped event-level release would break); this module only tries the app's levers against it — a far
smaller ε; at the same ε, a cap M on events per sequence or the other privacy unit; a larger budget — from public
numbers, nothing drawn."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from dphawkes_core.errors import DPHawkesError
from dphawkes_core.release.ledger import BUDGET_EPSILON_MAX, Budget, grouped

SMALLER = 1e-6  # "a far smaller ε": every sensitivity scaled by this factor (noise ×10⁶)
ONE_EVENT_CAP = 1  # the smallest cap M: if no cap lets the release through, M is no way out


def advice(plan, check: Callable | None = None) -> list[str]:
    """The levers that let the planned release through, in words (empty when none does).

    Parameters
    ----------
    plan : Plan
        The refused plan (its ledger view, mechanisms, cap M and number of sequences).
    check : callable, optional
        ``check(ledger, mechanisms, unit, max_events)`` raising on a refusal; default the ledger's own
        :meth:`~dphawkes_core.release.ledger.DataLedger.check`, which refused the plan.
    """
    check = check or (lambda ledger, mechanisms, unit, cap: ledger.check(mechanisms, unit, cap))
    ledger, unit = plan.ledger, plan.ledger.key.unit
    cap = plan.max_events if unit == "event" else None
    smaller = grouped(tuple(plan.mechanisms), SMALLER)

    def fits(mechanisms, release_unit, max_events, view=ledger) -> bool:
        try:
            check(view, mechanisms, release_unit, max_events)
        except DPHawkesError:
            return False
        return True

    mechanisms = tuple(plan.mechanisms)  # the same target ε under another unit or a cap: about the same noise
    ways = []
    if fits(smaller, unit, cap):
        ways.append("lower ε")
    if unit == "event" and cap is None and plan.sequences > 1 and fits(mechanisms, "event", ONE_EVENT_CAP):
        ways.append("set a cap M on the events kept per sequence (sidebar, under the privacy unit)")
    other = "sequence" if unit == "event" else "event"
    if (other == "event" or plan.sequences > 1) and fits(mechanisms, other, None):
        ways.append(f"choose the {other} unit")
    larger = dataclasses.replace(ledger, budget=Budget(BUDGET_EPSILON_MAX, ledger.budget.delta))
    if fits(mechanisms, unit, cap, larger):
        ways.append("raise the budget on the *Privacy budget* page")
    return ways


def advice_sentence(ways: list[str]) -> str:
    """``"To release, lower ε, or choose the sequence unit."``, or why nothing here helps."""
    if not ways:
        return "Nothing on this page lifts this refusal."
    text = ", or ".join(ways)
    return f"To release, {text}."
