"""Solvers and the objective that several families share, owned by none of them: the paper's loss and its
gradient, conditional least squares, the stabilisers of a noisy Gram matrix, the roughness penalty across lags,
the non-negative solve, and the maximum likelihood of an intensity linear in its parameters (projected Newton).

The paper's loss is ``L(U) = ||U ZZᵀ − Y Zᵀ||²_F / (2N²) = ||U A − b||²_F / 2`` with gradient
``∇L(U) = (U A − b) A`` (A is symmetric).
"""

from __future__ import annotations

import math

import numpy as np

from dphawkes_core.statistics.moments import SufficientStats


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


def roughness_matrix(dim: int, lags: int) -> np.ndarray:
    """``DᵀD`` for the second differences across lags of every kernel ``h_ij`` (θ's column ``kd + j``
    is lag k+1 of source j; the intercept column is not penalised)."""
    q = dim * lags + 1
    rows = []
    for k in range(1, lags - 1):
        for j in range(dim):
            row = np.zeros(q)
            row[[(k - 1) * dim + j, k * dim + j, (k + 1) * dim + j]] = (1.0, -2.0, 1.0)
            rows.append(row)
    D = np.array(rows).reshape(-1, q)
    return D.T @ D


def stabilise(A_hat: np.ndarray, lam: float, stabiliser: str) -> np.ndarray:
    """``ridge``: ``Â + λI``; ``psd``: ``Â`` with its eigenvalues floored at λ."""
    if stabiliser == "psd":
        values, vectors = np.linalg.eigh(A_hat)
        return (vectors * np.maximum(values, lam)) @ vectors.T
    return A_hat + lam * np.eye(A_hat.shape[0]) if lam > 0 else A_hat


NNLS_ITERATIONS_PER_PARAMETER = 20  # Lawson–Hanson's iteration limit per unknown (it adds one per outer step)


def solve_nonnegative(A_tilde: np.ndarray, b_hat: np.ndarray, lower: np.ndarray | None = None) -> np.ndarray:
    """Each row ``θ_i = argmin_{θ >= l_i} ½ θ Ã θᵀ − b̂_i θᵀ``: kernels non-negative and the baseline at least
    its floor (``lower``, ``(d, q)``, default 0; :func:`baseline_floor`).

    With ``θ = l + θ'`` the problem is ``min_{θ' >= 0} ½ θ' Ã θ'ᵀ − (b̂_i − l_i Ã) θ'ᵀ``; with ``Ã = LLᵀ`` that is
    the non-negative least-squares problem ``min ||Lᵀθ'ᵀ − L⁻¹(b̂_i − l_i Ã)ᵀ||``, solved
    exactly by scipy's Lawson–Hanson ``nnls`` (at ``dp+1 = 1001`` about 0.5 s against 25–190 s for the
    BVLS it replaced, same solution to 1e-14); BVLS when ``nnls`` reaches its iteration limit. ``Ã`` is
    made positive definite first if needed (eigenvalues floored at a tiny multiple of its scale).
    """
    from scipy.linalg import solve_triangular  # here: scipy.linalg is a slow import, private fits only
    from scipy.optimize import lsq_linear, nnls

    try:
        L = np.linalg.cholesky(A_tilde)
    except np.linalg.LinAlgError:
        values, vectors = np.linalg.eigh(A_tilde)
        floor = 1e-9 * max(float(np.max(np.abs(values))), 1e-300)
        L = np.linalg.cholesky((vectors * np.maximum(values, floor)) @ vectors.T)
    lower = np.zeros_like(b_hat) if lower is None else np.asarray(lower, dtype=float)
    shifted = b_hat - lower @ (L @ L.T) if np.any(lower) else b_hat
    targets = solve_triangular(L, shifted.T, lower=True)  # (q, d): L⁻¹ (b̂ − lÃ)ᵀ
    theta = np.empty_like(b_hat)
    for i in range(b_hat.shape[0]):
        try:
            theta[i] = nnls(L.T, targets[:, i], maxiter=NNLS_ITERATIONS_PER_PARAMETER * L.shape[0])[0]
        except RuntimeError:  # iteration limit: the bounded-variable solver, slower but without one
            theta[i] = lsq_linear(L.T, targets[:, i], bounds=(0.0, np.inf), method="bvls").x
    return theta + lower


