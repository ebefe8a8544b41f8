"""What a private fit reports: its privacy report (:class:`PrivacyReport`: σ², ε under each calibration, the
mechanisms it spent), the split of ε with a private selection (:class:`BudgetSplit`), and whether an estimate is a
formal release (:class:`FormalStatus`, decided in one place by :func:`formal_status`, for every path).

Whether an estimate is a formal *release* depends on more than its calibration: the noise being fresh (no seed),
the window being stated, no setting being taken from the data, and the release being made by a privacy session that
meters it.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field

from dphawkes_core.errors import ConfigError
from dphawkes_core.privacy.accounting import BudgetExceeded, Mechanism, compose_epsilon


@dataclass(frozen=True)
class BudgetSplit:
    """How a fit's ε was split between the private choice of a selected value (the count cap C or the clip norm G)
    and the release that follows it.

    Attributes
    ----------
    share : float
        The share of ε the selection spent.
    cap_sigma : float
        The selection's noise multiplier (its release has sensitivity 1).
    cap_epsilon : float
        ε of the selection alone (``share · ε``) at δ.
    release_epsilon : float
        ε of the release alone at δ.
    epsilon_total : float
        Both composed (:func:`~dphawkes_core.privacy.accounting.compose_epsilon`).
    count_cap : int or None
        The count cap C chosen (``None`` for a clip norm).
    sequence_clip : float or None
        The clip norm G chosen (``None`` for a count cap).
    """

    share: float
    cap_sigma: float
    cap_epsilon: float
    release_epsilon: float
    epsilon_total: float
    count_cap: int | None = None
    sequence_clip: float | None = None

    @property
    def selection_label(self) -> str:
        """What the selection released, for the ledger."""
        if self.sequence_clip is not None:
            return "clip norm G (noisy histogram of sequence norms)"
        return "count cap C (noisy tail counts)"

    def to_dict(self) -> dict:
        """The report's ``budget_split`` in JSON: the selected value first, then the split."""
        chosen = ({"sequence_clip": self.sequence_clip} if self.sequence_clip is not None
                  else {"count_cap": self.count_cap})
        return {**chosen, "share": self.share, "cap_sigma": self.cap_sigma, "cap_epsilon": self.cap_epsilon,
                "release_epsilon": self.release_epsilon, "epsilon_total": self.epsilon_total}

    @classmethod
    def from_dict(cls, values: dict) -> BudgetSplit | None:
        """The split :meth:`to_dict` wrote (``None`` for the empty one of a report without a selection)."""
        return cls(**values) if values else None


