"""DP-SSP: one Gaussian release of the sufficient statistics, then least squares as post-processing."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..stats import SufficientStats
from .least_squares import solve_cls


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