# --- the baseline floor ----------------------------------------------------------------------------------------

def baseline_floor(b_hat: np.ndarray, A_hat: np.ndarray, n_rows: float, share: float) -> np.ndarray:
    """The lower bound ``l`` (``(d, q)``) of :func:`solve_nonnegative`: 0 on the kernels, and on the baseline
    ``share`` (the ``baseline_floor`` option, :data:`~dphawkes_core.estimators.settings.BASELINE_FLOOR`) times the
    baseline of a model without kernels, ``b̂_i,−1 / Â_−1,−1`` (the dimension's released count over the window, in
    the units of θ), at least ``share / n_rows`` (one event over the window, so the floor stays positive when the
    noise makes a released count ≤ 0). Post-processing: released and public numbers only."""
    lower = np.zeros_like(b_hat, dtype=float)
    if share > 0:
        mean = np.asarray(b_hat, dtype=float)[:, -1] / max(float(A_hat[-1, -1]), 1e-300)
        lower[:, -1] = share * np.maximum(mean, 1.0 / max(float(n_rows), 1.0))
    return lower


# --- maximum likelihood of an intensity linear in its parameters (mle; exp's likelihood) ---------------------------

ARMIJO_SHARE = 1e-4  # a Newton step is kept when ℓ rises by at least this share of the gradient along it
SMALLEST_STEP = 1e-12  # the line search stops halving here
NEWTON_RIDGE = 1e-12  # relative to the curvature's mean diagonal: solves a system singular on a column with no events
#: The ridges a Newton iteration tries in turn when no step along the previous direction raises ℓ (a curvature
#: singular along a direction the gradient is not in, e.g. a kernel column equal to a baseline part's on its few
#: targets): the plain Newton step first, then damped ones (Levenberg–Marquardt), the last close to a gradient step.
NEWTON_RIDGES = (NEWTON_RIDGE, 1e-6, 1e-2, 1e2)


def _dimension_value(X, exposure: np.ndarray, theta_i: np.ndarray) -> tuple[float, np.ndarray]:
    """``ℓ_i(θ_i)`` (``-inf`` where an intensity at a target is not positive) and the intensities."""
    lam = X @ theta_i[:-1] + theta_i[-1]
    if np.any(lam <= 0):
        return -math.inf, lam
    return float(np.sum(np.log(lam)) - theta_i @ exposure), lam


def _curvature(X, inverse: np.ndarray) -> np.ndarray:
    """``X̃ᵀ diag(1/λ²) X̃`` with ``X̃ = [X, 1]`` (``inverse`` = 1/λ; ``X`` dense: BLAS; CSR: one compiled pass)."""
    from dphawkes_core.statistics.pair_passes import weighted_gram

    return weighted_gram(X, inverse)


def with_baseline_columns(X, parts: np.ndarray, n_parts: int):
    """``[X, B]`` (dense, or CSR): the target rows of ``X`` with one indicator column per part of a baseline that
    follows the clock (``parts``: the part of each row's target; :mod:`dphawkes_core.data.baseline_bins`). With the
    intercept's exposure 0, :func:`newton_dimension` then fits one baseline per part (mle, exp's likelihood)."""
    from dphawkes_core.statistics.pair_passes import CountRows

    if isinstance(X, (np.ndarray, CountRows)):  # dense rows (pair_passes: below the compiled passes' size) stay dense
        indicator = np.zeros((parts.size, n_parts), dtype=np.uint8)
        indicator[np.arange(parts.size), parts] = 1
        return X.with_columns(indicator) if isinstance(X, CountRows) else np.hstack([X, indicator.astype(float)])
    from scipy.sparse import csr_matrix, hstack

    indicator = csr_matrix((np.ones(parts.size), (np.arange(parts.size), parts)), shape=(parts.size, n_parts))
    return hstack([X, indicator], format="csr")