@dataclass(frozen=True)
class PrivacyReport:
    """What the noise of a private fit means under each calibration.

    Attributes
    ----------
    sigma2 : float
        Noise variance per gradient entry that was used.
    epsilon : float
        ε under the chosen calibration (the target when ε was given).
    dp_delta : float
        δ.
    calibration : str
        The chosen calibration.
    sensitivity : float or None
        L2 sensitivity of one noisy gradient under the chosen calibration (paper: ``2L₂``).
    R : float
        Assumption 1's R computed from the private data (used by the paper modes only).
    epsilon_by_calibration : dict
        ε that the same σ² gives under each calibration (``None`` where it cannot be computed,
        e.g. ``formal`` without a count cap).
    sensitivity_by_calibration : dict
        The per-release sensitivity each calibration assumes.
    formal : bool
        True only for the ``formal`` calibration: what the noise was calibrated for, not a claim about the
        estimate (whether a *release* is formal also depends on the session that made it, the seed, the window
        and the other settings: :func:`formal_status`, which alone writes ``formal_guarantee``).
    iters : int
        Number of noisy releases K.
    note : str
        Plain-words caveat for display.
    budget_split : BudgetSplit or None
        With a privately chosen count cap (:mod:`~dphawkes_core.privacy.count_cap`) or clip norm G: how ε was
        split between that choice and the release. ``None`` otherwise.
    privacy_unit : str
        What the guarantee protects: ``event`` (one event added or removed, the paper's unit) or
        ``sequence`` (one sequence replaced, :mod:`~dphawkes_core.privacy.sequence`).
    discrete : bool
        The noise (of the release and of an automatic count cap) is the exact discrete Gaussian, calibrated and
        accounted in zCDP (:func:`~dphawkes_core.privacy.noise.discrete_noise`): the fit draws it (an unseeded release
        of integers). False: continuous Gaussian noise, exact Gaussian accounting.
    further : tuple of (float, str)
        Further Gaussian releases of the fit after its first, each ``(noise multiplier z = σ/S, label)`` — fixed from
        public numbers before any draw, while its σ and S may follow what the first release chose (ctls's width chosen
        with a share of ε, then released directly). ``sigma2`` and ``sensitivity`` are the first release's; ``epsilon``
        is of all of them composed.
    """

    sigma2: float
    epsilon: float
    dp_delta: float
    calibration: str
    sensitivity: float | None
    R: float
    epsilon_by_calibration: dict = field(default_factory=dict)
    sensitivity_by_calibration: dict = field(default_factory=dict)
    formal: bool = False
    iters: int = 1
    note: str = ""
    budget_split: BudgetSplit | None = None
    privacy_unit: str = "event"
    discrete: bool = False
    further: tuple = ()

    def to_dict(self) -> dict:
        """Plain dict for JSON export (``noise`` only for the discrete Gaussian, so seeded exports are unchanged).

        No ``formal_guarantee``: a report describes the noise of any fit, released or not; only the status of a
        privacy session's answer (:func:`formal_status`, merged in by :func:`~dphawkes_core.release.export.fit_payload`)
        carries the claim."""
        out = {
            "sigma2": self.sigma2, "epsilon": self.epsilon, "dp_delta": self.dp_delta,
            "calibration": self.calibration, "sensitivity": self.sensitivity, "R": self.R,
            "epsilon_by_calibration": dict(self.epsilon_by_calibration),
            "sensitivity_by_calibration": dict(self.sensitivity_by_calibration),
            "iters": self.iters, "note": self.note,
            "budget_split": self.budget_split.to_dict() if self.budget_split else {}, "privacy_unit": self.privacy_unit,
        }
        if self.discrete:
            out["noise"] = DISCRETE_NOISE
        if self.further:
            out["further_releases"] = [{"noise_multiplier": z, "label": label} for z, label in self.further]
        return out

    def to_record(self) -> dict:
        """Every field, JSON-able, for the ledger's copy of a result (:meth:`from_record` reads it back)."""
        return {**dataclasses.asdict(self), "budget_split": self.budget_split.to_dict() if self.budget_split else {}}

    @classmethod
    def from_record(cls, record: dict) -> PrivacyReport:
        """The report :meth:`to_record` wrote (fields it does not know are ignored)."""
        values = {k: v for k, v in record.items() if k in cls.__dataclass_fields__}
        return cls(**{**values, "budget_split": BudgetSplit.from_dict(values.get("budget_split") or {}),
                      "further": tuple((float(z), str(label)) for z, label in values.get("further") or ())})

    @property
    def rho(self) -> float:
        """ρ of a discrete-Gaussian report (the release and an automatic cap's tail counts, zCDP adds up)."""
        if not self.discrete:
            raise ConfigError("only discrete Gaussian noise is accounted in zCDP")
        rho = self.iters * self.sensitivity**2 / (2.0 * self.sigma2) if self.sigma2 > 0 else math.inf
        rho += sum(1.0 / (2.0 * z * z) for z, _ in self.further)
        return rho + (1.0 / (2.0 * self.budget_split.cap_sigma**2) if self.budget_split else 0.0)

    def mechanisms(self, bound: str = "") -> tuple[Mechanism, ...]:
        """What the fit spent: its noisy releases (σ, sensitivity, K) and, with a privately chosen count cap C or
        clip norm G, that selection's own Gaussian release (noise multiplier ``budget_split.cap_sigma``, sensitivity
        1), then its :attr:`further` releases. All are ``discrete-gaussian`` when the report was calibrated for the
        discrete Gaussian (the fit draws it for all). ``bound``: the family's bound and its version (``exp/3``,
        :attr:`~dphawkes_core.estimators.family.Family.bound`), recorded on the noisy releases (their sensitivity is
        that bound), not on the selection.

        Raises
        ------
        BudgetExceeded
            For σ² = 0 (its ε is infinite).
        """
        if self.sensitivity is None or self.sigma2 <= 0:
            raise BudgetExceeded("refused: σ² = 0 adds no noise, so its ε is infinite")
        kind = "discrete-gaussian" if self.discrete else "gaussian"
        split = self.budget_split
        cap = (Mechanism(kind, float(split.cap_sigma), 1, split.selection_label),) if split else ()
        main = Mechanism(kind, math.sqrt(self.sigma2) / float(self.sensitivity), int(self.iters),
                         RELEASE_LABELS[0] if self.iters == 1 else RELEASE_LABELS[1], bound)
        return cap + (main,) + tuple(Mechanism(kind, float(z), 1, label, bound) for z, label in self.further)

    def at_larger_sensitivity(self, factor: float) -> PrivacyReport:
        """This report of a release whose sensitivity bound was found short by ``factor`` (> 1): the same σ² over
        the corrected sensitivity (and each :attr:`further` release's multiplier over ``factor``: the same bound),
        and the ε it gives (the releases' and, with a selection, all composed), under its calibration; the other
        calibrations' figures are left as they were (:mod:`~dphawkes_core.release.recost` re-costs formal releases
        only)."""
        sensitivity = float(self.sensitivity) * float(factor)
        corrected = dataclasses.replace(self, sensitivity=sensitivity,
                                        further=tuple((z / float(factor), label) for z, label in self.further))
        mechanisms = corrected.mechanisms()
        epsilon = compose_epsilon(mechanisms, self.dp_delta)
        split = self.budget_split
        if split is not None:
            split = dataclasses.replace(split, release_epsilon=compose_epsilon(mechanisms[1:], self.dp_delta),
                                        epsilon_total=epsilon)
        return dataclasses.replace(
            corrected, epsilon=epsilon, budget_split=split,
            epsilon_by_calibration={**self.epsilon_by_calibration, self.calibration: epsilon},
            sensitivity_by_calibration={**self.sensitivity_by_calibration, self.calibration: sensitivity})


