"""The privacy session: the one place a release on private data is made.

A :class:`PrivacySession` owns the private data (how to compute their statistics), their ledger key and the
ledger. A release is asked of it with a :class:`~dphawkes_core.estimators.FitConfig`; it

1. answers an identical earlier request from the ledger — the stored estimate *and* the stored private
   selections (an automatic count cap C, an automatic clip norm G) — drawing nothing; a request charged earlier
   whose release was never recorded (killed, or failed after its draw) is refused from the record, never drawn
   again;
2. otherwise plans the release from public numbers only (no noise is drawn: an automatic selection is
   planned at a public placeholder, since what it spends depends only on ε, δ and its share), refuses what public
   facts refuse, and charges it: the store checks the budget and records the spend in one transaction
   (:meth:`~dphawkes_core.release.ledger_store.LedgerStore.charge`);
3. only then draws every noise of the release — the selection's included — and attaches the estimate, with the
   data info (the selection) it came with, to the charged entry; a refusal decided from a noisy value (a Δ and s
   read from the noisy count that the fit refuses) or an exception is attached as its outcome instead, and the
   spend stays.

The app's caches and the CLI's ``--ledger`` go through it, so no cache eviction, restart, kill or replay can draw a
private selection again uncharged (``docs/privacy.md``, "What a formal release assumes").
:meth:`PrivacySession.preview` plans a release without drawing or recording anything (``dphawkes fit --plan``, the
app's Release button); a release of the same config in the same session then reuses the plan's calibration.
"""

from __future__ import annotations

import dataclasses
import hashlib
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from dphawkes_core.data.row_key import events_fingerprint
from dphawkes_core.errors import DPHawkesError
from dphawkes_core.estimators import (
    FitConfig,
    FitResult,
    fit_stats,
    prepare_stats,
    privacy_report,
    release_status,
    run_private,
)
from dphawkes_core.estimators.binned import domain_info
from dphawkes_core.privacy.accounting import Split, compose_epsilon, split
from dphawkes_core.privacy.count_cap import AUTO
from dphawkes_core.privacy.report import FormalStatus
from dphawkes_core.privacy.sequence import AutoClip
from dphawkes_core.privacy.time_scale import (
    AUTO_SCALE_SHARE,
    DECAY_MULTIPLES,
    DECAYS,
    TIME_SCALE,
    AutoScale,
    check_choices,
    dp_time_scale,
    scale_rng,
)
from dphawkes_core.release.ledger import (
    CAPPED_EVENT_NOTE,
    EVENT_ONLY_NOTE,
    PUBLIC_MARK_REASON,
    RELEASED,
    Budget,
    ChargedNotReleased,
    DataLedger,
    DataLook,
    Entry,
    LedgerKey,
    PersonPromise,
    canonical_json,
    looks_reason,
    utc_now,
)
from dphawkes_core.release.ledger_store import LedgerStore, RefusedAfterDraw
from dphawkes_core.release.plan import Plan, plan_release
from dphawkes_core.statistics.info import DataInfo

if TYPE_CHECKING:
    from dphawkes_core.data.events import Events


@dataclass(frozen=True)
class SessionAnswer:
    """What a release request got.

    Attributes
    ----------
    result : FitResult
        The estimate (stored or new).
    data_info : DataInfo or None
        The data info it came with, private selections included (stored with the release; ``None`` for an
        entry recorded before data infos were stored).
    replayed : bool
        True when answered from the ledger: nothing was drawn, nothing spent.
    entry : Entry
        The ledger entry.
    ledger : DataLedger
        The data set's ledger after the request.
    notes : tuple of str
        What the release protects beyond its label, said wherever it is shown (an event-level release under an
        enforced cap M: its ε per raw event and per sequence, :data:`~dphawkes_core.release.ledger.CAPPED_EVENT_NOTE`;
        without a cap, on several sequences: :data:`~dphawkes_core.release.ledger.EVENT_ONLY_NOTE`; a release on data
        marked public: its mark).
    time_scale : AutoScale or None
        The Δ and s chosen privately inside the release (:meth:`PrivacySession.release_scaled`), stored with it.
    """

    result: FitResult
    data_info: DataInfo | None
    replayed: bool
    entry: Entry
    ledger: DataLedger
    notes: tuple[str, ...] = ()
    time_scale: AutoScale | None = None

    @property
    def status(self) -> FormalStatus:
        """The formal status the release was recorded with (a session's release: formal when its settings are)."""
        return FormalStatus(self.entry.formal, tuple(self.entry.reasons))


