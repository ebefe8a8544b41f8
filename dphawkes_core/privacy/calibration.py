"""Noise calibration, (ε, δ) ↔ σ², of every family, and what a fit reports: the privacy report and the formal
status. The gradient families (DP-PGD, DP-CG) have three calibrations; the one-release families (DP-SSP,
clipped DP-PGD, grid-free) calibrate a single sensitivity (:func:`calibrate_single_sensitivity`).

Privacy unit (the paper's Definition 1): two data sets are neighbours when their bin-count series differ
by one in one bin of one dimension (one event added or removed); the number of bins n, the window, Δ,
p, d, B, r and K are public.

* ``paper`` — Theorems 1 and 3 as published: ``σ² = 8(ΔB)²R²K log²(K/δ)/ε²`` (PGD) and
  ``σ² = 128KΔ²r²R²log²(K/δ)/ε²`` (CG), with R from Assumption 1 computed **from the private data**
  (``R = max(||A||²_F, ||b||²_F)``). Not a formal guarantee: the noise scale depends on the data, and
  the paper's Lipschitz bound is not a worst-case bound over neighbours.
* ``tight-paper`` — the paper's own gradient sensitivity ``2L₂`` (``L₂ = 2ΔBR`` for PGD, ``2ΔrR`` for
  CG) with exact accounting instead of strong composition: shows how much of the paper's noise is the
  accounting's slack. Still data-dependent through R, so still not a formal guarantee.
* ``formal`` — a worst-case L2 sensitivity of the released noisy gradient over every U in the constraint
  set and every pair of neighbouring count series clipped at a public cap C (derivation in
  ``docs/privacy.md``), composed over K releases exactly: a formal (ε, δ)-DP guarantee.

Whether an estimate is a formal *release* also depends on the noise being fresh (no seed), the window
being stated and no setting being taken from the data: :func:`formal_status` decides it, for every path.

Exact accounting: K adaptive Gaussian releases with the same sensitivity S and noise σ are together
μ-GDP with ``μ = √K·S/σ`` (Dong, Roth & Su 2019), i.e. exactly one Gaussian mechanism with noise
multiplier ``σ/(S√K)``; its (ε, δ) curve is the analytic Gaussian mechanism of Balle & Wang (2018), taken
from ``dp_accounting.gaussian_mechanism`` (cross-checked against dp-accounting's PLD accountant in the
tests).

Discrete Gaussian (an unseeded release whose numbers are all integers,
:func:`~dphawkes_core.privacy.noise.discrete_noise`):
the same sensitivities, but the releases are ρ-zCDP with ``ρ = K·S²/(2σ²)`` and are composed and converted to
(ε, δ) in zCDP (:func:`~dphawkes_core.privacy.accounting.zcdp_epsilon`), so σ for a target ε is about 8 % larger
at ε = 1 (``docs/privacy.md``, "The noise: samplers and generators"). The ``discrete`` flag below selects it.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field, replace

import numpy as np

from dphawkes_core.errors import ConfigError
from dphawkes_core.privacy.accounting import (
    BudgetExceeded,
    Mechanism,
    compose_epsilon,
    gaussian_multiplier,
    multiplier_epsilon,
    zcdp_rho,
)
from dphawkes_core.statistics.moments import SufficientStats
from dphawkes_core.validation import check_epsilon_delta, check_privacy_inputs, check_share, check_sigma2

CALIBRATIONS = ("paper", "formal", "tight-paper")
CALIBRATION_LABELS = {
    "paper": "paper (Thm 1/3, R from the data: NOT a formal guarantee)",
    "tight-paper": "paper's sensitivity + exact accounting (R from the data: NOT a formal guarantee)",
    "formal": "formal (public bounds C, B/r, d, p, n; exact accounting)",
}


@dataclass(frozen=True)
class FormalBounds:
    """Public worst-case bounds on the statistics of count series clipped at C.

    Attributes
    ----------
    z_norm_max : float
        ``max ||z_t|| = sqrt(d p C² + 1)``.
    y_norm_max : float
        ``max ||y_t|| = sqrt(d) C``.
    A_op_max : float
        ``sup ||A||_op <= z_norm_max²``.
    b_fro_max : float
        ``sup ||b||_F <= y_norm_max · z_norm_max``.
    dA_fro_max : float
        ``sup ||A' − A||_F`` over neighbours: ``√p (2 z_norm_max + 1) / N``.
    db_fro_max : float
        ``sup ||b' − b||_F`` over neighbours: ``(z_norm_max + √p · y_norm_max) / N``.
    """

    z_norm_max: float
    y_norm_max: float
    A_op_max: float
    b_fro_max: float
    dA_fro_max: float
    db_fro_max: float

    def gradient_sensitivity(self, u_fro_max: float) -> float:
        """L2 sensitivity of ``∇L(U) = (UA − b)A`` uniformly over ``||U||_F <= u_fro_max``.

        ``2 β M_A D_A + M_b D_A + M_A D_b`` (see ``docs/privacy.md``).
        """
        beta = u_fro_max
        return (2 * beta * self.A_op_max * self.dA_fro_max + self.b_fro_max * self.dA_fro_max
                + self.A_op_max * self.db_fro_max)

    def gradient_norm_max(self, u_fro_max: float) -> float:
        """Public bound on ``||∇L(U)||_F`` over ``||U||_F <= u_fro_max`` (a Lipschitz constant L₂)."""
        return (u_fro_max * self.A_op_max + self.b_fro_max) * self.A_op_max

    def statistics_sensitivity(self) -> float:
        """L2 sensitivity of the pair ``(A, b)`` released together: ``sqrt(D_A² + D_b²)``."""
        return math.hypot(self.dA_fro_max, self.db_fro_max)


def formal_bounds(dim: int, lags: int, n_rows: int, count_cap: int) -> FormalBounds:
    """Worst-case bounds for d dimensions, p lags, N rows and per-bin count cap C."""
    if count_cap is None or count_cap < 1:
        raise ConfigError("the formal calibration needs a public count cap C >= 1 (counts are clipped at C)")
    c = float(count_cap)
    z_max = math.sqrt(dim * lags * c * c + 1.0)
    y_max = math.sqrt(dim) * c
    return FormalBounds(
        z_norm_max=z_max,
        y_norm_max=y_max,
        A_op_max=z_max**2,
        b_fro_max=y_max * z_max,
        dA_fro_max=math.sqrt(lags) * (2 * z_max + 1) / n_rows,
        db_fro_max=(z_max + math.sqrt(lags) * y_max) / n_rows,
    )


def data_R(stats: SufficientStats) -> float:
    """Assumption 1's R computed from the (private) data: ``max(||A||²_F, ||b||²_F)``."""
    return float(max(np.sum(stats.A**2), np.sum(stats.b**2)))


