"""The ctls post-processing of released (or exact) grid-free statistics: the ridge and the roughness penalty scaled
by the released noise-to-signal ratio, then least squares (non-negative unless allowed, the baselines then at least
their floor, :func:`~dphawkes_core.estimators.solvers.baseline_floor`). It reads released and
public numbers only, so it is free post-processing; the family's fit (:mod:`~dphawkes_core.estimators.grid_free`)
and the width chosen inside the release (:mod:`~dphawkes_core.estimators.grid_free.width_selection`) share it."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from dphawkes_core.estimators.solvers import (
    baseline_floor,
    roughness_matrix,
    solve_cls,
    solve_nonnegative,
    stabilise,
)
from dphawkes_core.statistics.exact_times import GridFreeStats

CTLS_RIDGE_FACTOR = 1.5  # λ = c·√r·ρσ√q (ρσ: the noise std of G's pieces, in the units of A; r: noise/signal)


def noise_to_signal(A_hat: np.ndarray, noise: float) -> float:
    """``r = ρσ√q / ā``: the noise scale of G's pieces against the mean diagonal ā of the (released) kernel block
    of Â (about ``rate·w``; floored far below any real one). Post-processing: released and public numbers."""
    diagonal = float(np.mean(np.diag(A_hat)[:-1]))
    return noise / max(diagonal, 1e-12)


def ctls_ridge(noise: float, ratio: float) -> float:
    """Public default ridge ``λ = CTLS_RIDGE_FACTOR·√r·ρσ√q`` (``noise = ρσ√q``, ``ratio`` = r of
    :func:`noise_to_signal`); 0 without noise."""
    return float(CTLS_RIDGE_FACTOR * math.sqrt(ratio) * noise)


def solve_released(noisy_stats: GridFreeStats, gram_sigma: float, config) -> tuple[np.ndarray, dict]:
    """The ctls post-processing of released statistics: the ridge and the roughness penalty scaled by the released
    noise-to-signal ratio, then least squares (non-negative unless allowed, the baselines then at least their
    floor). ``gram_sigma``: the noise std of G's pieces in the units of A (ρσ; 0 without noise). Reads released and
    public numbers only."""
    noise = gram_sigma * math.sqrt(noisy_stats.n_params)
    ratio = noise_to_signal(noisy_stats.A, noise)
    lam = ctls_ridge(noise, ratio) if config.ctls_ridge is None else float(config.ctls_ridge)
    A_tilde = stabilise(noisy_stats.A, lam, "ridge")
    smooth = config.ctls_smoothing * ratio * noise
    if smooth > 0:
        A_tilde = A_tilde + smooth * roughness_matrix(noisy_stats.dim, noisy_stats.lags)
    share = config.baseline_floor if config.ctls_nonnegative else 0.0
    lower = baseline_floor(noisy_stats.b, noisy_stats.A, noisy_stats.n_rows, share)
    if config.ctls_nonnegative:
        U, info = solve_nonnegative(A_tilde, noisy_stats.b, lower), {"solver": "nnls"}
    else:
        U, info = solve_cls(replace(noisy_stats, A=A_tilde))
    info.update({"ridge": lam, "nonnegative": config.ctls_nonnegative, "smoothing": config.ctls_smoothing,
                 "smoothing_weight": smooth, "noise_to_signal": ratio, "baseline_floor_share": share,
                 "baseline_floor": (lower[:, -1] / noisy_stats.width).tolist()})
    return U, info
