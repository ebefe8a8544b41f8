"""The shared solvers' bounds: the non-negative least squares with a floor on the baselines against a bounded
minimiser, projected Newton with a floor, the floor read from released numbers, and Newton's damped steps where the
curvature is singular (a planted regression: the plain step alone stops short of the maximum)."""

import numpy as np
import pytest
from scipy.optimize import minimize
from scipy.sparse import csr_matrix

from dphawkes_core.estimators import solvers
from dphawkes_core.estimators.solvers import baseline_floor, newton_dimension, solve_nonnegative


def test_least_squares_with_a_floor_is_the_bounded_minimum():
    rng = np.random.default_rng(0)
    M = rng.normal(size=(40, 6))
    A = M.T @ M / 40
    b = rng.normal(size=(3, 6)) * 0.3
    lower = np.zeros_like(b)
    lower[:, -1] = [0.2, 0.05, 0.4]
    theta = solve_nonnegative(A, b, lower)
    for i, target in enumerate(b):
        reference = minimize(lambda x, c=target: 0.5 * x @ A @ x - c @ x, np.maximum(lower[i], 0.1),
                             jac=lambda x, c=target: A @ x - c, method="L-BFGS-B",
                             bounds=[(lo, None) for lo in lower[i]], options=dict(ftol=1e-15, gtol=1e-12)).x
        np.testing.assert_allclose(theta[i], reference, atol=1e-6)
    assert np.all(theta[:, -1] >= lower[:, -1] - 1e-15) and np.any(np.isclose(theta[:, -1], lower[:, -1]))


def test_the_floor_is_a_share_of_the_released_mean_and_stays_positive():
    A = np.eye(3) * 2.0
    A[-1, -1] = 1.0
    b = np.array([[0.1, 0.2, 0.8], [0.0, 0.1, -0.3]])  # the second dimension's released count came out negative
    lower = baseline_floor(b, A, n_rows=500, share=0.05)
    assert lower[:, :-1].tolist() == [[0, 0], [0, 0]]
    assert lower[:, -1] == pytest.approx([0.05 * 0.8, 0.05 / 500])
    assert not baseline_floor(b, A, 500, 0.0).any()


def _collinear(seed: int):
    """Targets × columns whose curvature is singular: columns without a cell (their exposure > 0) and columns with one
    cell, started above 0 (the family's start lifts every kernel)."""
    rng = np.random.default_rng(seed)
    n, q = 30, 12
    X = np.zeros((n, q))
    for c in range(q):
        kind = rng.integers(0, 3)
        if kind == 1:
            X[rng.integers(0, n), c] = 1.0
        elif kind == 2:
            X[:, c] = rng.integers(0, 2, n) * (rng.uniform(size=n) < 0.3)
    return csr_matrix(X), np.append(rng.uniform(0.5, 1.5, q) * 10, 100.0), np.append(np.full(q, 1e-4), 0.2)


def _kkt(X, exposure, theta, lower):
    """The largest violation of the bounded maximum's conditions: the gradient is 0 where θ is above its bound and
    at most 0 where it is at it (relative to the exposure)."""
    lam = X @ theta[:-1] + theta[-1]
    gradient = (np.append(X.T @ (1 / lam), (1 / lam).sum()) - exposure) / exposure
    at_bound = theta <= lower + 1e-12
    return max(np.abs(gradient[~at_bound]).max(initial=0.0), gradient[at_bound].max(initial=0.0))


@pytest.mark.parametrize("seed", [1, 9])
def test_newton_reaches_the_maximum_where_its_plain_step_cannot(monkeypatch, seed):
    X, exposure, start = _collinear(seed)
    lower = np.zeros_like(start)
    theta, _, _, done = newton_dimension(X, exposure, start.copy(), 1e-12, 500)
    assert done and _kkt(X, exposure, theta, lower) < 1e-6
    monkeypatch.setattr(solvers, "NEWTON_RIDGES", (solvers.NEWTON_RIDGE,))
    stuck, _, _, _ = newton_dimension(X, exposure, start.copy(), 1e-12, 500)
    assert _kkt(X, exposure, stuck, lower) > 1e-3  # the planted regression stops short


def test_newton_with_a_floor_keeps_the_baseline_at_it_and_is_the_bounded_maximum():
    X, exposure, start = _collinear(4)
    exposure[-1] = 1000.0  # a long window for few targets: the unbounded maximum's baseline is small
    lower = np.zeros_like(start)
    lower[-1] = 0.02
    theta, _, _, done = newton_dimension(X, exposure, start.copy(), 1e-12, 500, lower)
    free, _, _, _ = newton_dimension(X, exposure, start.copy(), 1e-12, 500)
    assert done and free[-1] < 0.02 and theta[-1] == pytest.approx(0.02)
    assert _kkt(X, exposure, theta, lower) < 1e-6
