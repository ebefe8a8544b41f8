"""The privacy accountant: every release on a source of events, composed exactly, against a budget that refuses
overruns — pure values (snapshots), with no storage (the store: :mod:`.ledger_store`).

One ledger per source of events (:class:`LedgerKey`: the key of the source's rows, :mod:`~dphawkes_core.data.row_key`,
whatever is declared about them — d, dimension order, windows, time unit, sub-domain), seen through the privacy
unit of a release. Both views compose every release on the rows, each at its cost for the view's neighbour:

* the *event* view (one raw event added or removed): a sequence-level release at its own ε (it protects each
  event too); an event-level release at its own ε, or — under an enforced cap M on events per sequence — as a group
  of 2 capped events (one raw event can push one kept event out: a swap);
* the *sequence* view (one sequence replaced): a sequence-level release at its own ε; an event-level release under
  an enforced cap M as a group of 2M capped events; an event-level release with no cap bounds nothing for a whole
  sequence, so the view is closed — spent unbounded, refusing every release that needs it.

(:func:`~dphawkes_core.privacy.sequence.capped_event_group`; derivation in ``docs/privacy.md``.) Data marked public
(:class:`PublicMark`: when, from which tool, why) are not metered, and no release on them is formal. Each formal
release (a fit, an entry of the comparison table, the share of ε a fit spends choosing its own count cap) is an
:class:`Entry` holding its mechanisms (:class:`Mechanism`: Gaussian noise multiplier σ/S and number of releases,
discrete Gaussian likewise, or Laplace, or a pure ε-DP step) and the released estimate. The total is composed exactly
— Gaussian mechanisms compose to one Gaussian with ``μ = sqrt(Σ releases_i / z_i²)`` (Gaussian DP, Dong, Roth & Su
2019) whose (ε, δ) is the analytic Gaussian mechanism of ``dp_accounting``; Laplace and pure steps join them through
``dp_accounting``'s privacy loss distributions — never by summing ε.
A discrete Gaussian release (an unseeded lagged DP-SSP, :mod:`~dphawkes_core.privacy.noise`) is not μ-GDP: a ledger
holding one composes every mechanism in zCDP (ρ adds up) and converts once, an upper bound on the exact composition.

A :class:`Budget` (total ε at the ledger's δ) refuses a release that would take the composed total
above it (:class:`BudgetExceeded`, one line with what remains). The same release request (same rows, same
declaration, same settings, so the same noise distribution) is answered again from the ledger without drawing new
noise: re-rendering a page costs nothing, and averaging re-runs gains nothing.

**Charged before the draw.** A release is recorded as spent (an :class:`Entry` in state :data:`CHARGED`) before any
of its noise is drawn, and stays spent whatever happens after: its result is attached when it comes
(:data:`RELEASED`), a refusal decided after the draw or an exception is recorded as its outcome (:data:`FAILED`),
and a process killed in between leaves it charged. Asked again, such a request is refused from the record
(:class:`ChargedNotReleased`) — never drawn a second time. The transitions are pure (:meth:`DataLedger.charge`,
:meth:`DataLedger.settle`, …): a store (:mod:`.ledger_store`) applies each one in a transaction.

**What else a ledger remembers about its rows.** A non-private look at them (:class:`DataLook`: ``dphawkes
select``, ``dphawkes score``, the app's held-out table) — every later release names it in its reasons; and the
per-person promise (:attr:`DataLedger.promise`: one sequence is one person, declared as a :class:`PersonPromise` or
made by a sequence-level release) — after it, a release that would leave the per-person ε unbounded (event unit,
no cap M) is refused before any draw (:class:`PromiseRefused`).

Fits that are not formal releases (a seeded fit, the paper calibration, a window or setting read from
the data, the non-private CLS) are recorded but not metered: they carry no guarantee to compose, and
the ledger says so (:meth:`DataLedger.unmetered`).

**Releases made under a bound found short.** Every noisy release is recorded with the version of its family's
sensitivity bound (:attr:`Mechanism.bound`); a ledger re-costs, when it is made, each release recorded under a
version its family has since found short (:mod:`.recost`: the noise drawn is unchanged, so the release is charged at
its true multiplier ``z·S_recorded/S_now``), and says so in the entry's label and reasons. Its spent ε and every
budget check are then those of the corrected mechanisms: a data set the correction takes over its budget refuses
every further release, saying why (:meth:`DataLedger.check`).
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import json
import math
from dataclasses import dataclass, field

import numpy as np

from dphawkes_core.errors import DPHawkesError
from dphawkes_core.privacy.accounting import (
    DEFAULT_BUDGET_DELTA,
    DEFAULT_BUDGET_EPSILON,
    MECHANISM_KINDS,
    BudgetExceeded,
    Mechanism,
    compose_epsilon,
    gaussian_mechanism,
    grouped,
    remaining,
)
from dphawkes_core.privacy.sequence import PRIVACY_UNITS, capped_event_group
from dphawkes_core.release.recost import RECOST_KEY, recost_entries

__all__ = [  # the accountant's API, with the mechanisms and composition of :mod:`.accounting` it records
    "DEFAULT_BUDGET_DELTA", "DEFAULT_BUDGET_EPSILON", "MECHANISM_KINDS", "Budget", "BudgetExceeded",
    "DataLedger", "Entry", "LedgerKey", "Mechanism", "LedgerOutcome", "compose_epsilon",
    "CAPPED_EVENT_NOTE", "CHARGED", "EVENT_ONLY_NOTE", "FAILED", "PUBLIC_MARK_REASON", "RELEASED", "ChargedNotReleased",
    "DataLook", "PersonPromise", "PromiseRefused", "PublicMark", "SettingChange", "Statement", "absorb", "budget_words",
    "canonical_json", "grouped", "group_factor", "mark_words", "gaussian_mechanism", "is_metered", "person_epsilon",
    "utc_now",
]

PUBLIC_MARK_REASON = ("the data set's ledger is marked public (already published data): releases on it are "
                      "neither metered nor refused, so none carries a formal guarantee")


def sequence_view_closed(count: int) -> str:
    """Why the sequence-level view refuses: ``count`` uncapped event-level releases closed it."""
    releases = "one event-level release" if count == 1 else f"{count} event-level releases"
    return (f"the sequence-level budget of this data set is closed: {releases} on it protect"
            f"{'s' if count == 1 else ''} single events only (no cap on events per sequence is enforced), so what "
            f"{'it reveals' if count == 1 else 'they reveal'} about one whole sequence is unbounded; release at the "
            "event level, whose budget counts every release")


EVENT_ONLY_NOTE = ("this event-level release protects single events only, not whole sequences (no cap on events "
                   "per sequence is enforced): the data set's sequence-level budget is closed")
CAPPED_EVENT_NOTE = ("this event-level release keeps each sequence's first {cap} events (the enforced cap M): its ε "
                     "is for one event of the capped data; one raw event costs ε = {event:.3g} (a swap of two capped "
                     "events) and one whole sequence ε = {sequence:.3g} (up to 2M = {group} capped events), both "
                     "charged to the data set's budget (δ = {delta:.0e})")
TOOLS = ("app", "cli", "python", "migration", "sql")
CHARGED, RELEASED, FAILED = "charged", "released", "failed"  # an entry's states (module docstring)
STATES = (CHARGED, RELEASED, FAILED)
_TOOL_WORDS = {"app": "the app", "cli": "the CLI", "python": "the Python API",
               "migration": "a format-2 ledger (migrated)", "sql": "SQL written by hand in the ledger's database"}


class ChargedNotReleased(DPHawkesError):
    """A request whose entry is charged but holds no release (interrupted, still running, or failed after its draw):
    answered from the record, never drawn again."""


class PromiseRefused(BudgetExceeded):
    """A release that would break the per-person promise made on the rows (refused before any draw)."""


def _when(created: str) -> str:
    """``2026-11-26 16:40 UTC`` from an ISO time (``at an unknown time`` without one)."""
    return created[:16].replace("T", " ") + " UTC" if created else "at an unknown time"


@dataclass(frozen=True)
class LedgerKey:
    """Which ledger and which view of it: the source's key (fingerprint) and the privacy unit of the releases
    asked through it (both units share one ledger per source: :class:`DataLedger`)."""

    fingerprint: str
    unit: str = "event"

    def __post_init__(self):
        if self.unit not in PRIVACY_UNITS:
            raise DPHawkesError(f"unknown privacy unit {self.unit!r}; choose one of {', '.join(PRIVACY_UNITS)}")

    @property
    def id(self) -> str:
        """``unit:fingerprint``: the view."""
        return f"{self.unit}:{self.fingerprint}"


# --- budget, entries and one data set's ledger ---------------------------------------------------------------


#: The largest budget ε: far beyond any guarantee (e^ε), and where the remaining budget is still exact (its inverse
#: of the Gaussian's ε is off by 3e-12 relative at 10⁴, 5e-9 at 10⁸, and fails with a NaN at 10³⁰⁸).
BUDGET_EPSILON_MAX = 1e4


@dataclass(frozen=True)
class Budget:
    """The total (ε, δ) a data set may spend; every release is composed at this δ."""

    epsilon: float = DEFAULT_BUDGET_EPSILON
    delta: float = DEFAULT_BUDGET_DELTA

    def __post_init__(self):
        if not (math.isfinite(self.epsilon) and self.epsilon > 0):
            raise DPHawkesError(f"the budget ε must be a positive number, got {self.epsilon!r}")
        if self.epsilon > BUDGET_EPSILON_MAX:
            raise DPHawkesError(f"the budget ε must be at most {BUDGET_EPSILON_MAX:g} (e^ε protects nothing beyond "
                                f"it), got {self.epsilon!r}")
        if not 0 < self.delta < 1:
            raise DPHawkesError(f"the budget δ must be in (0, 1), got {self.delta!r}")


@dataclass(frozen=True)
class Statement:
    """Something a user stated about a source, kept in its ledger: when (``created``, UTC, ISO 8601) and from which
    tool (``app``, ``cli``, ``python`` or ``migration``)."""

    created: str
    tool: str

    def __post_init__(self):
        if self.tool not in TOOLS:
            raise DPHawkesError(f"unknown tool {self.tool!r} for {self.__class__.__name__}; one of {', '.join(TOOLS)}")

    def when_and_where(self) -> str:
        """``on 2026-11-26 16:40 UTC from the CLI``."""
        return f"on {_when(self.created)} from {_TOOL_WORDS[self.tool]}"


@dataclass(frozen=True)
class PublicMark(Statement):
    """A user's statement that a data set is already published: when, from which tool, and why (``note``,
    optional)."""

    note: str = ""

    def sentence(self) -> str:
        """``marked public on 2026-11-26 16:40 UTC from the CLI (note: …)``."""
        return f"marked public {self.when_and_where()}" + (f" (note: {self.note})" if self.note else "")


@dataclass(frozen=True)
class DataLook(Statement):
    """A non-private look at a source's rows, recorded in its ledger so that every later release names it: settings
    chosen from it were read from the data (issue: a width picked by ``dphawkes select`` then passed to a formal fit).
    ``what``: what was looked at and what it can have chosen, in words (``dphawkes select (cls: Δ and s chosen by
    held-out likelihood)``)."""

    what: str = ""

    def sentence(self) -> str:
        """``dphawkes select: … (from the CLI on 2026-11-26 16:40 UTC)``."""
        return f"{self.what} (from {_TOOL_WORDS[self.tool]} on {_when(self.created)})"


def looks_reason(looks) -> str:
    """The reason a release after ``looks`` carries (and says in its note): its settings may have been read from the
    data; empty without a look."""
    if not looks:
        return ""
    return ("its settings may have been read from the data: a non-private look at these rows was recorded before it ("
            + "; ".join(look.sentence() for look in looks) + "); the guarantee covers the noise for the settings as "
            "given, not how they were chosen")


@dataclass(frozen=True)
class PersonPromise(Statement):
    """The declaration "one sequence is one person" on a source, recorded in its ledger (with a ``note``, optional):
    from then on a release must keep the per-person ε bounded (:attr:`DataLedger.promise`)."""

    note: str = ""

    def sentence(self) -> str:
        """``one sequence was declared one person's on 2026-11-26 16:40 UTC from the CLI (note: …)``."""
        return (f"one sequence was declared one person's {self.when_and_where()}"
                + (f" (note: {self.note})" if self.note else ""))


