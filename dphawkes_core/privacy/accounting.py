"""Mechanisms and their exact composition: what a release spends and what several spend together.

Gaussian mechanisms compose to one Gaussian with ``μ = sqrt(Σ releases_i / z_i²)`` (Gaussian DP, Dong, Roth &
Su 2019) whose (ε, δ) is the analytic Gaussian mechanism of ``dp_accounting``; Laplace and pure steps join them
through ``dp_accounting``'s privacy loss distributions — never by summing ε. A discrete Gaussian release is not
μ-GDP: a set holding one composes every mechanism in zCDP (ρ adds up) and converts once, an upper bound on the
exact composition. The ledger (:mod:`dphawkes_core.release.ledger`) keeps the mechanisms of every release of a data set.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

from dphawkes_core.errors import DPHawkesError
from dphawkes_core.privacy.calibration import PrivacyReport

MECHANISM_KINDS = ("gaussian", "discrete-gaussian", "laplace", "pure")
PLD_INTERVAL = 1e-3  # value discretisation of the PLD (pessimistic: an upper bound on ε)


class BudgetExceeded(DPHawkesError):
    """A release would take the composed ε of a data set above its budget."""


@dataclass(frozen=True)
class Mechanism:
    """One private step of a release, as the accountant needs it.

    Attributes
    ----------
    kind : {"gaussian", "discrete-gaussian", "laplace", "pure"}
        Gaussian noise, the discrete Gaussian on integers (``ρ = releases/(2z²)`` zCDP, not μ-GDP), Laplace
        noise, or a step that is ε-DP by construction (e.g. an exponential mechanism).
    parameter : float
        Gaussian and discrete Gaussian: noise multiplier ``z = σ/S`` (noise std over L2 sensitivity); Laplace:
        scale over L1 sensitivity; pure: its ε.
    releases : int
        How many times it is applied (adaptively), e.g. K noisy gradients.
    label : str
        What it releases, for display.
    """

    kind: str
    parameter: float
    releases: int = 1
    label: str = ""

    def __post_init__(self):
        if self.kind not in MECHANISM_KINDS:
            raise DPHawkesError(f"unknown mechanism {self.kind!r}; choose one of {', '.join(MECHANISM_KINDS)}")
        if not (math.isfinite(self.parameter) and self.parameter > 0) or int(self.releases) < 1:
            raise DPHawkesError(f"a {self.kind} mechanism needs a positive parameter and releases >= 1, "
                                f"got {self.parameter!r} × {self.releases!r}")


def gaussian_mechanism(sigma: float, sensitivity: float, releases: int = 1, label: str = "") -> Mechanism:
    """``releases`` Gaussian releases with noise std σ and L2 sensitivity S (noise multiplier σ/S)."""
    return Mechanism("gaussian", float(sigma) / float(sensitivity), int(releases), label)


def mechanisms_of(report: PrivacyReport) -> tuple[Mechanism, ...]:
    """What a fit's privacy report says it spent: its noisy releases (σ, sensitivity, K) and, with an
    automatic count cap C or clip norm G, that selection's own Gaussian release (``budget_split["cap_sigma"]``:
    its noise multiplier, so sensitivity 1). Both are ``discrete-gaussian`` when the report was calibrated for
    the discrete Gaussian (``report.discrete``: the fit draws it for both)."""
    if report.sensitivity is None or report.sigma2 <= 0:
        raise BudgetExceeded("refused: σ² = 0 adds no noise, so its ε is infinite")
    split = getattr(report, "budget_split", None) or {}
    selection = ("clip norm G (noisy histogram of sequence norms)" if "sequence_clip" in split
                 else "count cap C (noisy tail counts)")
    kind = "discrete-gaussian" if getattr(report, "discrete", False) else "gaussian"
    cap = (Mechanism(kind, float(split["cap_sigma"]), 1, selection),) if "cap_sigma" in split else ()
    main = Mechanism(kind, math.sqrt(report.sigma2) / float(report.sensitivity), int(report.iters),
                     "noisy statistics" if report.iters == 1 else "noisy gradients")
    return cap + (main,)


def compose_epsilon(mechanisms, delta: float) -> float:
    """Smallest ε such that all ``mechanisms`` together are (ε, δ)-DP (adaptive composition, exact).

    Gaussian mechanisms compose to one Gaussian with ``μ² = Σ releases_i / z_i²`` (exact: their privacy
    loss distributions are normal and add); alone, its ε is ``dp_accounting``'s analytic Gaussian
    mechanism. With other mechanisms, the privacy loss distributions are composed by ``dp_accounting``
    (discretised pessimistically, so the ε is an upper bound). With a discrete Gaussian among them, everything
    is composed in zCDP (:func:`_zcdp_composed`). No mechanism: ε = 0.
    """
    return _composed(tuple(mechanisms), float(delta))


@functools.lru_cache(maxsize=4096)  # pages recompose the same ledger on every render (~10 ms per Gaussian)
def _composed(mechanisms: tuple[Mechanism, ...], delta: float) -> float:
    if any(m.kind == "discrete-gaussian" for m in mechanisms):
        return _zcdp_composed(mechanisms, delta)
    mu_sq = sum(m.releases / m.parameter**2 for m in mechanisms if m.kind == "gaussian")
    others = [m for m in mechanisms if m.kind != "gaussian"]
    if not others:
        if mu_sq == 0:
            return 0.0
        from dp_accounting.gaussian_mechanism import get_epsilon_gaussian  # 1.3 s import: only when composing

        return float(get_epsilon_gaussian(1.0 / math.sqrt(mu_sq), delta))
    return _pld_epsilon(mu_sq, others, delta)


def zcdp_rho_of(mechanism: Mechanism) -> float:
    """ρ-zCDP of one mechanism: ``releases/(2z²)`` for a (discrete) Gaussian — its Rényi divergence of order α is
    at most ``α·releases/(2z²)`` (exactly, for the continuous one) — and ``releases·ε²/2`` for a Laplace (ε = 1/scale)
    or pure ε-DP step (Bun & Steinke 2016, Proposition 3.3)."""
    if mechanism.kind in ("gaussian", "discrete-gaussian"):
        return mechanism.releases / (2.0 * mechanism.parameter**2)
    epsilon = 1.0 / mechanism.parameter if mechanism.kind == "laplace" else mechanism.parameter
    return mechanism.releases * epsilon**2 / 2.0


def _zcdp_composed(mechanisms, delta: float) -> float:
    """ε at δ of ``mechanisms`` composed in zCDP: ``ρ = Σ ρ_i`` (:func:`zcdp_rho_of`), converted once by
    :func:`~dphawkes_core.privacy.noise.zcdp_epsilon`. An upper bound (the continuous Gaussians lose their exactness
    here: a ledger of Gaussians alone is composed as one Gaussian instead)."""
    from dphawkes_core.privacy.noise import zcdp_epsilon

    return zcdp_epsilon(sum(zcdp_rho_of(m) for m in mechanisms), delta)


def _pld_epsilon(mu_sq: float, others, delta: float) -> float:
    from dp_accounting.pld import common
    from dp_accounting.pld import privacy_loss_distribution as pld

    parts = [pld.from_gaussian_mechanism(standard_deviation=1.0 / math.sqrt(mu_sq),
                                         value_discretization_interval=PLD_INTERVAL)] if mu_sq > 0 else []
    for m in others:
        if m.kind == "laplace":
            one = pld.from_laplace_mechanism(parameter=m.parameter, value_discretization_interval=PLD_INTERVAL)
        else:
            one = pld.from_privacy_parameters(common.DifferentialPrivacyParameters(m.parameter, 0.0),
                                              value_discretization_interval=PLD_INTERVAL)
        parts.append(one.self_compose(m.releases) if m.releases > 1 else one)
    total = parts[0]
    for part in parts[1:]:
        total = total.compose(part)
    return float(total.get_epsilon_for_delta(delta))