class PrivacySession:
    """A data set's releases, through its ledger.

    Parameters
    ----------
    prepare : callable
        ``prepare(config) -> (stats, data_info)``: the statistics of the private data for ``config``
        (:func:`~dphawkes_core.estimators.prepare_stats` on the events, or the partitioned reduce).
    book : LedgerStore
        The store of the ledgers (the ledger file, :class:`~dphawkes_core.release.ledger_file.LedgerBook`).
    key : LedgerKey
        The data set's key (its fingerprint and the privacy unit).
    public_info : dict
        What of the domain is public: ``window_stated``, ``dimensions_declared``, ``sequences_declared``
        (a formal release needs all three).
    view : str
        What was declared about the source's rows (the loaded events'
        :func:`~dphawkes_core.data.row_key.events_fingerprint`
        or the partitioned store's windowed fingerprint): part of every release's identity, so that another
        declaration of the same rows is another release, charged to the same budget.
    sequences : int
        How many sequences the data hold (an event-level release on several says it protects events only).
    count : callable, optional
        ``count() -> (N, T)``: the private number of events and the public observed time (for a time scale chosen
        inside the release, :meth:`release_scaled`).
    """

    def __init__(self, prepare: Callable, book: LedgerStore, key: LedgerKey, public_info: dict, view: str = "",
                 sequences: int = 1, count: Callable | None = None):
        self._prepare = prepare
        self._count = count
        self.book = book
        self.key = key
        self.public_info = dict(public_info)
        self.view = f"{view}\n{sorted(self.public_info.items())}"
        self.sequences = int(sequences)
        self._planned: dict[str, tuple] = {}  # each planned config's statistics, data info, report, and whether its
        # release can reuse them (nothing chosen inside it)

    @classmethod
    def for_events(cls, events: Events, book: LedgerStore, fingerprint: str, unit: str = "event",
                   prepare: Callable | None = None, view: str | None = None) -> PrivacySession:
        """The session on loaded events, for the CLI and the app alike (``fingerprint``: their source's key,
        :func:`~dphawkes_core.data.row_key.data_fingerprint`). ``prepare``: how the statistics are computed
        (default :func:`~dphawkes_core.estimators.prepare_stats` on the events; the app passes its cache);
        ``view``: :func:`~dphawkes_core.data.row_key.events_fingerprint` of the events, when the caller has it
        already. The observed time T of a private choice of Δ and s is the events' declared
        :attr:`~dphawkes_core.data.events.Events.end_time` (summed over sequences)."""
        return cls(prepare or (lambda config: prepare_stats(events, config)), book, LedgerKey(fingerprint, unit),
                   {"window_stated": events.window_stated, **domain_info(events)},
                   events_fingerprint(events) if view is None else view, events.n_sequences,
                   count=lambda: (events.n_events, events.end_time))

    def request(self, config: FitConfig) -> str:
        """The identity of releasing ``config`` here (:func:`request_identity`)."""
        return request_identity(self.key, config, self.view)

    def ledger(self) -> DataLedger | None:
        """The data set's ledger, ``None`` before anything was recorded."""
        return self.book.get(self.key)

    def replay(self, config: FitConfig) -> SessionAnswer | None:
        """The stored answer to ``config``, or ``None``: reads the ledger only, draws nothing. A request charged but
        never released (killed, or failed after its draw) raises
        :class:`~dphawkes_core.release.ledger.ChargedNotReleased`: it is answered with its refusal, never drawn
        again."""
        return self._stored(lambda: self.request(config))

    def status(self, config: FitConfig, data_derived=()) -> FormalStatus:
        """The formal status a release of ``config`` gets here: never formal on data marked public; after a
        non-private look at the rows (:class:`~dphawkes_core.release.ledger.DataLook`), its reasons name the look."""
        status = release_status(config, self.public_info, data_derived, released=True)
        ledger = self.book.get(self.key)
        if ledger is not None and ledger.public:
            return FormalStatus(False, status.reasons + (PUBLIC_MARK_REASON,))
        if ledger is not None and ledger.looks:
            return FormalStatus(status.formal, status.reasons + (looks_reason(ledger.looks),))
        return status

    def plan(self, config: FitConfig, data_derived=()) -> tuple[object, tuple]:
        """``(status, mechanisms)`` of releasing ``config``, from public numbers only: nothing is drawn.

        An automatic count cap or clip norm is planned at a public placeholder (the top of its range): what a
        selection and the release after it spend depends on ε, δ and the share alone, not on the value chosen.
        Without an automatic selection the statistics and calibration are the release's own: kept for it (its
        release in this session calibrates nothing again).
        """
        self._check_unit(config)
        status = self.status(config, data_derived)
        if not (config.family.privacy.private and status.formal):
            return status, ()
        placeholder = _placeholder_config(config)
        memo = _memo_key(config)
        if memo in self._planned:
            return status, self._planned[memo][2].mechanisms(config.family.bound)
        stats, info = self._prepare(placeholder)
        if config.sequence_clip == AUTO:
            stats = replace(stats, auto_clip=AutoClip(stats.sequence_clip, config.sequence_clip_share, float("nan"),
                                                      stats.sequence_clip))
        report = privacy_report(stats, config)
        # reused by the release when nothing is chosen inside it: these are then its statistics and calibration
        self._planned[memo] = (stats, info, report, placeholder == config)
        return status, report.mechanisms(config.family.bound)  # its noisy releases carry the family's bound version

    def preview(self, configs, scale_share: float | None = None, choices=(TIME_SCALE,),
                budget: Budget | None = None) -> Plan:
        """What releasing ``configs`` together would spend and whether it would be refused (the budget, a closed
        view, the per-person promise), drawing and recording nothing (:func:`~dphawkes_core.release.plan.plan_release`;
        ``budget``: the one the request would set). A request refused for a reason of its own raises
        ``DPHawkesError``."""
        return plan_release(self, list(configs), scale_share, choices, budget)

    def release(self, config: FitConfig, data_derived=()) -> SessionAnswer:
        """Answer ``config``: replayed (nothing drawn), refused (:class:`~dphawkes_core.release.ledger.BudgetExceeded`,
        nothing drawn) or charged, drawn, and recorded with its data info."""
        earlier = self.replay(config)
        if earlier is not None:
            return earlier
        status, planned = self.plan(config, data_derived)
        spent: list = []
        answer = self.book.record_spend(self.key, self.request(config), lambda: self._run(config, planned, spent),
                                        label=entry_label(config), formal=status.formal, reasons=status.reasons,
                                        mechanisms=planned, recorded=lambda: tuple(spent) or planned,
                                        max_events=config.max_events)
        return self._answer(answer.entry, answer.replayed, answer.ledger)

    def scaled_request(self, config: FitConfig, share: float = AUTO_SCALE_SHARE, choices=(TIME_SCALE,)) -> str:
        """The identity of releasing ``config`` with ``choices`` made inside the release (its own values of what is
        chosen are not read: the request is keyed on a placeholder, the total ε, the share and the choices)."""
        choices = check_choices(choices)
        placeholder = _scale_placeholder(config, choices)
        what = "" if choices == (TIME_SCALE,) else f", choosing {' and '.join(choices)}"
        return hashlib.sha256(f"{self.request(placeholder)}\nauto time scale, share {float(share)!r}{what}".encode()
                              ).hexdigest()

    def plan_scaled(self, config: FitConfig, share: float = AUTO_SCALE_SHARE, data_derived=(),
                    choices=(TIME_SCALE,)) -> ScaledPlan:
        """What releasing ``config`` with ``choices`` (:data:`~dphawkes_core.privacy.time_scale.CHOICES`) made inside
        the release would do, from public numbers only (nothing drawn): the count ``N̂``'s mechanism, the fit's at the
        ε left, and the split. Refused (``DPHawkesError``) where a private choice is not available or public facts
        refuse the fit (its settings, the declared domain: checked at the placeholder, before anything is charged);
        what depends on the noisy count is decided inside the charged release."""
        choices = check_choices(choices)
        if self._count is None:
            raise DPHawkesError("this data source cannot choose Δ and s inside the release; give them")
        if not config.family.privacy.private or config.epsilon is None or config.sigma2 is not None:
            raise DPHawkesError("an automatic Δ and s spend a share of ε: give a private method and a target ε")
        if config.privacy_unit != "event":
            raise DPHawkesError("an automatic Δ and s are available for the event unit only (one event moves the "
                                "count of events by one)")
        if DECAYS in choices and not any(s.name == "decays" for s in config.family.settings):
            raise DPHawkesError(f"{config.family.label} has no decays to choose: automatic decays are for the "
                                "exponential kernels")
        placeholder = _scale_placeholder(config, choices)
        _, full = self.plan(placeholder, data_derived)
        discrete = any(m.kind == "discrete-gaussian" for m in full)
        shares = split(config.epsilon, config.dp_delta, share, discrete, "the time scale")
        status, fit_plan = self.plan(placeholder.with_changes(epsilon=shares.rest_epsilon), data_derived)
        count = shares.selection(_count_label(choices))
        return ScaledPlan(status, (count, *fit_plan) if fit_plan else (), shares, discrete, placeholder, choices)

    def replay_scaled(self, config: FitConfig, share: float = AUTO_SCALE_SHARE,
                      choices=(TIME_SCALE,)) -> SessionAnswer | None:
        """The stored answer to :meth:`release_scaled` of the same request, or ``None``: reads the ledger only (a
        request charged but never released raises, as in :meth:`replay`)."""
        return self._stored(lambda: self.scaled_request(config, share, choices))

    def release_scaled(self, config: FitConfig, share: float = AUTO_SCALE_SHARE, data_derived=(),
                       choices=(TIME_SCALE,)) -> SessionAnswer:
        """Answer ``config`` with Δ and s (and, for exp, the decays: ``choices``) chosen privately inside the
        recorded release (:mod:`~dphawkes_core.privacy.time_scale`): ``share`` of ``config.epsilon`` buys a noisy
        count of the events, the fit gets the rest. ``config``'s own values of what is chosen are replaced. A replay
        returns the stored choice and estimate, drawing nothing; the ledger records the count's mechanism with the
        fit's, charged before the count is drawn. A fit refused at the chosen Δ and s (a decision read from the
        noisy count) is recorded with the choice and raised as
        :class:`~dphawkes_core.release.ledger_store.RefusedAfterDraw`: charged, and refused from the record when
        asked again."""
        earlier = self.replay_scaled(config, share, choices)
        if earlier is not None:
            return earlier
        plan = self.plan_scaled(config, share, data_derived, choices)
        count_first = plan.mechanisms[:1]
        fit_plan = plan.mechanisms[1:]
        spent: list = []

        def run() -> dict:
            n_events, observed = self._count()
            scale = dp_time_scale(n_events, observed, plan.split, scale_rng(config.seed, plan.discrete),
                                  plan.choices)
            try:
                record = self._run(config.with_changes(**scale.config_changes()), fit_plan, spent, first=count_first)
            except DPHawkesError as exc:
                raise RefusedAfterDraw(
                    f"refused after the noisy count was drawn: {exc} (at Δ = {scale.bin_size:g}, s = "
                    f"{scale.support:g}, p = {scale.lags}, read from it); the release was charged and its ε stays "
                    "spent", {"time_scale": scale.to_dict()}) from exc
            return {**record, "time_scale": scale.to_dict()}

        label = f"{entry_label(plan.placeholder)} (auto {', '.join(_CHOICE_WORDS[c] for c in plan.choices)})"
        answer = self.book.record_spend(self.key, self.scaled_request(config, share, plan.choices), run, label=label,
                                        formal=plan.status.formal, reasons=plan.status.reasons,
                                        mechanisms=plan.mechanisms, recorded=lambda: tuple(spent) or plan.mechanisms,
                                        max_events=config.max_events)
        return self._answer(answer.entry, answer.replayed, answer.ledger)

    def note_look(self, what: str, tool: str = "python") -> DataLedger:
        """Record a non-private look at these rows (:func:`record_look`)."""
        return record_look(self.book, self.key, what, tool)

    def promise_person(self, tool: str = "python", note: str = "") -> DataLedger:
        """Declare "one sequence is one person" for these rows, in the ledger: from then on an event-level release
        with no cap M is refused before any draw (the per-person ε would be unbounded). Refused when such a release
        was already made."""
        return self.book.promise_person(self.key, PersonPromise(utc_now(), tool, note))

    def _run(self, config: FitConfig, planned: tuple, spent: list, first: tuple = ()) -> dict:
        """Draw the release of ``config`` (the statistics' automatic selections included) and its record; ``spent``
        receives what it drew (after ``first``, a selection drawn before it) and is checked against the plan."""
        start = time.perf_counter()
        kept = self._planned.pop(_memo_key(config), None)
        if kept is not None and kept[3]:  # the plan's own statistics and calibration (no selection to draw)
            stats, info, report, _ = kept
        else:
            stats, info = self._prepare(config)  # draws an automatic selection's noise, inside the release
            report = privacy_report(stats, config) if config.family.privacy.private else None
        result = run_private(stats, config, report) if report is not None else fit_stats(stats, config)
        if planned:
            spent.extend(first + report.mechanisms(config.family.bound))
            _check_plan(first + tuple(planned), tuple(spent), self.book.get(self.key))
        record = dataclasses.replace(result, elapsed_s=time.perf_counter() - start).to_record()
        return {**record, "data_info": info.to_dict()}

    def _stored(self, request: Callable[[], str]) -> SessionAnswer | None:
        """The answer recorded for ``request()`` (asked only when the data set has a ledger), or ``None`` — also for
        an output that is not a formal release and holds no result: it spent nothing, so it runs again."""
        ledger = self.book.get(self.key)
        entry = ledger.find(request()) if ledger is not None else None
        if entry is None or (not entry.formal and entry.state != RELEASED):
            return None
        return self._answer(entry, True, ledger)

    def _answer(self, entry: Entry, replayed: bool, ledger: DataLedger) -> SessionAnswer:
        if entry.state != RELEASED:
            raise ChargedNotReleased(entry.unanswered())
        record = dict(entry.result)
        info = record.pop("data_info", None)
        scale = record.pop("time_scale", None)
        notes = (_unit_notes(entry, ledger, self.sequences) + (entry.reasons if entry.formal else ())
                 + ((ledger.public_mark.sentence(),) if ledger.public else ()))
        return SessionAnswer(FitResult.from_record(record), DataInfo(**info) if info else None, replayed, entry,
                             ledger, notes, AutoScale(**scale) if scale else None)

    def _check_unit(self, config: FitConfig) -> None:
        if config.privacy_unit != self.key.unit:
            raise DPHawkesError(f"a {config.privacy_unit}-level fit belongs in the data set's {config.privacy_unit}-"
                                f"level view of its ledger, not its {self.key.unit}-level one")


