"""Non-private conditional least squares (Kirchner 2017) and the paper's loss.

The paper's loss is ``L(U) = ||U ZZᵀ − Y Zᵀ||²_F / (2N²) = ||U A − b||²_F / 2`` with gradient
``∇L(U) = (U A − b) A`` (A is symmetric).
"""

from __future__ import annotations

import numpy as np

from dphawkes_core.statistics.moments import SufficientStats
from dphawkes_core.estimators.family import Family
from dphawkes_core.estimators.settings import options_class


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
    try:  # numpy.linalg, not scipy.linalg: importing scipy.linalg (0.4-1 s) would dominate a small CLS fit
        diag = np.diag(np.linalg.cholesky(A))  # raises LinAlgError unless A is positive definite
        cond = float((diag.max() / diag.min()) ** 2) if diag.min() > 0 else float("inf")
        theta = np.linalg.solve(A, b.T).T
        if np.all(np.isfinite(theta)) and cond < 1e12:
            return theta, {"solver": "cholesky", "condition_estimate": cond}
    except np.linalg.LinAlgError:
        pass
    theta, *_ = np.linalg.lstsq(A, b.T, rcond=None)
    return theta.T, {"solver": "lstsq", "condition_estimate": float(np.linalg.cond(A))}


CLSOptions = options_class("CLSOptions", (), "CLS", __name__)


class CLS(Family):
    """Non-private conditional least squares: the reference every private family is measured against."""

    name = "cls"
    label = "CLS"
    summary = "non-private conditional least squares (Kirchner 2017): solves the normal equations exactly"
    private = False
    units = ("event", "sequence")
    options_type = CLSOptions

    def run(self, stats, config, report, rng, transcript=None):
        theta, info = solve_cls(stats)
        return theta, [paper_loss(theta, stats)], info