@dataclass(frozen=True)
class SettingChange(Statement):
    """A change of a data set's budget or public mark, kept in its ledger: when, from which tool, who made it (the OS
    user for a ledger file; the database role, and the OS user its client stated, for a database) and what it set
    (``what``: ``budget ε = 2, δ = 1e-05``, ``marked public (note: …)``, ``public mark withdrawn``)."""

    who: str = ""
    what: str = ""

    def sentence(self) -> str:
        """``budget ε = 2, δ = 1e-05 — by alice on 2026-11-26 16:40 UTC from the CLI``."""
        return f"{self.what} — by {self.who or 'an unknown user'} {self.when_and_where()}"


def budget_words(budget: Budget) -> str:
    """``budget ε = 2, δ = 1e-05``: what a change of the budget set."""
    return f"budget ε = {budget.epsilon:.6g}, δ = {budget.delta:.3g}"


def mark_words(mark: PublicMark | None) -> str:
    """``marked public (note: …)`` or ``public mark withdrawn``: what a change of the public mark set."""
    if mark is None:
        return "public mark withdrawn"
    return "marked public" + (f" (note: {mark.note})" if mark.note else "")


@dataclass(frozen=True)
class Entry:
    """One release recorded in a ledger.

    Attributes
    ----------
    request : str
        Identity of the release request (:func:`~dphawkes_core.release.session.request_identity`): the same
        request is answered from here.
    label : str
        What was released, in words.
    formal : bool
        True when the release carries the formal guarantee: only these are metered.
    reasons : tuple of str
        Why it is not formal; on a formal release, what its guarantee does not cover (a look at the rows before
        it, :func:`looks_reason`) and, once re-costed at a corrected bound (:mod:`.recost`), why and by how much.
    mechanisms : tuple of Mechanism
        What it spent (empty for a non-private method), each noisy release with its family's bound and version.
    result : dict
        The released estimate as stored (:meth:`FitResult.to_record`); for a failed release, ``{"error": why}`` and
        what was drawn before it failed; once re-costed, ``recost``: the mechanisms as first recorded and each
        correction (:attr:`recost`).
    created : str
        UTC time it was charged (ISO 8601).
    unit : str
        The privacy unit it was calibrated for (``event`` or ``sequence``).
    max_events : int or None
        An event-level release's enforced cap M on events per sequence (``None``: no cap; a sequence-level release's
        M is inside its own guarantee).
    state : {"charged", "released", "failed"}
        Charged before its draw; released when its result is attached; failed when it was refused after its draw or
        raised. A formal entry is spent in every state.
    """

    request: str
    label: str
    formal: bool
    reasons: tuple[str, ...]
    mechanisms: tuple[Mechanism, ...]
    result: dict = field(default_factory=dict, compare=False)
    created: str = ""
    unit: str = "event"
    max_events: int | None = None
    state: str = RELEASED

    def __post_init__(self):
        if self.state not in STATES:
            raise DPHawkesError(f"unknown entry state {self.state!r}; one of {', '.join(STATES)}")

    def epsilon(self, delta: float) -> float:
        """ε of this release alone at ``delta``."""
        return compose_epsilon(self.mechanisms, delta)

    @property
    def recost(self) -> dict | None:
        """How this release was re-costed at a corrected bound (:mod:`.recost`): ``recorded_mechanisms`` (as first
        charged) and ``corrections`` (each mechanism's recorded and current bound, the factor and why); ``None`` when
        it never was."""
        record = self.result.get(RECOST_KEY) if isinstance(self.result, dict) else None
        return record or None

    def recorded_epsilon(self, delta: float) -> float:
        """ε of this release alone at ``delta`` as it was first charged (before any re-costing)."""
        record = self.recost
        if record is None:
            return self.epsilon(delta)
        return compose_epsilon(tuple(Mechanism(**m) for m in record["recorded_mechanisms"]), delta)

    def unanswered(self) -> str:
        """Why this request is answered with a refusal (an entry charged but not released), in one line."""
        spent = "its ε stays spent" if self.formal else "nothing was spent"
        if self.state == FAILED:
            return (f"refused from the ledger: this request was charged on {_when(self.created)} and failed after its "
                    f"noise was drawn ({self.result.get('error', 'no reason recorded')}); {spent} and nothing is "
                    "drawn again — change a setting for a new release")
        return (f"refused from the ledger: this request was charged on {_when(self.created)} but its result was never "
                f"recorded (interrupted, or still running elsewhere); {spent} and nothing is drawn again — change a "
                "setting for a new release")

    def group(self, view: str) -> float:
        """How many of the neighbours this release was calibrated for one neighbour of ``view`` moves at most
        (:func:`group_factor`)."""
        return group_factor(self.unit, self.max_events, view)

    def mechanisms_in(self, view: str) -> tuple[Mechanism, ...] | None:
        """Its mechanisms as seen by one neighbour of ``view`` (group privacy); ``None`` when nothing bounds them."""
        return grouped(self.mechanisms, self.group(view))


