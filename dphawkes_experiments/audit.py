"""Empirical privacy audit: a statistical lower bound on the ε a mechanism actually delivers.

Recipe (Jagielski et al. 2020, Nasr et al. 2021):

1. Two neighbouring data sets D and D' = D plus one event, in the (sequence, bin, dimension) where the
   added event moves the output most (searched over a set of adversarial candidates: the bin after
   the largest burst, the first and last bins, the most active lag window, random bins).
2. Run the real mechanism (:func:`dphawkes_core.estimators.run_private`, with the same calibration as a
   fit) ``trials`` times on each, with independent seeds, and observe its release
   (:func:`observed_output`).
3. Split the outputs in halves. Project them on the likelihood-ratio direction of Gaussian outputs,
   ``Σ⁻¹Δμ`` (Δμ: the output's move under common noise; Σ, shrunk by Ledoit–Wolf, from the first half)
   and choose the threshold on the first half; on the second half count false positives (D called D')
   and false negatives.
4. With one-sided Clopper–Pearson upper bounds ``FPR_ub``, ``FNR_ub`` (each at level ``α/2``; jointly
   valid with confidence ``1 − α``), any (ε, δ)-DP mechanism satisfies ``FPR + e^ε FNR >= 1 − δ`` and
   ``FNR + e^ε FPR >= 1 − δ``, so ``ε >= max(log((1−δ−FNR_ub)/FPR_ub), log((1−δ−FPR_ub)/FNR_ub))``
   holds with confidence ``1 − α``.

A lower bound above the claimed ε is a (statistically certain) violation; a lower bound below it is
consistent with the claim but proves nothing more. The ``broken`` option divides the noise std by a
factor while still claiming the original ε, to show that such a bug is caught.

Worst-case neighbours (``neighbours="worst-case"``): instead of the natural data, audit the pair built
from the public bounds alone — every count at the cap C in all n bins of every dimension, and the same
with one event fewer in the middle bin (so the change enters one target and p regressor rows, each at
the largest norm the cap allows: the pair of the sensitivity property tests). This is where a
sensitivity bug shows. The family may fix d of the pair (``worst_case_dim``: the formal gradient bound
of DP-PGD/DP-CG is reached at d = 1 only) and a public state at which its releases are observed
(``worst_case_state``: clipped DP-PGD's per-bin terms reach its bound only where they flip sign, never
from ``U = 0``).

A family fitted to exact event times (``family.statistics == "events"``, ctls) computes its statistics from
the events (``family.prepare_stats``), so its neighbours add an event, not a count
(:func:`prepare_event_audit`): naturally, the added event (at the start or the middle of a candidate bin)
that moves the release most; in the worst case, the family's own adversarial pair
(``family.worst_case_events``, at the family's ``worst_case_lags`` unless the user says otherwise:
:func:`worst_case_lags`).

The formal calibration claims more than (ε, δ): K releases of sensitivity S with noise σ are exactly
``μ``-GDP with ``μ = √K·S/σ`` (Dong, Roth & Su 2019). For a μ-GDP mechanism every test obeys
``FNR >= Φ(Φ⁻¹(1 − FPR) − μ)``, hence ``(FPR + FNR)/2 >= Φ(−μ/2)``: a test trained on the first
``train_fraction`` of the trials (threshold midway between the medians) whose mean error on the rest has
the Clopper–Pearson bound ``e_ub`` (level ``α/2``; the pointwise bounds then take ``α/4`` each) gives
``μ >= 2 Φ⁻¹(1 − e_ub)`` — for any mechanism, Gaussian or not. A lower bound above the claimed μ
refutes the formal claim; its ε under the Gaussian profile is reported as ``epsilon_lower_bound_gdp``.
This test is far stronger than the pointwise (ε, δ) one at a few thousand trials (the pointwise bound
needs tail events at rate ~δ to reach the claim); for the paper calibrations, which claim only (ε, δ),
only the pointwise bound is a refutation. A mechanism that sits exactly at its bound (the worst case of
DP-SSP, clipped DP-PGD) is refuted with probability up to ``α/2`` by this test.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field, replace
from typing import Callable

import numpy as np
from scipy.stats import beta as beta_dist
from scipy.stats import norm

from dphawkes_core.binning import BinnedCounts, bin_events, bin_sparse
from dphawkes_core.count_cap import AUTO, cap_noise_sigma, cap_rng, choose_cap, release_tail_counts
from dphawkes_core.errors import ConfigError, DPHawkesError
from dphawkes_core.estimators import FitConfig, binned_stats, get_family, prepare_stats, privacy_report
from dphawkes_core.events import Events
from dphawkes_core.privacy import gaussian_epsilon

MAX_TRIALS = 200_000
NEIGHBOURS = ("natural", "worst-case")
DIRECTION_PROBES = 32  # common-noise draws that estimate the test direction (mean difference)
_LDA_MAX_DIM_FRACTION = 0.25  # use the covariance when the output dimension is below this × trials/2


class AuditCancelled(DPHawkesError):
    """The audit was stopped before all trials ran."""


@dataclass(frozen=True)
class AuditConfig:
    """What to audit and how hard.

    Attributes
    ----------
    fit : FitConfig
        The private mechanism (method, calibration, ε or σ², δ, K, B/r/G, count cap …). Its noise is seeded in
        every trial, so the audit checks the seeded (numpy, continuous Gaussian) mechanism and its claim is
        calibrated for that sampler (an unseeded fit is given the audit's seed); the exact discrete Gaussian of
        an unseeded lagged DP-SSP release is checked against OpenDP's own privacy map (``tests/core/test_noise.py``).
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
        Seed of the neighbour search and of the trials' noise seeds. An audit is an experiment, not a
        release: its seeded noise is what makes it reproducible.
    neighbours : str
        ``natural`` (D is the data, D' adds the most revealing event) or ``worst-case`` (the pair built
        from the public bounds: every count at the cap C; needs a count cap).
    train_fraction : float
        Share of the trials that train the μ (GDP) test of a formal claim (its direction's covariance and
        its central threshold; at least 10, and at least 10 left); the rest evaluate it. The pointwise ε
        test, whose threshold sits in a tail, trains on half. The direction's mean shift comes from
        separate common-noise probes.
    worst_case_dim : int, optional
        d of the worst-case pair (default: the family's ``worst_case_dim``, else the data's d).
    """

    fit: FitConfig
    trials: int = 2000
    confidence: float = 0.95
    broken_factor: float | None = None
    candidates: int = 4
    seed: int = 0
    neighbours: str = "natural"
    train_fraction: float = 0.1
    worst_case_dim: int | None = None

    def __post_init__(self):
        if not self.fit.family.private:
            raise ConfigError("the audit needs a private method (cls adds no noise)")
        if self.fit.seed is None:  # the trials run seeded noise: calibrate the claim for that sampler
            object.__setattr__(self, "fit", replace(self.fit, seed=int(self.seed)))
        if int(self.trials) != self.trials or not 20 <= self.trials <= MAX_TRIALS:
            raise ConfigError(f"trials must be a whole number in 20…{MAX_TRIALS:,}, got {self.trials!r}")
        if not 0.5 <= self.confidence < 1:
            raise ConfigError(f"confidence must be in [0.5, 1), got {self.confidence!r}")
        if self.broken_factor is not None and not self.broken_factor > 1:
            raise ConfigError(f"the broken factor must be > 1, got {self.broken_factor!r}")
        if self.neighbours not in NEIGHBOURS:
            raise ConfigError(f"neighbours must be one of {', '.join(NEIGHBOURS)}, got {self.neighbours!r}")
        if not 0 < self.train_fraction < 1:
            raise ConfigError(f"train_fraction must be in (0, 1), got {self.train_fraction!r}")
        if self.worst_case_dim is not None and (int(self.worst_case_dim) != self.worst_case_dim
                                                or self.worst_case_dim < 1):
            raise ConfigError(f"worst_case_dim must be a whole number >= 1, got {self.worst_case_dim!r}")


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
    mu_claimed: float | None = None
    mu_lower_bound: float = 0.0
    neighbours: str = "natural"
    extra: dict = field(default_factory=dict)

    @property
    def epsilon_lower_bound_gdp(self) -> float:
        """ε at δ of the μ-GDP profile with the audited ``mu_lower_bound`` (0 when μ ≤ 0)."""
        return gaussian_epsilon(1.0 / self.mu_lower_bound, self.dp_delta, 1.0, 1) if self.mu_lower_bound > 0 else 0.0

    @property
    def violated(self) -> bool:
        """True when an audited lower bound exceeds the claim: the claim is false (at the confidence).

        Pointwise (ε, δ) for every calibration; for the formal one (a μ-GDP claim) also μ."""
        return self.epsilon_lower_bound > self.epsilon_claimed or (
            self.mu_claimed is not None and self.mu_lower_bound > self.mu_claimed)

    def verdict(self) -> str:
        """One plain sentence."""
        conf = f"{100 * self.confidence:.4g}%"
        if self.violated:
            leak = max(self.epsilon_lower_bound, self.epsilon_lower_bound_gdp if self.mu_claimed else 0.0)
            return (f"VIOLATION: with {conf} confidence the mechanism leaks ε ≥ {leak:.3g}, "
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
            "elapsed_s": self.elapsed_s, "neighbours": self.neighbours, "mu_claimed": self.mu_claimed,
            "mu_lower_bound": self.mu_lower_bound, "epsilon_lower_bound_gdp": self.epsilon_lower_bound_gdp,
            **self.extra,
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


def claimed_mu(report) -> float | None:
    """``μ = √K·S/σ`` of a formal report (its exact GDP claim); ``None`` for the paper calibrations."""
    if not report.formal or not report.sensitivity:
        return None
    mu = math.inf if report.sigma2 <= 0 else report.sensitivity * math.sqrt(report.iters) / math.sqrt(report.sigma2)
    cap_sigma = report.budget_split.get("cap_sigma")  # an automatic count cap's release composes with it
    return math.hypot(mu, 1.0 / cap_sigma) if cap_sigma else mu


def worst_case_fit(method: str, lags: int = 3, count_cap: int = 3, epsilon: float = 4.0) -> FitConfig:
    """Public settings under which a worst-case audit sees most of a formal method's claimed sensitivity:
    the family's ``worst_case_options`` and ``worst_case_lags`` (what ``dphawkes audit --worst-case`` uses
    unless told otherwise), with C, the formal calibration and ε (default 4).

    One release (K = 1) from ``U = 0``; a constraint radius so small (``B = r = 10⁻³``) that the
    U-dependent part of the DP-PGD/DP-CG bound vanishes; a constant step too small to reach the
    constraint (pgd-clip's estimate is then a linear image of its release). Clipped DP-PGD is observed at
    its :meth:`~dphawkes_core.estimators.family.Family.worst_case_state` instead of ``U = 0``.
    """
    family = get_family(method)
    return FitConfig(method=method, bin_size=1.0, lags=family.worst_case_lags or lags, count_cap=count_cap,
                     calibration="formal", epsilon=epsilon, **family.worst_case_options)


def worst_case_pair(dim: int, n_bins: int, bin_size: float, count_cap: int, empty_bin: bool = False
                    ) -> tuple[BinnedCounts, BinnedCounts, tuple[int, int, int]]:
    """Neighbours from the public bounds: every count at C in all ``n_bins`` bins, and the middle bin of
    dimension 0 at C − 1 in D and C in D' (the change enters one target row and p regressor rows, each
    at the largest norm the cap allows; the pair of the sensitivity property tests). With ``empty_bin``
    that bin goes from 0 to 1 instead: the largest change of per-bin *clipped* gradients at U = 0 (a
    per-bin family observed from its start), where the direction, not the size, of each term moves.
    Returns D, D' and the (sequence, bin, dim) of the added event."""
    if n_bins < 1 or count_cap < 1:
        raise ConfigError("the worst-case pair needs at least one bin and a count cap C >= 1")
    d_prime = np.full((n_bins, dim), count_cap, dtype=np.int64)
    cell = (0, n_bins // 2, 0)
    if empty_bin:
        d_prime[cell[1], cell[2]] = 1
    d = d_prime.copy()
    d[cell[1], cell[2]] -= 1
    pair = [BinnedCounts((x,), bin_size, 0, 0, count_cap) for x in (d, d_prime)]
    return pair[0], pair[1], cell


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
    direction: np.ndarray | None = None
    state: np.ndarray | None = None
    info: dict = field(default_factory=dict)
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
        if isinstance(stats, AutoCapData):
            return stats.output(int(seed))
        return observed_output(stats, replace(self.config.fit, seed=int(seed)), report, self.state)

    def result(self) -> AuditResult:
        """Distinguishing test and lower bound from the trials run (all of them must have run)."""
        if not self.done:
            raise AuditCancelled(f"the audit was stopped after {self.completed} of {self.config.trials} trials")
        return evaluate(np.asarray(self.outputs_d), np.asarray(self.outputs_d_prime), self)


def observed_output(stats, fit: FitConfig, report, state: np.ndarray | None = None) -> np.ndarray:
    """What the test sees of one run of the mechanism, as a vector: the family's
    :meth:`~dphawkes_core.estimators.family.Family.observed_release` with the noise of ``fit.seed`` (at
    ``state`` when given: the family's :meth:`~dphawkes_core.estimators.family.Family.worst_case_state`).

    What the privacy claim covers is the release; the estimate is post-processing of it and can hide
    much of what the release shows (DP-SSP's solve hides most of the A part; DP-CG's vertex keeps only
    the direction of the noisy gradient, which the signal dominates on worst-case data). So DP-SSP shows
    its released pieces, DP-PGD and DP-CG the transcript of noisy gradients, clipped DP-PGD its estimate
    (with K = 1 and a small constant step a linear image of its release), or at a state its releases.
    """
    rng = np.random.default_rng(fit.seed)
    if state is None:
        return fit.family.observed_release(stats, fit, report, rng)
    return fit.family.observed_release(stats, fit, report, rng, state=state)


def prepare_audit(events: Events, config: AuditConfig) -> AuditSession:
    """Bin the data, find the most revealing neighbour and calibrate the mechanism on both data sets
    (or, with ``neighbours="worst-case"``, build the worst-case pair on the data's d and number of bins)."""
    fit = config.fit
    if fit.family.statistics == "events":
        return prepare_event_audit(events, config)
    if fit.count_cap == AUTO:
        return _prepare_auto_cap(bin_events(events, fit.bin_size), config)
    binned = bin_events(events, fit.bin_size, fit.count_cap)
    if config.neighbours == "worst-case":
        return prepare_worst_case(config, worst_case_dim(config, binned.dim), binned.n_bins)
    stats_d = binned_stats(binned, fit.lags)
    claimed = privacy_report(stats_d, fit)
    report_d = _as_run(claimed, config.broken_factor)
    rng = np.random.default_rng(config.seed)
    best = None
    cells = candidate_cells(binned, fit.lags, config.candidates, rng)
    for cell in cells:
        stats_n = binned_stats(add_event(binned, *cell), fit.lags)
        report_n = _as_run(privacy_report(stats_n, fit), config.broken_factor)
        moved = common_noise_shift(stats_d, report_d, stats_n, report_n, fit)
        if best is None or np.linalg.norm(moved) > np.linalg.norm(best[0]):
            best = (moved, cell, stats_n, report_n)
    _, (s, b, j), stats_n, report_n = best
    moved = common_noise_shift(stats_d, report_d, stats_n, report_n, fit, DIRECTION_PROBES)
    neighbour = Neighbour(s, b, j, float(np.linalg.norm(moved)), len(cells))
    return AuditSession(config, stats_d, stats_n, report_d, report_n, neighbour, claimed, direction=moved)


def common_noise_shift(stats_d, report_d, stats_n, report_n, fit: FitConfig, probes: int = 2,
                       state: np.ndarray | None = None) -> np.ndarray:
    """Mean over ``probes`` noise draws of ``output(D') − output(D)`` under identical noise: the output's
    move caused by the event alone (the mean difference exactly for a mechanism linear in its noise, and
    an estimate of it otherwise, e.g. for DP-CG's normalised vertex)."""
    moves = []
    for seed in range(10**9 + 7, 10**9 + 7 + probes):
        probe = replace(fit, seed=seed)
        moves.append(observed_output(stats_n, probe, report_n, state)
                     - observed_output(stats_d, probe, report_d, state))
    return np.mean(moves, axis=0)


def worst_case_dim(config: AuditConfig, data_dim: int) -> int:
    """d of the worst-case pair: the audit's ``worst_case_dim``, else the family's, else the data's."""
    return int(config.worst_case_dim or config.fit.family.worst_case_dim or data_dim)


def prepare_worst_case(config: AuditConfig, dim: int, n_bins: int) -> AuditSession:
    """An audit session on the worst-case pair of :func:`worst_case_pair` for d dimensions and n bins
    (public numbers only: no data are read). A family with a
    :meth:`~dphawkes_core.estimators.family.Family.worst_case_state` is observed at that state, on the
    all-at-cap pair; one without, from its own start (a per-bin family on the empty-bin pair)."""
    fit = config.fit
    if fit.count_cap is None:
        raise ConfigError("the worst-case neighbours are built from the public count cap C: give one")
    state = fit.family.worst_case_state(dim, fit.lags, fit.count_cap, fit)
    d, d_prime, (s, b, j) = worst_case_pair(dim, n_bins, fit.bin_size, fit.count_cap,
                                            empty_bin=fit.family.per_bin and state is None)
    stats_d, stats_n = binned_stats(d, fit.lags), binned_stats(d_prime, fit.lags)
    claimed = privacy_report(stats_d, fit)
    report_d, report_n = (_as_run(privacy_report(st, fit), config.broken_factor) for st in (stats_d, stats_n))
    moved = common_noise_shift(stats_d, report_d, stats_n, report_n, fit, DIRECTION_PROBES, state)
    info = {"worst_case_dim": int(dim), "worst_case_bins": int(n_bins),
            "released_at_state": None if state is None else np.asarray(state).tolist()}
    return AuditSession(config, stats_d, stats_n, report_d, report_n, Neighbour(s, b, j, float(np.linalg.norm(moved)), 1),
                        claimed, direction=moved, state=state, info=info)


@dataclass
class AutoCapData:
    """One data set audited under ``count_cap="auto"``: each run chooses C on the unclipped counts (its own
    noise stream, as :func:`~dphawkes_core.estimators.bin_with_cap` does), clips at it and releases the
    statistics calibrated at that C. The test sees the release and C. ``broken_factor`` divides both
    noises. Statistics and reports are cached per C."""

    binned: BinnedCounts
    fit: FitConfig
    broken_factor: float | None = None
    by_cap: dict = field(default_factory=dict)

    def at_cap(self, cap: int) -> tuple:
        """Statistics of the counts clipped at ``cap`` and the report the release runs with."""
        if cap not in self.by_cap:
            clipped = replace(self.binned, counts=tuple(np.minimum(x, cap) for x in self.binned.counts), count_cap=cap)
            stats = binned_stats(clipped, self.fit.lags)
            self.by_cap[cap] = (stats, _as_run(privacy_report(stats, self.fit), self.broken_factor))
        return self.by_cap[cap]

    def output(self, seed: int) -> np.ndarray:
        """One run of the whole mechanism: the observed release, then the chosen C."""
        fit = self.fit
        sigma = cap_noise_sigma(fit.epsilon, fit.dp_delta, fit.count_cap_share) / (self.broken_factor or 1.0)
        cap = choose_cap(release_tail_counts(self.binned, fit.count_cap_max, sigma, cap_rng(seed)), sigma)
        stats, report = self.at_cap(cap)
        return np.append(observed_output(stats, replace(fit, seed=seed), report), cap)


def _prepare_auto_cap(binned: BinnedCounts, config: AuditConfig) -> AuditSession:
    """The natural neighbours of :func:`prepare_audit` for the automatic-cap mechanism."""
    if config.neighbours == "worst-case":
        raise ConfigError("the worst-case neighbours need a public count cap C, not 'auto'")
    data_d = AutoCapData(binned, config.fit, config.broken_factor)
    best = None
    cells = candidate_cells(binned, config.fit.lags, config.candidates, np.random.default_rng(config.seed))
    for cell in cells:
        data_n = AutoCapData(add_event(binned, *cell), config.fit, config.broken_factor)
        moved = np.mean([data_n.output(seed) - data_d.output(seed) for seed in (10**9 + 7, 10**9 + 9)], axis=0)
        if best is None or np.linalg.norm(moved) > np.linalg.norm(best[0]):
            best = (moved, cell, data_n)
    moved, (s, b, j), data_n = best
    cap = int(data_d.output(config.seed)[-1])
    stats_d, report_d = data_d.at_cap(cap)
    claimed = privacy_report(stats_d, config.fit)
    return AuditSession(config, data_d, data_n, report_d, data_n.at_cap(cap)[1],
                        Neighbour(s, b, j, float(np.linalg.norm(moved)), len(cells)), claimed, direction=moved)


# --- families fitted to exact event times (``family.statistics == "events"``) ----------------------------------

def worst_case_lags(family) -> int:
    """p (B) of the worst-case audit unless given: the family's ``worst_case_lags`` (ctls: 25, where its
    adversarial events reach 0.95 of its bound for d = 1 … 3, against 0.84 at B = 3), else 3."""
    return int(family.worst_case_lags or 3)


def add_event_time(events: Events, sequence: int, time: float, dim: int) -> Events:
    """The neighbour with one more event at ``time`` in dimension ``dim`` of ``sequence`` (inside its window)."""
    seq = events.sequences[sequence]
    if not 0 <= time <= seq.end_time:
        raise ConfigError(f"an added event must lie in its sequence's window [0, {seq.end_time:g}], got {time!r}")
    times = list(seq.times)
    times[dim] = np.sort(np.append(np.asarray(times[dim], dtype=float), float(time)))
    sequences = list(events.sequences)
    sequences[sequence] = replace(seq, times=tuple(times))
    return replace(events, sequences=tuple(sequences))


def candidate_times(events: Events, bin_size: float, lags: int, extra: int, rng: np.random.Generator) -> list:
    """Adversarial ``(sequence, time, dim)`` candidates for an added event: in every bin of
    :func:`candidate_cells` (on the w-bin counts, uncapped: under keep-first-C an event early in a full bin
    still enters, evicting the bin's last kept one), at the bin's start (first in its bin: always kept) and at
    its middle."""
    binned = bin_events(events, bin_size)
    cells = candidate_cells(binned, lags, extra, rng)
    return [(s, (b + offset) * bin_size, j) for s, b, j in cells for offset in (0.001, 0.5)
            if (b + offset) * bin_size <= events.sequences[s].end_time]


def added_event(d_events: Events, d_prime: Events) -> tuple[int, float, int]:
    """``(sequence, time, dim)`` of the event D' has and D has not (D' = D plus one event)."""
    for s, (a, b) in enumerate(zip(d_events.sequences, d_prime.sequences)):
        for j, (x, y) in enumerate(zip(a.times, b.times)):
            if len(y) == len(x) + 1:
                x, y = np.sort(x), np.sort(y)
                at = int(np.argmax(np.append(x, np.inf) != y))  # the first place the two differ
                return s, float(y[at]), j
    raise ConfigError("the worst-case events are not neighbours: D' must be D plus one event")


def prepare_event_audit(events: Events, config: AuditConfig) -> AuditSession:
    """:func:`prepare_audit` for a family fitted to exact event times: its statistics come from the events
    (:meth:`~dphawkes_core.estimators.family.Family.prepare_stats`), so D' adds an event, not a count. Natural
    neighbours: the added event that moves the release most among :func:`candidate_times`; worst case: the
    family's ``worst_case_events`` (:func:`prepare_worst_case_events`); ``count_cap="auto"``:
    :class:`AutoCapEvents`."""
    fit = config.fit
    family = fit.family
    if fit.count_cap == AUTO:
        return _prepare_auto_cap_events(events, config)
    if config.neighbours == "worst-case":
        return prepare_worst_case_events(config, worst_case_dim(config, events.dim))
    stats_d = family.prepare_stats(events, fit)[0]
    claimed = privacy_report(stats_d, fit)
    report_d = _as_run(claimed, config.broken_factor)
    candidates = candidate_times(events, fit.bin_size, fit.lags, config.candidates, np.random.default_rng(config.seed))
    best = None
    for s, t, j in candidates:
        stats_n = family.prepare_stats(add_event_time(events, s, t, j), fit)[0]
        report_n = _as_run(privacy_report(stats_n, fit), config.broken_factor)
        moved = common_noise_shift(stats_d, report_d, stats_n, report_n, fit)
        if best is None or np.linalg.norm(moved) > np.linalg.norm(best[0]):
            best = (moved, (s, t, j), stats_n, report_n)
    _, (s, t, j), stats_n, report_n = best
    moved = common_noise_shift(stats_d, report_d, stats_n, report_n, fit, DIRECTION_PROBES)
    neighbour = Neighbour(s, int(t // fit.bin_size), j, float(np.linalg.norm(moved)), len(candidates))
    return AuditSession(config, stats_d, stats_n, report_d, report_n, neighbour, claimed, direction=moved,
                        info={"added_event_time": t})


def prepare_worst_case_events(config: AuditConfig, dim: int) -> AuditSession:
    """An audit session on the family's adversarial events (``family.worst_case_events(fit, dim)``: D' adds one
    event, built from the public d, B, C and w alone). Reports the fraction of the claimed sensitivity the pair
    moves the release by (``worst_case_reached``: what makes a noise cut detectable)."""
    fit = config.fit
    family = fit.family
    if fit.count_cap is None:
        raise ConfigError("the worst-case neighbours are built from the public count cap C: give one")
    if not callable(getattr(family, "worst_case_events", None)):
        raise ConfigError(f"{family.label} documents no adversarial events (worst_case_events): no worst-case audit")
    d_events, d_prime = family.worst_case_events(fit, dim)
    stats_d, stats_n = (family.prepare_stats(e, fit)[0] for e in (d_events, d_prime))
    claimed = privacy_report(stats_d, fit)
    report_d, report_n = (_as_run(privacy_report(st, fit), config.broken_factor) for st in (stats_d, stats_n))
    moved = common_noise_shift(stats_d, report_d, stats_n, report_n, fit, DIRECTION_PROBES)
    s, t, j = added_event(d_events, d_prime)
    shift = float(np.linalg.norm(moved))
    info = {"worst_case_dim": int(dim), "worst_case_lags": int(fit.lags), "worst_case_count_cap": int(fit.count_cap),
            "worst_case_bin_size": float(fit.bin_size), "worst_case_events": int(d_prime.n_events),
            "added_event_time": t,
            "worst_case_reached": shift / claimed.sensitivity if claimed.sensitivity else None}
    return AuditSession(config, stats_d, stats_n, report_d, report_n, Neighbour(s, int(t // fit.bin_size), j, shift, 1),
                        claimed, direction=moved, info=info)


@dataclass
class AutoCapEvents(AutoCapData):
    """:class:`AutoCapData` for a family fitted to exact event times: each run chooses C from the w-bin counts
    of ``events`` (``binned``: :func:`~dphawkes_core.binning.bin_sparse`, as the family's ``prepare_stats``
    does), then releases the family's statistics of the events kept under that C."""

    events: Events | None = None

    def at_cap(self, cap: int) -> tuple:
        if cap not in self.by_cap:
            stats = self.fit.family.prepare_stats(self.events, replace(self.fit, count_cap=int(cap)))[0]
            self.by_cap[cap] = (stats, _as_run(privacy_report(stats, self.fit), self.broken_factor))
        return self.by_cap[cap]


def _prepare_auto_cap_events(events: Events, config: AuditConfig) -> AuditSession:
    """The natural neighbours of :func:`prepare_event_audit` for the automatic-cap mechanism."""
    if config.neighbours == "worst-case":
        raise ConfigError("the worst-case neighbours need a public count cap C, not 'auto'")
    fit = config.fit

    def data(ev: Events) -> AutoCapEvents:
        return AutoCapEvents(bin_sparse(ev, fit.bin_size), fit, config.broken_factor, events=ev)

    data_d = data(events)
    best = None
    candidates = candidate_times(events, fit.bin_size, fit.lags, config.candidates, np.random.default_rng(config.seed))
    for s, t, j in candidates:
        data_n = data(add_event_time(events, s, t, j))
        moved = np.mean([data_n.output(seed) - data_d.output(seed) for seed in (10**9 + 7, 10**9 + 9)], axis=0)
        if best is None or np.linalg.norm(moved) > np.linalg.norm(best[0]):
            best = (moved, (s, t, j), data_n)
    moved, (s, t, j), data_n = best
    cap = int(data_d.output(config.seed)[-1])
    stats_d, report_d = data_d.at_cap(cap)
    claimed = privacy_report(stats_d, fit)
    return AuditSession(config, data_d, data_n, report_d, data_n.at_cap(cap)[1],
                        Neighbour(s, int(t // fit.bin_size), j, float(np.linalg.norm(moved)), len(candidates)),
                        claimed, direction=moved, info={"added_event_time": t})


def _as_run(report, broken_factor):
    """The report the mechanism runs with: the calibrated one, or its noise divided by the broken factor
    (ε, the claim, is left as calibrated)."""
    return replace(report, sigma2=report.sigma2 / broken_factor**2) if broken_factor else report


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


def evaluate(outputs_d: np.ndarray, outputs_dp: np.ndarray, session: AuditSession) -> AuditResult:
    """The distinguishing tests, each trained on the first trials and evaluated on the rest.

    The pointwise test (every claim) trains on the first half: a threshold that maximises the ε bound on
    those trials; its FPR and FNR on the second half get Clopper–Pearson bounds at ``α/2`` each (paper
    calibrations: an (ε, δ) claim) or ``α/4`` each (formal). The formal calibration claims μ-GDP and gets
    a second test, trained on the first ``train_fraction`` (:class:`AuditConfig`): the threshold midway
    between the training medians, whose mean error ``(FP + FN)/2n`` on the other trials gets a bound at
    ``α/2`` (:func:`pooled_mu_lower_bound`, the tightest for a Gaussian shift). All bounds hold together
    with confidence ``1 − α``. (Pooling is valid: a sum of Bernoulli trials with unequal rates is more
    concentrated than the binomial with their mean rate, Hoeffding 1956.)"""
    cfg = session.config
    alpha = 1 - cfg.confidence
    report = session.claimed
    mu_claim = claimed_mu(report)
    gdp = mu_claim is not None
    half = outputs_d.shape[0] // 2
    train_d, train_dp, test_d, test_dp = _projected(outputs_d, outputs_dp, half, session.direction)
    each = alpha / 4 if gdp else alpha / 2
    threshold = best_threshold(train_d, train_dp, 2 * each, cfg.fit.dp_delta)
    fp, fn = int(np.sum(test_d > threshold)), int(np.sum(test_dp <= threshold))
    n_d, n_dp = test_d.size, test_dp.size
    fpr_ub, fnr_ub = clopper_pearson_upper(fp, n_d, each), clopper_pearson_upper(fn, n_dp, each)
    extra = {"sigma2_used_d_prime": float(session.report_d_prime.sigma2)}
    if gdp:
        n_train = training_trials(outputs_d.shape[0], cfg.train_fraction)
        mu_train_d, mu_train_dp, mu_test_d, mu_test_dp = _projected(outputs_d, outputs_dp, n_train, session.direction)
        middle = balanced_threshold(mu_train_d, mu_train_dp)
        errors = int(np.sum(mu_test_d > middle)) + int(np.sum(mu_test_dp <= middle))
        n_eval = mu_test_d.size + mu_test_dp.size
        error_ub = clopper_pearson_upper(errors, n_eval, alpha / 2)
        mu_lb = pooled_mu_lower_bound(error_ub)
        extra.update(mu_train_trials=n_train, mu_threshold=middle, mean_error=errors / n_eval,
                     mean_error_upper=error_ub)
    else:
        mu_lb = mu_lower_bound(fpr_ub, fnr_ub)
    extra.update(session.info)
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
        mu_claimed=mu_claim, mu_lower_bound=mu_lb, neighbours=cfg.neighbours, extra=extra,
    )


def _projected(outputs_d, outputs_dp, n_train, direction):
    """Training and evaluation scores: the outputs projected on :func:`projection` fitted to the first
    ``n_train`` trials."""
    w = projection(outputs_d[:n_train], outputs_dp[:n_train], direction)
    return outputs_d[:n_train] @ w, outputs_dp[:n_train] @ w, outputs_d[n_train:] @ w, outputs_dp[n_train:] @ w


def run_audit(events: Events, config: AuditConfig, progress: Callable[[int, int], None] | None = None,
              should_stop: Callable[[], bool] | None = None, chunk: int = 100) -> AuditResult:
    """Prepare and run a whole audit, reporting progress and stopping when ``should_stop()`` is true.

    Raises
    ------
    AuditCancelled
        When stopped before all trials ran.
    """
    start = time.perf_counter()
    result = run_session(prepare_audit(events, config), progress, should_stop, chunk)
    return replace(result, elapsed_s=time.perf_counter() - start)


def run_session(session: AuditSession, progress: Callable[[int, int], None] | None = None,
                should_stop: Callable[[], bool] | None = None, chunk: int = 100) -> AuditResult:
    """Run every trial of a prepared session (as :func:`run_audit`) and evaluate the test."""
    trials = session.config.trials
    while not session.done:
        if should_stop is not None and should_stop():
            raise AuditCancelled(f"the audit was stopped after {session.completed} of {trials} trials")
        session.run_chunk(chunk)
        if progress is not None:
            progress(session.completed, trials)
    return session.result()


def prepare_sequence_audit(events: Events, config: AuditConfig, index: int, replacement) -> AuditSession:
    """An audit of a sequence-level fit (``privacy_unit="sequence"``) on sequence neighbours: D is the data,
    D' the data with sequence ``index`` replaced by ``replacement`` (an
    :class:`~dphawkes_core.events.EventSequence` on the same window). The test sees the fit's release
    (``ssp_release``: ``full`` or the sequence unit's ``lagged`` one)."""
    fit = config.fit
    if fit.privacy_unit != "sequence":
        raise ConfigError("sequence neighbours audit a fit with privacy_unit='sequence'")
    if not 0 <= index < events.n_sequences:
        raise ConfigError(f"there is no sequence {index} to replace (the data have {events.n_sequences})")
    if replacement.end_time != events.sequences[index].end_time:
        raise ConfigError("the replacement sequence must have the replaced sequence's (public) window")
    sequences = list(events.sequences)
    sequences[index] = replacement
    stats_d = prepare_stats(events, fit)[0]
    stats_n = prepare_stats(replace(events, sequences=tuple(sequences)), fit)[0]
    claimed = privacy_report(stats_d, fit)
    report_d, report_n = (_as_run(privacy_report(st, fit), config.broken_factor) for st in (stats_d, stats_n))
    moved = common_noise_shift(stats_d, report_d, stats_n, report_n, fit, DIRECTION_PROBES)
    neighbour = Neighbour(index, -1, -1, float(np.linalg.norm(moved)), 1)  # the whole sequence: no bin, no dim
    return AuditSession(config, stats_d, stats_n, report_d, report_n, neighbour, claimed, direction=moved)
