"""Empirical privacy audit: a statistical lower bound on the ε a mechanism actually delivers.

Recipe (Jagielski et al. 2020, Nasr et al. 2021):

1. Two neighbouring data sets D and D' = D plus one event, in the (sequence, bin, dimension) where the
   added event moves the output most (searched over a set of adversarial candidates: the bin after
   the largest burst, the first and last bins, the most active lag window, random bins).
2. Run the real mechanism (:func:`dphawkes_core.estimators.run_private`, with the same calibration as a
   fit) ``trials`` times on each, with independent seeds.
3. Split the outputs in halves. On the first half fit a 1-D projection (regularised linear discriminant)
   and choose the threshold; on the second half count false positives (D called D') and false negatives.
4. With one-sided Clopper–Pearson upper bounds ``FPR_ub``, ``FNR_ub`` (each at level ``α/2``; jointly
   valid with confidence ``1 − α``), any (ε, δ)-DP mechanism satisfies ``FPR + e^ε FNR >= 1 − δ`` and
   ``FNR + e^ε FPR >= 1 − δ``, so ``ε >= max(log((1−δ−FNR_ub)/FPR_ub), log((1−δ−FPR_ub)/FNR_ub))``
   holds with confidence ``1 − α``.

A lower bound above the claimed ε is a (statistically certain) violation; a lower bound below it is
consistent with the claim but proves nothing more. The ``broken`` option divides the noise std by a
factor while still claiming the original ε, to show that such a bug is caught.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field, replace
from typing import Callable

import numpy as np
from scipy.stats import beta as beta_dist

from .binning import BinnedCounts, bin_events
from .errors import ConfigError, DPHawkesError
from .estimators import FitConfig, binned_stats, privacy_report, run_private
from .events import Events

MAX_TRIALS = 200_000
_LDA_MAX_DIM_FRACTION = 0.25  # use the covariance when the output dimension is below this × trials/2


class AuditCancelled(DPHawkesError):
    """The audit was stopped before all trials ran."""


@dataclass(frozen=True)
class AuditConfig:
    """What to audit and how hard.

    Attributes
    ----------
    fit : FitConfig
        The private mechanism (method, calibration, ε or σ², δ, K, B/r/G, count cap …).
    trials : int
        Runs of the mechanism on each of the two data sets (half to train the test, half to evaluate).
    confidence : float
        Joint confidence ``1 − α`` of the Clopper–Pearson bounds.
    broken_factor : float, optional
        Divide the calibrated noise std by this factor (a deliberately wrong sensitivity) while still
        claiming the calibrated ε.
    candidates : int
        Random candidate bins tried, on top of the adversarial ones, when searching the neighbour.
    seed : int
        Seed of the neighbour search and of the trials' noise seeds.
    """

    fit: FitConfig
    trials: int = 2000
    confidence: float = 0.95
    broken_factor: float | None = None
    candidates: int = 4
    seed: int = 0

    def __post_init__(self):
        if self.fit.method == "cls":
            raise ConfigError("the audit needs a private method (cls adds no noise)")
        if int(self.trials) != self.trials or not 20 <= self.trials <= MAX_TRIALS:
            raise ConfigError(f"trials must be a whole number in 20…{MAX_TRIALS:,}, got {self.trials!r}")
        if not 0.5 <= self.confidence < 1:
            raise ConfigError(f"confidence must be in [0.5, 1), got {self.confidence!r}")
        if self.broken_factor is not None and not self.broken_factor > 1:
            raise ConfigError(f"the broken factor must be > 1, got {self.broken_factor!r}")


@dataclass(frozen=True)
class Neighbour:
    """Where the extra event of D' sits and how far it moved the output (same noise on D and D')."""

    sequence: int
    bin: int
    dim: int
    output_shift: float
    candidates_tried: int


@dataclass(frozen=True)
class AuditResult:
    """Outcome of an audit.

    Attributes
    ----------
    epsilon_claimed : float
        ε the mechanism claims under the chosen calibration.
    epsilon_by_calibration : dict
        ε the calibrated noise claims under every calibration (``None`` where undefined).
    epsilon_lower_bound : float
        Audited lower bound on ε (valid with probability ``confidence``).
    confidence : float
    trials : int
        Runs per data set (half of them evaluate the test).
    fpr, fnr : float
        Point estimates on the evaluation half.
    fpr_upper, fnr_upper : float
        Their Clopper–Pearson upper bounds.
    threshold : float
        Decision threshold on the projected output.
    scores_d, scores_d_prime : numpy.ndarray
        Projected outputs of the evaluation half on D and D'.
    neighbour : Neighbour
    dp_delta : float
    sigma2_claimed, sigma2_used : float
        Calibrated noise variance and the one actually used (smaller when broken).
    broken_factor : float or None
    calibration, method : str
    count_cap : int or None
    elapsed_s : float
    """

    epsilon_claimed: float
    epsilon_by_calibration: dict
    epsilon_lower_bound: float
    confidence: float
    trials: int
    fpr: float
    fnr: float
    fpr_upper: float
    fnr_upper: float
    threshold: float
    scores_d: np.ndarray
    scores_d_prime: np.ndarray
    neighbour: Neighbour
    dp_delta: float
    sigma2_claimed: float
    sigma2_used: float
    broken_factor: float | None
    calibration: str
    method: str
    count_cap: int | None
    elapsed_s: float = 0.0
    extra: dict = field(default_factory=dict)

    @property
    def violated(self) -> bool:
        """True when the audited lower bound exceeds the claim: the claim is false (at the confidence)."""
        return self.epsilon_lower_bound > self.epsilon_claimed

    def verdict(self) -> str:
        """One plain sentence."""
        conf = f"{self.confidence:.0%}"
        if self.violated:
            return (f"VIOLATION: with {conf} confidence the mechanism leaks ε ≥ {self.epsilon_lower_bound:.3g}, "
                    f"more than the claimed ε = {self.epsilon_claimed:.3g}.")
        return (f"No violation found: the audited lower bound ε ≥ {self.epsilon_lower_bound:.3g} ({conf} confidence) "
                f"is below the claimed ε = {self.epsilon_claimed:.3g}. An audit can refute a claim, never prove it.")

    def to_dict(self) -> dict:
        """JSON-ready summary (without the raw scores)."""
        n = self.neighbour
        return {
            "method": self.method, "calibration": self.calibration,
            "epsilon_claimed": self.epsilon_claimed, "epsilon_by_calibration": dict(self.epsilon_by_calibration),
            "epsilon_lower_bound": self.epsilon_lower_bound, "confidence": self.confidence,
            "trials": self.trials, "evaluation_trials": int(self.scores_d.size),
            "fpr": self.fpr, "fnr": self.fnr, "fpr_upper": self.fpr_upper, "fnr_upper": self.fnr_upper,
            "threshold": self.threshold, "dp_delta": self.dp_delta,
            "sigma2_claimed": self.sigma2_claimed, "sigma2_used": self.sigma2_used,
            "broken": self.broken_factor is not None, "broken_factor": self.broken_factor,
            "count_cap": self.count_cap, "violated": self.violated, "verdict": self.verdict(),
            "neighbour": {"sequence": n.sequence, "bin": n.bin, "dim": n.dim, "output_shift": n.output_shift,
                          "candidates_tried": n.candidates_tried},
            "elapsed_s": self.elapsed_s, **self.extra,
        }


def default_count_cap(events: Events, bin_size: float) -> int:
    """The audit's default public cap: the largest bin count of the data (so nothing is clipped)."""
    binned = bin_events(events, bin_size)
    return max(1, max(int(x.max()) if x.size else 0 for x in binned.counts))


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


