"""The distinguishing test of a privacy audit, as statistics alone (no mechanism): exact Clopper–Pearson bounds
on the error rates, the (ε, δ) and μ-GDP lower bounds they imply, the projection of the outputs on the
likelihood-ratio direction and the thresholds. :mod:`dphawkes_experiments.audit` explains the recipe.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.stats import beta as beta_dist
from scipy.stats import norm

_LDA_MAX_DIM_FRACTION = 0.25  # use the covariance when the output dimension is below this × trials/2


def clopper_pearson_upper(errors: int, n: int, alpha: float) -> float:
    """One-sided ``1 − α`` upper confidence bound of a binomial proportion (exact, Clopper–Pearson)."""
    if errors >= n:
        return 1.0
    return float(beta_dist.ppf(1 - alpha, errors + 1, n - errors))


def epsilon_lower_bound(fpr_upper: float, fnr_upper: float, dp_delta: float) -> float:
    """``max(log((1−δ−FNR)/FPR), log((1−δ−FPR)/FNR), 0)`` from upper bounds on the two error rates."""
    best = 0.0
    for a, b in ((fnr_upper, fpr_upper), (fpr_upper, fnr_upper)):
        num = 1 - dp_delta - a
        if num > 0 and b > 0:
            best = max(best, math.log(num / b))
    return best


def pooled_mu_lower_bound(error_upper: float) -> float:
    """``max(2 Φ⁻¹(1 − e), 0)`` from an upper bound e on the mean error ``(FPR + FNR)/2`` of one test: every
    μ-GDP mechanism has ``FPR + FNR >= 2 Φ(−μ/2)`` for every test (the trade-off curve's closest point to
    the origin), so this is the smallest μ that admits the test."""
    if error_upper >= 0.5:
        return 0.0
    return max(2.0 * float(norm.isf(error_upper)), 0.0)


def mu_lower_bound(fpr_upper: float, fnr_upper: float) -> float:
    """``max(Φ⁻¹(1 − FPR) − Φ⁻¹(FNR), 0)`` from upper bounds on the error rates: the smallest μ for which
    a μ-GDP mechanism admits a test this good."""
    if fpr_upper >= 1 or fnr_upper >= 1:
        return 0.0
    return max(float(norm.isf(fpr_upper) - norm.ppf(fnr_upper)), 0.0)


def shrunk_covariance(centred: np.ndarray) -> np.ndarray:
    """Ledoit–Wolf covariance of centred rows: the sample covariance shrunk toward ``(tr/dim)·I`` by the
    estimated optimal weight (Ledoit & Wolf 2004). Isotropic noise then gives (almost) the plain mean
    shift as the direction, and correlated noise still its ``Σ⁻¹Δμ``, without the sample covariance's
    estimation noise."""
    n, dim = centred.shape
    sample = centred.T @ centred / n
    scale = float(np.trace(sample)) / dim
    target_gap = float(np.sum((sample - scale * np.eye(dim)) ** 2))
    if target_gap <= 0:
        return sample
    spread = (float(np.sum(np.sum(centred**2, axis=1) ** 2)) / n - float(np.sum(sample**2))) / n
    weight = min(max(spread, 0.0), target_gap) / target_gap
    return weight * scale * np.eye(dim) + (1 - weight) * sample


def projection(train_d: np.ndarray, train_dp: np.ndarray, shift: np.ndarray | None = None) -> np.ndarray:
    """Direction separating the two output clouds — the likelihood-ratio direction ``Σ⁻¹ Δμ`` of Gaussian
    outputs: regularised LDA ``(Σ + λI)⁻¹ Δμ`` when the output dimension is small against the training
    trials, ``Δμ`` otherwise. ``Δμ`` is ``shift`` (the common-noise move, exact for outputs linear in the
    noise) when given, else the difference of the training means."""
    diff = train_dp.mean(axis=0) - train_d.mean(axis=0) if shift is None else np.asarray(shift, float)
    dim, n = diff.size, train_d.shape[0]
    if dim <= _LDA_MAX_DIM_FRACTION * n:
        centred = np.vstack([train_d - train_d.mean(axis=0), train_dp - train_dp.mean(axis=0)])
        cov = shrunk_covariance(centred)
        ridge = 1e-6 * max(float(np.trace(cov)) / dim, 1e-300)
        diff = np.linalg.solve(cov + ridge * np.eye(dim), diff)
    norm = np.linalg.norm(diff)
    return diff / norm if norm > 0 else np.eye(dim)[0]


def best_threshold(scores_d: np.ndarray, scores_dp: np.ndarray, alpha: float, dp_delta: float,
                   gdp: bool = False) -> float:
    """Threshold maximising the ε lower bound (or, with ``gdp``, the μ lower bound) on training scores
    (say "D'" when score > threshold)."""
    candidates = np.unique(np.concatenate([scores_d, scores_dp]))
    sd, sdp = np.sort(scores_d), np.sort(scores_dp)
    n_d, n_dp = sd.size, sdp.size
    fp = n_d - np.searchsorted(sd, candidates, side="right")  # D scores above the threshold
    fn = np.searchsorted(sdp, candidates, side="right")  # D' scores at or below
    fpr_ub = beta_dist.ppf(1 - alpha / 2, fp + 1, np.maximum(n_d - fp, 1e-12))
    fnr_ub = beta_dist.ppf(1 - alpha / 2, fn + 1, np.maximum(n_dp - fn, 1e-12))
    fpr_ub = np.where(fp >= n_d, 1.0, fpr_ub)
    fnr_ub = np.where(fn >= n_dp, 1.0, fnr_ub)
    with np.errstate(divide="ignore", invalid="ignore"):
        if gdp:
            score = norm.isf(fpr_ub) - norm.ppf(fnr_ub)
        else:
            score = np.maximum(np.log(np.maximum(1 - dp_delta - fnr_ub, 1e-300) / fpr_ub),
                               np.log(np.maximum(1 - dp_delta - fpr_ub, 1e-300) / fnr_ub))
    return float(candidates[int(np.nanargmax(score))])


def balanced_threshold(scores_d: np.ndarray, scores_dp: np.ndarray) -> float:
    """Midway between the training medians (say "D'" when score > threshold): for a shift of one
    symmetric distribution, the test with the fewest errors ``FP + FN``, whose mean error bounds μ most
    tightly (:func:`pooled_mu_lower_bound`); far less noisy than the empirical minimiser of the errors,
    and any threshold keeps the bound valid."""
    return float(np.median(scores_d) + np.median(scores_dp)) / 2


def training_trials(trials: int, fraction: float) -> int:
    """Trials per data set that train the test: ``fraction`` of them, at least 10, leaving at least 10."""
    return min(max(10, int(round(trials * fraction))), trials - 10)
