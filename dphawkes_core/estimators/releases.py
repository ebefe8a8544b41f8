"""What several one-release families share: the :class:`SingleRelease` base, whose :meth:`privacy_report` is the
template of a family that releases its statistics once with Gaussian noise, and releases more than one family makes
(the noisy least-squares statistics of the binned counts, :func:`noisy_statistics`, with their sensitivity
:func:`ssp_sensitivity`).

A family that reuses a release imports it from here, never from the family that first made it (the import rule:
no family imports another). A :class:`SingleRelease` supplies its sensitivity
(:meth:`SingleRelease.release_sensitivity`), the count cap its statistics were capped at and, with the sequence
unit, its sequence report;
the template checks the cap against the config (a public C, or one chosen privately with a share of ε), calibrates
σ² from the config's :attr:`~dphawkes_core.estimators.config.FitConfig.privacy_target` and composes an automatic
count cap's release with it (:func:`~dphawkes_core.privacy.calibration.calibrate_single_sensitivity`).
"""

from __future__ import annotations

import math
from typing import ClassVar

import numpy as np

from dphawkes_core.errors import ConfigError
from dphawkes_core.estimators.family import Family
from dphawkes_core.privacy.calibration import calibrate_single_sensitivity
from dphawkes_core.privacy.count_cap import AUTO
from dphawkes_core.privacy.noise import NoiseSource, discrete_noise
from dphawkes_core.privacy.report import PrivacyReport
from dphawkes_core.statistics.moments import SufficientStats


class SingleRelease(Family):
    """Base of a family whose privacy is one Gaussian release of its statistics, capped at a public count cap C
    (or one chosen privately): DP-SSP, the exponential kernels, ctls. A subclass sets :attr:`note` and overrides
    :meth:`release_sensitivity` (and the hooks below where its statistics differ); :meth:`privacy_report` is the
    template.

    Attributes
    ----------
    note : str
        What the formal guarantee rests on, in words (the report's note).
    noiseless_without_cap : bool
        Statistics with no cap may be fitted with σ² = 0 (the non-private fit of a family whose statistics are its
        own): the sensitivity is then ∞, nothing is calibrated.
    """

    note: ClassVar[str] = "formal (public bounds; one Gaussian release)"
    noiseless_without_cap: ClassVar[bool] = False

    def release_sensitivity(self, stats: SufficientStats, config) -> float:
        """The event unit's L2 sensitivity of the one release, in the units its noise σ is drawn in."""
        raise NotImplementedError

    def release_stats(self, stats: SufficientStats, config) -> SufficientStats:
        """``stats`` checked as this family's statistics for ``config`` (a ``ConfigError`` otherwise)."""
        return stats

    def release_cap(self, stats: SufficientStats):
        """The count cap the event unit's statistics were capped at (``None``: not capped)."""
        return stats.count_cap

    def sequence_report(self, stats: SufficientStats, config) -> PrivacyReport:
        """The sequence unit's report (a family with ``sequence`` among its units overrides it)."""
        raise ConfigError(f"{self.label} has no sequence unit")

    def report_R(self, stats: SufficientStats) -> float:
        """Assumption 1's R the report shows beside the guarantee (none by default)."""
        return math.nan

    def missing_cap(self) -> str:
        """Why a release without a public cap (or with statistics capped at another) is refused."""
        return f"{self.label} needs a public count cap C and events kept under it"

    def privacy_report(self, stats, config) -> PrivacyReport:
        """The template: the sequence unit's report, or the event unit's one release — sensitivity ∞ for the
        non-private fit of uncapped statistics (where allowed), else the cap checked against the config and
        :meth:`release_sensitivity` calibrated (an automatic cap's share composed with it; the discrete Gaussian for
        an unseeded integer release)."""
        stats = self.release_stats(stats, config)
        if config.unit.name == "sequence":
            return self.sequence_report(stats, config)
        cap, auto = self.release_cap(stats), config.count_cap == AUTO
        if cap is None and config.sigma2 == 0 and self.noiseless_without_cap:
            sensitivity = math.inf
        else:
            if config.count_cap is None or cap != config.count_cap and not (auto and cap):
                raise ConfigError(self.missing_cap())
            sensitivity = self.release_sensitivity(stats, config)
        return calibrate_single_sensitivity(
            self.note, sensitivity, 1, config.calibration, config.dp_delta, **config.privacy_target,
            R=self.report_R(stats), auto_cap=(config.count_cap_share, cap) if auto else None,
            discrete=discrete_noise(config))