def _memo_key(config: FitConfig) -> str:
    return canonical_json(sorted(config.to_dict().items()))


def _unit_notes(entry: Entry, ledger: DataLedger, sequences: int) -> tuple[str, ...]:
    """What a formal event-level release protects beyond one event: under an enforced cap M, its ε per raw event and
    per whole sequence (:data:`~dphawkes_core.release.ledger.CAPPED_EVENT_NOTE`); without one, on several sequences,
    single events only (:data:`~dphawkes_core.release.ledger.EVENT_ONLY_NOTE`)."""
    if not entry.formal or entry.unit != "event":
        return ()
    if entry.max_events is None:
        return (EVENT_ONLY_NOTE,) if sequences > 1 else ()
    delta = ledger.budget.delta
    return (CAPPED_EVENT_NOTE.format(cap=entry.max_events, event=compose_epsilon(entry.mechanisms_in("event"), delta),
                                     sequence=compose_epsilon(entry.mechanisms_in("sequence"), delta),
                                     group=entry.group("sequence"), delta=delta),)


def _placeholder_config(config: FitConfig) -> FitConfig:
    """``config`` with its automatic selections replaced by public placeholders (no noise to draw): C at the top of
    its range, no clip G."""
    return config.with_selection(count_cap=config.count_cap_max, clip_removed=True)