def gaussian_sigma(epsilon: float, delta: float, sensitivity: float, releases: int, discrete: bool = False) -> float:
    """Noise std σ so that ``releases`` Gaussian releases of L2 sensitivity S are (ε, δ)-DP, exactly (``discrete``:
    discrete Gaussian releases, ρ-zCDP together, converted to (ε, δ) by
    :func:`~dphawkes_core.privacy.accounting.zcdp_epsilon`)."""
    from dp_accounting.gaussian_mechanism import get_sigma_gaussian  # here: 1.3 s import, private fits only

    check_epsilon_delta(epsilon, delta)
    if discrete:
        return sensitivity * math.sqrt(releases) * gaussian_multiplier(epsilon, delta, discrete=True)
    return sensitivity * math.sqrt(releases) * get_sigma_gaussian(epsilon, delta)


def gaussian_epsilon(sigma: float, delta: float, sensitivity: float, releases: int, discrete: bool = False) -> float:
    """Smallest ε such that ``releases`` Gaussian releases with noise σ and sensitivity S are (ε, δ)-DP (``discrete``:
    discrete Gaussian releases, accounted in zCDP).

    Raises
    ------
    ConfigError
        When σ is below :data:`~dphawkes_core.validation.MULTIPLIER_MIN` of ``S√K``: ε is then beyond what the
        accountants compute.
    """
    if sigma <= 0:
        return math.inf
    return multiplier_epsilon(sigma / (sensitivity * math.sqrt(releases)), delta, discrete)


@dataclass(frozen=True)
class PaperTheorem:
    """The published calibration of one of the paper's algorithms, in the form both share:
    ``σ² = constant · scale² · R² · K · log²(K/δ) / ε²`` and gradient sensitivity ``2L₂ = 2 · 2 · scale · R``,
    with ``scale = ΔB`` for DP-PGD (Theorem 1) and ``Δr`` for DP-CG (Theorem 3). The family holds its
    theorem and its scale; this module only does the arithmetic."""

    name: str
    constant: float


THEOREM_1 = PaperTheorem("Theorem 1 (DP-PGD)", 8.0)
THEOREM_3 = PaperTheorem("Theorem 3 (DP-CG)", 128.0)