# ---- the noisy least-squares statistics (DP-SSP's full release) ----------------------------------------------

def noisy_statistics(stats: SufficientStats, sigma: float, rng: NoiseSource) -> tuple[np.ndarray, np.ndarray]:
    """The ``full`` release's noisy output: the upper triangle of ``A`` and ``b`` with noise std σ per entry.

    The lower triangle mirrors the upper one (``Â`` is symmetric); ``A[-1,-1] = 1`` is public and left
    exact. The ``A`` noise is drawn first, then the ``b`` noise (reproducible by seed). ``N·A`` and ``N·b`` are
    integers, but a release holds ``q(q+1)/2 + dq`` numbers (2·10⁶ at p = 500, d = 4): continuous noise, the
    OS CSPRNG's in a release (``docs/privacy.md``, "The noise: samplers and generators").
    """
    q = stats.n_params
    if sigma <= 0:
        return stats.A.copy(), stats.b.copy()
    noise = symmetric_noise(q, sigma, rng)
    noise[-1, -1] = 0.0
    return stats.A + noise, stats.b + sigma * rng.standard_normal(stats.b.shape)


def symmetric_noise(size: int, sigma: float, rng: NoiseSource) -> np.ndarray:
    """A symmetric ``size × size`` matrix of Gaussian noise of std σ: the upper triangle drawn (row-major), the
    lower one its mirror."""
    upper = np.triu(sigma * rng.standard_normal((size, size)))
    return upper + np.triu(upper, 1).T


def ssp_sensitivity(dim: int, lags: int, n_rows: int, count_cap: int) -> float:
    """L2 sensitivity of the DP-SSP release: the upper triangle of ``A`` (without the public intercept
    entry ``A[-1,-1] = 1``) together with ``b``, under one event added or removed, counts clipped at C.

    With ``X̄ = (X + X')/2`` and the changed count ``X[m, j]``, ``N·ΔA = ±(M̄ + M̄ᵀ)`` where
    ``M̄ = Σ_{k=1..p} e_{(k-1)d+j} z̄_{m+k}ᵀ`` (distinct rows), so ``||N·ΔA||²_F <= 4 p z̄²`` with
    ``z̄² = (dp−1)C² + (C−½)² + 1``; its diagonal contributes at most ``4p(C−½)²`` and the upper triangle
    carries ``(||ΔA||²_F + ||diag ΔA||²)/2``. ``N·Δb = ±(e_j z_mᵀ + Σ_k y_{m+k} e_{(k-1)d+j}ᵀ)`` gives
    ``||N·Δb||²_F <= z_max² + p d C² + 2 p C²``. Derivation and measured tightness: ``docs/privacy.md``.
    """
    if count_cap is None or count_cap < 1:
        raise ConfigError("DP-SSP needs a public count cap C >= 1 (counts are clipped at C)")
    c, p = float(count_cap), int(lags)
    zbar_sq = (dim * p - 1) * c * c + (c - 0.5) ** 2 + 1.0
    a_upper_sq = 2.0 * p * (zbar_sq + (c - 0.5) ** 2)
    b_sq = (dim * p * c * c + 1.0) + p * dim * c * c + 2.0 * p * c * c
    return math.sqrt(a_upper_sq + b_sq) / n_rows