#: The labels of a report's noisy releases (one release, or K gradients): the mechanisms whose sensitivity is the
#: family's bound (a ledger written before bounds carried a version is read by them).
RELEASE_LABELS = ("noisy statistics", "noisy gradients")


DISCRETE_NOISE = "discrete Gaussian (exact sampler, OpenDP), composed in zCDP"

DATA_SETTINGS = {"B": "the bound B", "r": "the radius r", "C": "the count cap C", "T": "the observation window",
                 "ridge": "the ridge λ", "d": "the number of dimensions d", "S": "the set of sequences"}
NO_NOISE = "σ² = 0: no noise, so ε is infinite"
NOT_RELEASED = "not released through a privacy session: nothing meters repeated releases (use a ledger)"


@dataclass(frozen=True)
class FormalStatus:
    """Whether a fit's estimate is a formal (ε, δ)-DP release, and if not, every reason why.

    Attributes
    ----------
    formal : bool
        True only when nothing below applies.
    reasons : tuple of str
        Plain-words reasons the guarantee does not hold (empty when ``formal``).
    """

    formal: bool
    reasons: tuple[str, ...] = ()

    @property
    def settings_formal(self) -> bool:
        """The settings give a formal release: nothing is missing but the release through a privacy session
        (what an experiment or a public simulation with these settings would be, released on private data)."""
        return all(reason == NOT_RELEASED for reason in self.reasons)

    def label(self) -> str:
        """One line for display: the guarantee, or "not a formal guarantee: <reasons>"."""
        if self.formal:
            return "formal (ε, δ)-DP guarantee"
        return "not a formal guarantee: " + "; ".join(self.reasons)

    def to_dict(self) -> dict:
        """``formal_guarantee``, ``formal_reasons`` and ``formal_settings`` for JSON export and tables."""
        return {"formal_guarantee": self.formal, "formal_reasons": list(self.reasons),
                "formal_settings": self.settings_formal}


def data_reason(name: str) -> str:
    """The reason for the setting ``name`` (a key of :data:`DATA_SETTINGS`) taken from the data, in words that hold
    on every surface (what to declare instead is each surface's advice:
    :class:`~dphawkes_core.privacy.formal_words.Reason`)."""
    return f"{DATA_SETTINGS[name]} was taken from the data"


SEEDED_NOISE = "the noise was seeded: reproducible noise, not a private release"
WINDOW_FROM_DATA = "the window was read from the data"


def formal_status(calibration: str | None, *, seed: int | None, window_stated: bool,
                  data_derived=(), noise: bool = True, released: bool = False) -> FormalStatus:
    """The one place that decides whether an estimate carries the formal guarantee.

    Parameters
    ----------
    calibration : str or None
        The noise calibration (``None`` for a non-private method).
    seed : int or None
        Noise seed; any seed makes the noise reproducible by whoever knows it, so the output is not a
        private release (``None``: noise from OS entropy).
    window_stated : bool
        True when the user stated the observation window (so n is public); False when it was read from
        the data (e.g. the last event time).
    data_derived : iterable of str
        Settings taken from the data rather than stated publicly: keys of :data:`DATA_SETTINGS`
        (``B``, ``r``, ``C``, ``T``, ``ridge``, ``d``, ``S``; ``T`` means the same as ``window_stated=False``).
    noise : bool
        False when the release adds no noise (σ² = 0): its ε is infinite, whatever the calibration.
    released : bool
        True only for a release made by a privacy session (:class:`~dphawkes_core.release.session.PrivacySession`),
        which meters it; anything else — a fit through the API, a CLI fit without a ledger, an experiment — is
        not a formal release, whatever its settings (:attr:`FormalStatus.settings_formal` says whether they are).

    Returns
    -------
    FormalStatus
    """
    unknown = [name for name in data_derived if name not in DATA_SETTINGS]
    if unknown:
        raise ConfigError(f"unknown data-derived setting(s) {unknown}; use {', '.join(DATA_SETTINGS)}")
    reasons = []
    if calibration is None:
        reasons.append("the method adds no noise (not private)")
    elif calibration != "formal":
        reasons.append(f"the {calibration} calibration computes R from the private data")
    if calibration is not None and not noise:
        reasons.append(NO_NOISE)
    if calibration is not None and not released:
        reasons.append(NOT_RELEASED)
    if seed is not None:
        reasons.append(SEEDED_NOISE)
    if not window_stated or "T" in data_derived:
        reasons.append(WINDOW_FROM_DATA)
    reasons.extend(data_reason(name) for name in dict.fromkeys(data_derived) if name != "T")
    return FormalStatus(formal=not reasons, reasons=tuple(reasons))
