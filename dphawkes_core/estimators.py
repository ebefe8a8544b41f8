"""Estimators of ``H = [H_1 … H_p, η] = U/Δ`` from the sufficient statistics.

Every estimator sees the data only through :class:`~dphawkes_core.stats.SufficientStats`
(``A = ZZᵀ/N``, ``b = YZᵀ/N``); none ever builds Z.

The paper's loss is ``L(U) = ||U ZZᵀ − Y Zᵀ||²_F / (2N²) = ||U A − b||²_F / 2`` with gradient
``∇L(U) = (U A − b) A`` (A is symmetric).
"""

from __future__ import annotations

import time
from functools import cached_property
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import scipy.linalg

from .bins_design import BinDesign, SparseCounts, bin_design
from .binning import bin_events, check_bin_size
from .errors import ConfigError
from .events import Events
from .privacy import (PrivacyReport, calibrate, calibrate_single_sensitivity, constraint_fro_radius, data_R,
                      formal_bounds, pgd_clip_sensitivity, ssp_sensitivity)
from .stats import SufficientStats, check_design_size, sufficient_stats

METHODS = ("cls", "pgd", "cg", "ssp", "pgd-clip")
FORMAL_ONLY_METHODS = ("ssp", "pgd-clip")
STEP_RULES = ("theorem", "constant")
FW_STEP_RULES = ("paper", "classic")
SSP_STABILISERS = ("ridge", "psd")


@dataclass(frozen=True)
class FitConfig:
    """Everything that defines a fit, so that a result can be reproduced from it.

    Attributes
    ----------
    method : str
        ``cls`` (non-private), ``pgd`` (DP-PGD, Algorithm 1), ``cg`` (DP-CG, Algorithm 2), ``ssp``
        (one noisy release of ``A``, ``b`` then least squares) or ``pgd-clip`` (DP-PGD on the per-bin
        loss with per-bin gradients clipped at G). ``ssp`` and ``pgd-clip`` need ``calibration="formal"``.
    bin_size : float
        Δ.
    lags : int
        p (use :func:`~dphawkes_core.binning.lags_from_support` for ``p = ⌈s/Δ⌉``).
    bound : float, optional
        B of the Frobenius constraint ``||H||_F ≤ B`` (``||U||_F ≤ ΔB``), for ``pgd`` and ``pgd-clip``.
    radius : float, optional
        r of the nuclear-norm constraint ``||U||_* ≤ r``, for ``cg``.
    iters : int
        K, the number of (noisy) gradient steps.
    epsilon, dp_delta : float, optional
        Target privacy; the noise is calibrated from them unless ``sigma2`` is given.
    sigma2 : float, optional
        Noise variance σ² per gradient entry, given directly (then ε is reported, not targeted).
    calibration : str
        ``paper``, ``formal`` or ``tight-paper`` (see :mod:`dphawkes_core.privacy`).
    count_cap : int, optional
        Public cap C on each bin count (needed by the formal calibration).
    step : str
        ``theorem`` (η_k of Theorem 2) or ``constant``.
    step_size : float, optional
        The constant step when ``step == "constant"``.
    fw_step : str
        DP-CG step: ``paper`` (μ = 1/(K+2), as Algorithm 2 is written) or ``classic`` (2/(k+2)).
    seed : int
        Seed of the noise generator.
    clip : float, optional
        G, the Frobenius norm each per-bin gradient term is clipped to (``pgd-clip``).
    ridge : float, optional
        λ added to the noisy ``A`` by ``ssp`` (``None``: the public rule ``λ = 8σ√q``, see
        :func:`ssp_ridge`).
    stabiliser : str
        ``ssp`` post-processing: ``ridge`` (``Â + λI``) or ``psd`` (eigenvalues of ``Â`` floored at λ).
    """

    method: str = "cls"
    bin_size: float = 0.1
    lags: int = 50
    bound: float | None = None
    radius: float | None = None
    iters: int = 1000
    epsilon: float | None = None
    dp_delta: float = 1e-5
    sigma2: float | None = None
    calibration: str = "paper"
    count_cap: int | None = None
    step: str = "theorem"
    step_size: float | None = None
    fw_step: str = "paper"
    seed: int = 0
    clip: float | None = None
    ridge: float | None = None
    stabiliser: str = "ridge"

    def __post_init__(self):
        check_bin_size(self.bin_size)
        if self.method not in METHODS:
            raise ConfigError(f"unknown method {self.method!r}; choose one of {', '.join(METHODS)}")
        if int(self.lags) != self.lags or self.lags < 1:
            raise ConfigError(f"the number of lags p must be a positive integer, got {self.lags!r}")
        if int(self.iters) != self.iters or self.iters < 1:
            raise ConfigError(f"the number of iterations K must be a positive integer, got {self.iters!r}")
        if self.step not in STEP_RULES:
            raise ConfigError(f"unknown step rule {self.step!r}; choose one of {', '.join(STEP_RULES)}")
        if self.step == "constant" and not (self.step_size is not None and self.step_size > 0):
            raise ConfigError("a constant step needs a positive step size")
        if self.fw_step not in FW_STEP_RULES:
            raise ConfigError(f"unknown DP-CG step rule {self.fw_step!r}; choose one of {', '.join(FW_STEP_RULES)}")
        if self.method in FORMAL_ONLY_METHODS and self.calibration != "formal":
            raise ConfigError(f"method {self.method} has only the formal calibration; choose calibration 'formal'")
        if self.method == "pgd-clip" and not (self.clip is not None and self.clip > 0):
            raise ConfigError("pgd-clip needs a positive clip norm G")
        if self.ridge is not None and not (np.isfinite(self.ridge) and self.ridge >= 0):
            raise ConfigError(f"the ridge λ must be a number >= 0, got {self.ridge!r}")
        if self.stabiliser not in SSP_STABILISERS:
            raise ConfigError(f"unknown SSP stabiliser {self.stabiliser!r}; choose one of {', '.join(SSP_STABILISERS)}")