def add_event(binned: BinnedCounts, sequence: int, bin_index: int, dim: int) -> BinnedCounts:
    """The neighbour with one more event in ``(sequence, bin, dim)`` (must stay within the count cap)."""
    counts = list(binned.counts)
    x = counts[sequence].copy()
    if binned.count_cap is not None and x[bin_index, dim] >= binned.count_cap:
        raise ConfigError("that bin is already at the count cap: adding an event would change nothing")
    x[bin_index, dim] += 1
    counts[sequence] = x
    return replace(binned, counts=tuple(counts))


def candidate_cells(binned: BinnedCounts, lags: int, extra: int, rng: np.random.Generator) -> list:
    """Adversarial (sequence, bin, dim) candidates below the cap: after the largest burst, first and last
    bins, inside the most active window of p bins, and ``extra`` random bins."""
    cap = binned.count_cap
    cells = []
    for s, x in enumerate(binned.counts):
        n, d = x.shape
        if n <= lags:
            continue
        total = x.sum(axis=1)
        window = np.convolve(total, np.ones(lags), mode="full")[:n]  # events in bins t-p+1..t
        busiest = int(np.argmax(window))
        picks = {int(np.argmax(total)) + 1, busiest, busiest + 1, lags, n - 1, 0}
        picks |= set(int(v) for v in rng.integers(0, n, size=extra))
        for b in sorted(v for v in picks if 0 <= v < n):
            for j in range(d):
                if cap is None or x[b, j] < cap:
                    cells.append((s, b, j))
    if not cells:
        raise ConfigError("every candidate bin is at the count cap: raise the cap to audit an added event")
    return cells


