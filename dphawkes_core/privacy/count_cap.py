"""A count cap C chosen privately from the data (``FitConfig.count_cap = "auto"``).

The formal calibrations need a public cap C on each bin count. When the user has none, a stated share
of ε (default 5 %) buys one:

1. Release the tail counts ``T[c] = #{(bin, dimension): X ≥ c}`` for ``c = 1 … c_max`` (a public range)
   with Gaussian noise. One event moves one count from v to v+1, which changes exactly one ``T`` entry
   (``T[v+1]``) by one: the L2 sensitivity is 1, whatever the data, so the noise std
   ``σ_cap = z(share·ε, δ)`` depends only on public numbers.
2. Post-processing (:func:`choose_cap`): ``N̂ = Σ_c T̂[c]`` estimates the number of events, and C is the smallest
   ``c >= 1`` with ``T̂[c+1] <= max(min(κ·z, 10 %·N̂), 2σ_cap)`` (``c_max`` when no c qualifies). ``T̂[c+1]``
   counts the (dimension, bin) pairs holding more than c events: raising C from c to c + 1 keeps that many more
   events, and costs the release noise in proportion to C (every family's sensitivity grows about linearly in C).
   So the trade-off is a fixed count of clipped bins per unit of the release's noise multiplier z (the Gaussian
   release after the cap's share: :func:`clip_target`), κ = 350 bins (chosen on tuning processes at 10⁴–10⁶ events
   and ε = 1 and 8, ``docs/accuracy.md``, "The automatic cap"), not a fraction of the events: as the data grow the
   same noise allows a larger C, and C grows. The step-kernel families scale κ by their release's noise against one
   event's signal at their (w, s) (:func:`step_noise_scale`; 1 at (0.25, 5), where κ was chosen). The 10 % guard
   keeps small data from being capped at 1 by default (ctls's is 1 %: its C is never below the rule before's, where
   a lower C was measured to hurt it; :class:`CapRule`); 2σ_cap is what the tail counts' noise can resolve. (The rule
   before, ``T̂[c+1] <= max(1 %·N̂, 2σ_cap)``, kept C at 2–3 on 10⁶ events, where its bias was most of the error:
   ``choose_cap`` with ``target=None``.)
3. The counts are clipped at C and the statistics are released with the rest of the budget; the two
   Gaussian releases compose exactly (:func:`~dphawkes_core.privacy.calibration.compose_count_cap`, the
   accountant's :func:`~dphawkes_core.privacy.accounting.split`).

The tail counts are integers: in an unseeded fit drawn from the discrete Gaussian
(:func:`~dphawkes_core.privacy.noise.discrete_noise`, the lagged DP-SSP) they take OpenDP's exact discrete Gaussian
with ``σ_cap = 1/√(2ρ(share·ε, δ))`` and both releases compose in zCDP.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np

from dphawkes_core.errors import ConfigError
from dphawkes_core.privacy.accounting import gaussian_multiplier, split
from dphawkes_core.privacy.noise import NoiseSource, as_source, noise_source, uses_discrete
from dphawkes_core.statistics.binning import BinnedCounts, SparseCounts, tail_counts
from dphawkes_core.validation import check_epsilon_delta, check_share

AUTO = "auto"
AUTO_CAP_SHARE = 0.05  # share of ε spent on the cap
AUTO_CAP_MAX = 64  # public range c = 1 … c_max of the released tail counts
AUTO_CAP_CLIPPED_FRACTION = 0.01  # ρ of the rule before the target count (``choose_cap(target=None)``)
AUTO_CAP_TARGET = 350.0  # κ: clipped (dimension, bin) pairs per unit of the release's noise multiplier z
AUTO_CAP_MAX_FRACTION = 0.1  # the target count never clips more than about this fraction of the events
STEP_SCALE_WIDTH, STEP_SCALE_SUPPORT = 0.25, 5.0  # the (w, s) of the step-kernel families where κ was chosen
_NOISE_FLOOR = 2.0  # tail counts below this many noise std are not told apart from zero
_SEED_STREAM = 0xCA9  # the cap's noise is drawn from its own stream of a seeded fit


@dataclass(frozen=True)
class AutoCap:
    """The privately chosen cap and what it cost.

    Attributes
    ----------
    count_cap : int
        The chosen C.
    share : float
        Share of ε spent on it.
    sigma : float
        Noise std of each released tail count (sensitivity 1).
    max_cap : int
        The public range ``c_max``.
    clipped_target : float
        The rule's target count κ·z·scale of clipped (dimension, bin) pairs (:func:`clip_target`).
    max_clipped_fraction : float
        The rule's guard (:class:`CapRule`).
    """

    count_cap: int
    share: float
    sigma: float
    max_cap: int
    clipped_target: float
    max_clipped_fraction: float = AUTO_CAP_MAX_FRACTION

    def to_dict(self) -> dict:
        """Plain dict for the result info and JSON export."""
        return {"count_cap": self.count_cap, "share": self.share, "sigma": self.sigma, "max_cap": self.max_cap,
                "clipped_target": self.clipped_target, "max_clipped_fraction": self.max_clipped_fraction}


@dataclass(frozen=True)
class CapRule:
    """A family's public terms of the rule (:func:`choose_cap`), from its config
    (:meth:`~dphawkes_core.estimators.family.Family.cap_rule`).

    Attributes
    ----------
    scale : float
        The target's scale (:func:`clip_target`): the release's noise per unit of C against one event's signal, 1
        where κ was chosen.
    max_fraction : float
        The guard: never more than about this fraction of the events clipped (ctls: the 1 % of the rule before, so
        that its C is never below that rule's: ``docs/accuracy.md``, "The automatic cap").
    """

    scale: float = 1.0
    max_fraction: float = AUTO_CAP_MAX_FRACTION


def step_cap_rule(bin_size: float, support: float, max_fraction: float = AUTO_CAP_MAX_FRACTION) -> CapRule:
    """The rule's terms for a step-kernel release at (w, s): :func:`step_noise_scale` and the guard."""
    return CapRule(step_noise_scale(bin_size, support), float(max_fraction))


@functools.lru_cache(maxsize=256)  # public numbers only; each page render asks again (a root search)
def cap_noise_sigma(epsilon: float, delta: float, share: float, discrete: bool = False) -> float:
    """Noise std of the tail counts: the Gaussian mechanism of sensitivity 1 at ``(share·ε, δ)`` (``discrete``:
    the discrete Gaussian whose ρ-zCDP converts to ``(share·ε, δ)``).

    Only public numbers go in.
    """
    check_epsilon_delta(epsilon, delta)
    check_share(share)
    return gaussian_multiplier(share * epsilon, delta, discrete)


@functools.lru_cache(maxsize=256)  # public numbers only (a root search of the accountant's split)
def clip_target(epsilon: float, delta: float, share: float, discrete: bool = False, scale: float = 1.0) -> float:
    """The rule's target count ``κ·z·scale`` of clipped (dimension, bin) pairs: κ = :data:`AUTO_CAP_TARGET` times the
    noise multiplier z of the release after the cap's share (the accountant's
    :func:`~dphawkes_core.privacy.accounting.split`), times the family's public ``scale`` of its release's noise
    against one event's signal (1 where κ was chosen; :class:`CapRule`).
    Only public numbers go in."""
    return AUTO_CAP_TARGET * float(scale) * split(epsilon, delta, share, discrete, what="the count cap").rest_multiplier


def step_noise_scale(bin_size: float, support: float) -> float:
    """The public scale of a step-kernel release's noise against one event's signal, relative to (w, s) = (0.25, 5),
    where κ was chosen: ``√(s/w)/w`` over its value there. Their sensitivities grow like ``C·√B`` (B = s/w lags)
    while a pair count or a bin product of one event grows like w, so a wider bin makes each unit of C cheaper in
    noise and the same noise pays for fewer clipped bins (``docs/accuracy.md``, "The automatic cap")."""
    w, s = float(bin_size), float(support)
    return math.sqrt(s / w) / w / (math.sqrt(STEP_SCALE_SUPPORT / STEP_SCALE_WIDTH) / STEP_SCALE_WIDTH)


def choose_cap(noisy_tails: np.ndarray, sigma: float, target: float | None,
               clipped_fraction: float = AUTO_CAP_CLIPPED_FRACTION, max_fraction: float = AUTO_CAP_MAX_FRACTION) -> int:
    """Smallest ``c >= 1`` with ``T̂[c+1] <= max(min(target, g·N̂), 2σ)``, ``N̂ = Σ T̂``, g = ``max_fraction`` (10 %;
    post-processing only; module docstring). ``target=None``: the rule before it, ``T̂[c+1] <= max(ρ·N̂, 2σ)`` with
    ρ = ``clipped_fraction`` (the benchmarks' comparison)."""
    max_cap = noisy_tails.size
    events = max(float(np.sum(noisy_tails)), 0.0)
    allowed = clipped_fraction * events if target is None else min(float(target), float(max_fraction) * events)
    threshold = max(allowed, _NOISE_FLOOR * sigma)
    for cap in range(1, max_cap):
        if noisy_tails[cap] <= threshold:  # noisy_tails[cap] is T̂[cap+1]
            return cap
    return max_cap


def dp_count_cap(counts: SparseCounts | BinnedCounts, epsilon: float, delta: float, rng: np.random.Generator,
                 share: float = AUTO_CAP_SHARE, max_cap: int = AUTO_CAP_MAX, rule: CapRule = CapRule()) -> AutoCap:
    """Choose C from the unclipped ``counts`` with a Gaussian release of the tail counts (module docstring).

    Parameters
    ----------
    counts : SparseCounts or BinnedCounts
        Bin counts, not clipped.
    epsilon, delta : float
        The whole budget of the fit; ``share·ε`` is spent here.
    rng : NoiseSource or numpy.random.Generator
        Noise source (see :func:`cap_rng`); a discrete one draws the discrete Gaussian.
    share : float
        Share of ε spent on the cap.
    max_cap : int
        Public range of the released tail counts.
    rule : CapRule
        The family's public terms of the rule (its target's scale and guard).
    """
    if int(max_cap) != max_cap or max_cap < 1:
        raise ConfigError(f"the largest automatic count cap must be a positive integer, got {max_cap!r}")
    return cap_from_tails(tail_counts(counts, int(max_cap)), epsilon, delta, rng, share, rule)


def cap_from_tails(tails: np.ndarray, epsilon: float, delta: float, rng: np.random.Generator,
                   share: float = AUTO_CAP_SHARE, rule: CapRule = CapRule()) -> AutoCap:
    """:func:`dp_count_cap` from already counted tails ``T[c]``, ``c = 1 … c_max`` (``c_max = tails.size``):
    the Gaussian release (discrete when ``rng`` is) and the choice of C under the family's public ``rule``."""
    discrete = uses_discrete(rng)
    sigma = cap_noise_sigma(epsilon, delta, share, discrete)
    target = clip_target(epsilon, delta, share, discrete, rule.scale)
    cap = choose_cap(noisy_tails(tails, sigma, rng), sigma, target, max_fraction=rule.max_fraction)
    return AutoCap(cap, float(share), sigma, int(tails.size), target, float(rule.max_fraction))


def release_tail_counts(counts: SparseCounts | BinnedCounts, max_cap: int, sigma: float,
                        rng: np.random.Generator) -> np.ndarray:
    """The Gaussian release: :func:`tail_counts` plus noise of std σ on each entry."""
    return noisy_tails(tail_counts(counts, max_cap), sigma, rng)


def noisy_tails(tails: np.ndarray, sigma: float, rng: NoiseSource | np.random.Generator) -> np.ndarray:
    """Tail counts plus Gaussian noise of std σ on each entry (sensitivity 1: one event moves one entry by 1):
    the exact discrete Gaussian when ``rng`` is discrete (the counts are integers), else ``rng``'s normals."""
    if uses_discrete(rng):
        return as_source(rng).discrete_gaussian(tails, sigma).astype(float)
    return tails + sigma * rng.standard_normal(tails.size)


def cap_rng(seed: int | None, discrete: bool = False) -> NoiseSource:
    """The cap's noise: the OS CSPRNG (discrete Gaussian when ``discrete``: the fit is drawn from it,
    :func:`~dphawkes_core.privacy.noise.discrete_noise`), or numpy's stream of a seeded fit apart from the release's."""
    return noise_source(None if seed is None else (int(seed), _SEED_STREAM), discrete)