@dataclass(frozen=True)
class FitResult:
    """A fitted model and how it was obtained.

    Attributes
    ----------
    method : str
        Estimator name.
    H : numpy.ndarray
        ``(d, dp+1)`` estimate ``[H_1 … H_p, η]`` (already divided by Δ).
    bin_size : float
        Δ.
    lags : int
        p.
    elapsed_s : float
        Wall time of the estimator (statistics excluded unless stated by the caller).
    loss_history : tuple of float
        Paper loss ``L(U_k)`` per iteration (iterative methods), for a convergence plot.
    privacy : Any
        Privacy report of a private method (``None`` for ``cls``).
    info : dict
        Extra diagnostics (e.g. condition number, solver used).
    """

    method: str
    H: np.ndarray
    bin_size: float
    lags: int
    elapsed_s: float
    loss_history: tuple = ()
    privacy: Any = None
    info: dict = field(default_factory=dict)

    @property
    def dim(self) -> int:
        """Number of dimensions d."""
        return int(self.H.shape[0])

    @property
    def kernels(self) -> np.ndarray:
        """``(d, d, p)`` array: ``kernels[i, j, k]`` estimates ``h_ij((k+1)Δ)``."""
        d, p = self.dim, self.lags
        return self.H[:, : d * p].reshape(d, p, d).transpose(0, 2, 1)

    @property
    def baseline(self) -> np.ndarray:
        """``(d,)`` estimate of the baseline η."""
        return self.H[:, -1]

    @property
    def lag_grid(self) -> np.ndarray:
        """Lag times ``Δ, 2Δ, …, pΔ`` of the kernel estimates."""
        return self.bin_size * np.arange(1, self.lags + 1)


def paper_loss(U: np.ndarray, stats: SufficientStats) -> float:
    """The paper's objective ``||U A − b||²_F / 2``."""
    r = U @ stats.A - stats.b
    return 0.5 * float(np.sum(r * r))


def paper_gradient(U: np.ndarray, stats: SufficientStats) -> np.ndarray:
    """Gradient ``(U A − b) A`` of :func:`paper_loss`."""
    return (U @ stats.A - stats.b) @ stats.A


