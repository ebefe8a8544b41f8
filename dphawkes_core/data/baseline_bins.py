"""A baseline that follows the clock: K piecewise-constant parts of a period, or of each sequence's window.

tick's ``HawkesSumExpKern(period_length=P, n_baselines=K)`` is the anchor: the baseline ``μ_i(t)`` is constant on
each of K equal parts of the period P, ``μ_i(t) = μ_ik`` for ``k = ⌊(t mod P)/(P/K)⌋``. Here the phase is read on
the data's own time axis (``EventSequence.start_time`` plus the relative time), so with times in hours since a
midnight, P = 24 and K = 8 are the eight 3-hour parts of the day, and P = 168 the week. Without a period, the K
parts are K equal bins of each sequence's declared window ``[0, T]`` (the first hour of every shift, …): public
when the windows are. :class:`BaselineBins` says which part a time falls in and how long each part lasts over an
interval; :class:`BaselineProfile` is a fitted baseline on those parts (its value at any time and its integral),
what a held-out score and a plot read. K = 1 is the constant baseline.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dphawkes_core.errors import ConfigError

#: The default floor of every baseline as a share of its dimension's mean rate (the ``baseline_floor`` option of the
#: families whose estimate is non-negative; the held-out score's floor for a fit that can reach 0): with kernels >= 0
#: no event then has probability 0. Chosen on the tuning processes (``docs/accuracy.md``, "Positive intensities").
BASELINE_FLOOR_SHARE = 0.05


@dataclass(frozen=True)
class BaselineBins:
    """The K parts a baseline is constant on: of the period P on the data's time axis, or (``period=None``) of each
    sequence's window.

    Attributes
    ----------
    bins : int
        K (1: a constant baseline).
    period : float or None
        P in the data's time unit; ``None``: K equal bins of each window.
    """

    bins: int = 1
    period: float | None = None

    def __post_init__(self):
        if int(self.bins) != self.bins or self.bins < 1:
            raise ConfigError(f"the number of baseline bins must be a whole number >= 1, got {self.bins!r}")
        if self.period is not None and not (np.isfinite(self.period) and self.period > 0):
            raise ConfigError(f"the baseline period must be a positive number, got {self.period!r}")

    @property
    def constant(self) -> bool:
        """One part: the constant baseline."""
        return self.bins == 1

    def describe(self, unit: str = "") -> str:
        """In words: ``8 parts of a period of 24 h``, ``4 bins of each window``, ``constant``."""
        if self.constant:
            return "constant"
        if self.period is None:
            return f"{self.bins} equal bins of each window"
        return f"{self.bins} parts of a period of {self.period:g}{(' ' + unit) if unit else ''}"

    def part_length(self, end_time: float) -> float:
        """The length of one part: P/K, or T/K of a window of length ``end_time``."""
        return (self.period if self.period is not None else float(end_time)) / self.bins

    def index(self, times: np.ndarray, start_time: float, end_time: float) -> np.ndarray:
        """The part (0 … K−1) of each of ``times`` (relative to a window that starts at ``start_time`` on the data's
        axis and lasts ``end_time``)."""
        times = np.asarray(times, dtype=float)
        if self.constant:
            return np.zeros(times.shape, dtype=np.int64)
        position = np.mod(times + start_time, self.period) if self.period is not None else times
        return np.clip(np.floor(position / self.part_length(end_time)).astype(np.int64), 0, self.bins - 1)

    def edges(self, a: float, b: float, start_time: float, end_time: float) -> tuple[np.ndarray, np.ndarray]:
        """The interval ``[a, b)`` (relative times) cut where the part changes: the cut points ``a = e_0 < … < e_M =
        b`` and the part of each piece ``[e_m, e_m+1)``."""
        if b <= a:
            return np.array([a, a]), np.zeros(1, dtype=np.int64)
        if self.constant:
            return np.array([a, b]), np.zeros(1, dtype=np.int64)
        length = self.part_length(end_time)
        shift = start_time if self.period is not None else 0.0
        first, last = np.floor((a + shift) / length) + 1, np.ceil((b + shift) / length) - 1
        inner = np.arange(first, last + 1) * length - shift if last >= first else np.zeros(0)
        cuts = np.concatenate([[a], inner[(inner > a) & (inner < b)], [b]])
        middles = 0.5 * (cuts[:-1] + cuts[1:])
        return cuts, self.index(middles, start_time, end_time)

    def exposure(self, a: float, b: float, start_time: float, end_time: float) -> np.ndarray:
        """``(K,)``: the time ``[a, b)`` spends in each part."""
        cuts, parts = self.edges(a, b, start_time, end_time)
        return np.bincount(parts, weights=np.diff(cuts), minlength=self.bins)

    def to_dict(self) -> dict:
        """``{"baseline_bins": K, "baseline_period": P or None}`` (the fit's options and its export)."""
        return {"baseline_bins": int(self.bins), "baseline_period": self.period}


@dataclass(frozen=True)
class BaselineProfile:
    """A fitted baseline on :class:`BaselineBins`: ``values[i, k]`` is ``μ_ik``, the rate of dimension i in part k.

    Attributes
    ----------
    values : numpy.ndarray
        ``(d, K)``.
    bins : BaselineBins
    """

    values: np.ndarray
    bins: BaselineBins = BaselineBins()

    @classmethod
    def constant(cls, baseline) -> BaselineProfile:
        """The constant baseline ``η`` (``(d,)``) as a profile of one part."""
        return cls(np.asarray(baseline, dtype=float).reshape(-1, 1), BaselineBins())

    @property
    def dim(self) -> int:
        """d."""
        return int(self.values.shape[0])

    def at(self, times: np.ndarray, dims: np.ndarray, start_time: float, end_time: float) -> np.ndarray:
        """``μ_{i_n}(t_n)`` at events of dimensions ``dims`` (relative times of one window)."""
        return self.values[np.asarray(dims, dtype=np.int64), self.bins.index(times, start_time, end_time)]

    def integral(self, a: float, b: float, start_time: float, end_time: float) -> np.ndarray:
        """``(d,)``: ``∫_a^b μ_i`` over one window's ``[a, b)``."""
        return self.values @ self.bins.exposure(a, b, start_time, end_time)

    def minimum(self) -> np.ndarray:
        """``(d,)``: the lowest rate of each dimension over its parts."""
        return self.values.min(axis=1)
