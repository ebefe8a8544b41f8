"""Clipped-gradient DP-PGD on the per-bin loss ``Σ_t ||y_t − U z_t||² / (2N)``, as a family.

Each per-bin gradient term is clipped to Frobenius norm G (public), so one event moves the summed
gradient by at most :func:`pgd_clip_sensitivity` whatever the data: a formal calibration only.
"""

from __future__ import annotations

import numpy as np

from dphawkes_core.errors import ConfigError
from dphawkes_core.estimators.binned import BinnedStats
from dphawkes_core.estimators.family import (
    AuditHints,
    CostTags,
    Family,
    InputTags,
    NoisedQuery,
    PrivacyTags,
    StateSpace,
)
from dphawkes_core.estimators.settings import ITERATIONS, STEP_RULES, Setting, options_class
from dphawkes_core.estimators.solvers import paper_loss
from dphawkes_core.privacy.calibration import calibrate_single_sensitivity, data_R
from dphawkes_core.statistics.moments import SufficientStats
from dphawkes_core.statistics.per_bin import BinDesign

NOTE = "formal (public clip G, B, p, n; K clipped-gradient releases, exact accounting)"


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


def clipped_release(U: np.ndarray, design: BinDesign, clip: float, sigma: float,
                    rng: np.random.Generator) -> np.ndarray:
    """One release: the clipped per-bin gradient at ``U`` plus ``N(0, σ²)`` noise per entry."""
    noise = sigma * rng.standard_normal(U.shape) if sigma > 0 else 0.0
    return clipped_gradient(U, design, clip) + noise


def run_pgd_clip(design: BinDesign, stats: SufficientStats, radius_fro: float, clip: float, iters: int,
                 sigma2: float, steps: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, list]:
    """``U_{k+1} = Proj_{||U||_F <= radius}(U_k − η_k(ĝ(U_k) + ζ_k))`` from ``U_0 = 0`` with ĝ the clipped
    per-bin gradient; returns ``U_K`` and the paper loss ``L(U_k)`` for ``k = 0..K``."""
    U = np.zeros_like(stats.b)
    sigma = float(np.sqrt(sigma2))
    history = []
    for k in range(iters):
        history.append(paper_loss(U, stats))
        U = U - steps[k] * clipped_release(U, design, clip, sigma, rng)
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


def pgd_clip_sensitivity(lags: int, n_rows: int, clip: float) -> float:
    """L2 sensitivity ``2(p+1)G/N`` of the clipped per-bin gradient ``Σ_t clip_G(g_t)/N``.

    One event in bin m changes the target of row m and one lagged entry of rows ``m+1 … m+p``: at most
    ``p+1`` per-bin terms, each inside the ball of radius G before and after, so each moves by ``<= 2G``.
    """
    if clip is None or not clip > 0:
        raise ConfigError("clipped-gradient DP-PGD needs a positive clip norm G")
    return 2.0 * (int(lags) + 1) * float(clip) / n_rows


def _check_step(options) -> None:
    if options.step == "constant" and options.step_size is None:
        raise ConfigError("a constant step needs a positive step size")


SETTINGS = (
    Setting("bound", "bound B on the kernels' size", "float", None, "the constraint ||H||_F <= B (||U||_F <= ΔB)",
            minimum=0.0, minimum_exclusive=True, public_bound=True),
    Setting("clip", "clip norm G per bin", "float", None, "each per-bin gradient term clipped to Frobenius norm G",
            minimum=0.0, minimum_exclusive=True, public_bound=True),
    ITERATIONS,
    Setting("step", "step rule", "choice", "theorem",
            "theorem: Theorem 2's form with G in place of L₂; constant: a fixed step", choices=STEP_RULES),
    Setting("step_size", "constant step size", "float", None, "the step of the constant rule", minimum=0.0,
            minimum_exclusive=True, optional=True, none_means="needed by the constant rule only"),
)
PGDClipOptions = options_class("PGDClipOptions", SETTINGS, "clipped DP-PGD", __name__, _check_step)


