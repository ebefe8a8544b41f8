"""Clipped-gradient DP-PGD on the per-bin loss ``Σ_t ||y_t − U z_t||² / (2N)``."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from ..bins_design import BinDesign, SparseCounts, bin_design
from ..errors import ConfigError
from ..privacy import constraint_fro_radius
from ..stats import MomentPieces, SufficientStats
from .least_squares import paper_loss


@dataclass(frozen=True)
class BinnedStats(SufficientStats):
    """Sufficient statistics that also carry the non-zero bins (needed by per-bin methods: ``pgd-clip``)
    and the moment pieces they were assembled from (needed by the ``lagged`` DP-SSP release)."""

    counts: SparseCounts | None = None
    pieces: MomentPieces | None = None  # what A, b are made of (the lagged DP-SSP release)

    @cached_property
    def design(self) -> BinDesign:
        """The informative per-bin rows (built on first use, then kept)."""
        if self.counts is None:
            raise ConfigError("pgd-clip needs the per-bin counts: compute the statistics with prepare_stats")
        return bin_design(self.counts, self.lags)


def clipped_gradient(U: np.ndarray, design: BinDesign, clip: float) -> np.ndarray:
    """``Σ_t clip_G((U z_t − y_t) z_tᵀ) / N`` with identical rows (and all all-zero rows) grouped.

    A per-bin term is rank one, so its Frobenius norm is ``||U z_t − y_t||·||z_t||``.
    """
    d, p = design.dim, design.lags
    lagged, intercept = U[:, : d * p], U[:, -1]
    resid = design.z_lagged @ lagged.T + intercept - design.y  # (m, d)
    norms = np.sqrt(np.sum(resid * resid, axis=1) * design.z_sq_norm)
    scale = np.ones_like(norms)
    over = norms > clip
    scale[over] = clip / norms[over]
    weighted = resid * (scale * design.weight)[:, None]
    grad = np.empty_like(U)
    grad[:, : d * p] = (design.z_lagged_t @ weighted).T
    grad[:, -1] = weighted.sum(axis=0)
    zero_norm = float(np.linalg.norm(intercept))  # all-zero rows: term (U e_q − 0) e_qᵀ
    if design.zero_rows and zero_norm > 0:
        grad[:, -1] += design.zero_rows * min(1.0, clip / zero_norm) * intercept
    return grad / design.n_rows


def run_pgd_clip(design: BinDesign, stats: SufficientStats, radius_fro: float, clip: float, iters: int,
                 sigma2: float, steps: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, list]:
    """``U_{k+1} = Proj_{||U||_F <= radius}(U_k − η_k(ĝ(U_k) + ζ_k))`` from ``U_0 = 0`` with ĝ the clipped
    per-bin gradient; returns ``U_K`` and the paper loss ``L(U_k)`` for ``k = 0..K``."""
    U = np.zeros_like(stats.b)
    sigma = float(np.sqrt(sigma2))
    history = []
    for k in range(iters):
        history.append(paper_loss(U, stats))
        noise = sigma * rng.standard_normal(U.shape) if sigma > 0 else 0.0
        U = U - steps[k] * (clipped_gradient(U, design, clip) + noise)
        norm = np.linalg.norm(U)
        if norm > radius_fro:
            U *= radius_fro / norm
    history.append(paper_loss(U, stats))
    return U, history


def per_bin_design(stats: SufficientStats) -> BinDesign:
    """The informative per-bin rows of statistics computed by :func:`prepare_stats`."""
    if not isinstance(stats, BinnedStats):
        raise ConfigError("pgd-clip needs the per-bin counts: compute the statistics with prepare_stats")
    return stats.design


def run_pgd_clip_config(stats, config, report, rng):
    design = per_bin_design(stats)
    beta = constraint_fro_radius("pgd", config.bin_size, config.bound, None)
    if config.step == "constant":
        steps = np.full(config.iters, float(config.step_size))
    else:  # Theorem 2's form with the public gradient bound G in place of L₂
        steps = beta / np.sqrt(config.clip**2 + stats.dim * stats.n_params * report.sigma2) \
            / np.sqrt(np.arange(1, config.iters + 1))
    U, history = run_pgd_clip(design, stats, beta, config.clip, config.iters, report.sigma2, steps, rng)
    info = {"step_rule": config.step, "first_step": float(steps[0]), "constraint_fro": beta,
            "clip": config.clip, "informative_rows": design.informative_rows,
            "distinct_rows": design.distinct_rows, "zero_rows": design.zero_rows}
    return U, history, info