def solve_cls(stats: SufficientStats) -> tuple[np.ndarray, dict]:
    """Conditional least squares: ``θ`` with ``θ A = b`` (minimum-norm least squares if singular).

    Returns
    -------
    theta : numpy.ndarray
        ``(d, dp+1)`` solution (``U``, not yet divided by Δ).
    info : dict
        ``solver`` (``cholesky`` or ``lstsq``) and the condition number estimate.
    """
    A, b = stats.A, stats.b
    try:
        factor = scipy.linalg.cho_factor(A, lower=True, check_finite=False)
        theta = scipy.linalg.cho_solve(factor, b.T, check_finite=False).T
        diag = np.diag(factor[0])
        cond = float((diag.max() / diag.min()) ** 2) if diag.min() > 0 else float("inf")
        if np.all(np.isfinite(theta)) and cond < 1e12:
            return theta, {"solver": "cholesky", "condition_estimate": cond}
    except (np.linalg.LinAlgError, scipy.linalg.LinAlgError):
        pass
    theta, *_ = np.linalg.lstsq(A, b.T, rcond=None)
    return theta.T, {"solver": "lstsq", "condition_estimate": float(np.linalg.cond(A))}


def fit_cls(stats: SufficientStats, bin_size: float) -> FitResult:
    """Non-private CLS estimate ``H = θ/Δ`` (Kirchner 2017)."""
    start = time.perf_counter()
    theta, info = solve_cls(stats)
    return FitResult(
        method="cls",
        H=theta / bin_size,
        bin_size=bin_size,
        lags=stats.lags,
        elapsed_s=time.perf_counter() - start,
        loss_history=(paper_loss(theta, stats),),
        info=info,
    )


def privacy_report(stats: SufficientStats, config: FitConfig) -> PrivacyReport:
    """Calibrate the noise of a private config: σ² (from ε, or as given) and ε under every calibration."""
    if config.method in FORMAL_ONLY_METHODS:
        if config.method == "ssp":
            if config.count_cap is None or stats.count_cap != config.count_cap:
                raise ConfigError("DP-SSP needs a public count cap C and statistics clipped at it")
            sens, releases = ssp_sensitivity(stats.dim, stats.lags, stats.n_rows, config.count_cap), 1
        else:
            sens, releases = pgd_clip_sensitivity(stats.lags, stats.n_rows, config.clip), config.iters
        return calibrate_single_sensitivity(
            config.method, sens, releases, config.calibration, config.dp_delta,
            epsilon=None if config.sigma2 is not None else config.epsilon, sigma2=config.sigma2, R=data_R(stats))
    return calibrate(
        stats, config.method, config.bin_size, config.bound, config.radius, config.iters,
        config.calibration, config.dp_delta, epsilon=None if config.sigma2 is not None else config.epsilon,
        sigma2=config.sigma2, count_cap=config.count_cap,
    )


def theorem_step_scale(stats: SufficientStats, config: FitConfig, report: PrivacyReport) -> float:
    """``c`` in Theorem 2's step ``η_k = c/√k = ΔB / sqrt(k (L₂² + d(dp+1)σ²))``.

    L₂ is the paper's ``2ΔBR`` (data-dependent) under the paper calibrations and the public gradient
    bound under the formal one, so that the step size, too, comes only from public numbers there.
    """
    beta = constraint_fro_radius(config.method, config.bin_size, config.bound, config.radius)
    if config.calibration == "formal":
        lipschitz = formal_bounds(stats.dim, stats.lags, stats.n_rows, stats.count_cap).gradient_norm_max(beta)
    else:
        lipschitz = 2 * beta * report.R
    return beta / np.sqrt(lipschitz**2 + stats.dim * stats.n_params * report.sigma2)


SINGLE_PRECISION_FROM = 1024  # dp+1 from which the A² product runs in float32