def _scale_placeholder(config: FitConfig, choices=(TIME_SCALE,)) -> FitConfig:
    """``config`` at public placeholders of what is chosen: Δ = 1, p = 1; the decays at their public multiples
    (what a release spends does not depend on them: the fit is calibrated to its ε)."""
    changes = {}
    if TIME_SCALE in choices:
        changes.update(bin_size=1.0, lags=1)
    if DECAYS in choices:
        changes.update(decays=DECAY_MULTIPLES)
    return config.with_changes(**changes)


_CHOICE_WORDS = {TIME_SCALE: "Δ, s", DECAYS: "decays"}


def _count_label(choices: tuple) -> str:
    """The count's mechanism label: what it chooses (the time scale's label unchanged, for older ledgers)."""
    return f"event count N ({'; '.join('time scale Δ, s' if c == TIME_SCALE else c for c in choices)})"


@dataclass(frozen=True)
class ScaledPlan:
    """What a release with a private choice of Δ and s (and the decays) would do (nothing drawn).

    Attributes
    ----------
    status : FormalStatus
    mechanisms : tuple of Mechanism
        The count ``N̂``'s first, then the fit's at the ε left (empty when not formal).
    split : Split
        The count's noise and the fit's ε (:func:`~dphawkes_core.privacy.accounting.split`).
    discrete : bool
        The count draws the discrete Gaussian (as the fit does).
    placeholder : FitConfig
        The config at the public placeholders of what is chosen.
    choices : tuple of str
        What is chosen (:data:`~dphawkes_core.privacy.time_scale.CHOICES`).
    """

    status: FormalStatus
    mechanisms: tuple
    split: Split
    discrete: bool
    placeholder: FitConfig
    choices: tuple


