"""An estimator family as a unit: its options, the privacy units it supports, its sensitivity (through its
privacy report), its fit and the metadata the CLI and the app build their controls from.

A family is a :class:`Family` subclass in one module (with its options class made by
:func:`~dphawkes_core.estimators.settings.options_class`) plus one line in
:mod:`~dphawkes_core.estimators.registry`. Nothing outside the registry dispatches on a method name: the
pipeline, the ledger, the experiments, the CLI and the app ask the family (``docs/architecture.md``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import ClassVar

import numpy as np

from dphawkes_core.errors import ConfigError
from dphawkes_core.estimators.settings import Setting
from dphawkes_core.privacy.count_cap import CapRule
from dphawkes_core.privacy.noise import NoiseSource
from dphawkes_core.privacy.report import PrivacyReport
from dphawkes_core.statistics.moments import SufficientStats


class Statistics(StrEnum):
    """What a family fits: the binned moments (shared by every family that fits them) or its own statistics of
    the exact event times (``EVENTS``: least squares' pair pieces; ``PAIRS``: the likelihood's pairs per target)
    (computed for it alone; its audit neighbours are built from events). A ``StrEnum``:
    its values are the strings stored in exports and sweep keys."""

    BINNED = "binned"
    EVENTS = "events"
    PAIRS = "pairs"  # the maximum likelihood's: every target's pairs of exact times


#: How each kind of statistics is presented beside the methods (the app's method choice, ``fit --help``).
STATISTICS_LABELS = {Statistics.BINNED: "binned counts (the paper's INAR)",
                     Statistics.EVENTS: "exact event times (continuous-time least squares)",
                     Statistics.PAIRS: "exact event times (maximum likelihood)"}


@dataclass(frozen=True)
class AuditHints:
    """What the contract suite (:func:`~dphawkes_core.estimators.checks.check_family`) and the worst-case privacy
    audit need to know about a family; none of it changes a fit.

    Attributes
    ----------
    noiseless_limit : str
        What the fit is with σ² = 0 and ``noiseless_options``, which the contract suite computes independently:
        ``least squares``, ``projected gradient``, ``frank-wolfe``, ``clipped gradient``, ``continuous least
        squares``, ``exponential least squares`` or ``maximum likelihood``.
    noiseless_options : dict
        Options that make that limit exact (no ridge, no smoothing, nothing clipped, ...).
    sensitivity_fraction : float
        The share of the sensitivity bound adversarial neighbours are documented to reach (checked).
    worst_case_options : dict
        Public options under which the worst-case audit sees most of the bound (one release from U = 0, a tiny
        constraint): :func:`dphawkes_experiments.audit.worst_case_fit`.
    worst_case_lags, worst_case_dim : int or None
        p and d of the worst-case audit's pair when the bound is reached only there (``None``: the user's p, the
        data's d).
    """

    noiseless_limit: str = "least squares"
    noiseless_options: dict = field(default_factory=dict)
    sensitivity_fraction: float = 0.0
    worst_case_options: dict = field(default_factory=dict)
    worst_case_lags: int | None = None
    worst_case_dim: int | None = None


@dataclass(frozen=True)
class PrivacyTags:
    """What a family's privacy claim rests on.

    Attributes
    ----------
    private : bool
        Whether it adds noise (``False``: a non-private reference such as CLS).
    calibrations : tuple of str
        Its calibrations (``("formal",)``: formal only).
    units : tuple of str
        The privacy units it supports (``event``, ``sequence``).
    auto_count_cap : bool
        Whether it can choose C privately (``count_cap="auto"``).
    constraint : str or None
        The option bounding the estimate's norm (``bound``, ``radius``), if any.
    """

    private: bool = True
    calibrations: tuple[str, ...] = ()
    units: tuple[str, ...] = ("event",)
    auto_count_cap: bool = False
    constraint: str | None = None


@dataclass(frozen=True)
class InputTags:
    """What a family fits.

    Attributes
    ----------
    statistics : Statistics
        The binned moments or its own statistics of the exact event times.
    per_bin : bool
        Whether it needs the counts bin by bin (so it cannot fit partitioned data).
    """

    statistics: Statistics = Statistics.BINNED
    per_bin: bool = False


@dataclass(frozen=True)
class CostTags:
    """How the cost model (:mod:`~dphawkes_core.estimators.cost`) treats a family.

    Attributes
    ----------
    iterative : bool
        Whether it runs K noisy iterations (option ``iters``).
    kind : str
        ``solve``, ``gradient``, ``clipped``, ``pairs`` or ``likelihood``.
    """

    iterative: bool = False
    kind: str = "solve"


@dataclass(frozen=True)
class NoisedQuery:
    """One vector a release adds Gaussian noise to, with the L2 sensitivity that noise is calibrated to: what
    the neighbour search (:mod:`~dphawkes_core.estimators.neighbour_search`) measures on neighbouring data sets.

    Attributes
    ----------
    name : str
        Which release it is (``release``; a family with several names each).
    vector : numpy.ndarray
        The noiseless numbers, in the units ``sensitivity`` is stated in.
    sensitivity : float
        The L2 sensitivity the family states for them: a public number, the same on every data set.
    """

    name: str
    vector: np.ndarray
    sensitivity: float


@dataclass(frozen=True)
class StateSpace:
    """The public states at which an iterative family releases: every ``U`` of ``shape`` with
    ``||U||_F <= radius`` (the constraint set its iterates are projected on, or a ball holding it). Its noised
    vector depends on the state, so a neighbour search chooses the state too.

    Attributes
    ----------
    shape : tuple of int
        ``(d, d·p + 1)``.
    radius : float
        The largest ``||U||_F``.
    """

    shape: tuple[int, int]
    radius: float


@dataclass(frozen=True)
class BoundCorrection:
    """How far a release recorded under an older version of a family's bounds understated its sensitivity
    (:meth:`Family.bound_correction`): its noise σ is what was drawn, so its true noise multiplier is the recorded
    one over ``factor``.

    Attributes
    ----------
    factor : float
        ``S_corrected / S_recorded`` (> 1).
    why : str
        What was short and how the factor was found, in words (a ledger's note says it).
    """

    factor: float
    why: str


#: Class attributes a family no longer sets one by one, and the tags that now hold them.
_MOVED_TO_TAGS = {"private": "privacy", "calibrations": "privacy", "units": "privacy", "auto_count_cap": "privacy",
                  "constraint": "privacy", "statistics": "inputs", "per_bin": "inputs", "iterative": "cost",
                  "cost_kind": "cost (as kind)"}

_TAG_TYPES = {"privacy": PrivacyTags, "inputs": InputTags, "cost": CostTags, "audit_hints": AuditHints}


class Family:
    """Base of every estimator family: a subclass sets the class attributes below and overrides
    :meth:`privacy_report`, :meth:`run` and :meth:`query_vector` (and :meth:`prepare_stats` when it fits other
    statistics than the binned moments). ``check_family(family)`` runs the contract suite on it.

    Attributes
    ----------
    name, label, summary : str
        Its code (``--method``, exports, the ledger), display name, and one sentence for the app and ``--help``.
    settings, options_type
        Its options (one :class:`~dphawkes_core.estimators.settings.Setting` each) and their frozen dataclass
        (:func:`~dphawkes_core.estimators.settings.options_class`).
    privacy, inputs, cost : PrivacyTags, InputTags, CostTags
        What its privacy claim rests on, what it fits, how the cost model treats it.
    audit_hints : AuditHints
        For the contract suite and the worst-case audit.
    bound_version : int
        The version of its sensitivity bounds, recorded on every release it charges (:attr:`bound`): raised when a
        bound is found short, with :meth:`bound_correction` saying how to re-cost a release of an older version.
    """

    name: ClassVar[str]
    label: ClassVar[str]
    summary: ClassVar[str] = ""
    settings: ClassVar[tuple[Setting, ...]] = ()
    options_type: ClassVar[type]
    privacy: ClassVar[PrivacyTags] = PrivacyTags()
    inputs: ClassVar[InputTags] = InputTags()
    cost: ClassVar[CostTags] = CostTags()
    audit_hints: ClassVar[AuditHints] = AuditHints()
    bound_version: ClassVar[int] = 1

    def __init_subclass__(cls, **kwargs):
        """Refuse a fact set on its own (``private = False``: it would be silently ignored, it belongs in a tag) and
        a tag of the wrong type."""
        super().__init_subclass__(**kwargs)
        loose = sorted(set(vars(cls)) & _MOVED_TO_TAGS.keys())
        if loose:
            raise TypeError(f"{cls.__name__} sets {', '.join(loose)} directly; set them in its tags instead ("
                            + ", ".join(f"{name} -> {_MOVED_TO_TAGS[name]}" for name in loose) + ")")
        for name, kind in _TAG_TYPES.items():
            if not isinstance(getattr(cls, name), kind):
                raise TypeError(f"{cls.__name__}.{name} must be a {kind.__name__}")

    @property
    def bound(self) -> str:
        """``name/version`` of its sensitivity bounds, as a ledger records it on the noisy releases it charges."""
        return f"{self.name}/{self.bound_version}"

    def bound_correction(self, version: int, unit: str, result: dict) -> BoundCorrection | None:
        """How far a release of this family recorded under ``version`` of its bounds (older than
        :attr:`bound_version`) understated its sensitivity, read from what its ledger entry stores: its privacy
        ``unit`` and its ``result`` (:meth:`~dphawkes_core.estimators.result.FitResult.to_record` with its
        ``data_info``; ``{}`` or ``{"error": …}`` for a release that holds no result — a family then answers with
        the largest correction its proof allows). ``None``: the bound of ``version`` holds for this release (the
        default: no bound of the family was found short)."""
        return None

    @property
    def formal_only(self) -> bool:
        """Has only the formal calibration."""
        return self.privacy.calibrations == ("formal",)

    @property
    def fits_event_times(self) -> bool:
        """Fits its own statistics of the exact event times (its neighbours are built from events)."""
        return self.inputs.statistics != Statistics.BINNED

    def options(self, **values):
        """This family's options from keywords (unknown ones refused by the dataclass)."""
        return self.options_type(**values)

    def reads(self, name: str) -> bool:
        """Whether ``name`` is one of this family's options."""
        return name in self.options_type.__dataclass_fields__

    def own_options(self, values: dict) -> dict:
        """The entries of ``values`` this family reads (``None`` left out): how a setting stated once for many
        families (a sweep's B, r, K; the comparison's public settings) reaches those that use it."""
        return {name: value for name, value in values.items() if self.reads(name) and value is not None}

    def extra_solves(self, config, dim: int) -> tuple[int, ...]:
        """The sizes q of the solves a fit of ``config`` runs besides its one solve of ``d·p + 1`` parameters (the
        cost model adds ``q³`` for each, :func:`~dphawkes_core.estimators.cost.estimate_fit_cost`); none by
        default."""
        return ()

    def cap_rule(self, config) -> CapRule:
        """The public terms of an automatic count cap's rule for ``config``
        (:class:`~dphawkes_core.privacy.count_cap.CapRule`): the target's scale — how the release's noise per unit of C
        compares with one event's signal, 1 where the target's κ was chosen — and the guard. Default: scale 1 (exp:
        its features do not scale with w), the 10 % guard."""
        return CapRule()

    def check(self, config) -> None:
        """Rules that tie the family's options to the shared settings (ε, σ², C, the unit); raise
        :class:`ConfigError`. The base checks the calibration."""
        if self.privacy.private and config.calibration not in self.privacy.calibrations:
            if self.formal_only:
                raise ConfigError(f"method {self.name} has only the formal calibration; choose calibration 'formal'")
            raise ConfigError(f"{self.label} has no calibration {config.calibration!r}; choose one of "
                              f"{', '.join(self.privacy.calibrations)}")

    def prepare_stats(self, events, config) -> tuple[SufficientStats, dict]:
        """The statistics this family fits, from the events, with a data-info dict: by default the binned
        moments (:func:`~dphawkes_core.estimators.binned.prepare_binned`). A family whose unit or statistics
        differ overrides it."""
        from dphawkes_core.estimators.binned import prepare_binned  # here: not every family fits binned moments

        return prepare_binned(events, config)

    def prepare_partitioned(self, paths, config, window, executor=None) -> tuple[SufficientStats, dict]:
        """The same statistics reduced over Parquet partitions (map steps on ``executor``)."""
        from dphawkes_core.estimators.binned import prepare_partitioned

        return prepare_partitioned(paths, config, window, executor)

    def privacy_report(self, stats: SufficientStats, config) -> PrivacyReport:
        """σ² of the event-unit release of ``config`` on ``stats`` (from ε, or as given) and ε under every
        calibration: the family's sensitivity, composed over its releases."""
        raise ConfigError(f"{self.label} adds no noise: it has no privacy report")

    def integer_release(self, config) -> bool:
        """Whether every number the fit of ``config`` releases is an integer (and few enough for OpenDP's exact
        sampler, ~15 µs each): then an unseeded fit draws the discrete Gaussian and is calibrated and accounted
        in zCDP (:func:`~dphawkes_core.privacy.noise.discrete_noise`; pass ``discrete=`` to the calibration). Default:
        real-valued releases (continuous noise from the OS CSPRNG in a release)."""
        return False

    def run(self, stats: SufficientStats, config, report: PrivacyReport | None, rng: NoiseSource,
            transcript: list | None = None) -> tuple[np.ndarray, list, dict]:
        """The estimator on ``stats`` with the noise of ``report`` drawn from ``rng``
        (:func:`~dphawkes_core.privacy.noise.noise_source`: numpy's for a seed, the OS CSPRNG for a release, discrete
        when ``report.discrete``; a numpy ``Generator`` is accepted too and draws like a seeded source).

        Returns
        -------
        U : numpy.ndarray
            ``(d, dp+1)`` estimate of ``ΔH``.
        history : list of float
            The paper's loss per iteration (one value for a one-shot family).
        info : dict
            Diagnostics for the result.
        """
        raise NotImplementedError

    def query_vector(self, stats: SufficientStats, config) -> np.ndarray:
        """The query: the noiseless numbers the mechanism adds noise to (its first one), in the units its
        sensitivity is stated in: the L2 change of this vector between neighbours is what :meth:`privacy_report`'s
        ``sensitivity`` bounds."""
        raise ConfigError(f"{self.label} releases nothing: it adds no noise")

    def noised_queries(self, stats: SufficientStats, config, state: np.ndarray | None = None
                       ) -> tuple[NoisedQuery, ...]:
        """Every vector the release of ``config`` on ``stats`` adds Gaussian noise to, each with the L2 sensitivity
        its noise is calibrated to: the one entry point of the neighbour search
        (:func:`~dphawkes_core.estimators.neighbour_search.search_neighbours`, run by ``check_family`` on every
        registered family), which builds neighbouring data sets, computes their statistics with
        :func:`~dphawkes_core.estimators.pipeline.prepare_stats` (or ``prepare_partitioned``) and checks that no
        vector moves by more than its sensitivity — told nothing else about the family.

        Default: one, ``release``: :meth:`query_vector` at :meth:`privacy_report`'s ``sensitivity``. A family
        that adds noise to more than one vector (a second release, counts for a choice) returns each with its
        own sensitivity; an iterative one returns the vector it releases at ``state`` (a point of
        :meth:`query_states`; ``None``: its first).
        """
        if state is not None:
            raise ConfigError(f"{self.label} releases once: it has no state to release at")
        return (NoisedQuery("release", np.asarray(self.query_vector(stats, config), dtype=float),
                            float(self.privacy_report(stats, config).sensitivity)),)

    def largest_move(self, pairs, config):
        """Of neighbouring ``(D, D')`` event pairs, the one whose :meth:`query_vector` moves most under ``config``
        (a family's ``worst_case_events`` offering several kinds of neighbour returns it)."""
        best = None
        for pair in pairs:
            d, d_prime = (self.prepare_stats(events, config)[0] for events in pair)
            moved = float(np.linalg.norm(self.query_vector(d_prime, config) - self.query_vector(d, config)))
            if best is None or moved > best[0]:
                best = (moved, pair)
        return best[1]

    def query_states(self, config, dim: int) -> StateSpace | None:
        """Where an iterative family's releases are made (:class:`StateSpace`, public: its constraint set);
        ``None`` (the default) for a family that releases once. The neighbour search picks states in it."""
        return None

    def worst_case_state(self, dim: int, lags: int, count_cap: int, config) -> np.ndarray | None:
        """A public state ``U`` (``d × (dp+1)``) at which the worst-case audit observes the releases, for a
        family whose sensitivity bound holds at every state but is reached only away from where a fit
        starts. The audit's pair is every count at C in all bins and, in D, one count of dimension 0 in the
        middle bin one lower. ``None`` (the default): the audit runs the mechanism from its own start.

        Each release is calibrated to the bound at whatever state the earlier releases led to (the
        adaptive composition the claim rests on), so K releases at one chosen state are held to the same
        claim ``μ = √K·S/σ`` as the run itself; :meth:`noisy_output` with ``state`` gives them."""
        return None

    def noisy_output(self, stats: SufficientStats, config, report: PrivacyReport,
                     rng: np.random.Generator, state: np.ndarray | None = None) -> np.ndarray:
        """Everything the mechanism outputs, noise included, as one vector: what the privacy audit observes (not a
        privacy session's answer: the audit runs the mechanism seeded, outside any ledger). With ``state``
        (:meth:`worst_case_state`): the K releases made at that state."""
        if state is not None:
            raise ConfigError(f"{self.label} has no state to release at")
        transcript = []
        U, _, _ = self.run(stats, config, report, rng, transcript)
        return np.concatenate([np.ravel(t) for t in transcript]) if transcript else np.ravel(U)