def group_factor(unit: str, max_events: int | None, view: str) -> float:
    """The group-privacy factor of a release of ``unit`` (with an event-level cap ``max_events``) in ``view``: 1 when
    the view's neighbour is covered by the release's own (any sequence-level release; an uncapped event-level release
    in the event view); :func:`~dphawkes_core.privacy.sequence.capped_event_group` under a cap; ∞ for an uncapped
    event-level release in the sequence view."""
    if unit == "sequence" or (unit == "event" and max_events is None and view == "event"):
        return 1
    if max_events is None:
        return math.inf
    return capped_event_group(view, max_events)


def person_epsilon(mechanisms, unit: str, max_events: int | None, delta: float,
                   assumed_events: int | None = None) -> float | None:
    """ε at ``delta`` that a release of ``mechanisms`` (calibrated for ``unit``, with an event-level cap
    ``max_events``) costs one person — one whole sequence —, as the ledger's sequence view charges it: its own ε at
    the sequence unit, the group of 2M capped events under an enforced cap (:func:`group_factor`). An uncapped
    event-level release bounds nothing per person: its cost for a person with at most ``assumed_events`` events (a
    group of k; an assumption nothing enforces), or ``None`` without one."""
    group = group_factor(unit, max_events, "sequence")
    if not math.isfinite(group):
        if assumed_events is None:
            return None
        group = int(assumed_events)
    return compose_epsilon(grouped(tuple(mechanisms), group), delta)