def _check_plan(planned: tuple, spent: tuple, ledger: DataLedger | None) -> None:
    """The release spent what was planned (composed ε equal to 1e-9, and the same kinds of noise: a release drawn
    from the discrete Gaussian was planned as one, :mod:`~dphawkes_core.privacy.noise`): the budget check held for
    it."""
    delta = ledger.budget.delta if ledger is not None else 1e-5
    before, after = compose_epsilon(planned, delta), compose_epsilon(spent, delta)
    if sorted(m.kind for m in planned) != sorted(m.kind for m in spent):
        raise DPHawkesError(f"internal error: the release drew {', '.join(m.kind for m in spent)} noise, planned "
                            f"{', '.join(m.kind for m in planned)}")
    if abs(before - after) > 1e-9 * max(1.0, before):
        raise DPHawkesError(f"internal error: the release would spend ε = {after:.6g}, planned {before:.6g}")


def record_look(store: LedgerStore, key: LedgerKey, what: str, tool: str = "python") -> DataLedger:
    """Record a non-private look at the rows of ``key`` in ``store`` — ``what``: what was looked at and what it can
    have chosen (``dphawkes select``, ``dphawkes score``, the app's held-out table) —: every later release on the
    source names it in its reasons and notes. The same look from the same tool is recorded once."""
    return store.note_look(key, DataLook(utc_now(), tool, what))


