"""An estimator family as a unit: its options, the privacy units it supports, its sensitivity (through its
privacy report), its fit and the metadata the CLI and the app build their controls from.

A family is a :class:`Family` subclass in one module (with its options class made by
:func:`~dphawkes_core.estimators.settings.options_class`) plus one line in
:mod:`~dphawkes_core.estimators.registry`. Nothing outside the registry dispatches on a method name: the
pipeline, the ledger, the experiments, the CLI and the app ask the family (``docs/architecture.md``).
"""

from __future__ import annotations

from enum import StrEnum
from typing import ClassVar

import numpy as np

from dphawkes_core.errors import ConfigError
from dphawkes_core.estimators.binned import prepare_binned, prepare_partitioned
from dphawkes_core.estimators.settings import Setting
from dphawkes_core.privacy.calibration import PrivacyReport
from dphawkes_core.privacy.noise import NoiseSource
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


class Family:
    """Base of every estimator family; subclasses set the class attributes and override the methods.

    Attributes
    ----------
    name : str
        The method's code (``--method``, the URL, exports, the ledger).
    label : str
        Display name (tables, figures, the app).
    summary : str
        One sentence on what it does, for the app and ``--help``.
    private : bool
        Adds noise (``False`` for the non-private reference).
    calibrations : tuple of str
        The calibrations it has (``("formal",)`` for a formal-only family; empty when not private).
    units : tuple of str
        Privacy units it supports (:mod:`~dphawkes_core.estimators.units`).
    settings : tuple of Setting
        Its options, declared once.
    options_type : type
        Frozen dataclass of its options (fields = settings).
    auto_count_cap : bool
        May choose the count cap C privately (``count_cap="auto"``, spending a share of ε).
    constraint : str or None
        The option bounding the estimate's norm (``bound``, ``radius``), compared with the truth's norm.
    statistics : Statistics
        What :meth:`prepare_stats` computes from the events (:class:`Statistics`); :attr:`fits_event_times`
        asks it.
    per_bin : bool
        Needs the per-bin counts, not only the summed statistics (so not on partitioned data).
    iterative : bool
        Runs K noisy iterations (option ``iters``).
    cost_kind : str
        How :func:`~dphawkes_core.estimators.cost.estimate_fit_cost` models it: ``solve``, ``gradient``, ``clipped`` or
        ``pairs`` (statistics of event pairs, no FFT).
    sensitivity_fraction : float
        Fraction of the formal sensitivity bound that adversarial neighbours are documented to reach
        (the contract suite checks it: ``tests/core/estimators/test_family_contract.py``).
    worst_case_options, worst_case_lags : dict, int or None
        Public options (and p) under which a worst-case privacy audit sees most of the claimed sensitivity
        (:func:`dphawkes_experiments.audit.worst_case_fit`): one release from ``U = 0``, a tiny constraint.
    worst_case_dim : int or None
        Number of dimensions d of the worst-case audit's neighbour pair when the family's bound is reached
        only at some d (``None``: the data's d). The audit says which d it used.
    noiseless_limit, noiseless_options : str, dict
        What the fit is with σ² = 0 and ``noiseless_options``: ``least squares`` (CLS exactly), ``projected
        gradient`` (Algorithm 1 without noise), ``frank-wolfe`` (Algorithm 2 without noise), ``clipped
        gradient`` (projected gradient descent on the per-bin loss, nothing clipped), ``continuous least squares``
        or ``maximum likelihood`` (on exact event times). The contract suite
        compares it with an independent dense implementation of that limit.
    """

    name: ClassVar[str]
    label: ClassVar[str]
    summary: ClassVar[str] = ""
    private: ClassVar[bool] = True
    calibrations: ClassVar[tuple[str, ...]] = ()
    units: ClassVar[tuple[str, ...]] = ("event",)
    settings: ClassVar[tuple[Setting, ...]] = ()
    options_type: ClassVar[type]
    auto_count_cap: ClassVar[bool] = False
    constraint: ClassVar[str | None] = None
    statistics: ClassVar[Statistics] = Statistics.BINNED
    per_bin: ClassVar[bool] = False
    iterative: ClassVar[bool] = False
    cost_kind: ClassVar[str] = "solve"
    sensitivity_fraction: ClassVar[float] = 0.0
    worst_case_options: ClassVar[dict] = {}
    worst_case_lags: ClassVar[int | None] = None
    worst_case_dim: ClassVar[int | None] = None
    noiseless_limit: ClassVar[str] = "least squares"
    noiseless_options: ClassVar[dict] = {}

    @property
    def formal_only(self) -> bool:
        """Has only the formal calibration."""
        return self.calibrations == ("formal",)

    @property
    def fits_event_times(self) -> bool:
        """Fits its own statistics of the exact event times (its neighbours are built from events)."""
        return self.statistics != Statistics.BINNED

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

    def check(self, config) -> None:
        """Rules that tie the family's options to the shared settings (ε, σ², C, the unit); raise
        :class:`ConfigError`. The base checks the calibration."""
        if self.private and config.calibration not in self.calibrations:
            if self.formal_only:
                raise ConfigError(f"method {self.name} has only the formal calibration; choose calibration 'formal'")
            raise ConfigError(f"{self.label} has no calibration {config.calibration!r}; choose one of "
                              f"{', '.join(self.calibrations)}")

    def prepare_stats(self, events, config) -> tuple[SufficientStats, dict]:
        """The statistics this family fits, from the events, with a data-info dict: by default the binned
        moments (:func:`~dphawkes_core.estimators.binned.prepare_binned`). A family whose unit or statistics
        differ overrides it."""
        return prepare_binned(events, config)

    def prepare_partitioned(self, paths, config, window, executor=None) -> tuple[SufficientStats, dict]:
        """The same statistics reduced over Parquet partitions (map steps on ``executor``)."""
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

    def release_vector(self, stats: SufficientStats, config) -> np.ndarray:
        """The noiseless numbers of the (first) release, in the units its sensitivity is stated in: the L2
        change of this vector between neighbours is what :meth:`privacy_report`'s ``sensitivity`` bounds."""
        raise ConfigError(f"{self.label} releases nothing: it adds no noise")

    def worst_case_state(self, dim: int, lags: int, count_cap: int, config) -> np.ndarray | None:
        """A public state ``U`` (``d × (dp+1)``) at which the worst-case audit observes the releases, for a
        family whose sensitivity bound holds at every state but is reached only away from where a fit
        starts. The audit's pair is every count at C in all bins and, in D, one count of dimension 0 in the
        middle bin one lower. ``None`` (the default): the audit runs the mechanism from its own start.

        Each release is calibrated to the bound at whatever state the earlier releases led to (the
        adaptive composition the claim rests on), so K releases at one chosen state are held to the same
        claim ``μ = √K·S/σ`` as the run itself; :meth:`observed_release` with ``state`` gives them."""
        return None

    def observed_release(self, stats: SufficientStats, config, report: PrivacyReport,
                         rng: np.random.Generator, state: np.ndarray | None = None) -> np.ndarray:
        """Everything the mechanism releases, as one vector: what the privacy audit observes. With ``state``
        (:meth:`worst_case_state`): the K releases made at that state."""
        if state is not None:
            raise ConfigError(f"{self.label} has no state to release at")
        transcript = []
        U, _, _ = self.run(stats, config, report, rng, transcript)
        return np.concatenate([np.ravel(t) for t in transcript]) if transcript else np.ravel(U)
