"""Estimators of ``H = [H_1 … H_p, η] = U/Δ`` from the sufficient statistics.

Every estimator sees the data only through :class:`~dphawkes_core.stats.SufficientStats`
(``A = ZZᵀ/N``, ``b = YZᵀ/N``); none ever builds Z.

The paper's loss is ``L(U) = ||U ZZᵀ − Y Zᵀ||²_F / (2N²) = ||U A − b||²_F / 2`` with gradient
``∇L(U) = (U A − b) A`` (A is symmetric).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import scipy.linalg

from .binning import bin_events, check_bin_size
from .errors import ConfigError
from .events import Events
from .stats import SufficientStats, check_design_size, sufficient_stats

METHODS = ("cls", "pgd", "cg")


@dataclass(frozen=True)
class FitConfig:
    """Everything that defines a fit, so that a result can be reproduced from it.

    Attributes
    ----------
    method : str
        ``cls`` (non-private), ``pgd`` (DP-PGD, Algorithm 1) or ``cg`` (DP-CG, Algorithm 2).
    bin_size : float
        Δ.
    lags : int
        p (use :func:`~dphawkes_core.binning.lags_from_support` for ``p = ⌈s/Δ⌉``).
    bound : float, optional
        B of the Frobenius constraint ``||H||_F ≤ B`` (``||U||_F ≤ ΔB``), for ``pgd``.
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

    def __post_init__(self):
        check_bin_size(self.bin_size)
        if self.method not in METHODS:
            raise ConfigError(f"unknown method {self.method!r}; choose one of {', '.join(METHODS)}")
        if int(self.lags) != self.lags or self.lags < 1:
            raise ConfigError(f"the number of lags p must be a positive integer, got {self.lags!r}")
        if int(self.iters) != self.iters or self.iters < 1:
            raise ConfigError(f"the number of iterations K must be a positive integer, got {self.iters!r}")


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


def fit_stats(stats: SufficientStats, config: FitConfig) -> FitResult:
    """Run the estimator named in ``config`` on precomputed statistics."""
    if stats.lags != config.lags:
        raise ConfigError(f"statistics were computed for p = {stats.lags}, config asks for {config.lags}")
    if config.method == "cls":
        return fit_cls(stats, config.bin_size)
    raise ConfigError(f"method {config.method!r} is not available yet")


def prepare_stats(events: Events, config: FitConfig) -> tuple[SufficientStats, dict]:
    """Bin the events (with the config's count cap) and compute the sufficient statistics.

    Returns
    -------
    stats : SufficientStats
    data_info : dict
        ``n_bins``, ``n_events`` (in the data), ``binned_events``, ``dropped_events``,
        ``clipped_events``, ``skipped_sequences``.
    """
    check_design_size(events.dim, config.lags)
    binned = bin_events(events, config.bin_size, config.count_cap)
    stats = sufficient_stats(binned, config.lags)
    info = {
        "n_bins": binned.n_bins,
        "n_events": events.n_events,
        "binned_events": binned.n_events,
        "dropped_events": binned.dropped_events,
        "clipped_events": binned.clipped_events,
        "skipped_sequences": stats.skipped_sequences,
    }
    return stats, info


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