def metered_fit(book: LedgerStore, key: LedgerKey, stats, config: FitConfig, data_info, data_derived=(),
                view: str = "") -> SessionAnswer:
    """A release of ``config`` on statistics already computed, through a session on them (the app's cached
    statistics, the comparison table); ``view`` as in :class:`PrivacySession`. An automatic selection in
    ``stats`` was drawn when they were computed: :meth:`PrivacySession.release` on the events keeps it inside the
    recorded release instead."""
    return PrivacySession(lambda _: (stats, data_info), book, key, dict(data_info), view).release(config,
                                                                                                 data_derived)


def ledger_fitter(book: LedgerStore, key: LedgerKey, data_info, data_derived=(), view: str = "") -> Callable:
    """``fitter(stats, config) -> FitResult`` that releases through the ledger (for the comparison table)."""
    return lambda stats, config: metered_fit(book, key, stats, config, data_info, data_derived, view).result


def request_identity(key: LedgerKey, config: FitConfig, view: str = "") -> str:
    """Identity of a release request: the source, what was declared about it (``view``: the loaded events'
    :func:`events_fingerprint` and what of their domain is public, so another window or declaration of the same
    rows is another release) and every setting the fit reads (so the noise distribution, the unit included):
    :meth:`~dphawkes_core.estimators.FitConfig.to_dict`, where an option the family does not read cannot appear
    (it is refused); an option ``added_later`` at its default is left out, as the ledgers written before it hold
    it."""
    settings = config.to_dict()
    for setting in config.family.settings:
        if setting.added_later and settings[setting.name] == setting.default:
            del settings[setting.name]  # a ledger written before the option existed holds the same request
    settings = canonical_json(sorted(settings.items()))
    return hashlib.sha256(f"{key.fingerprint}\n{view}\n{settings}".encode()).hexdigest()


def entry_label(config: FitConfig) -> str:
    """One line naming a fit's release: method, privacy target, Δ, p."""
    privacy = (f"ε = {config.epsilon:g}" if config.sigma2 is None and config.epsilon is not None
               else f"σ² = {config.sigma2:g}" if config.sigma2 is not None else "no noise")
    return f"{config.family.label}, {privacy}, Δ = {config.bin_size:g}, p = {config.lags}"
