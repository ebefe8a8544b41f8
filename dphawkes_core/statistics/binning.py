"""Binning of event sequences into count series ``X_k`` (the paper's eq. (2)).

Bin k (1-based) is ``[(k-1)Δ, kΔ)`` for ``k = 1..n``, ``n = ⌊T/Δ⌋``; events at ``t >= nΔ`` are dropped
and counted. Bin edges are exact: ``t`` is compared with ``kΔ`` in exact arithmetic (an error-free product),
and a time within :data:`EDGE_ULPS` units in the last place of ``t`` below an edge counts as on it, which
absorbs only representation error (``0.3`` written in a file is ``3 × 0.1`` to the user) — never a
fraction of a bin, whatever the size of ``t/Δ``. Optional clipping of every count at a public cap C makes the per-bin
count bounded, which the formal privacy calibration needs; the number of events removed by clipping is reported.

The data path keeps only the non-empty bins (:class:`SparseCounts`, from :func:`bin_sparse`): memory
follows the number of events, not ``T/Δ``. :class:`BinnedCounts` is the dense view for small data
(plots, the privacy audit, tests), refused above :data:`MAX_DENSE_CELLS` cells.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from dphawkes_core.errors import ConfigError
from dphawkes_core.validation import check_bin_size, check_count_cap

if TYPE_CHECKING:  # annotations only: binning must not pull in the CSV loader (pandas) at start-up
    from dphawkes_core.data.io import Events

MAX_DENSE_CELLS = 40_000_000  # n·d of a dense count array (about 320 MB of int64): dense() refuses more
_CHUNK = 1 << 21  # events binned at once (bounds the temporaries of bin_index)
_REL_TOL = 1e-9
EDGE_ULPS = 4  # times this many ulps (of t) below an edge kΔ are on the edge


def robust_ceil(x: float) -> int:
    """``⌈x⌉`` that treats values within 1e-9 (relative) of an integer as that integer."""
    nearest = round(x)
    return int(nearest) if abs(x - nearest) <= _REL_TOL * max(1.0, abs(x)) else int(math.ceil(x))


def lags_from_support(support: float, bin_size: float) -> int:
    """Number of lags ``p = ⌈s/Δ⌉``, robust to floating-point error (s=3, Δ=0.1 gives 30)."""
    if not (support > 0 and math.isfinite(support)):
        raise ConfigError(f"support s must be a positive number, got {support!r}")
    check_bin_size(bin_size)
    return max(1, robust_ceil(support / bin_size))


@dataclass(frozen=True)
class BinnedCounts:
    """Count series of every sequence.

    Attributes
    ----------
    counts : tuple of numpy.ndarray
        One ``(n_s, d)`` integer array per sequence; row ``k`` is ``X_{k+1}``.
    bin_size : float
        Δ.
    dropped_events : int
        Events at ``t >= n_s Δ`` (after the last complete bin), not counted.
    clipped_events : int
        Events removed by clipping counts at ``count_cap``.
    count_cap : int or None
        Public per-bin cap C, when clipping was requested.
    """

    counts: tuple
    bin_size: float
    dropped_events: int
    clipped_events: int
    count_cap: int | None

    @property
    def dim(self) -> int:
        """Number of dimensions d."""
        return int(self.counts[0].shape[1])

    @property
    def n_bins(self) -> int:
        """Total number of bins over all sequences."""
        return int(sum(c.shape[0] for c in self.counts))

    @property
    def n_events(self) -> int:
        """Number of events counted in the bins (after dropping and clipping)."""
        return int(sum(int(c.sum()) for c in self.counts))


def n_bins_for(events: Events, bin_size: float) -> int:
    """Total number of bins ``Σ_s ⌊T_s/Δ⌋`` the data would have (no allocation)."""
    check_bin_size(bin_size)
    return sum(bins_in_window(s.end_time, bin_size) for s in events.sequences)


def bins_in_window(end_time: float, bin_size: float) -> int:
    """Number of complete bins ``⌊T/Δ⌋`` in the window ``[0, T]``, with the exact edge rule of :func:`bin_index`."""
    return int(bin_index(np.array([float(end_time)]), bin_size)[0])


def bin_events(events: Events, bin_size: float, count_cap: int | None = None) -> BinnedCounts:
    """Dense counts of every sequence (small data), optionally clipped at ``count_cap``.

    The same counts as :func:`bin_sparse`, laid out densely; refused (before allocating) when the
    bins would take more than :data:`MAX_DENSE_CELLS` cells.

    Returns
    -------
    BinnedCounts
        Counts plus the numbers of dropped and clipped events.
    """
    check_bin_size(bin_size)
    check_dense_size(n_bins_for(events, bin_size), events.dim, bin_size)
    return bin_sparse(events, bin_size, count_cap).dense()


def check_dense_size(n_bins: int, dim: int, bin_size: float) -> None:
    """Refuse dense counts of more than :data:`MAX_DENSE_CELLS` cells (``n·d``)."""
    if n_bins * dim > MAX_DENSE_CELLS:
        raise ConfigError(
            f"bin size {bin_size:g} gives {n_bins:,} bins × {dim} dimensions, over the {MAX_DENSE_CELLS:,}-cell "
            "limit of a dense count table; use a larger bin size"
        )


@dataclass(frozen=True)
class SparseCounts:
    """The non-empty bins of every sequence: ``(bin, dimension, count)`` entries, sorted by bin then dimension.

    Attributes
    ----------
    lengths : tuple of int
        Number of bins ``n_s`` of each sequence.
    bins, dims, values : tuple of numpy.ndarray
        Per sequence, int64 entries: ``X_s[bins[i], dims[i]] = values[i] > 0``, every other count 0.
    dim : int
        d.
    bin_size : float
        Δ.
    dropped_events, clipped_events : int
        As in :class:`BinnedCounts`.
    count_cap : int or None
        Public per-bin cap C, when clipping was requested.
    """

    lengths: tuple
    bins: tuple
    dims: tuple
    values: tuple
    dim: int
    bin_size: float = 1.0
    dropped_events: int = 0
    clipped_events: int = 0
    count_cap: int | None = None

    @classmethod
    def from_binned(cls, binned: BinnedCounts) -> SparseCounts:
        """The non-zero entries of dense counts."""
        bins, dims, values = [], [], []
        for x in binned.counts:
            k, j = np.nonzero(x)  # row-major: sorted by bin, then dimension
            bins.append(k.astype(np.int64))
            dims.append(j.astype(np.int64))
            values.append(np.asarray(x[k, j], dtype=np.int64))
        return cls(tuple(int(x.shape[0]) for x in binned.counts), tuple(bins), tuple(dims), tuple(values),
                   binned.dim, binned.bin_size, binned.dropped_events, binned.clipped_events, binned.count_cap)

    @property
    def n_bins(self) -> int:
        """Total number of bins over all sequences."""
        return int(sum(self.lengths))

    @property
    def n_events(self) -> int:
        """Number of events counted in the bins (after dropping and clipping)."""
        return int(sum(int(v.sum()) for v in self.values))

    @property
    def n_nonzero(self) -> int:
        """Number of non-zero (bin, dimension) entries."""
        return int(sum(v.size for v in self.values))

    def grouped(self, sequence: int, group: int) -> np.ndarray:
        """Counts of one sequence summed over ``group`` consecutive bins: shape ``(⌈n_s/group⌉, d)``
        (the last group may be shorter); ``O(entries)`` whatever ``n_s``."""
        rows = -(-self.lengths[sequence] // int(group))
        cells = (self.bins[sequence] // int(group)) * self.dim + self.dims[sequence]
        summed = np.bincount(cells, weights=self.values[sequence], minlength=rows * self.dim)
        return summed.astype(np.int64).reshape(rows, self.dim)

    def dense(self) -> BinnedCounts:
        """The dense counts (refused over :data:`MAX_DENSE_CELLS` cells)."""
        check_dense_size(self.n_bins, self.dim, self.bin_size)
        counts = []
        for n, k, j, v in zip(self.lengths, self.bins, self.dims, self.values):
            x = np.zeros((n, self.dim), dtype=np.int64)
            x[k, j] = v
            counts.append(x)
        return BinnedCounts(tuple(counts), self.bin_size, self.dropped_events, self.clipped_events, self.count_cap)


def bin_sparse(events: Events, bin_size: float, count_cap: int | None = None) -> SparseCounts:
    """Bin every sequence to its non-empty bins, optionally clipping each count at ``count_cap``.

    Memory is ``O(events)`` whatever ``T/Δ``.

    Parameters
    ----------
    events : Events
        The data.
    bin_size : float
        Δ > 0.
    count_cap : int, optional
        Public cap C >= 1 on each count ``X_k[j]``.

    Returns
    -------
    SparseCounts
        Non-empty bins plus the numbers of dropped and clipped events.
    """
    check_bin_size(bin_size)
    check_count_cap(count_cap)
    lengths, bins, dims, values, dropped, clipped = [], [], [], [], 0, 0
    for seq in events.sequences:
        n = bins_in_window(seq.end_time, bin_size)
        k, j, v, out = sequence_entries(seq.times, n, bin_size)
        if count_cap is not None:
            clipped += int(np.sum(np.maximum(v - int(count_cap), 0)))
            v = np.minimum(v, int(count_cap))
        lengths.append(n)
        bins.append(k)
        dims.append(j)
        values.append(v)
        dropped += out
    return SparseCounts(tuple(lengths), tuple(bins), tuple(dims), tuple(values), events.dim, float(bin_size),
                        dropped, clipped, None if count_cap is None else int(count_cap))


def sequence_entries(times, n_bins: int, bin_size: float) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """Non-empty ``(bin, dimension, count)`` entries of one sequence's bins ``0..n_bins-1``.

    Parameters
    ----------
    times : sequence of numpy.ndarray
        ``times[j]``: event times of dimension j (relative to the window start, any order).
    n_bins : int
        Bins kept; events in later bins are dropped.
    bin_size : float
        Δ.

    Returns
    -------
    bins, dims, values : numpy.ndarray
        int64 entries sorted by bin, then dimension.
    dropped : int
        Events at or after bin ``n_bins``.
    """
    d = len(times)
    t = np.concatenate([np.asarray(x, dtype=np.float64).ravel() for x in times])
    dims = np.repeat(np.arange(d, dtype=np.int64), [len(x) for x in times])
    idx = np.concatenate([bin_index(t[i:i + _CHUNK], bin_size) for i in range(0, t.size, _CHUNK)]) \
        if t.size else np.zeros(0, dtype=np.int64)
    keep = idx < n_bins
    keys, values = np.unique(idx[keep] * d + dims[keep], return_counts=True)  # sorted by bin, then dimension
    return keys // d, keys % d, values.astype(np.int64), int(t.size - np.count_nonzero(keep))


def bin_index(t: np.ndarray, bin_size: float) -> np.ndarray:
    """0-based bin of each time: the k with ``kΔ <= t + tol < (k+1)Δ``, tol = ``EDGE_ULPS`` ulps of t.

    ``⌊t/Δ⌋`` in floating point can be off by one near an edge (the quotient is rounded), so the result is
    checked against the edges with the exact residual ``t − kΔ`` (:func:`_exact_residual`) and moved by
    one where needed. Exact for any ``t/Δ`` below 2⁵² (about 4.5·10¹⁵ bins).

    Parameters
    ----------
    t : numpy.ndarray
        Non-negative finite times.
    bin_size : float
        Δ > 0.

    Returns
    -------
    numpy.ndarray
        int64 bin indices.
    """
    t = np.asarray(t, dtype=np.float64)
    delta = float(bin_size)
    k = np.floor(t / delta)
    shifted = _exact_residual(t, k, delta) + EDGE_ULPS * np.spacing(t)
    near = np.flatnonzero((shifted < 0) | (shifted >= delta))  # the few times the quotient put in the wrong bin
    if near.size:
        tn, kn = t[near], k[near]
        tol = EDGE_ULPS * np.spacing(tn)
        for _ in range(2):  # the floating quotient is off by at most one; the tolerance by at most one more
            kn = np.where(_exact_residual(tn, kn, delta) + tol < 0, kn - 1, kn)
            kn = np.where(_exact_residual(tn, kn, delta) + tol >= delta, kn + 1, kn)
        k[near] = kn
    return k.astype(np.int64)


_SPLIT = 134217729.0  # 2^27 + 1: Dekker's splitter for float64


def _exact_residual(t: np.ndarray, k: np.ndarray, delta: float) -> np.ndarray:
    """``t − kΔ`` with ``kΔ = p + e`` split error-free (Dekker's product), so its sign is exact.

    ``t − p`` is exact whenever ``p/2 <= t <= 2p`` (Sterbenz), which covers every residual the caller
    compares with 0 or Δ; ``e`` is below an ulp of ``p``.
    """
    p = k * delta
    k_hi = k * _SPLIT - (k * _SPLIT - k)
    k_lo = k - k_hi
    d_hi = delta * _SPLIT - (delta * _SPLIT - delta)
    d_lo = delta - d_hi
    e = ((k_hi * d_hi - p) + k_hi * d_lo + k_lo * d_hi) + k_lo * d_lo
    return (t - p) - e


def tail_counts(counts: SparseCounts | BinnedCounts, max_cap: int) -> np.ndarray:
    """``T[c-1] = #{(sequence, bin, dimension): X >= c}`` for ``c = 1 … max_cap`` (of unclipped counts)."""
    if isinstance(counts, SparseCounts):
        values = np.concatenate([np.asarray(v) for v in counts.values]) if counts.values else np.zeros(0)
    else:
        values = np.concatenate([x.ravel() for x in counts.counts]) if counts.counts else np.zeros(0)
    return count_tails(values, max_cap)


def count_tails(values: np.ndarray, max_cap: int) -> np.ndarray:
    """``T[c-1] = #{entries of values >= c}`` for ``c = 1 … max_cap`` (any array of bin counts; zeros ignored).

    Tail counts add over disjoint sets of bins: a partitioned store sums them over partitions
    (:func:`dphawkes_core.statistics.partitioned.partitioned_tails`).
    """
    values = np.asarray(values).ravel()
    values = np.minimum(values[values > 0].astype(np.int64), max_cap)
    at_least = np.bincount(values, minlength=max_cap + 1)[::-1].cumsum()[::-1]  # [c] = #{X >= c}
    return at_least[1:max_cap + 1].astype(float)


def keep_first(times: np.ndarray, width: float, cap: int | None) -> np.ndarray:
    """Mask of the events kept under the cap: the first ``cap`` of every grid bin ``[kw, (k+1)w)`` (bins by
    :func:`bin_index`, the binned families' exact edges). ``times`` sorted; ties keep
    their order. All kept when ``cap`` is None."""
    times = np.asarray(times, dtype=np.float64)
    if cap is None or times.size == 0:
        return np.ones(times.size, dtype=bool)
    k = bin_index(times, width)
    new_run = np.empty(times.size, dtype=bool)
    new_run[0] = True
    np.not_equal(k[1:], k[:-1], out=new_run[1:])
    starts = np.flatnonzero(new_run)
    run = np.cumsum(new_run) - 1
    rank = np.arange(times.size) - starts[run]
    return rank < int(cap)