class _HessianProduct:
    """``Uᵀ ↦ A² Uᵀ``, the only O(q²) work per iteration.

    For large designs (``dp+1 >= SINGLE_PRECISION_FROM``) ``A²`` is stored in float32: the product is
    memory-bound, so this halves its cost, at a relative error of about 1e-7 — far below the
    statistical error of the estimate, and the iterates themselves stay in float64.
    """

    def __init__(self, A: np.ndarray):
        A2 = A @ A
        self.single = A.shape[0] >= SINGLE_PRECISION_FROM
        self.A2 = A2.astype(np.float32) if self.single else A2

    def __call__(self, Ut: np.ndarray) -> np.ndarray:
        if self.single:
            return (self.A2 @ Ut.astype(np.float32)).astype(np.float64)
        return self.A2 @ Ut


def _descent_operators(stats: SufficientStats):
    """``A²·``, ``(bA)ᵀ`` and ``||b||²``: a gradient is then ``(A² Uᵀ − (bA)ᵀ)ᵀ``.

    Iterates are kept transposed (``Uᵀ``, ``q × d``).
    """
    return _HessianProduct(stats.A), (stats.b @ stats.A).T.copy(), float(np.sum(stats.b**2))


def _loss_from(Ut: np.ndarray, A2Ut: np.ndarray, bAt: np.ndarray, bb: float) -> float:
    """``||UA − b||²/2`` from products already computed for the gradient."""
    return 0.5 * float(np.sum(Ut * A2Ut) - 2 * np.sum(Ut * bAt) + bb)


def _noise(rng: np.random.Generator, sigma: float, shape: tuple) -> np.ndarray | float:
    """Gaussian noise ``ζ`` of the shape of U (``d × q``), returned transposed; 0 when σ = 0."""
    return sigma * rng.standard_normal(shape).T if sigma > 0 else 0.0


def _noisy_first_order(stats: SufficientStats, iters: int, sigma2: float, rng: np.random.Generator,
                       update) -> tuple[np.ndarray, list]:
    """The loop both paper algorithms share, from ``U_0 = 0``: at step k release the noisy gradient
    ``∇L(U_k) + ζ_k`` (the only access to the data) and let ``update(k, Uᵀ, noisy gradientᵀ)`` return
    ``U_{k+1}ᵀ``. Returns ``U_K`` and the loss ``L(U_k)`` for ``k = 0..K``."""
    A2, bAt, bb = _descent_operators(stats)
    Ut = np.zeros_like(stats.b.T)
    sigma = float(np.sqrt(sigma2))
    history = []
    for k in range(iters):
        A2Ut = A2(Ut)
        history.append(_loss_from(Ut, A2Ut, bAt, bb))
        Ut = update(k, Ut, A2Ut - bAt + _noise(rng, sigma, stats.b.shape))
    U = Ut.T.copy()
    history.append(paper_loss(U, stats))
    return U, history


def run_dp_pgd(stats: SufficientStats, radius_fro: float, iters: int, sigma2: float,
               steps: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, list]:
    """Algorithm 1: ``U_{k+1} = Proj_{||U||_F <= radius}(U_k − η_k(∇L(U_k) + ζ_k))`` from ``U_0 = 0``.

    Returns the last iterate ``U_K`` and the loss ``L(U_k)`` for ``k = 0..K``.
    """
    def projected_step(k, Ut, noisy_t):
        Ut = Ut - steps[k] * noisy_t
        norm = np.linalg.norm(Ut)
        return Ut * (radius_fro / norm) if norm > radius_fro else Ut

    return _noisy_first_order(stats, iters, sigma2, rng, projected_step)


def run_dp_cg(stats: SufficientStats, radius: float, iters: int, sigma2: float, step_rule: str,
              rng: np.random.Generator) -> tuple[np.ndarray, list]:
    """Algorithm 2 (Frank–Wolfe on ``||U||_* <= r``) with noisy gradients, from ``U_0 = 0``.

    The linear minimisation oracle over the nuclear ball is ``−r u₁v₁ᵀ`` for the top singular pair of
    the noisy gradient. Step ``μ = 1/(K+2)`` as Algorithm 2 is written (``paper``) or ``2/(k+2)``
    (``classic``).
    """
    def frank_wolfe_step(k, Ut, noisy_t):
        vertex = -radius * _top_singular_outer(noisy_t.T)
        mu = 1.0 / (iters + 2) if step_rule == "paper" else 2.0 / (k + 2)
        return (1 - mu) * Ut + mu * vertex.T

    return _noisy_first_order(stats, iters, sigma2, rng, frank_wolfe_step)


