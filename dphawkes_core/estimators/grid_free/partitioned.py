"""The grid-free statistics (:mod:`dphawkes_core.statistics.exact_times`) of a partitioned event store as a map-reduce
(Dask, or any executor), equal to the in-process :func:`~dphawkes_core.statistics.exact_times.grid_free_pieces`.

The pieces ``R``, ``P`` and the totals are sums over pairs of kept events at most s = Bw apart, so each
partition can count the pairs inside it; only the pairs across a partition boundary and the cap of a w-bin cut
by a boundary need the neighbours:

* **map** — every sequence of a partition (a Parquet file ``time, dimension[, sequence]``, read as
  :mod:`dphawkes_core.statistics.partitioned` reads it) becomes a :class:`GridSegment`. Its events are kept under the
  cap (the first C per dimension and w-bin, :func:`~dphawkes_core.statistics.binning.keep_first`); the kept events of
  its *first* w-bin are held back (*pending*: an earlier partition may hold the start of that bin, and then
  fewer of them are kept), and the pieces of the pairs among the other kept events (*settled*) are counted
  (:func:`~dphawkes_core.statistics.exact_times.toeplitz_pieces`). The segment also keeps the raw settled events within
  ``s + w`` of its first and of its last event (its head and tail: few).
* **reduce** — the segments of one sequence are merged in time order (:func:`merge_grid_segments`). The later
  segment's pending events are kept up to ``C`` minus the events the earlier ones kept in that w-bin (read from
  the earlier tail, which holds the whole bin) and their pairs with the settled head are added; then the pairs
  across the boundary are ``pieces(tail ∪ head) − pieces(tail) − pieces(head)`` on the earlier tail and the later
  head. Tails and heads are carried through merges, so pairs spanning three or more partitions (cuts closer than
  s) are counted too. Each merged sequence yields its events within s of the window's ends, whose edge pieces
  (:func:`~dphawkes_core.statistics.exact_times.edge_pieces`) are counted once over all sequences, as in process.

The result equals the in-process pieces up to the order of floating-point sums. As in
:mod:`dphawkes_core.statistics.partitioned`, partitions may split the data by sequence, by time, or both; a sequence
whose partitions overlap in time is read whole from its first partition (``Window.gathered``).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import partial

import numpy as np

from dphawkes_core.errors import ConfigError, DataError
from dphawkes_core.estimators.binned import partitioned_count_cap
from dphawkes_core.statistics.binning import bin_index, bins_in_window
from dphawkes_core.statistics.exact_times import GridFreePieces, PieceSums, stats_from_pieces, toeplitz_pieces
from dphawkes_core.statistics.info import DataInfo
from dphawkes_core.statistics.moments import check_design_size
from dphawkes_core.statistics.partitioned import (
    Window,
    hold_first_bin,
    map_partitions,
    outside_domain,
    window_sequences,
)
from dphawkes_core.validation import check_bin_size, check_count_cap

_MARGIN = 1.0  # units of w kept beyond s at each end of a segment (covers rounding of the pair distances)


@dataclass(frozen=True)
class GridSegment:
    """The grid-free pieces of one sequence's events inside one partition (or several merged).

    Times are relative to the window start, in the data's units; event sets are ``(times, dimensions)`` sorted
    by time.

    Attributes
    ----------
    sequence : object
        The sequence's value in the ``sequence`` column.
    end : float
        The sequence's window end T (relative to its start).
    first, last : float
        The first and the last event of the segment in the window (NaN without events).
    lagged, pairs, totals : numpy.ndarray
        ``R``, ``P`` (``(B, d, d)``) and the totals (``(d,)``) of the settled events.
    kept : int
        Settled events.
    head, tail : tuple of numpy.ndarray
        The settled events within ``s + w`` of ``first`` and of ``last``.
    pending : tuple of numpy.ndarray
        Events of the first w-bin kept by this segment's own cap, not settled yet (none without a cap).
    events, clipped : int
        In-window events; events the cap removed.
    """

    sequence: object
    end: float
    first: float
    last: float
    lagged: np.ndarray
    pairs: np.ndarray
    totals: np.ndarray
    kept: int
    head: tuple
    tail: tuple
    pending: tuple
    events: int
    clipped: int

    @property
    def empty(self) -> bool:
        return not self.events


def _none() -> tuple:
    return np.zeros(0), np.zeros(0, dtype=np.int64)


def _union(a: tuple, b: tuple) -> tuple:
    """Two event sets as one, sorted by time (stable)."""
    t, d = np.concatenate([a[0], b[0]]), np.concatenate([a[1], b[1]])
    order = np.argsort(t, kind="stable")
    return t[order], d[order]


def _where(events: tuple, mask: np.ndarray) -> tuple:
    return events[0][mask], events[1][mask]


def _pieces(events: tuple, width: float, dim: int, lags: int) -> tuple[np.ndarray, np.ndarray]:
    """``R`` and ``P`` of an event set (units of w, as in process)."""
    if not events[0].size:
        return np.zeros((lags, dim, dim)), np.zeros((lags, dim, dim))
    return toeplitz_pieces(events[0] / width, events[1], dim, lags)


def _near_start(events: tuple, first: float, width: float, lags: int) -> tuple:
    return _where(events, events[0] / width <= first / width + lags + _MARGIN)


def _near_end(events: tuple, last: float, width: float, lags: int) -> tuple:
    return _where(events, events[0] / width >= last / width - lags - _MARGIN)


def grid_segment(sequence, times, end: float, width: float, lags: int, cap: int | None) -> GridSegment:
    """Map step for one sequence: the :class:`GridSegment` of its events ``times[j]`` (relative to its window
    start) in one partition."""
    d, B = len(times), int(lags)
    per_dim = [np.sort(np.asarray(t, dtype=np.float64)) for t in times]
    events = int(sum(t.size for t in per_dim))
    zero = np.zeros((B, d, d))
    if not events:
        return GridSegment(sequence, float(end), np.nan, np.nan, zero, zero.copy(), np.zeros(d), 0, _none(),
                           _none(), _none(), 0, 0)
    first = min(float(t[0]) for t in per_dim if t.size)
    last = max(float(t[-1]) for t in per_dim if t.size)
    kept, held, clipped = hold_first_bin(per_dim, width, cap)
    settled = [(t, np.full(t.size, j, dtype=np.int64)) for j, t in enumerate(kept)]
    pending = [(t, np.full(t.size, j, dtype=np.int64)) for j, t in enumerate(held)]
    settled_events, pending_events = _none(), _none()
    for part in settled:
        settled_events = _union(settled_events, part)
    for part in pending:
        pending_events = _union(pending_events, part)
    lagged, pairs = _pieces(settled_events, width, d, B)
    return GridSegment(sequence, float(end), first, last, lagged, pairs,
                       np.bincount(settled_events[1], minlength=d).astype(float), int(settled_events[0].size),
                       _near_start(settled_events, first, width, B), _near_end(settled_events, last, width, B),
                       pending_events, events, clipped)


def _settle(seg: GridSegment, new: tuple, width: float) -> GridSegment:
    """``seg`` with the events ``new`` (of its first w-bin) settled: their pairs with the head added."""
    if not new[0].size:
        return seg
    B, d = seg.lagged.shape[0], seg.totals.size
    with_new, without = _pieces(_union(seg.head, new), width, d, B), _pieces(seg.head, width, d, B)
    return replace(seg, lagged=seg.lagged + with_new[0] - without[0], pairs=seg.pairs + with_new[1] - without[1],
                   totals=seg.totals + np.bincount(new[1], minlength=d), kept=seg.kept + int(new[0].size),
                   head=_union(seg.head, new), tail=_union(seg.tail, _near_end(new, seg.last, width, B)))


def _resolve(seg: GridSegment, earlier_tail: tuple | None, width: float, cap: int | None) -> GridSegment:
    """Settle ``seg``'s pending events: per dimension, the first ``C − m`` of them, m the events the earlier
    segments kept in the same w-bin (all in their tail, ``earlier_tail``; none for a sequence's first segment)."""
    t, dims = seg.pending
    if not t.size:
        return seg
    d = seg.totals.size
    allowed = np.full(d, int(cap))
    if earlier_tail is not None and earlier_tail[0].size:
        same_bin = bin_index(earlier_tail[0], width) == bin_index(np.array([seg.first]), width)[0]
        allowed = np.maximum(allowed - np.bincount(earlier_tail[1][same_bin], minlength=d), 0)
    rank = np.zeros(t.size, dtype=np.int64)
    for j in range(d):
        rows = dims == j
        rank[rows] = np.arange(int(np.count_nonzero(rows)))
    keep = rank < allowed[dims]
    seg = replace(seg, pending=_none(), clipped=seg.clipped + int(t.size - np.count_nonzero(keep)))
    return _settle(seg, _where((t, dims), keep), width)


def merge_grid_segments(a: GridSegment, b: GridSegment, width: float, cap: int | None) -> GridSegment:
    """Merge two segments of one sequence, ``a`` (settled: no pending events) before ``b``.

    ``b``'s pending events are settled against ``a``'s tail, then the pairs across the boundary are added:
    ``pieces(T ∪ H) − pieces(T) − pieces(H)`` for ``a``'s tail T and ``b``'s head H, each cut to the events
    within ``s + w`` of the other segment.

    Raises
    ------
    DataError
        When the two segments' time ranges overlap (an internal error: such a sequence is gathered whole).
    """
    counts = {"events": a.events + b.events, "clipped": a.clipped + b.clipped}
    if b.empty:
        return replace(a, **counts)
    if a.empty:
        return _resolve(replace(b, **counts), None, width, cap)
    if a.last > b.first:
        raise DataError(f"internal error: sequence {a.sequence!r} has segments overlapping in time ({b.first:g} .. "
                        f"{a.last:g}) that were not gathered (build the window with partitioned_window)")
    b = _resolve(b, a.tail, width, cap)
    B, d = a.lagged.shape[0], a.totals.size
    tail, head = _near_end(a.tail, b.first, width, B), _near_start(b.head, a.last, width, B)
    lagged, pairs = a.lagged + b.lagged, a.pairs + b.pairs
    if tail[0].size and head[0].size:
        both, only_tail, only_head = (_pieces(e, width, d, B) for e in (_union(tail, head), tail, head))
        lagged = lagged + both[0] - only_tail[0] - only_head[0]
        pairs = pairs + both[1] - only_tail[1] - only_head[1]
    last = max(a.last, b.last)
    return replace(a, last=last, lagged=lagged, pairs=pairs, totals=a.totals + b.totals, kept=a.kept + b.kept,
                   head=_near_start(_union(a.head, b.head), a.first, width, B),
                   tail=_near_end(_union(a.tail, b.tail), last, width, B),
                   events=a.events + b.events, clipped=a.clipped + b.clipped)


def merge_sequence(segments, width: float, cap: int | None) -> GridSegment:
    """One sequence's segments (any order) merged in time order into one settled segment."""
    full = sorted((s for s in segments if not s.empty), key=lambda s: (s.first, s.last))
    empties = [s for s in segments if s.empty]
    whole = _resolve(full[0], None, width, cap) if full else empties[0]
    for seg in full[1:] + (empties if full else empties[1:]):
        whole = merge_grid_segments(whole, seg, width, cap)
    return whole


def reduce_grid_segments(segments, width: float, lags: int, cap: int | None) -> tuple[GridFreePieces, dict]:
    """Reduce step: merge each sequence's segments and sum the pieces over sequences, as
    :func:`~dphawkes_core.statistics.exact_times.grid_free_pieces` does in process.

    Returns
    -------
    pieces : GridFreePieces
    counts : dict
        ``kept``, ``clipped``, ``pairs`` (as in process) and ``events``, ``n_bins``, ``sequences``.

    Raises
    ------
    ConfigError
        When no sequence is longer than s.
    """
    by_sequence: dict = {}
    for seg in segments:
        by_sequence.setdefault(seg.sequence, []).append(seg)
    d = next(iter(segments)).totals.size if by_sequence else 0
    B = int(lags)
    sums = PieceSums(d, B)
    kept = clipped = events = n_bins = 0
    for s_idx, key in enumerate(sorted(by_sequence, key=str)):
        seq = merge_sequence(by_sequence[key], width, cap)
        clipped += seq.clipped
        events += seq.events
        n_bins += bins_in_window(seq.end, width)
        end = seq.end / width
        if end <= B:
            sums.skipped += 1
            continue
        kept += seq.kept
        sums.add(s_idx, end, seq.lagged, seq.pairs, seq.totals, (seq.head[0] / width, seq.head[1]),
                 (seq.tail[0] / width, seq.tail[1]))
    pieces = sums.pieces(width, cap)
    return pieces, {"kept": kept, "clipped": clipped, "pairs": float(pieces.pairs.sum()), "events": events,
                    "n_bins": n_bins, "sequences": len(by_sequence)}


def partition_grid_segments(path: str, window: Window, width: float, lags: int,
                            cap: int | None) -> tuple[list[GridSegment], int, int]:
    """Map step: the :class:`GridSegment` of every sequence in one partition, its events outside the window and
    its rows outside the declared domain."""
    segments, outside = [], 0
    for key, per_dim, _, out in window_sequences(path, window, width):
        segments.append(grid_segment(key, per_dim, window.ends[key] - window.start, width, lags, cap))
        outside += out
    return segments, outside, outside_domain(path, window)


def window_grid_free_pieces(paths, window: Window, width: float, lags: int, cap: int | None,
                            executor=None) -> tuple[GridFreePieces, DataInfo]:
    """The grid-free pieces of the events of partitions ``paths`` in ``window`` kept under ``cap`` (map steps
    over ``executor``, in this process when None), and the data info as the in-process statistics give it
    (plus ``outside_window`` and ``partitions``)."""
    check_bin_size(width)
    mapped = list(
        map_partitions(
            executor, partial(partition_grid_segments, window=window, width=width, lags=lags, cap=cap), paths
        )
    )
    segments = [s for segs, _, _ in mapped for s in segs]
    if window.keys is not None:  # a declared key without rows: a sequence without events, as in process
        present = {s.sequence for s in segments}
        segments += [grid_segment(key, [np.empty(0)] * window.dim, window.ends[key] - window.start, width, lags, cap)
                     for key in window.keys if key not in present]
    if not segments:
        raise DataError("the partitions hold no events in the window")
    pieces, counts = reduce_grid_segments(segments, width, lags, cap)
    info = DataInfo(n_bins=counts["n_bins"], n_events=counts["events"], binned_events=counts["kept"],
                    dropped_events=0, clipped_events=counts["clipped"], skipped_sequences=pieces.skipped_sequences,
                    window_stated=window.stated, **window.domain_info(), outside_domain=sum(o for _, _, o in mapped),
                    outside_window=sum(o for _, o, _ in mapped), partitions=len(paths))
    return pieces, info


def prepare_grid_free_partitioned(paths, config, window: Window, executor=None):
    """:meth:`CTLS.prepare_partitioned <dphawkes_core.estimators.grid_free.CTLS.prepare_partitioned>`: the
    :class:`~dphawkes_core.statistics.exact_times.GridFreeStats` of ``config`` on Parquet partitions in ``window``, as
    ``CTLS.prepare_stats`` gives them for the same events in one process.

    With ``config.count_cap = "auto"``, C is chosen first from the partitioned w-bin count tails
    (:func:`~dphawkes_core.statistics.partitioned.partitioned_tails`) with the in-process release and noise stream (same
    C on the same events and seed), then the pieces are reduced under it (a second pass over the partitions).
    """
    if config.unit.name != "event":
        raise ConfigError(f"{config.family.label}: partitioned statistics are of the event unit only; fit the "
                          f"{config.unit.name} unit on the events loaded into one process")
    check_bin_size(config.bin_size)
    check_design_size(window.dim, config.lags)
    cap, auto = partitioned_count_cap(paths, window, config, executor)
    check_count_cap(cap)
    pieces, info = window_grid_free_pieces(paths, window, config.bin_size, config.lags, cap, executor)
    return stats_from_pieces(pieces, config.bin_size), info.updated(
        count_cap=cap, auto_count_cap=auto.to_dict() if auto is not None else None)