@dataclass
class AuditSession:
    """A prepared audit that runs in chunks (for progress bars and cancellation).

    Build it with :func:`prepare_audit`; call :meth:`run_chunk` until :attr:`done`, then :meth:`result`.
    """

    config: AuditConfig
    stats_d: object
    stats_d_prime: object
    report_d: object
    report_d_prime: object
    neighbour: Neighbour
    claimed: object
    outputs_d: list = field(default_factory=list)
    outputs_d_prime: list = field(default_factory=list)
    elapsed_s: float = 0.0

    @property
    def completed(self) -> int:
        """Trials run so far (per data set)."""
        return len(self.outputs_d)

    @property
    def done(self) -> bool:
        """All trials have run."""
        return self.completed >= self.config.trials

    def run_chunk(self, size: int = 100) -> int:
        """Run up to ``size`` more trials on each data set; returns the number completed."""
        start = time.perf_counter()
        base = self.config.seed * 1_000_003
        for i in range(self.completed, min(self.completed + size, self.config.trials)):
            self.outputs_d.append(self._run(self.stats_d, self.report_d, base + 2 * i))
            self.outputs_d_prime.append(self._run(self.stats_d_prime, self.report_d_prime, base + 2 * i + 1))
        self.elapsed_s += time.perf_counter() - start
        return self.completed

    def _run(self, stats, report, seed) -> np.ndarray:
        return run_private(stats, replace(self.config.fit, seed=int(seed)), report).H.ravel()

    def result(self) -> AuditResult:
        """Distinguishing test and lower bound from the trials run (all of them must have run)."""
        if not self.done:
            raise AuditCancelled(f"the audit was stopped after {self.completed} of {self.config.trials} trials")
        return evaluate(np.asarray(self.outputs_d), np.asarray(self.outputs_d_prime), self)


def prepare_audit(events: Events, config: AuditConfig) -> AuditSession:
    """Bin the data, find the most revealing neighbour and calibrate the mechanism on both data sets."""
    fit = config.fit
    binned = bin_events(events, fit.bin_size, fit.count_cap)
    stats_d = binned_stats(binned, fit.lags)
    claimed = privacy_report(stats_d, fit)
    report_d = _as_run(claimed, config.broken_factor)
    rng = np.random.default_rng(config.seed)
    best = None
    cells = candidate_cells(binned, fit.lags, config.candidates, rng)
    for cell in cells:
        stats_n = binned_stats(add_event(binned, *cell), fit.lags)
        report_n = _as_run(privacy_report(stats_n, fit), config.broken_factor)
        shift = 0.0
        for seed in (10**9 + 7, 10**9 + 9):  # common noise on D and D': the output moves by the event alone
            probe = replace(fit, seed=seed)
            shift += float(np.linalg.norm(run_private(stats_n, probe, report_n).H
                                          - run_private(stats_d, probe, report_d).H))
        if best is None or shift > best[0]:
            best = (shift / 2, cell, stats_n, report_n)
    shift, (s, b, j), stats_n, report_n = best
    neighbour = Neighbour(s, b, j, shift, len(cells))
    return AuditSession(config, stats_d, stats_n, report_d, report_n, neighbour, claimed)


def _as_run(report, broken_factor):
    """The report the mechanism runs with: the calibrated one, or its noise divided by the broken factor
    (ε, the claim, is left as calibrated)."""
    return replace(report, sigma2=report.sigma2 / broken_factor**2) if broken_factor else report


