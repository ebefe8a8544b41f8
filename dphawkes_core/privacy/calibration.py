"""Noise calibration, (ε, δ) ↔ σ², of a release of known sensitivity: the analytic Gaussian (or the discrete
Gaussian in zCDP) through the accountant, for K adaptive releases (:func:`gaussian_sigma`, :func:`gaussian_epsilon`),
and the one-release families' report (:func:`calibrate_single_sensitivity`: DP-SSP, clipped DP-PGD, the exact-time
families), with a selection chosen privately first (:func:`compose_count_cap`, :func:`compose_sequence_clip`). The
report types are :mod:`~dphawkes_core.privacy.report`'s; DP-PGD's and DP-CG's bounds and their paper calibrations
live with their family (:mod:`~dphawkes_core.estimators.gradient`).

The calibrations (:data:`CALIBRATIONS`): ``formal`` — a worst-case L2 sensitivity over every pair of neighbours
from public bounds, composed over the releases exactly: a formal (ε, δ)-DP guarantee; ``paper`` and
``tight-paper`` — the paper's theorems and their data-dependent sensitivity (the gradient families only; not a
formal guarantee).

Exact accounting: K adaptive Gaussian releases with the same sensitivity S and noise σ are together
μ-GDP with ``μ = √K·S/σ`` (Dong, Roth & Su 2019), i.e. exactly one Gaussian mechanism with noise
multiplier ``σ/(S√K)``; its (ε, δ) curve is the analytic Gaussian mechanism of Balle & Wang (2018), taken
through the accountant (:mod:`~dphawkes_core.privacy.accounting`, over ``dp_accounting.gaussian_mechanism``;
cross-checked against dp-accounting's PLD accountant in the tests).

Discrete Gaussian (an unseeded release whose numbers are all integers,
:func:`~dphawkes_core.privacy.noise.discrete_noise`):
the same sensitivities, but the releases are ρ-zCDP with ``ρ = K·S²/(2σ²)`` and are composed and converted to
(ε, δ) in zCDP (:func:`~dphawkes_core.privacy.accounting.zcdp_epsilon`), so σ for a target ε is about 8 % larger
at ε = 1 (``docs/privacy.md``, "The noise: samplers and generators"). The ``discrete`` flag below selects it.
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from dphawkes_core.errors import ConfigError
from dphawkes_core.privacy.accounting import Split, compose_epsilon, gaussian_multiplier, multiplier_epsilon, split
from dphawkes_core.privacy.report import DISCRETE_NOISE, BudgetSplit, PrivacyReport
from dphawkes_core.statistics.moments import SufficientStats
from dphawkes_core.validation import check_epsilon_delta, check_privacy_inputs, check_sigma2

CALIBRATIONS = ("paper", "formal", "tight-paper")
CALIBRATION_LABELS = {
    "paper": "paper (Thm 1/3, R from the data: NOT a formal guarantee)",
    "tight-paper": "paper's sensitivity + exact accounting (R from the data: NOT a formal guarantee)",
    "formal": "formal (public bounds C, B/r, d, p, n; exact accounting)",
}


def data_R(stats: SufficientStats) -> float:
    """Assumption 1's R computed from the (private) data: ``max(||A||²_F, ||b||²_F)``."""
    return float(max(np.sum(stats.A**2), np.sum(stats.b**2)))


def gaussian_sigma(epsilon: float, delta: float, sensitivity: float, releases: int, discrete: bool = False) -> float:
    """Noise std σ so that ``releases`` Gaussian releases of L2 sensitivity S are (ε, δ)-DP, exactly (``discrete``:
    discrete Gaussian releases, ρ-zCDP together, converted to (ε, δ) by
    :func:`~dphawkes_core.privacy.accounting.zcdp_epsilon`)."""
    check_epsilon_delta(epsilon, delta)
    return sensitivity * math.sqrt(releases) * gaussian_multiplier(epsilon, delta, discrete)


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


# --- one release of a known sensitivity, after a private selection or not ------------------------------------