def _top_singular_outer(G: np.ndarray) -> np.ndarray:
    """``u₁ v₁ᵀ`` for the top singular pair of a wide ``d × q`` matrix (via the ``d × d`` Gram matrix)."""
    gram = G @ G.T
    values, vectors = np.linalg.eigh(gram)
    u = vectors[:, -1]
    s = np.sqrt(max(values[-1], 0.0))
    if s == 0:
        return np.zeros_like(G)
    v = G.T @ u / s
    return np.outer(u, v)


def fit_private(stats: SufficientStats, config: FitConfig) -> FitResult:
    """DP-PGD, DP-CG, DP-SSP or clipped-gradient DP-PGD with noise calibrated by :func:`privacy_report`."""
    start = time.perf_counter()
    report = privacy_report(stats, config)
    result = run_private(stats, config, report)
    return replace(result, elapsed_s=time.perf_counter() - start)


def run_private(stats: SufficientStats, config: FitConfig, report: PrivacyReport) -> FitResult:
    """Run the private estimator of ``config`` with the noise of an already computed ``report``.

    This is the whole mechanism after calibration (used as is by the privacy audit, which calibrates
    once and runs many seeds).
    """
    start = time.perf_counter()
    rng = np.random.default_rng(config.seed)
    if config.method == "ssp":
        U, info = run_ssp(stats, report.sigma2, config.ridge, config.stabiliser, rng)
        history = [paper_loss(U, stats)]
    elif config.method == "pgd-clip":
        U, history, info = _run_pgd_clip_config(stats, config, report, rng)
    elif config.method == "pgd":
        beta = constraint_fro_radius(config.method, config.bin_size, config.bound, config.radius)
        k = np.arange(1, config.iters + 1)
        if config.step == "constant":
            steps = np.full(config.iters, float(config.step_size))
        else:
            steps = theorem_step_scale(stats, config, report) / np.sqrt(k)
        U, history = run_dp_pgd(stats, beta, config.iters, report.sigma2, steps, rng)
        info = {"step_rule": config.step, "first_step": float(steps[0]), "constraint_fro": beta}
    else:
        U, history = run_dp_cg(stats, config.radius, config.iters, report.sigma2, config.fw_step, rng)
        info = {"step_rule": config.fw_step, "constraint_nuclear": config.radius}
    return FitResult(
        method=config.method,
        H=U / config.bin_size,
        bin_size=config.bin_size,
        lags=stats.lags,
        elapsed_s=time.perf_counter() - start,
        loss_history=tuple(history),
        privacy=report,
        info=info,
    )


# --- DP-SSP: one Gaussian release of (A, b), then least squares as post-processing ------------------------

SSP_RIDGE_FACTOR = 8.0


def ssp_ridge(sigma: float, n_params: int) -> float:
    """Public default ridge ``λ = 8σ√q`` (q = dp+1): four times the operator norm ``≈ 2σ√q`` of the
    symmetric noise matrix. Among ``c·σ√q`` with c in 0…16 (and the PSD projection), c = 8 measured best
    or near best on paper-2d and paper-4d (``docs/privacy.md``). It uses only public numbers (σ, q)."""
    return float(SSP_RIDGE_FACTOR * sigma * np.sqrt(n_params))


