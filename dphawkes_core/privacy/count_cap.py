"""A count cap C chosen privately from the data (``FitConfig.count_cap = "auto"``).

The formal calibrations need a public cap C on each bin count. When the user has none, a stated share
of ε (default 5 %) buys one:

1. Release the tail counts ``T[c] = #{(bin, dimension): X ≥ c}`` for ``c = 1 … c_max`` (a public range)
   with Gaussian noise. One event moves one count from v to v+1, which changes exactly one ``T`` entry
   (``T[v+1]``) by one: the L2 sensitivity is 1, whatever the data, so the noise std
   ``σ_cap = z(share·ε, δ)`` depends only on public numbers.
2. Post-processing: ``N̂ = Σ_c T̂[c]`` estimates the number of events, and C is the smallest ``c >= 1``
   with ``T̂[c+1] <= max(ρ·N̂, 2σ_cap)`` — the cap that clips at most about a fraction ρ (1 %) of the
   events, or what the noise can resolve (``c_max`` when no c qualifies). Clipping that hard costs
   little: on the paper's processes the non-private estimate barely moves, while the release's noise
   is proportional to C (measured in ``docs/beyond_paper.md``).
3. The counts are clipped at C and the statistics are released with the rest of the budget; the two
   Gaussian releases compose exactly (:func:`~dphawkes_core.privacy.calibration.compose_count_cap`, the
   accountant's :func:`~dphawkes_core.privacy.accounting.split`).

The tail counts are integers: in an unseeded fit drawn from the discrete Gaussian
(:func:`~dphawkes_core.privacy.noise.discrete_noise`, the lagged DP-SSP) they take OpenDP's exact discrete Gaussian
with ``σ_cap = 1/√(2ρ(share·ε, δ))`` and both releases compose in zCDP.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from dphawkes_core.errors import ConfigError
from dphawkes_core.privacy.accounting import gaussian_multiplier
from dphawkes_core.privacy.noise import NoiseSource, as_source, noise_source, uses_discrete
from dphawkes_core.statistics.binning import BinnedCounts, SparseCounts, tail_counts
from dphawkes_core.validation import check_epsilon_delta, check_share

AUTO = "auto"
AUTO_CAP_SHARE = 0.05  # share of ε spent on the cap
AUTO_CAP_MAX = 64  # public range c = 1 … c_max of the released tail counts
AUTO_CAP_CLIPPED_FRACTION = 0.01  # ρ: clip at most about this fraction of the events
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
    clipped_fraction : float
        The target ρ.
    """

    count_cap: int
    share: float
    sigma: float
    max_cap: int
    clipped_fraction: float = AUTO_CAP_CLIPPED_FRACTION

    def to_dict(self) -> dict:
        """Plain dict for the result info and JSON export."""
        return {"count_cap": self.count_cap, "share": self.share, "sigma": self.sigma, "max_cap": self.max_cap,
                "clipped_fraction": self.clipped_fraction}


@functools.lru_cache(maxsize=256)  # public numbers only; each page render asks again (a root search)
def cap_noise_sigma(epsilon: float, delta: float, share: float, discrete: bool = False) -> float:
    """Noise std of the tail counts: the Gaussian mechanism of sensitivity 1 at ``(share·ε, δ)`` (``discrete``:
    the discrete Gaussian whose ρ-zCDP converts to ``(share·ε, δ)``).

    Only public numbers go in.
    """
    check_epsilon_delta(epsilon, delta)
    check_share(share)
    return gaussian_multiplier(share * epsilon, delta, discrete)


def choose_cap(noisy_tails: np.ndarray, sigma: float, clipped_fraction: float = AUTO_CAP_CLIPPED_FRACTION) -> int:
    """Smallest ``c >= 1`` with ``T̂[c+1] <= max(ρ·N̂, 2σ)``, ``N̂ = Σ T̂`` (post-processing only)."""
    max_cap = noisy_tails.size
    threshold = max(clipped_fraction * max(float(np.sum(noisy_tails)), 0.0), _NOISE_FLOOR * sigma)
    for cap in range(1, max_cap):
        if noisy_tails[cap] <= threshold:  # noisy_tails[cap] is T̂[cap+1]
            return cap
    return max_cap


def dp_count_cap(counts: SparseCounts | BinnedCounts, epsilon: float, delta: float, rng: np.random.Generator,
                 share: float = AUTO_CAP_SHARE, max_cap: int = AUTO_CAP_MAX) -> AutoCap:
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
    """
    if int(max_cap) != max_cap or max_cap < 1:
        raise ConfigError(f"the largest automatic count cap must be a positive integer, got {max_cap!r}")
    return cap_from_tails(tail_counts(counts, int(max_cap)), epsilon, delta, rng, share)


def cap_from_tails(tails: np.ndarray, epsilon: float, delta: float, rng: np.random.Generator,
                   share: float = AUTO_CAP_SHARE) -> AutoCap:
    """:func:`dp_count_cap` from already counted tails ``T[c]``, ``c = 1 … c_max`` (``c_max = tails.size``):
    the Gaussian release (discrete when ``rng`` is) and the choice of C."""
    sigma = cap_noise_sigma(epsilon, delta, share, discrete=uses_discrete(rng))
    return AutoCap(choose_cap(noisy_tails(tails, sigma, rng), sigma), float(share), sigma, int(tails.size))


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