def projection(train_d: np.ndarray, train_dp: np.ndarray) -> np.ndarray:
    """Direction separating the two output clouds: regularised LDA ``(Σ + λI)⁻¹ Δμ`` when the output
    dimension is small against the training trials, the mean difference otherwise."""
    diff = train_dp.mean(axis=0) - train_d.mean(axis=0)
    dim, n = diff.size, train_d.shape[0]
    if dim <= _LDA_MAX_DIM_FRACTION * n:
        centred = np.vstack([train_d - train_d.mean(axis=0), train_dp - train_dp.mean(axis=0)])
        cov = centred.T @ centred / max(centred.shape[0] - 2, 1)
        ridge = 1e-6 * max(float(np.trace(cov)) / dim, 1e-300)
        diff = np.linalg.solve(cov + ridge * np.eye(dim), diff)
    norm = np.linalg.norm(diff)
    return diff / norm if norm > 0 else np.eye(dim)[0]


def best_threshold(scores_d: np.ndarray, scores_dp: np.ndarray, alpha: float, dp_delta: float) -> float:
    """Threshold maximising the ε lower bound on training scores (say "D'" when score > threshold)."""
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
        eps = np.maximum(np.log(np.maximum(1 - dp_delta - fnr_ub, 1e-300) / fpr_ub),
                         np.log(np.maximum(1 - dp_delta - fpr_ub, 1e-300) / fnr_ub))
    return float(candidates[int(np.nanargmax(eps))])


def evaluate(outputs_d: np.ndarray, outputs_dp: np.ndarray, session: AuditSession) -> AuditResult:
    """Train the test on the first half of the trials, evaluate it on the second half."""
    cfg = session.config
    alpha = 1 - cfg.confidence
    half = outputs_d.shape[0] // 2
    w = projection(outputs_d[:half], outputs_dp[:half])
    train_d, train_dp = outputs_d[:half] @ w, outputs_dp[:half] @ w
    test_d, test_dp = outputs_d[half:] @ w, outputs_dp[half:] @ w
    threshold = best_threshold(train_d, train_dp, alpha, cfg.fit.dp_delta)
    fp, fn = int(np.sum(test_d > threshold)), int(np.sum(test_dp <= threshold))
    n_d, n_dp = test_d.size, test_dp.size
    fpr_ub, fnr_ub = clopper_pearson_upper(fp, n_d, alpha / 2), clopper_pearson_upper(fn, n_dp, alpha / 2)
    report = session.claimed
    return AuditResult(
        epsilon_claimed=float(report.epsilon),
        epsilon_by_calibration=dict(report.epsilon_by_calibration),
        epsilon_lower_bound=epsilon_lower_bound(fpr_ub, fnr_ub, cfg.fit.dp_delta),
        confidence=cfg.confidence,
        trials=cfg.trials,
        fpr=fp / n_d, fnr=fn / n_dp, fpr_upper=fpr_ub, fnr_upper=fnr_ub,
        threshold=threshold, scores_d=test_d, scores_d_prime=test_dp,
        neighbour=session.neighbour, dp_delta=cfg.fit.dp_delta,
        sigma2_claimed=float(report.sigma2), sigma2_used=float(session.report_d.sigma2),
        broken_factor=cfg.broken_factor, calibration=cfg.fit.calibration, method=cfg.fit.method,
        count_cap=cfg.fit.count_cap, elapsed_s=session.elapsed_s,
        extra={"sigma2_used_d_prime": float(session.report_d_prime.sigma2)},
    )


def run_audit(events: Events, config: AuditConfig, progress: Callable[[int, int], None] | None = None,
              should_stop: Callable[[], bool] | None = None, chunk: int = 100) -> AuditResult:
    """Prepare and run a whole audit, reporting progress and stopping when ``should_stop()`` is true.

    Raises
    ------
    AuditCancelled
        When stopped before all trials ran.
    """
    start = time.perf_counter()
    session = prepare_audit(events, config)
    while not session.done:
        if should_stop is not None and should_stop():
            raise AuditCancelled(f"the audit was stopped after {session.completed} of {config.trials} trials")
        session.run_chunk(chunk)
        if progress is not None:
            progress(session.completed, config.trials)
    result = session.result()
    return replace(result, elapsed_s=time.perf_counter() - start)