def compose_count_cap(epsilon: float, delta: float, sensitivity: float, releases: int, share: float,
                      count_cap: int, discrete: bool = False) -> tuple[float, BudgetSplit]:
    """Noise std of ``releases`` Gaussian releases of sensitivity S that follow an automatic count cap,
    so that all of them together are exactly (ε, δ)-DP.

    The cap's release (:mod:`~dphawkes_core.privacy.count_cap`: sensitivity 1, noise multiplier
    ``z(share·ε, δ)``) and the K releases are the accountant's :func:`~dphawkes_core.privacy.accounting.split`:
    μ-GDP adds in squares (``1/m_total² = 1/m_cap² + K/m²``, Dong, Roth & Su 2019), the discrete Gaussian's ρ-zCDP
    adds up; the split's total is the two releases composed by
    :func:`~dphawkes_core.privacy.accounting.compose_epsilon`.

    Returns
    -------
    sigma : float
        Noise std per released entry of the main release.
    budget_split : BudgetSplit
        For :attr:`PrivacyReport.budget_split`.
    """
    sigma, budget_split = _after_selection(split(epsilon, delta, share, discrete, "the count cap"), sensitivity,
                                           releases)
    return sigma, replace(budget_split, count_cap=int(count_cap))


def compose_sequence_clip(epsilon: float, delta: float, sensitivity: float, share: float,
                          sequence_clip: float) -> tuple[float, BudgetSplit]:
    """Noise std of the sequence unit's release after its clip norm G was chosen privately, so that both
    together are exactly (ε, δ)-DP.

    G's release (:func:`~dphawkes_core.privacy.sequence.dp_sequence_clip`: a histogram of sensitivity √2
    with noise std ``√2·z(share·ε, δ)``) has the noise multiplier ``z(share·ε, δ)`` of the count cap's
    release, so it is the selection of the same :func:`~dphawkes_core.privacy.accounting.split`.
    ``BudgetSplit.cap_sigma`` is G's noise multiplier (read by the ledger and the audit as the selection's
    release).
    """
    sigma, budget_split = _after_selection(split(epsilon, delta, share, False, "the clip norm G"), sensitivity, 1)
    return sigma, replace(budget_split, sequence_clip=float(sequence_clip))


def _after_selection(chosen: Split, sensitivity: float, releases: int) -> tuple[float, BudgetSplit]:
    """The K releases' noise std after the selection of ``chosen`` and the report's split (without the selected
    value)."""
    release = chosen.rest(releases)
    budget_split = BudgetSplit(share=chosen.share, cap_sigma=chosen.selection_multiplier,
                               cap_epsilon=float(chosen.share * chosen.epsilon),
                               release_epsilon=compose_epsilon([release], chosen.delta),
                               epsilon_total=compose_epsilon([chosen.selection(), release], chosen.delta))
    return release.parameter * sensitivity, budget_split


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
    budget_split = None
    if auto_cap is not None:
        if epsilon is None:
            raise ConfigError("an automatic count cap spends a share of ε: give ε, not σ²")
        sigma, budget_split = compose_count_cap(epsilon, dp_delta, sensitivity, releases, *auto_cap, discrete=discrete)
        sigma2 = sigma**2
    elif sigma2 is None:
        sigma2 = gaussian_sigma(epsilon, dp_delta, sensitivity, releases, discrete) ** 2
    check_sigma2(sigma2, f"the calibration's σ² for ε = {epsilon:g}" if epsilon is not None else "σ²")
    eps = (budget_split.epsilon_total if budget_split
           else gaussian_epsilon(math.sqrt(sigma2), dp_delta, sensitivity, releases, discrete))
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
        note=note + (f"; count cap C = {budget_split.count_cap} chosen privately with {budget_split.share:.0%} of ε"
                     if budget_split else "") + ("; " + DISCRETE_NOISE if discrete else ""),
        budget_split=budget_split,
        discrete=bool(discrete),
    )
