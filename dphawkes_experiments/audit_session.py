"""A privacy audit's pieces shared by every kind of neighbour: its settings (:class:`AuditConfig`), the neighbour
found (:class:`Neighbour`), the prepared session that runs the trials in chunks (:class:`AuditSession`), the
mechanism's observed release (:func:`observed_output`), the test's evaluation (:func:`evaluate`) and its
result (:class:`AuditResult`). How the neighbours are built: :mod:`dphawkes_experiments.audit` (binned counts,
worst cases, sequences) and :mod:`dphawkes_experiments.audit_events` (exact event times).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field, replace

import numpy as np

from dphawkes_core.errors import ConfigError, DPHawkesError
from dphawkes_core.estimators import FitConfig, binned_stats, privacy_report
from dphawkes_core.privacy.calibration import gaussian_epsilon
from dphawkes_core.privacy.count_cap import cap_noise_sigma, cap_rng, choose_cap, clip_target, release_tail_counts
from dphawkes_core.privacy.noise import NUMPY_SAMPLER, SEEDED_DISCRETE_SAMPLER, SeededNoise, discrete_noise
from dphawkes_core.statistics.binning import BinnedCounts

from .audit_statistics import (
    balanced_threshold,
    best_threshold,
    clopper_pearson_upper,
    epsilon_lower_bound,
    mu_lower_bound,
    pooled_mu_lower_bound,
    projection,
    training_trials,
)

MAX_TRIALS = 200_000
NEIGHBOURS = ("natural", "worst-case")
DIRECTION_PROBES = 32  # common-noise draws that estimate the test direction (mean difference)


class AuditCancelled(DPHawkesError):
    """The audit was stopped before all trials ran."""


@dataclass(frozen=True)
class AuditConfig:
    """What to audit and how hard.

    Attributes
    ----------
    fit : FitConfig
        The private mechanism (method, calibration, ε or σ², δ, K, B/r/G, count cap …). Its noise is seeded in
        every trial (an unseeded fit is given the audit's seed). An unseeded fit is audited as it would be released:
        when the release draws the discrete Gaussian (an unseeded lagged DP-SSP,
        :func:`~dphawkes_core.privacy.noise.discrete_noise`)
        the claim is the release's (discrete σ, zCDP) and the trials draw the discrete Gaussian too, from a seeded
        sampler of the same law (:func:`~dphawkes_core.privacy.noise.seeded_discrete_gaussian`; OpenDP's cannot be
        seeded). A seeded fit is audited with its own continuous noise and calibration.
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
    discrete : bool, optional
        Whether the audited release draws the discrete Gaussian (default: what the unseeded ``fit`` would draw,
        :func:`~dphawkes_core.privacy.noise.discrete_noise`).
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
    discrete: bool | None = None

    def __post_init__(self):
        if not self.fit.family.privacy.private:
            raise ConfigError("the audit needs a private method (cls adds no noise)")
        if self.discrete is None:  # as released: read before the audit's seed is set
            object.__setattr__(self, "discrete", discrete_noise(self.fit))
        if self.fit.seed is None:  # the trials run seeded noise
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


def audited_report(stats, config: AuditConfig):
    """The privacy report the audit holds the mechanism to: the release's (:attr:`AuditConfig.discrete`: the
    discrete Gaussian's σ, calibrated in zCDP), else that of the seeded fit the trials run."""
    return privacy_report(stats, replace(config.fit, seed=None) if config.discrete else config.fit)


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
    def epsilon_audited(self) -> float:
        """The audit's one headline lower bound on ε: the larger of the pointwise (ε, δ) bound and, for a formal
        (μ-GDP) claim, the ε of the audited μ — what the verdict, the page's metric and its chart all show."""
        return max(self.epsilon_lower_bound, self.epsilon_lower_bound_gdp if self.mu_claimed is not None else 0.0)

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
            return (f"VIOLATION: with {conf} confidence the mechanism leaks ε ≥ {self.epsilon_audited:.3g}, "
                    f"more than the claimed ε = {self.epsilon_claimed:.3g}.")
        return (f"No violation found: the audited lower bound ε ≥ {self.epsilon_audited:.3g} ({conf} confidence) "
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


def claimed_mu(report) -> float | None:
    """``μ = √K·S/σ`` of a formal report (its exact GDP claim); ``None`` for the paper calibrations."""
    if not report.formal or not report.sensitivity:
        return None
    mu = math.inf if report.sigma2 <= 0 else report.sensitivity * math.sqrt(report.iters) / math.sqrt(report.sigma2)
    mu = math.hypot(mu, *(1.0 / z for z, _ in report.further))  # releases after the first compose with it
    split = report.budget_split  # an automatic count cap's release composes with it
    return math.hypot(mu, 1.0 / split.cap_sigma) if split else mu


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
    :meth:`~dphawkes_core.estimators.family.Family.noisy_output` with the noise of ``fit.seed`` (at
    ``state`` when given: the family's :meth:`~dphawkes_core.estimators.family.Family.worst_case_state`).

    What the privacy claim covers is the release; the estimate is post-processing of it and can hide
    much of what the release shows (DP-SSP's solve hides most of the A part; DP-CG's vertex keeps only
    the direction of the noisy gradient, which the signal dominates on worst-case data). So DP-SSP shows
    its released pieces, DP-PGD and DP-CG the transcript of noisy gradients, clipped DP-PGD its estimate
    (with K = 1 and a small constant step a linear image of its release), or at a state its releases.
    """
    rng = np.random.default_rng(fit.seed)
    if report.discrete:  # the release's law, seeded: the discrete Gaussian on numpy's generator
        rng = SeededNoise(rng, discrete=True)
    if state is None:
        return fit.family.noisy_output(stats, fit, report, rng)
    return fit.family.noisy_output(stats, fit, report, rng, state=state)


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
    return int(config.worst_case_dim or config.fit.family.audit_hints.worst_case_dim or data_dim)


@dataclass
class AutoCapData:
    """One data set audited under ``count_cap="auto"``: each run chooses C on the unclipped counts (its own
    noise stream, as :func:`~dphawkes_core.estimators.bin_with_cap` does), clips at it and releases the
    statistics calibrated at that C. The test sees the release and C. ``broken_factor`` divides both
    noises. Statistics and reports are cached per C."""

    binned: BinnedCounts
    config: AuditConfig
    broken_factor: float | None = None
    by_cap: dict = field(default_factory=dict)

    @property
    def fit(self) -> FitConfig:
        """The audited (seeded) fit."""
        return self.config.fit

    def at_cap(self, cap: int) -> tuple:
        """Statistics of the counts clipped at ``cap`` and the report the release runs with."""
        if cap not in self.by_cap:
            clipped = replace(self.binned, counts=tuple(np.minimum(x, cap) for x in self.binned.counts), count_cap=cap)
            stats = binned_stats(clipped, self.fit.lags)
            self.by_cap[cap] = (stats, _as_run(audited_report(stats, self.config), self.broken_factor))
        return self.by_cap[cap]

    def output(self, seed: int) -> np.ndarray:
        """One run of the whole mechanism: the observed release, then the chosen C (the tail counts drawn as the
        release draws them: discrete Gaussian for a discrete release)."""
        fit, discrete = self.fit, self.config.discrete
        sigma = cap_noise_sigma(fit.epsilon, fit.dp_delta, fit.count_cap_share, discrete) / (self.broken_factor or 1.0)
        rng = SeededNoise(cap_rng(seed).generator, discrete=True) if discrete else cap_rng(seed)
        rule = fit.family.cap_rule(fit)
        target = clip_target(fit.epsilon, fit.dp_delta, fit.count_cap_share, discrete, rule.scale)
        cap = choose_cap(release_tail_counts(self.binned, fit.count_cap_max, sigma, rng), sigma, target,
                         max_fraction=rule.max_fraction)
        stats, report = self.at_cap(cap)
        return np.append(observed_output(stats, replace(fit, seed=seed), report), cap)


def _as_run(report, broken_factor):
    """The report the mechanism runs with: the calibrated one, or its noise divided by the broken factor
    (ε, the claim, is left as calibrated)."""
    if not broken_factor:
        return report
    return replace(report, sigma2=report.sigma2 / broken_factor / broken_factor)  # a huge factor: 0, no overflow


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
    extra = {"sigma2_used_d_prime": float(session.report_d_prime.sigma2),
             "sampler": SEEDED_DISCRETE_SAMPLER if report.discrete else NUMPY_SAMPLER}
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