def release_statistics(stats: SufficientStats, sigma: float, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Gaussian release of the upper triangle of ``A`` and of ``b`` with noise std σ per entry.

    The lower triangle mirrors the upper one (``Â`` is symmetric); ``A[-1,-1] = 1`` is public and left
    exact. The ``A`` noise is drawn first, then the ``b`` noise (reproducible by seed).
    """
    q = stats.n_params
    if sigma <= 0:
        return stats.A.copy(), stats.b.copy()
    upper = np.triu(sigma * rng.standard_normal((q, q)))
    noise = upper + np.triu(upper, 1).T
    noise[-1, -1] = 0.0
    return stats.A + noise, stats.b + sigma * rng.standard_normal(stats.b.shape)


def run_ssp(stats: SufficientStats, sigma2: float, ridge: float | None, stabiliser: str,
            rng: np.random.Generator) -> tuple[np.ndarray, dict]:
    """DP-SSP: release ``(Â, b̂)`` once, then solve ``θ Ã = b̂`` with the stabilised ``Ã``.

    ``ridge``: ``Ã = Â + λI``; ``psd``: ``Ã`` is ``Â`` with its eigenvalues floored at λ. λ defaults to
    :func:`ssp_ridge`. With σ = 0 and λ = 0 this is exactly :func:`solve_cls`.
    """
    sigma = float(np.sqrt(sigma2))
    lam = ssp_ridge(sigma, stats.n_params) if ridge is None else float(ridge)
    A_hat, b_hat = release_statistics(stats, sigma, rng)
    if stabiliser == "psd":
        values, vectors = np.linalg.eigh(A_hat)
        A_tilde = (vectors * np.maximum(values, lam)) @ vectors.T
    else:
        A_tilde = A_hat + lam * np.eye(stats.n_params) if lam > 0 else A_hat
    theta, info = solve_cls(replace(stats, A=A_tilde, b=b_hat))
    info.update({"ridge": lam, "stabiliser": stabiliser})
    return theta, info


# --- clipped-gradient DP-PGD on the per-bin loss Σ_t ||y_t − U z_t||² / (2N) ----------------------------------

@dataclass(frozen=True)
class BinnedStats(SufficientStats):
    """Sufficient statistics that also carry the non-zero bins (needed by per-bin methods: ``pgd-clip``)."""

    counts: SparseCounts | None = None

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


def _run_pgd_clip_config(stats, config, report, rng):
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


def fit_stats(stats: SufficientStats, config: FitConfig) -> FitResult:
    """Run the estimator named in ``config`` on precomputed statistics."""
    if stats.lags != config.lags:
        raise ConfigError(f"statistics were computed for p = {stats.lags}, config asks for {config.lags}")
    if config.method == "cls":
        return fit_cls(stats, config.bin_size)
    return fit_private(stats, config)


def prepare_stats(events: Events, config: FitConfig) -> tuple[SufficientStats, dict]:
    """Bin the events (with the config's count cap) and compute the sufficient statistics.

    Returns
    -------
    stats : BinnedStats
        The statistics, carrying the non-zero bins for per-bin methods.
    data_info : dict
        ``n_bins``, ``n_events`` (in the data), ``binned_events``, ``dropped_events``,
        ``clipped_events``, ``skipped_sequences``.
    """
    check_design_size(events.dim, config.lags)
    binned = bin_events(events, config.bin_size, config.count_cap)
    stats = binned_stats(binned, config.lags)
    info = {
        "n_bins": binned.n_bins,
        "n_events": events.n_events,
        "binned_events": binned.n_events,
        "dropped_events": binned.dropped_events,
        "clipped_events": binned.clipped_events,
        "skipped_sequences": stats.skipped_sequences,
    }
    return stats, info


def binned_stats(binned, lags: int) -> BinnedStats:
    """:func:`~dphawkes_core.stats.sufficient_stats` plus the non-zero bins of ``binned``."""
    stats = sufficient_stats(binned, lags)
    return BinnedStats(**{f: getattr(stats, f) for f in SufficientStats.__dataclass_fields__},
                       counts=SparseCounts.from_binned(binned))


def fit(events: Events, config: FitConfig) -> tuple[FitResult, dict]:
    """Bin, compute statistics and fit: the whole data path in one call.

    Returns
    -------
    result : FitResult
        ``elapsed_s`` includes binning and statistics.
    data_info : dict
        As returned by :func:`prepare_stats`.
    """
    start = time.perf_counter()
    stats, info = prepare_stats(events, config)
    result = fit_stats(stats, config)
    return replace(result, elapsed_s=time.perf_counter() - start), info
