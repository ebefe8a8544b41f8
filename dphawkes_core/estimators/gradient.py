"""The paper's private first-order methods: DP-PGD (Algorithm 1) and DP-CG (Algorithm 2).

Both release a noisy gradient ``∇L(U_k) + ζ_k`` at every step; that is their only access to the data.
"""

from __future__ import annotations

import numpy as np

from ..privacy import PrivacyReport, constraint_fro_radius, formal_bounds
from ..stats import SufficientStats
from .config import FitConfig
from .least_squares import paper_loss


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