@dataclass(frozen=True)
class DataLedger:
    """The ledger of one source of events: its budget, whether it is public, and every release (a snapshot),
    seen through the privacy unit of ``key``.

    Both views compose every metered release on the rows, each at its group-privacy cost for the view's neighbour
    (:meth:`Entry.mechanisms_in`). The sequence view is *closed* once an event-level release with no enforced cap
    was made: its ε for one whole sequence is unbounded — the view then shows ε spent ∞ and refuses every release
    that needs it.

    Attributes
    ----------
    key : LedgerKey
        The source and the view's unit.
    budget : Budget
    label : str
        The data set's name, for display.
    public_mark : PublicMark or None
        Set when the user marked the data public (already published): nothing is metered, nothing is formal.
    entries : tuple of Entry
        In release order.
    migrated : tuple of str
        The format-2 ledgers merged into this one (``unit:fingerprint``;
        :func:`~dphawkes_core.release.ledger_migration.migrate_format2`).
    looks : tuple of DataLook
        Non-private looks at the rows, in order: each later release names them (:func:`looks_reason`).
    person : PersonPromise or None
        The declaration "one sequence is one person" (:attr:`promise`).
    changes : tuple of SettingChange
        Every change of the budget or the public mark, in order: who made it and when (:meth:`configured`).
    """

    key: LedgerKey
    budget: Budget = Budget()
    label: str = ""
    public_mark: PublicMark | None = None
    entries: tuple[Entry, ...] = ()
    migrated: tuple[str, ...] = ()
    looks: tuple[DataLook, ...] = ()
    person: PersonPromise | None = None
    changes: tuple[SettingChange, ...] = ()

    def __post_init__(self):
        # every entry at its family's current bound: a release recorded under a bound since found short is charged
        # at the corrected one, whichever store read it (a pure function of the entries: .recost)
        object.__setattr__(self, "entries", recost_entries(tuple(self.entries), self.budget.delta))

    @property
    def recosted(self) -> tuple[Entry, ...]:
        """The formal releases re-costed at a corrected bound (:mod:`.recost`)."""
        return tuple(e for e in self.metered if e.recost is not None)

    @property
    def public(self) -> bool:
        """True for data marked public: nothing is metered, and no release on them is formal."""
        return self.public_mark is not None

    @property
    def metered(self) -> tuple[Entry, ...]:
        """The formal releases, of either unit: the ones the budget counts."""
        return tuple(e for e in self.entries if e.formal)

    @property
    def unmetered(self) -> tuple[Entry, ...]:
        """Outputs shown without a formal guarantee (seeded, paper calibration, non-private…)."""
        return tuple(e for e in self.entries if not e.formal)

    @property
    def promise(self) -> str:
        """Why one sequence is one person's on these rows, in words — declared (:class:`PersonPromise`) or made by a
        formal sequence-level release recorded on them —; empty without a promise."""
        if self.person is not None:
            return self.person.sentence()
        first = next((e for e in self.metered if e.unit == "sequence"), None)
        return "" if first is None else (f"a sequence-level release was made on these rows on {_when(first.created)}"
                                         " (its guarantee is per person)")

    @property
    def closed(self) -> bool:
        """The sequence view after an event-level release with no enforced cap: nothing bounds a whole sequence's
        loss any more."""
        return any(e.mechanisms_in(self.key.unit) is None for e in self.metered)

    def mechanisms(self) -> tuple[Mechanism, ...]:
        """Every mechanism of every metered release, as one neighbour of the view sees it (none bounded in a closed
        view)."""
        return tuple(m for e in self.metered for m in (e.mechanisms_in(self.key.unit) or ()))

    def spent(self) -> float:
        """Composed ε of every metered release at the budget's δ (∞ in a closed view)."""
        return math.inf if self.closed else compose_epsilon(self.mechanisms(), self.budget.delta)

    def naive_sum(self) -> float:
        """Σ of each release's ε alone in this view (what summing would claim; its δ would add up too)."""
        return float(sum(compose_epsilon(e.mechanisms_in(self.key.unit) or (), self.budget.delta)
                         if e.mechanisms_in(self.key.unit) is not None else math.inf for e in self.metered))

    def find(self, request: str) -> Entry | None:
        """The entry of an earlier identical release request, if any."""
        return next((e for e in self.entries if e.request == request), None)

    def cost(self, mechanisms, unit: str | None = None, max_events: int | None = None) -> tuple[float, float]:
        """``(ε of these mechanisms alone, composed ε of the ledger with them)`` at the budget's δ, in this view, for
        a release of ``unit`` (default the view's) with an event-level cap ``max_events`` (its group in the view:
        :func:`group_factor`; ∞ when unbounded)."""
        mechanisms = grouped(tuple(mechanisms), group_factor(unit or self.key.unit, max_events, self.key.unit))
        if mechanisms is None:
            return math.inf, math.inf
        alone = compose_epsilon(mechanisms, self.budget.delta)
        return alone, math.inf if self.closed else compose_epsilon(self.mechanisms() + mechanisms, self.budget.delta)

    def history(self) -> tuple[tuple[Entry, float, float, float], ...]:
        """Per metered release: ``(entry, its ε alone in this view, composed ε so far, naive sum so far)`` (∞ from
        the first event-level release with no cap on in the sequence view)."""
        rows, past, naive, unbounded = [], (), 0.0, False
        for entry in self.metered:
            seen = entry.mechanisms_in(self.key.unit)
            unbounded = unbounded or seen is None
            past += seen or ()
            alone = compose_epsilon(seen, self.budget.delta) if seen is not None else math.inf
            naive += alone
            rows.append((entry, alone, math.inf if unbounded else compose_epsilon(past, self.budget.delta), naive))
        return tuple(rows)

    def check(self, mechanisms, unit: str | None = None, max_events: int | None = None) -> None:
        """Raise :class:`BudgetExceeded` if a release of ``mechanisms`` (calibrated for ``unit``, default the view's,
        with an event-level cap ``max_events``) would take the composed ε of either view over the budget, or needs
        a closed view, or would break the per-person promise (:attr:`promise`: an event-level release with no cap,
        :class:`PromiseRefused`). An event-level release with no cap is checked in the event view only (it closes the
        sequence view); every other release in both. (Releases on public data are not formal and never reach this
        check.)"""
        unit = unit or self.key.unit
        if self.promise and not math.isfinite(group_factor(unit, max_events, "sequence")):
            raise PromiseRefused(
                f"refused before any draw: {self.promise}, and an event-level release with no cap on each sequence's "
                "events would leave what it reveals about one person unbounded; set a cap M on the events of each "
                "sequence, or release at the sequence unit")
        for view in ("event", "sequence"):
            seen = self.view(view)
            if group_factor(unit, max_events, view) == math.inf:
                continue  # an uncapped event-level release: the sequence view closes
            if seen.closed:
                if view == self.key.unit or unit == "sequence":
                    count = sum(e.mechanisms_in("sequence") is None for e in self.metered)
                    raise BudgetExceeded("refused: " + sequence_view_closed(count))
                continue  # a capped event-level release after an uncapped one: the sequence view is already ∞
            if self.recosted and seen.spent() > self.budget.epsilon:
                raise BudgetExceeded(seen.overspent())
            alone, after = seen.cost(mechanisms, unit, max_events)
            if after > self.budget.epsilon:
                scope = "" if view == "event" else " seen per sequence"
                raise BudgetExceeded(
                    f"refused: this release (ε = {alone:.3g} alone{scope}) would bring the composed ε of this data "
                    f"set{scope} to {after:.3g}, over its budget ε = {self.budget.epsilon:.3g} "
                    f"(δ = {self.budget.delta:.0e}); spent {seen.spent():.3g}, remaining: one release of "
                    f"ε ≤ {seen.remaining():.3g}")

    def overspent(self) -> str:
        """Why nothing more can be released on these rows when re-costing took their spent ε over the budget."""
        count = len(self.recosted)
        scope = "" if self.key.unit == "event" else " seen per sequence"
        recosted = "one release" if count == 1 else f"{count} releases"
        return (f"refused: the composed ε already spent on this data set{scope} is {self.spent():.4g} (δ = "
                f"{self.budget.delta:.0e}), over its budget ε = {self.budget.epsilon:.4g}: {recosted} recorded under "
                f"a sensitivity bound later found short {'was' if count == 1 else 'were'} re-costed at the corrected "
                "bound (the noise drawn is unchanged, the ε charged for it is larger: see the reasons in `dphawkes "
                "ledger show`, or the releases on the Privacy budget page); nothing more can be released on these "
                "rows within this budget")

    def remaining(self) -> float:
        """The remaining budget: the largest ε (alone, at the budget's δ) of one more Gaussian release that
        still fits (0 in a closed view): :func:`~dphawkes_core.privacy.accounting.remaining`, the accountant's
        inverse of the composition. It exceeds ``budget − spent`` because releases compose sub-additively."""
        return 0.0 if self.closed else remaining(self.mechanisms(), self.budget)

    def view(self, unit: str) -> DataLedger:
        """The same ledger seen through ``unit``."""
        return dataclasses.replace(self, key=LedgerKey(self.key.fingerprint, unit))

    # --- the transitions a store applies, each in one transaction (each returns the new snapshot) ----------------

    def configured(self, budget: Budget | None = None, label: str = "", public: bool | None = None,
                   tool: str = "python", note: str = "", now: str = "", who: str = "") -> DataLedger:
        """The owner's settings: a given ``budget`` replaces the stored one (one below what either view has already
        spent — the sequence view unless closed — is refused); ``public=True`` marks the data public (recording
        ``now``, the ``tool`` and the ``note``; a mark already set is kept as it was), ``public=False`` withdraws the
        mark; a non-empty ``label`` renames the data set. Each change of the budget or the mark is recorded
        (:class:`SettingChange`, made by ``who``). Returns this very snapshot when nothing changes."""
        ledger = self
        if budget is not None and budget != ledger.budget:
            views = [dataclasses.replace(ledger.view(unit), budget=budget) for unit in ("event", "sequence")]
            spent = max(view.spent() for view in views if not view.closed)  # the event view is never closed
            if spent > budget.epsilon:
                raise BudgetExceeded(f"refused: a budget of ε = {budget.epsilon:.3g} is below the ε already "
                                     f"spent on this data set ({spent:.3g} at δ = {budget.delta:.0e}, in the "
                                     "view that spent most)")
            ledger = dataclasses.replace(ledger, budget=budget, changes=ledger.changes + (
                SettingChange(now, tool, who, budget_words(budget)),))
        if public is not None and public != ledger.public:
            mark = PublicMark(now, tool, note) if public else None
            ledger = dataclasses.replace(ledger, public_mark=mark, changes=ledger.changes + (
                SettingChange(now, tool, who, mark_words(mark)),))
        if label and label != ledger.label:
            ledger = dataclasses.replace(ledger, label=label)
        return ledger

    def charge(self, entry: Entry) -> LedgerOutcome:
        """Charge a release before its draw: an earlier entry of the same request answers it (``replayed``; a formal
        one in any state — a charged or failed one is refused from the record by its caller, never drawn again);
        otherwise a formal release is checked (:meth:`check`: budget, closed view, promise) and ``entry`` (state
        :data:`CHARGED`) is recorded. An earlier non-formal entry that holds no release spent nothing: it is replaced.

        Raises
        ------
        BudgetExceeded
            When the release is formal and does not fit (nothing recorded).
        DPHawkesError
            When a formal release is asked on data marked public (the session labels those not formal).
        """
        if entry.state != CHARGED:
            raise DPHawkesError(f"internal error: a release is charged in state {CHARGED!r}, not {entry.state!r}")
        earlier = self.find(entry.request)
        if earlier is not None and (earlier.formal or earlier.state == RELEASED):
            return LedgerOutcome(earlier, True, self)
        if entry.formal and self.public:
            raise DPHawkesError(f"internal error: a formal release on data whose {PUBLIC_MARK_REASON[4:]}")
        if entry.formal:
            self.check(entry.mechanisms, entry.unit, entry.max_events)
        kept = tuple(e for e in self.entries if e.request != entry.request)
        return LedgerOutcome(entry, False, dataclasses.replace(self, entries=kept + (entry,)))

    def settle(self, request: str, result: dict, failed: bool = False, mechanisms=None) -> LedgerOutcome:
        """Attach what the draw gave to the charged entry of ``request``: its ``result`` (state :data:`RELEASED`), or
        the failure (``failed``: :data:`FAILED`, ``result`` saying why). ``mechanisms``: what the release drew, with
        the values it chose (the same kinds, composing to at least the charged ε: a charge is never lowered)."""
        entry = self.find(request)
        if entry is None or entry.state != CHARGED:
            state = "no entry" if entry is None else f"an entry in state {entry.state!r}"
            raise DPHawkesError(f"internal error: the release to settle has {state}, not a charged one")
        if mechanisms is not None:
            mechanisms = tuple(mechanisms)
            delta = self.budget.delta
            if sorted(m.kind for m in mechanisms) != sorted(m.kind for m in entry.mechanisms) or (
                    compose_epsilon(mechanisms, delta) < compose_epsilon(entry.mechanisms, delta) * (1 - 1e-9)):
                raise DPHawkesError("internal error: a release would record less than it was charged")
        settled = dataclasses.replace(entry, result=dict(result), state=FAILED if failed else RELEASED,
                                      mechanisms=entry.mechanisms if mechanisms is None else mechanisms)
        entries = tuple(settled if e.request == request else e for e in self.entries)
        return LedgerOutcome(settled, False, dataclasses.replace(self, entries=entries))

    def looked(self, look: DataLook) -> DataLedger:
        """The ledger with a non-private look at its rows recorded (the same look from the same tool once)."""
        if any((old.tool, old.what) == (look.tool, look.what) for old in self.looks):
            return self
        return dataclasses.replace(self, looks=self.looks + (look,))

    def promised(self, promise: PersonPromise) -> DataLedger:
        """The ledger with "one sequence is one person" declared (an earlier declaration is kept as it was). Refused
        (:class:`BudgetExceeded`) when an event-level release with no cap already left the per-person view
        unbounded: such a promise could not be kept."""
        if self.person is not None:
            return self
        if self.view("sequence").closed:
            count = sum(e.mechanisms_in("sequence") is None for e in self.metered)
            raise BudgetExceeded("refused: one sequence cannot be declared one person here any more: "
                                 + sequence_view_closed(count))
        return dataclasses.replace(self, person=promise)

    def summary(self) -> dict:
        """Plain dict for ``dphawkes ledger show`` and the app (without the stored estimates): the event view's
        ε, and the sequence view's."""
        delta, sequence = self.budget.delta, self.view("sequence")
        return {
            "fingerprint": self.key.fingerprint, "label": self.label, "public": self.public,
            "public_mark": dataclasses.asdict(self.public_mark) if self.public_mark else None,
            "budget_epsilon": self.budget.epsilon, "delta": delta,
            "spent_epsilon": self.view("event").spent(), "naive_sum_epsilon": self.naive_sum(),
            "remaining_epsilon": self.view("event").remaining(),
            "sequence_view": {"closed": sequence.closed, "spent_epsilon": sequence.spent(),
                              "remaining_epsilon": sequence.remaining()},
            "over_budget": any(self.budget.epsilon < view.spent() < math.inf
                               for view in (self.view("event"), sequence)),
            "recosted_releases": len(self.recosted),
            "metered_releases": len(self.metered), "unmetered_outputs": len(self.unmetered),
            "migrated_from_format_2": list(self.migrated),
            "looks": [dataclasses.asdict(look) for look in self.looks], "person_promise": self.promise or None,
            "setting_changes": [dataclasses.asdict(change) for change in self.changes],
            "entries": [{"created": e.created, "label": e.label, "privacy_unit": e.unit, "formal": e.formal,
                         "max_events": e.max_events, "state": e.state,
                         **({"error": e.result.get("error", "")} if e.state == FAILED else {}),
                         "reasons": list(e.reasons), "epsilon_alone": e.epsilon(delta) if e.formal else None,
                         **({"recost": {"epsilon_recorded": e.recorded_epsilon(delta), **e.recost}}
                            if e.recost is not None else {}),
                         "mechanisms": [dataclasses.asdict(m) for m in e.mechanisms], "request": e.request}
                        for e in self.entries],
        }