def paper_sigma2(theorem: PaperTheorem, epsilon: float, delta: float, iters: int, scale: float, R: float) -> float:
    """σ² of ``theorem`` as published (``scale`` = ΔB for Theorem 1, Δr for Theorem 3)."""
    check_epsilon_delta(epsilon, delta)
    return _paper_factor(theorem, iters, delta, scale, R) / epsilon / epsilon  # inf, not an error, past float64


def paper_epsilon(theorem: PaperTheorem, sigma2: float, delta: float, iters: int, scale: float, R: float) -> float:
    """The ε that ``theorem`` claims for a given σ² (inverse of :func:`paper_sigma2`)."""
    if sigma2 <= 0:
        return math.inf
    return math.sqrt(_paper_factor(theorem, iters, delta, scale, R) / sigma2)


def _paper_factor(theorem: PaperTheorem, iters, delta, scale, R) -> float:
    return theorem.constant * scale**2 * R**2 * iters * math.log(iters / delta) ** 2


def paper_sensitivity(scale: float, R: float) -> float:
    """The paper's bound ``2L₂`` on the gradient difference: ``L₂ = 2·scale·R`` (2ΔBR for PGD, 2ΔrR for CG)."""
    return 2 * (2 * scale * R)


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

    def mechanisms(self) -> tuple[Mechanism, ...]:
        """What the fit spent: its noisy releases (σ, sensitivity, K) and, with a privately chosen count cap C or
        clip norm G, that selection's own Gaussian release (noise multiplier ``budget_split.cap_sigma``, sensitivity
        1), then its :attr:`further` releases. All are ``discrete-gaussian`` when the report was calibrated for the
        discrete Gaussian (the fit draws it for all).

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
                         "noisy statistics" if self.iters == 1 else "noisy gradients")
        return cap + (main,) + tuple(Mechanism(kind, float(z), 1, label) for z, label in self.further)


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


def calibrate(stats: SufficientStats, theorem: PaperTheorem, scale: float, fro_radius: float, iters: int,
              calibration: str, dp_delta: float, epsilon: float | None = None, sigma2: float | None = None,
              count_cap: int | None = None) -> PrivacyReport:
    """Find σ² for a target ε (or ε for a given σ²) of K noisy gradients and report every calibration side by side.

    Parameters
    ----------
    stats : SufficientStats
        Statistics of the (clipped) data; R is read from them for the paper modes.
    theorem : PaperTheorem
        The paper's calibration of the algorithm (:data:`THEOREM_1` for DP-PGD, :data:`THEOREM_3` for DP-CG).
    scale : float
        ΔB (DP-PGD) or Δr (DP-CG), as the theorem reads it.
    fro_radius : float
        The largest ``||U||_F`` of the constraint set (ΔB, or r as ``||U||_F <= ||U||_*``): the formal bound's.
    iters : int
        K.
    calibration : {"paper", "formal", "tight-paper"}
    dp_delta : float
        δ.
    epsilon, sigma2 : float
        Exactly one: the target ε or the noise variance σ².
    count_cap : int, optional
        Public cap C; required by ``formal``, and must be the cap the data were clipped at.

    Returns
    -------
    PrivacyReport
    """
    if calibration not in CALIBRATIONS:
        raise ConfigError(f"unknown calibration {calibration!r}; choose one of {', '.join(CALIBRATIONS)}")
    check_privacy_inputs(epsilon, sigma2, dp_delta)
    if count_cap is not None and stats.count_cap != count_cap:
        raise ConfigError(f"the statistics were clipped at C = {stats.count_cap}, not at the requested C = {count_cap}")
    R = data_R(stats)
    sens = {
        "paper": paper_sensitivity(scale, R),
        "tight-paper": paper_sensitivity(scale, R),
        "formal": (formal_bounds(stats.dim, stats.lags, stats.n_rows, stats.count_cap).gradient_sensitivity(fro_radius)
                   if stats.count_cap is not None else None),
    }
    if calibration == "formal" and sens["formal"] is None:
        raise ConfigError("the formal calibration needs a public count cap C (counts are clipped at C)")
    if sigma2 is None:
        if calibration == "paper":
            sigma2 = paper_sigma2(theorem, epsilon, dp_delta, iters, scale, R)
        else:
            sigma2 = gaussian_sigma(epsilon, dp_delta, sens[calibration], iters) ** 2
        check_sigma2(sigma2, f"the {calibration} calibration's σ² for ε = {epsilon:g}")
    sigma = math.sqrt(sigma2)
    eps_by = {
        "paper": paper_epsilon(theorem, sigma2, dp_delta, iters, scale, R),
        "tight-paper": gaussian_epsilon(sigma, dp_delta, sens["tight-paper"], iters),
        "formal": gaussian_epsilon(sigma, dp_delta, sens["formal"], iters) if sens["formal"] else None,
    }
    chosen = epsilon if epsilon is not None else eps_by[calibration]
    return PrivacyReport(
        sigma2=float(sigma2),
        epsilon=float(chosen),
        dp_delta=float(dp_delta),
        calibration=calibration,
        sensitivity=sens[calibration],
        R=R,
        epsilon_by_calibration=eps_by,
        sensitivity_by_calibration=sens,
        formal=calibration == "formal",
        iters=int(iters),
        note=CALIBRATION_LABELS[calibration],
    )


# --- one-shot sufficient-statistics release (DP-SSP) and clipped-gradient DP-PGD ----------------------------

def compose_count_cap(epsilon: float, delta: float, sensitivity: float, releases: int, share: float,
                      count_cap: int, discrete: bool = False) -> tuple[float, BudgetSplit]:
    """Noise std of ``releases`` Gaussian releases of sensitivity S that follow an automatic count cap,
    so that all of them together are exactly (ε, δ)-DP.

    The cap's release (:mod:`~dphawkes_core.privacy.count_cap`: sensitivity 1, noise multiplier
    ``m_cap = z(share·ε, δ)``) and K releases with multiplier ``m`` compose to one Gaussian mechanism
    with ``1/m_total² = 1/m_cap² + K/m²`` (μ-GDP adds in squares; Dong, Roth & Su 2019), and
    ``m_total = z(ε, δ)`` makes the total exactly (ε, δ); the split's total is the two releases composed by
    :func:`~dphawkes_core.privacy.accounting.compose_epsilon`.

    ``discrete``: both are discrete Gaussian releases (an unseeded lagged DP-SSP): the cap gets
    ``ρ_cap = ρ(share·ε, δ)``, the releases ``ρ(ε, δ) − ρ_cap`` (zCDP adds up), ``ρ(ε, δ)`` the largest ρ-zCDP
    that converts to (ε, δ) (:func:`~dphawkes_core.privacy.accounting.zcdp_rho`).

    Returns
    -------
    sigma : float
        Noise std per released entry of the main release.
    budget_split : BudgetSplit
        For :attr:`PrivacyReport.budget_split`.
    """
    sigma, split = _compose_selection(epsilon, delta, sensitivity, releases, share, discrete)
    return sigma, replace(split, count_cap=int(count_cap))


def compose_sequence_clip(epsilon: float, delta: float, sensitivity: float, share: float,
                          sequence_clip: float) -> tuple[float, BudgetSplit]:
    """Noise std of the sequence unit's release after its clip norm G was chosen privately, so that both
    together are exactly (ε, δ)-DP.

    G's release (:func:`~dphawkes_core.privacy.sequence.dp_sequence_clip`: a histogram of sensitivity √2
    with noise std ``√2·z(share·ε, δ)``) has the noise multiplier ``z(share·ε, δ)`` of the count cap's
    release, so it composes with the statistics' release as in :func:`compose_count_cap`:
    ``μ_total² = μ_G² + μ_fit²``, ``μ_total`` that of (ε, δ). ``BudgetSplit.cap_sigma`` is G's noise
    multiplier (read by the ledger and the audit as the selection's release).
    """
    sigma, split = _compose_selection(epsilon, delta, sensitivity, 1, share)
    return sigma, replace(split, sequence_clip=float(sequence_clip))


_LEFT_OVER = 1e-9  # the releases' share of the total μ² (or ρ) below which a split is rounding, not a budget


def _compose_selection(epsilon: float, delta: float, sensitivity: float, releases: int,
                       share: float, discrete: bool = False) -> tuple[float, BudgetSplit]:
    """A selection release with noise multiplier ``z(share·ε, δ)`` followed by K Gaussian releases of
    sensitivity S: the K releases' noise std and the split (without the selected value)."""
    from dp_accounting.dp_event import GaussianDpEvent, SelfComposedDpEvent
    from dp_accounting.gaussian_mechanism import get_sigma_gaussian

    from dphawkes_core.privacy.count_cap import cap_noise_sigma

    check_epsilon_delta(epsilon, delta)
    if discrete:
        return _compose_discrete_selection(epsilon, delta, sensitivity, releases, share)
    cap_multiplier = cap_noise_sigma(epsilon, delta, share)
    total_multiplier = get_sigma_gaussian(epsilon, delta)
    rest = 1 / total_multiplier**2 - 1 / cap_multiplier**2  # μ² left for the releases
    if not rest > _LEFT_OVER / total_multiplier**2:  # a tiny ε: both multipliers are δ's alone
        raise ConfigError(f"the share {share:g} of ε = {epsilon:g} leaves nothing for the release")
    multiplier = math.sqrt(releases) / math.sqrt(rest)
    selection, release = GaussianDpEvent(float(cap_multiplier)), SelfComposedDpEvent(GaussianDpEvent(multiplier),
                                                                                      int(releases))
    split = BudgetSplit(share=float(share), cap_sigma=float(cap_multiplier), cap_epsilon=float(share * epsilon),
                        release_epsilon=compose_epsilon([release], delta),
                        epsilon_total=compose_epsilon([selection, release], delta))
    return multiplier * sensitivity, split


def _compose_discrete_selection(epsilon: float, delta: float, sensitivity: float, releases: int,
                                share: float) -> tuple[float, BudgetSplit]:
    """:func:`_compose_selection` for discrete Gaussian releases, in zCDP: ``ρ_cap = ρ(share·ε)``, the K releases
    share ``ρ(ε) − ρ_cap``; the total converts back to ε (up to the bisection's 1e-12)."""
    from dp_accounting.dp_event import ZCDpEvent

    check_share(share)
    rho_total, rho_cap = zcdp_rho(epsilon, delta), zcdp_rho(share * epsilon, delta)
    rho_release = rho_total - rho_cap
    if not rho_release > _LEFT_OVER * rho_total:  # a tiny ε: both ρ are δ's alone, their difference rounding
        raise ConfigError(f"the share {share:g} of ε = {epsilon:g} leaves nothing for the release")
    cap_multiplier = 1.0 / math.sqrt(2.0 * rho_cap)
    multiplier = math.sqrt(releases) / math.sqrt(2.0 * rho_release)
    selection, release = ZCDpEvent(rho_cap), ZCDpEvent(rho_release)
    split = BudgetSplit(share=float(share), cap_sigma=float(cap_multiplier), cap_epsilon=float(share * epsilon),
                        release_epsilon=compose_epsilon([release], delta),
                        epsilon_total=compose_epsilon([selection, release], delta))
    return multiplier * sensitivity, split


def calibrate_single_sensitivity(note: str, sensitivity: float, releases: int, calibration: str,
                                 dp_delta: float, epsilon: float | None = None, sigma2: float | None = None,
                                 R: float = math.nan, auto_cap: tuple[float, int] | None = None,
                                 discrete: bool = False) -> PrivacyReport:
    """σ² for a target ε (or ε for a given σ²) of ``releases`` Gaussian releases with a formal sensitivity.

    For the families that only have a formal calibration (DP-SSP, clipped DP-PGD): the paper modes are
    reported as ``None``; ``note`` says what the guarantee rests on. ``auto_cap = (share, C)``: the count cap C was
    chosen privately with that
    share of ε, and the releases get the rest (:func:`compose_count_cap`; needs ε, not σ²). ``discrete``: the
    releases (and the cap's) draw the discrete Gaussian and are calibrated and accounted in zCDP.
    """
    if calibration != "formal":
        raise ConfigError("this method has only the formal calibration; choose calibration 'formal'")
    check_privacy_inputs(epsilon, sigma2, dp_delta)
    split = None
    if auto_cap is not None:
        if epsilon is None:
            raise ConfigError("an automatic count cap spends a share of ε: give ε, not σ²")
        sigma, split = compose_count_cap(epsilon, dp_delta, sensitivity, releases, *auto_cap, discrete=discrete)
        sigma2 = sigma**2
    elif sigma2 is None:
        sigma2 = gaussian_sigma(epsilon, dp_delta, sensitivity, releases, discrete) ** 2
    check_sigma2(sigma2, f"the calibration's σ² for ε = {epsilon:g}" if epsilon is not None else "σ²")
    eps = split.epsilon_total if split else gaussian_epsilon(math.sqrt(sigma2), dp_delta, sensitivity, releases,
                                                                discrete)
    return PrivacyReport(
        sigma2=float(sigma2),
        epsilon=float(epsilon if epsilon is not None else eps),
        dp_delta=float(dp_delta),
        calibration="formal",
        sensitivity=float(sensitivity),
        R=float(R),
        epsilon_by_calibration={"paper": None, "tight-paper": None, "formal": eps},
        sensitivity_by_calibration={"paper": None, "tight-paper": None, "formal": float(sensitivity)},
        formal=True,
        iters=int(releases),
        note=note + (f"; count cap C = {split.count_cap} chosen privately with {split.share:.0%} of ε" if split else "")
        + ("; " + DISCRETE_NOISE if discrete else ""),
        budget_split=split,
        discrete=bool(discrete),
    )