class PGDClip(Family):
    """DP-PGD on the per-bin loss with every per-bin gradient term clipped at G: a formal guarantee from
    public bounds alone (G, B, p, n)."""

    name = "pgd-clip"
    label = "clipped DP-PGD"
    summary = ("the paper's Algorithm 1 with each bin's share of the gradient clipped at a public G: formal from "
               "public bounds alone")
    settings = SETTINGS
    options_type = PGDClipOptions
    privacy = PrivacyTags(calibrations=("formal",), constraint="bound")
    inputs = InputTags(per_bin=True)
    cost = CostTags(iterative=True, kind="clipped")
    audit_hints = AuditHints(
        noiseless_limit="clipped gradient", noiseless_options=dict(clip=1e12),
        sensitivity_fraction=0.40,  # at U_0 = 0 the per-bin terms only turn: 0.402 at d = 1, p = 1, C = 2
        # G <= 1/2: every term the audit's pair changes is clipped (its residual is ±1/2 and ||z_t|| >= 1)
        worst_case_options=dict(bound=1e-3, clip=0.25, iters=1, step="constant", step_size=1e-12),
        worst_case_lags=1,  # at U = 0 the per-bin terms can only turn; the share of 2(p+1)G/N they reach falls with p
    )

    def privacy_report(self, stats, config):
        sens = pgd_clip_sensitivity(stats.lags, stats.n_rows, config.clip)
        return calibrate_single_sensitivity(
            NOTE, sens, config.iters, config.calibration, config.dp_delta,
            **config.privacy_target, R=data_R(stats))

    def query_vector(self, stats, config) -> np.ndarray:
        """The first clipped gradient's mean, at ``U_0 = 0``."""
        return clipped_gradient(np.zeros_like(stats.b), per_bin_design(stats), config.clip).ravel()

    def noised_queries(self, stats, config, state=None):
        """The clipped gradient sum at ``state`` (``U``; ``None``: ``U_0 = 0``), at ``2(p+1)G/N`` (which holds at
        every U)."""
        U = np.zeros_like(stats.b) if state is None else np.asarray(state, dtype=float)
        return (NoisedQuery("gradient", clipped_gradient(U, per_bin_design(stats), config.clip).ravel(),
                            float(self.privacy_report(stats, config).sensitivity)),)

    def query_states(self, config, dim: int) -> StateSpace:
        """Every step releases at an iterate projected on ``||U||_F <= ΔB``."""
        return StateSpace((int(dim), int(dim) * config.lags + 1), float(config.bin_size * config.bound))

    def run(self, stats, config, report, rng, transcript=None):
        design = per_bin_design(stats)
        beta = config.bin_size * config.bound
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

    def worst_case_state(self, dim, lags, count_cap, config):
        """The state where every per-bin term the audit's pair changes flips sign, so the change reaches
        (almost) the whole bound ``2(p+1)G/N`` (from ``U = 0`` at most about 0.43 of it: there all terms
        ``−y_t z_tᵀ`` lie in one orthant and can only turn).

        Row 0 of U: −1 on every lag of dimension 0 and the intercept ``(p+1)C − ½``; the other rows: the
        intercept C. With every count at C the residual of a row is then ``−½·e₀``; the rows the changed
        count touches (its own target row m and the p rows whose regressors hold it) have residual
        ``+½·e₀`` in D (one event fewer) and ``−½·e₀`` in D′, with nearly parallel ``z_t``: p+1 terms each
        going from ``+G`` to ``−G`` along almost one direction. The sensitivity ``2(p+1)G/N`` holds at every
        U, inside the constraint set or not (clipping bounds each term whatever U is)."""
        U = np.zeros((dim, dim * lags + 1))
        U[0, 0:dim * lags:dim] = -1.0  # Z is lag-major: column (k−1)d + j holds X_{t−k}[j]
        U[:, -1] = float(count_cap)
        U[0, -1] = (lags + 1) * float(count_cap) - 0.5
        return U

    def noisy_output(self, stats, config, report, rng, state=None):
        """The estimate H (with K = 1 and a small constant step a linear image of the one release); with
        ``state``, the K clipped-gradient releases made at that U."""
        if state is not None:
            design, sigma = per_bin_design(stats), float(np.sqrt(report.sigma2))
            state = np.asarray(state, dtype=float)
            return np.concatenate([clipped_release(state, design, config.clip, sigma, rng).ravel()
                                   for _ in range(config.iters)])
        U, _, _ = self.run(stats, config, report, rng)
        return (U / config.bin_size).ravel()
