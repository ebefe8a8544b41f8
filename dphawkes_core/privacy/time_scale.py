"""The width Δ and the support s chosen privately from the data (``--bin-size auto``), inside the recorded release.

A fit needs a time scale: Δ short enough that most bins hold 0 or 1 event, s long enough to hold the kernels.
The rule of thumb reads the data's mean time between events, ``ḡ = T/N`` (T the declared observed time summed over
sequences, N the events). T is public under a declared window; N is not. A declared share of ε buys N:

1. **Release** ``N̂ = N + σ·Z`` with ``σ = z(share·ε, δ)``: adding or removing one event changes N by exactly 1,
   whatever the data, so the L2 sensitivity is 1 and σ depends on public numbers only (the discrete Gaussian when
   the fit after it draws it, as for the automatic count cap, :mod:`~dphawkes_core.privacy.count_cap`).
2. **Post-processing** (:func:`time_scale_from_count`): ``ḡ = T / max(N̂, 1)``, ``Δ = nice(ḡ/BINS_PER_GAP)``,
   ``s = nice(GAPS_PER_SUPPORT·ḡ)`` (``nice``: the nearest 1, 2 or 5 × 10^k on a log scale), ``p = ⌈s/Δ⌉``.
3. **Composition**: the fit gets what is left of (ε, δ), the accountant's
   :func:`~dphawkes_core.privacy.accounting.split`: Gaussian mechanisms compose in μ-GDP
   (``μ_total² = μ_count² + μ_fit²``), discrete ones in zCDP (``ρ`` adds up), so the count and the fit together are
   (ε, δ)-DP — checked against dp-accounting's PLD accountant in the tests.

The session (:meth:`~dphawkes_core.release.session.PrivacySession.release_scaled`) draws ``N̂`` inside the
recorded release and stores it with the estimate; a replay reads it and draws nothing. The same rule on the exact
N is the non-private proposal (:func:`time_scale_from_count` with ``N``); the app shows it only on data that are
not private.

The same ``N̂`` can also set the exponential family's decays (``--decays auto``): ``β_u = m_u / ḡ`` on the public
multiples :data:`DECAY_MULTIPLES` (:func:`decays_from_count`), post-processing of the same release at the same share.
What a request chooses is a subset of :data:`CHOICES`; one count serves all of them.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import numpy as np

from dphawkes_core.errors import ConfigError
from dphawkes_core.privacy.accounting import Split
from dphawkes_core.privacy.count_cap import noisy_tails
from dphawkes_core.privacy.noise import NoiseSource, noise_source
from dphawkes_core.statistics.binning import lags_from_support

AUTO_SCALE_SHARE = 0.05  # share of ε spent on the time scale
BINS_PER_GAP = 4  # Δ ≈ mean inter-event time / 4: most bins hold 0 or 1 event
GAPS_PER_SUPPORT = 10  # s ≈ 10 mean inter-event times: p ≈ 40 lags
DECAY_MULTIPLES = (0.7, 1.5, 3.0)  # β_u = m_u / ḡ: the public default decays on a process whose mean gap is 1
TIME_SCALE, DECAYS = "time scale", "decays"
CHOICES = (TIME_SCALE, DECAYS)  # what one noisy count can set: Δ and p, and (exp) the decays
_SEED_STREAM = 0x5CA1E  # the count's noise is drawn from its own stream of a seeded fit


def nice_number(x: float) -> float:
    """The number of the form 1, 2 or 5 × 10^k nearest to ``x > 0`` on a log scale."""
    exponent = math.floor(math.log10(x))
    candidates = [m * 10.0**e for e in (exponent, exponent + 1) for m in (1, 2, 5)]
    return float(min(candidates, key=lambda c: abs(math.log(c / x))))


@dataclass(frozen=True)
class TimeScale:
    """Δ and s read from a count of events over an observed time.

    Attributes
    ----------
    mean_gap : float
        ``T / max(N, 1)``.
    bin_size : float
        Δ: ``mean_gap / BINS_PER_GAP`` rounded to 1, 2 or 5 × 10^k.
    support : float
        s: ``GAPS_PER_SUPPORT · mean_gap`` rounded likewise.
    lags : int
        ``p = ⌈s/Δ⌉``.
    """

    mean_gap: float
    bin_size: float
    support: float
    lags: int


def time_scale_from_count(observed_time: float, count: float) -> TimeScale:
    """The rule of thumb on a count of events (exact, or the noisy ``N̂``: post-processing only).

    Parameters
    ----------
    observed_time : float
        T, the observed time summed over sequences (public when the window is declared).
    count : float
        N or ``N̂``; counts below 1 are read as 1 (a noisy count can be ≤ 0).
    """
    if not (observed_time > 0 and math.isfinite(observed_time)):
        raise ConfigError(f"the observed time must be a positive number, got {observed_time!r}")
    gap = float(observed_time) / max(float(count), 1.0)
    bin_size, support = nice_number(gap / BINS_PER_GAP), nice_number(gap * GAPS_PER_SUPPORT)
    return TimeScale(gap, bin_size, support, lags_from_support(support, bin_size))


def decays_from_count(observed_time: float, count: float, multiples=DECAY_MULTIPLES) -> tuple[float, ...]:
    """The decays ``β_u = m_u / ḡ`` with ``ḡ = T / max(count, 1)`` (post-processing of ``N̂``, or the exact N).

    Parameters
    ----------
    observed_time : float
        T, public when the window is declared.
    count : float
        N or ``N̂``; below 1 read as 1.
    multiples : sequence of float
        The public multiples ``m_u`` (:data:`DECAY_MULTIPLES`).
    """
    gap = time_scale_from_count(observed_time, count).mean_gap
    return tuple(float(m) / gap for m in multiples)


def check_choices(choices) -> tuple[str, ...]:
    """``choices`` as a tuple in :data:`CHOICES` order; a ``ConfigError`` for an empty or unknown one."""
    chosen = tuple(c for c in CHOICES if c in set(choices))
    if not chosen or len(chosen) != len(set(choices)):
        raise ConfigError(f"a private choice sets one or more of {', '.join(CHOICES)}, got {tuple(choices)!r}")
    return chosen


@dataclass(frozen=True)
class AutoScale:
    """The privately chosen time scale and what it cost (stored with the release).

    Attributes
    ----------
    bin_size, support : float
        The chosen Δ and s.
    lags : int
        ``p = ⌈s/Δ⌉``.
    noisy_count : float
        The released ``N̂``.
    observed_time : float
        The public T it was divided into.
    share : float
        Share of ε spent on it.
    sigma : float
        Noise std of ``N̂`` (sensitivity 1): the selection's noise multiplier.
    fit_epsilon : float
        The ε left for the fit.
    decays : tuple of float
        The decays read from ``N̂`` (:func:`decays_from_count`).
    applied : tuple of str
        What the release set from it (:data:`CHOICES`): Δ and p, the decays, or both.
    """

    bin_size: float
    support: float
    lags: int
    noisy_count: float
    observed_time: float
    share: float
    sigma: float
    fit_epsilon: float
    decays: tuple[float, ...] = ()
    applied: tuple[str, ...] = (TIME_SCALE,)

    def __post_init__(self):  # read back from JSON, the tuples come as lists
        object.__setattr__(self, "decays", tuple(float(b) for b in self.decays))
        object.__setattr__(self, "applied", tuple(self.applied))

    def to_dict(self) -> dict:
        """Plain dict for the ledger and the JSON export."""
        return asdict(self)

    def config_changes(self) -> dict:
        """The settings the release fitted with (``FitConfig.with_changes`` keywords): what was chosen (Δ and p,
        the decays) and the ε left to the fit."""
        changes = {"epsilon": self.fit_epsilon}
        if TIME_SCALE in self.applied:
            changes.update(bin_size=self.bin_size, lags=self.lags)
        if DECAYS in self.applied:
            changes.update(decays=self.decays)
        return changes


def scale_rng(seed: int | None, discrete: bool = False) -> NoiseSource:
    """The count's noise: the OS CSPRNG (discrete Gaussian when ``discrete``), or numpy's stream of a seeded fit
    apart from the fit's own."""
    return noise_source(None if seed is None else (int(seed), _SEED_STREAM), discrete)


def dp_time_scale(n_events: int, observed_time: float, split: Split, rng: NoiseSource | np.random.Generator,
                  applied=(TIME_SCALE,)) -> AutoScale:
    """Release ``N̂`` with noise std ``split.selection_multiplier`` (sensitivity 1) and read Δ and s from it.

    Parameters
    ----------
    n_events : int
        N, the private count of events in the declared window.
    observed_time : float
        T, public (the declared window's length summed over sequences).
    split : Split
        The accountant's :func:`~dphawkes_core.privacy.accounting.split` of the release's (ε, δ) at the count's
        share (recorded with it).
    rng : NoiseSource or numpy.random.Generator
        :func:`scale_rng`; a discrete source draws the discrete Gaussian.
    applied : sequence of str
        What the release sets from ``N̂`` (:data:`CHOICES`); every choice is read from the one count.
    """
    noisy = float(noisy_tails(np.array([int(n_events)]), split.selection_multiplier, rng)[0])
    scale = time_scale_from_count(observed_time, noisy)
    return AutoScale(scale.bin_size, scale.support, scale.lags, noisy, float(observed_time), split.share,
                     split.selection_multiplier, split.rest_epsilon, decays_from_count(observed_time, noisy),
                     check_choices(applied))

