"""Planning a release: what it would spend and whether it would be refused, from public numbers only — nothing is
drawn and nothing is recorded (``dphawkes fit --plan``, the app's Release button:
:meth:`~dphawkes_core.release.session.PrivacySession.preview`)."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

from dphawkes_core.privacy.accounting import BudgetExceeded
from dphawkes_core.privacy.report import FormalStatus
from dphawkes_core.privacy.time_scale import TIME_SCALE
from dphawkes_core.release.ledger import Budget, DataLedger, Entry, person_epsilon


@dataclass(frozen=True)
class Plan:
    """What releasing one or several configs together would do, from public numbers only (nothing drawn).

    Attributes
    ----------
    status : FormalStatus
        Formal only when every config is (the reasons of all).
    mechanisms : tuple of Mechanism
        What the formal ones would spend together.
    ledger : DataLedger
        The data set's ledger before them (the stored one, or the new one a first release would create).
    epsilon : float
        ε of these releases alone at the budget's δ, in the ledger's view (0 when none is formal).
    after : float
        The composed ε of the view after them.
    remaining_after : float
        What would remain after them (0 when refused).
    refusal : str
        Why they would be refused before any draw — over the budget, a closed view, a broken per-person promise —
        ("" when they fit).
    formal_count : int
        How many of the configs are formal releases (they spend ε).
    informal : tuple of str
        The others' labels and reasons: shown, not metered.
    max_events : int or None
        The event-level cap M enforced on each sequence (``None``: no cap).
    sequences : int
        How many sequences the data hold.
    per_person : float or None
        ε of the formal releases for one whole sequence (one person), as the sequence view charges them; ``None``
        when nothing bounds it (an event-level release with no cap) or nothing is formal.
    """

    status: FormalStatus
    mechanisms: tuple
    ledger: DataLedger
    epsilon: float
    after: float
    remaining_after: float
    refusal: str
    formal_count: int = 0
    informal: tuple = ()
    max_events: int | None = None
    sequences: int = 1
    per_person: float | None = None

    @property
    def formal(self) -> bool:
        """At least one of the configs is a formal release (so the plan spends ε)."""
        return self.formal_count > 0

    def to_dict(self) -> dict:
        """Plain dict for ``fit --plan``'s JSON (no ∞: an unbounded figure is ``None``)."""
        ledger = self.ledger

        def finite(value):
            return value if value is not None and math.isfinite(value) else None

        return {"formal": self.status.formal, "formal_reasons": list(self.status.reasons),
                "formal_releases": self.formal_count, "informal": list(self.informal),
                "privacy_unit": ledger.key.unit, "budget_epsilon": ledger.budget.epsilon, "delta": ledger.budget.delta,
                "epsilon": self.epsilon, "spent_before": finite(ledger.spent()), "spent_after": finite(self.after),
                "remaining_after": self.remaining_after, "per_person_epsilon": finite(self.per_person),
                "refused": self.refusal or None, "max_events": self.max_events,
                "mechanisms": [dataclasses.asdict(m) for m in self.mechanisms]}


def plan_release(session, configs, scale_share: float | None = None, choices=(TIME_SCALE,),
                 budget: Budget | None = None) -> Plan:
    """The plan of releasing every config of ``configs`` together through ``session`` (a
    :class:`~dphawkes_core.release.session.PrivacySession`): their status (formal only when all are), their mechanisms,
    what remains after and why it would be refused. ``scale_share``: ``choices`` made inside the release with that
    share of ε (the count's mechanism is planned with the fit's). ``budget``: the budget the request would set on a
    ledger (the CLI's ``--budget``). A request refused for a reason of its own raises ``DPHawkesError``."""
    ledger = session.ledger() or DataLedger(session.key)
    if budget is not None:
        ledger = dataclasses.replace(ledger, budget=budget)
    statuses, mechanisms, informal = [], (), []
    for config in configs:
        if scale_share is None:
            status, planned = session.plan(config)
        else:
            scaled = session.plan_scaled(config, scale_share, choices=choices)
            status, planned = scaled.status, scaled.mechanisms
        statuses.append(status)
        if status.formal:
            mechanisms += tuple(planned)
        else:
            informal.append(f"{config.family.label} ({'; '.join(status.reasons)})")
    count = sum(s.formal for s in statuses)
    reasons = tuple(dict.fromkeys(r for s in statuses for r in s.reasons))
    status = FormalStatus(count == len(statuses), reasons)
    cap = configs[0].max_events if configs else None
    person = {"max_events": cap, "sequences": session.sequences}
    if not mechanisms:
        return Plan(status, (), ledger, 0.0, ledger.spent(), ledger.remaining(), "", count, tuple(informal), **person)
    cap = cap if session.key.unit == "event" else None  # an event-level cap: charged as its group
    alone, after = ledger.cost(mechanisms, None, cap)
    refusal = ""
    try:
        ledger.check(mechanisms, None, cap)  # both views and the promise, as the charge itself checks
    except BudgetExceeded as exc:
        refusal = str(exc)
    planned_entry = Entry("planned", "planned", True, (), tuple(mechanisms), unit=session.key.unit, max_events=cap)
    remaining_after = dataclasses.replace(ledger, entries=ledger.entries + (planned_entry,)).remaining()
    per_person = person_epsilon(mechanisms, session.key.unit, cap, ledger.budget.delta)
    return Plan(status, tuple(mechanisms), ledger, alone, after, remaining_after if not refusal else 0.0, refusal,
                count, tuple(informal), **person, per_person=per_person)