def _projected_step(X, exposure: np.ndarray, theta_i: np.ndarray, value: float, gradient: np.ndarray, H: np.ndarray,
                    free: np.ndarray, ridge: float, lower: np.ndarray, live: np.ndarray) -> tuple:
    """One projected Newton step of :func:`newton_dimension` with ``ridge`` added to the curvature: the direction
    ``(H + ridge·I)⁻¹ g`` on the free parameters, projected onto θ >= l and halved until ℓ rises by the Armijo share
    (or the step is below :data:`SMALLEST_STEP`). Returns the new θ, ℓ there and the intensities."""
    direction = np.zeros_like(theta_i)
    direction[free] = np.linalg.solve(H + ridge * np.eye(H.shape[0]), gradient[free])
    alpha = 1.0
    while True:
        new = np.where(live, np.maximum(theta_i + alpha * direction, lower), 0.0)
        new_value, new_lam = _dimension_value(X, exposure, new)
        if new_value >= value + ARMIJO_SHARE * float(gradient @ (new - theta_i)) or alpha < SMALLEST_STEP:
            return new, new_value, new_lam
        alpha /= 2.0


def newton_dimension(X, exposure: np.ndarray, theta_i: np.ndarray, tol: float, max_iter: int,
                     lower: np.ndarray | None = None) -> tuple[np.ndarray, int, float, bool]:
    """Maximise ``ℓ_i(θ) = Σ_k log(X̃_k θ) − eᵀθ`` over θ >= l (``X̃ = [X, 1]``: the intensity at the targets is
    linear in θ, so ℓ_i is concave; ``lower`` = l, default 0, e.g. a baseline floor) by projected Newton (Bertsekas
    1982) from ``theta_i`` (>= l, ℓ_i finite there).

    At θ the gradient ``g = X̃ᵀ(1/λ) − e`` and the curvature ``H = X̃ᵀ diag(1/λ²) X̃``; a parameter at its bound
    whose gradient points below it stays there, the others move by ``H_FF⁻¹ g_F``, projected onto θ >= l and halved
    until ℓ_i rises by the Armijo share (an intensity ≤ 0 is ℓ = −∞: rejected). ``X`` is a NumPy array or a
    scipy CSR matrix (targets × columns), ``exposure`` = e (the last entry the baseline's; a column with no exposure
    stays at 0).
    Returns θ_i, the iterations, the final relative change and whether it fell below ``tol``."""
    live = exposure > 0
    lower = np.zeros_like(theta_i) if lower is None else np.where(live, np.asarray(lower, dtype=float), 0.0)
    theta_i = np.where(live, np.maximum(theta_i, lower), theta_i)
    value, lam = _dimension_value(X, exposure, theta_i)
    change = math.inf
    for iteration in range(1, int(max_iter) + 1):
        inverse = 1.0 / lam
        gradient = np.append(X.T @ inverse, inverse.sum()) - exposure
        free = live & ((theta_i > lower) | (gradient > 0))
        H = _curvature(X, inverse)[np.ix_(free, free)]
        scale = max(float(np.trace(H)) / max(int(free.sum()), 1), 1e-300)
        for ridge in NEWTON_RIDGES:  # a curvature singular along some direction: a damped step, then a steeper one
            new, new_value, new_lam = _projected_step(X, exposure, theta_i, value, gradient, H, free, ridge * scale,
                                                      lower, live)
            if new_value >= value:
                break
        if new_value < value:  # no step raises ℓ any more: θ_i is the maximum to the precision of ℓ
            return theta_i, iteration, 0.0, True
        change = float(np.max(np.abs(new - theta_i)) / max(float(np.max(np.abs(new))), 1e-300))
        theta_i, value, lam = new, new_value, new_lam
        if change <= tol:
            return theta_i, iteration, change, True
    return theta_i, int(max_iter), change, False