def is_metered(simulated: bool, ledger: DataLedger | None) -> bool:
    """Whether releases on a data set spend a budget: as its ledger says when it has one (the user marked it
    public or private); otherwise simulated data are public (no budget) and any other data private."""
    return not ledger.public if ledger is not None else not simulated


@dataclass(frozen=True)
class LedgerOutcome:
    """What the ledger did with a request: its entry (an earlier one answering it, or recorded now) and the ledger
    after."""

    entry: Entry
    replayed: bool
    ledger: DataLedger


def absorb(stored: DataLedger | None, old: DataLedger, name: str, now: str = "", who: str = "") -> DataLedger:
    """A migrated ledger ``old`` (named ``name``, ``unit:fingerprint`` of format 2) joined to the stored ledger of
    its source, once: nothing changes when ``name`` was migrated already. The entries keep their own request
    identities, in time order; the budget is the smaller (the smallest of every old one: the caller gives each the
    smallest of its declaration's); the data stay public only when both were. A change of the budget or the mark is
    recorded (tool ``migration``, made by ``who`` at ``now``)."""
    if stored is None:
        stored = DataLedger(LedgerKey(old.key.fingerprint), old.budget, old.label, old.public_mark)
        stored = dataclasses.replace(stored, changes=(SettingChange(now, "migration", who, budget_words(old.budget)),)
                                     + ((SettingChange(now, "migration", who, mark_words(old.public_mark)),)
                                        if old.public else ()))
        return dataclasses.replace(stored, entries=old.entries, migrated=(name,), looks=old.looks, person=old.person)
    if name in stored.migrated:
        return stored
    entries = tuple(sorted(stored.entries + old.entries, key=lambda e: e.created))
    budget = min(stored.budget, old.budget, key=lambda b: (b.epsilon, b.delta))
    mark = stored.public_mark if stored.public and old.public else None
    changes = stored.changes + ((SettingChange(now, "migration", who, budget_words(budget)),)
                                if budget != stored.budget else ()) + (
        (SettingChange(now, "migration", who, mark_words(mark)),) if mark != stored.public_mark else ())
    return dataclasses.replace(stored, entries=entries, budget=budget, public_mark=mark, changes=changes,
                               migrated=stored.migrated + (name,), looks=stored.looks + old.looks)


def utc_now() -> str:
    """The current UTC time as a ledger stores it (ISO 8601, seconds)."""
    return _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")


def canonical_json(value, indent=None) -> str:
    """The ledger's JSON form: sorted keys, numpy values as plain numbers, non-finite floats kept (a stored result
    reads back as is); also the form a release request's settings are hashed in."""
    return json.dumps(value, indent=indent, sort_keys=True,
                      default=lambda o: o.tolist() if isinstance(o, (np.ndarray, np.generic)) else str(o))
