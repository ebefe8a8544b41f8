"""The sufficient statistics of a partitioned event store as a map-reduce (Dask, or any executor).

The moment pieces (:class:`~dphawkes_core.statistics.moments.MomentPieces`) are sums over sequences, and within a
sequence over its bins, so each partition of the data can be reduced on its own:

* **map** — a partition (a Parquet file with columns ``time, dimension[, sequence]``) is binned on each
  sequence's global bin grid, and every sequence in it becomes a :class:`Segment`: the lagged products
  ``C[τ]`` and totals of its (clipped) counts, plus the raw rows of its first and last ``p+1`` non-empty
  bins;
* **reduce** — the segments of one sequence are merged in time order (:func:`merge_segments`): their
  products add, and the pairs of bins that straddle a partition boundary (at most ``p`` apart, so
  inside the ``p+1``-row edges — the "p-bin overlap") are added by a small dense correction that also
  re-clips a bin split across two partitions. Each merged sequence yields its heads and tails, and
  the pieces add over sequences.

The result is exactly the in-process :func:`~dphawkes_core.statistics.moments.moment_pieces` (integer counts in
floating point). Partitions may split the data by sequence, by time, or both. A sequence whose partitions overlap in
time (found by the pre-pass of :func:`partitioned_window`) is *gathered*: the first partition holding it reads its
rows from every partition that does, and the others skip it (:attr:`Window.gathered`), so it is one segment, as if
read from one file — one row moved into another partition's time range changes nothing, instead of refusing the
store. Nothing here imports Dask: the caller passes any
``concurrent.futures``-style executor (:func:`dphawkes_experiments.sweep.dask_executor` for a cluster).
"""

from __future__ import annotations

import glob
import hashlib
import os
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path

import numpy as np

from dphawkes_core.data.columns import numeric_rows
from dphawkes_core.data.domain import Domain
from dphawkes_core.data.io import table_columns
from dphawkes_core.data.row_key import no_lanes, row_lanes, rows_key
from dphawkes_core.errors import ConfigError, DataError
from dphawkes_core.statistics.binning import bin_index, bins_in_window, count_tails, keep_first, sequence_entries
from dphawkes_core.statistics.info import DataInfo
from dphawkes_core.statistics.moments import (
    MomentPieces,
    check_design_size,
    dense_lagged_products,
    lagged_products,
    rows_between,
)
from dphawkes_core.validation import check_bin_size, check_count_cap

PARTITION_COLUMNS = ("time", "dimension", "sequence")
PARTITION_SUFFIXES = (".parquet", ".pq")


@dataclass(frozen=True)
class Window:
    """Observation windows of a partitioned data set, on the time column's own axis.

    Attributes
    ----------
    start : float
        Common window start (times are taken relative to it).
    ends : dict
        Window end of each sequence (by its value in the ``sequence`` column).
    stated : bool
        True when the user stated the window (a public window); False when the ends were read from the data.
    dim : int
        d: the number of declared dimensions, or one more than the largest dimension index in any partition.
    names : tuple of str, optional
        The declared dimension names (``d = len(names)``; a row of another dimension is dropped and counted);
        ``None``: d is read from the data.
    keys : tuple of str, optional
        The declared sequence keys (``ends`` is keyed by them; rows of other keys are dropped and counted, and a
        declared key without rows is a sequence of empty bins); ``None``: the sequences are read from the data.
    gathered : dict
        Sequences whose partitions overlap in time: each key's partitions (paths, in order); the first reads the
        sequence's rows from all of them, the others skip it (:func:`window_sequences`).
    """

    start: float
    ends: dict
    stated: bool
    dim: int
    names: tuple | None = None
    keys: tuple | None = None
    gathered: dict = field(default_factory=dict)

    @property
    def dimensions_declared(self) -> bool:
        """d is declared, not read from the data."""
        return self.names is not None

    @property
    def domain(self) -> Domain:
        """The declared domain every partition's rows are filtered by (the loaders' filter)."""
        return Domain(dimensions=self.names, sequences=self.keys)

    def domain_info(self) -> dict:
        """What of the domain is declared (:class:`~dphawkes_core.statistics.info.DataInfo` fields)."""
        return {"dimensions_declared": self.dimensions_declared, "sequences_declared": self.keys is not None}


@dataclass(frozen=True)
class Segment:
    """Moment pieces of one sequence's events inside one partition (or several merged).

    Attributes
    ----------
    sequence : object
        The sequence's value in the ``sequence`` column (0 when there is none).
    n_bins : int
        The sequence's number of bins ``n_s``.
    lo, hi : int
        First non-empty bin and one past the last (global bin indices of the sequence).
    lagged : numpy.ndarray
        ``(p+1, d, d)`` lagged products of the clipped counts in ``[lo, hi)``.
    totals : numpy.ndarray
        ``(d,)`` sums of the clipped counts.
    head, tail : numpy.ndarray
        ``(p+1, d)`` raw (unclipped) rows ``X[lo .. lo+p]`` and ``X[hi-p-1 .. hi-1]``.
    events, clipped_events, dropped_events : int
        Events of the segment; events removed by clipping; events after the last bin.
    count_cap : int or None
        C.
    """

    sequence: object
    n_bins: int
    lo: int
    hi: int
    lagged: np.ndarray
    totals: np.ndarray
    head: np.ndarray
    tail: np.ndarray
    events: int
    clipped_events: int
    dropped_events: int
    count_cap: int | None


def partition_paths(pattern: str) -> list[str]:
    """The Parquet partitions named by a glob pattern or a directory (sorted).

    Raises
    ------
    DataError
        When nothing matches.
    """
    if os.path.isdir(pattern):
        paths = [str(p) for p in sorted(Path(pattern).iterdir()) if p.suffix.lower() in PARTITION_SUFFIXES]
    else:
        paths = sorted(glob.glob(pattern))
    if not paths:
        raise DataError(f"no Parquet partitions match {pattern!r}")
    return paths


def read_partition(path: str, domain: Domain | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """Times, dimension indices, sequence values and rows outside the declared domain of one partition
    (``time, dimension[, sequence]``).

    The partition is read by the loaders' row reader (:func:`~dphawkes_core.data.io.table_columns`) and filtered by
    their domain filter (:func:`~dphawkes_core.data.columns.numeric_rows`): under a declared domain a row whose
    time is NaN or infinite, or whose dimension is −1, 0.5 or undeclared, is dropped and counted exactly as in a
    CSV or a Parquet file, never refused.

    Raises
    ------
    DataError
        On an unreadable file or missing columns; without a declared domain, on a malformed row (its partition and
        row).
    """
    name = Path(path).name
    try:
        return numeric_rows(_partition_columns(path, name), domain or Domain())
    except DataError as exc:
        raise DataError(str(exc) if str(exc).startswith(f"{name}:") else f"{name}: {exc}") from None


def _partition_columns(path: str, name: str) -> dict:
    """The ``time``, ``dimension`` and ``sequence`` columns of one partition, as the loaders read them."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        parquet = pq.ParquetFile(path)
        columns = {str(c).strip().lower(): c for c in parquet.schema_arrow.names}
        if "time" not in columns or "dimension" not in columns:
            raise DataError(f"{name}: expected columns time,dimension[,sequence]")
        if "start" in columns or "end" in columns:
            raise DataError(f"{name}: per-sequence start/end columns are not read from partitions; "
                            "give the window with --start-time/--end-time")
        wanted = [c for c in PARTITION_COLUMNS if c in columns]
        table = parquet.read(columns=[columns[c] for c in wanted]).rename_columns(wanted)
    except (pa.ArrowException, OSError) as exc:
        raise DataError(f"{name}: not a readable Parquet file ({str(exc).splitlines()[0]})") from None
    return table_columns(table)


def scan_partition(path: str, domain: Domain | None = None) -> tuple[int, dict]:
    """Pre-pass: the largest dimension index and each sequence's ``(first, last)`` event time in one partition."""
    times, dims, seqs, _ = read_partition(path, domain)
    ranges = {key: (float(times[rows].min()), float(times[rows].max())) for key, rows in _by_sequence(seqs)}
    return (int(dims.max()) if dims.size else -1), ranges


def overlapping_sequences(paths, scans) -> dict:
    """The sequences whose partitions overlap in time, each with the partitions holding it (in ``paths`` order):
    from the ``(first, last)`` times of :func:`scan_partition`, a partition's range starting before the latest end of
    the ranges sorted before it (touching ranges, sharing only an instant, do not overlap)."""
    holders: dict = {}
    for path, (_, ranges) in zip(paths, scans):
        for key, span in ranges.items():
            holders.setdefault(key, []).append((span, path))
    gathered = {}
    for key, spans in holders.items():
        ordered = sorted(span for span, _ in spans)
        ends = np.maximum.accumulate([last for _, last in ordered])
        if any(first < end for (first, _), end in zip(ordered[1:], ends[:-1])):
            gathered[key] = tuple(path for _, path in spans)
    return gathered


def partition_segments(path: str, window: Window, bin_size: float, lags: int,
                       count_cap: int | None = None) -> tuple[list[Segment], int, int]:
    """Map step: the :class:`Segment` of every sequence in one partition, its events outside the window and its
    rows outside the declared domain."""
    segments, outside = [], 0
    for key, per_dim, n_bins, out in window_sequences(path, window, bin_size):
        segments.append(segment_of(key, per_dim, n_bins, bin_size, lags, count_cap))
        outside += out
    return segments, outside, outside_domain(path, window)


def outside_domain(path: str, window: Window) -> int:
    """Rows of one partition outside the declared domain (an undeclared dimension or sequence key, a malformed
    time)."""
    return read_partition(path, window.domain)[3]


def partition_tails(path: str, window: Window, bin_size: float, max_cap: int) -> tuple[np.ndarray, list]:
    """Map step of the automatic count cap: the tail counts of one partition's bins that no other partition
    can share, and the raw rows of those it may share.

    Only a sequence's first and last non-empty bin in a partition can be split with another partition (the
    partitions of a sequence hold disjoint time ranges, or it is read whole: :attr:`Window.gathered`), so those
    rows are returned as ``(sequence, bin, row)`` for :func:`partitioned_tails` to sum before counting, and the
    other bins are counted here (:func:`~dphawkes_core.statistics.binning.count_tails`, ``c = 1 … max_cap``).
    """
    tails, edges = np.zeros(int(max_cap)), []
    for key, per_dim, n_bins, _ in window_sequences(path, window, bin_size):
        bins, dims, raw, _ = sequence_entries(per_dim, n_bins, bin_size)
        if not bins.size:
            continue
        edge_bins = sorted({int(bins[0]), int(bins[-1])})
        tails += count_tails(raw[~np.isin(bins, edge_bins)], max_cap)
        edges += [(key, b, rows_between(bins, dims, raw, b, b + 1, window.dim)[0]) for b in edge_bins]
    return tails, edges


def partitioned_tails(paths, window: Window, bin_size: float, max_cap: int, executor=None) -> np.ndarray:
    """Tail counts ``T[c] = #{(sequence, bin, dimension): X >= c}``, ``c = 1 … max_cap``, of the unclipped
    counts of partitions ``paths`` (mapped over ``executor``): the partitions' own counts plus those of their
    edge bins, summed over partitions first (a bin cut in two is counted once, whole). Equal to
    :func:`~dphawkes_core.statistics.binning.tail_counts` of the in-process counts."""
    mapped = list(map_partitions(executor, partial(partition_tails, window=window, bin_size=bin_size, max_cap=max_cap),
                       paths))
    edge_rows: dict = {}
    for _, edges in mapped:
        for key, b, row in edges:
            edge_rows[(key, b)] = edge_rows.get((key, b), 0) + row
    return sum((t for t, _ in mapped), np.zeros(int(max_cap))) + count_tails(np.array(list(edge_rows.values())),
                                                                                max_cap)


def window_sequences(path: str, window: Window, bin_size: float):
    """``(sequence value, per-dimension times relative to the window start, n_bins, events outside the
    window)`` of every sequence in one partition; a gathered sequence (:attr:`Window.gathered`) whole, from its
    first partition, and not from the others."""
    times, dims, seqs, _ = read_partition(path, window.domain)
    for key, rows in _by_sequence(seqs):
        holders = window.gathered.get(key)
        if holders is not None and path != holders[0]:
            continue
        end = window.ends[key] - window.start
        absolute, dim = (times[rows], dims[rows]) if holders is None else _gathered_rows(key, holders, window.domain)
        rel = absolute - window.start
        inside = (rel >= 0) & (rel <= end)
        per_dim = [rel[inside & (dim == j)] for j in range(window.dim)]
        yield key, per_dim, bins_in_window(end, bin_size), int(absolute.size - np.count_nonzero(inside))


def _gathered_rows(key, paths, domain: Domain) -> tuple[np.ndarray, np.ndarray]:
    """Times and dimensions of sequence ``key``'s rows in every partition of ``paths``."""
    times, dims = [], []
    for path in paths:
        t, d, seqs, _ = read_partition(path, domain)
        rows = dict(_by_sequence(seqs)).get(key)
        if rows is not None:
            times.append(t[rows])
            dims.append(d[rows])
    return np.concatenate(times), np.concatenate(dims)


def _by_sequence(seqs: np.ndarray) -> list[tuple[object, np.ndarray]]:
    """``(sequence value, row indices)`` of every sequence in a partition."""
    keys, inverse = np.unique(seqs, return_inverse=True)
    order = np.argsort(inverse, kind="stable")
    groups = np.split(order, np.cumsum(np.bincount(inverse, minlength=keys.size))[:-1])
    return [(_key(k), rows) for k, rows in zip(keys, groups)]


def hold_first_bin(per_dim, width: float, cap: int | None) -> tuple[list, list, int]:
    """One partition's events of a sequence kept under ``cap`` per (dimension, w-bin), split into those settled
    here and those pending: the kept events of the partition's first w-bin, which an earlier partition may share
    (keep-first-C there is decided only when the partitions meet).

    Parameters
    ----------
    per_dim : list of numpy.ndarray
        Each dimension's sorted times (relative to the window start), not all empty.
    width : float
        The w-bin width the cap counts in.
    cap : int or None
        C, or None (no cap: nothing is clipped and nothing pends).

    Returns
    -------
    settled, pending : list of numpy.ndarray
        Per dimension, the kept events settled here and the kept events of the first w-bin held back.
    clipped : int
        Events the cap removed within this partition.
    """
    first = min(float(t[0]) for t in per_dim if t.size)
    first_bin = bin_index(np.array([first]), width)[0]
    settled, pending, clipped = [], [], 0
    for t in per_dim:
        keep = keep_first(t, width, cap)
        clipped += int(t.size - np.count_nonzero(keep))
        t = t[keep]
        held = np.zeros(t.size, dtype=bool)
        if cap is not None and t.size:
            lead = min(int(cap), t.size)  # the dimension's kept events of the first bin are among its first C
            held[:lead] = bin_index(t[:lead], width) == first_bin
        settled.append(t[~held])
        pending.append(t[held])
    return settled, pending, clipped


def segment_of(sequence, times, n_bins: int, bin_size: float, lags: int, count_cap: int | None) -> Segment:
    """The :class:`Segment` of one sequence's events (``times[j]`` relative to its window start)."""
    d, p = len(times), int(lags)
    bins, dims, raw, dropped = sequence_entries(times, n_bins, bin_size)
    values = raw if count_cap is None else np.minimum(raw, int(count_cap))
    lo, hi = (int(bins[0]), int(bins[-1]) + 1) if bins.size else (0, 0)
    return Segment(
        sequence=sequence, n_bins=int(n_bins), lo=lo, hi=hi,
        lagged=lagged_products(bins - lo, dims, values, hi - lo, d, p),
        totals=np.bincount(dims, weights=values, minlength=d).astype(float),
        head=rows_between(bins, dims, raw, lo, lo + p + 1, d),
        tail=rows_between(bins, dims, raw, hi - p - 1, hi, d),
        events=int(raw.sum()) + dropped, clipped_events=int((raw - values).sum()), dropped_events=dropped,
        count_cap=count_cap)


def merge_segments(a: Segment, b: Segment) -> Segment:
    """Merge two segments of one sequence, ``a`` before ``b`` (sharing at most one bin).

    Products and totals add; the pairs within ``p`` bins across the boundary, and the re-clipping of a
    bin counted in both, are corrected on the dense window ``[a.hi-p-1, b.lo+p+1)`` (at most ``3p+2`` rows).
    """
    if not a.events - a.dropped_events:
        return replace(b, events=a.events + b.events, dropped_events=a.dropped_events + b.dropped_events)
    if not b.events - b.dropped_events:
        return replace(a, events=a.events + b.events, dropped_events=a.dropped_events + b.dropped_events)
    if a.hi > b.lo + 1:
        raise DataError(f"internal error: sequence {a.sequence!r} has segments overlapping in time (bins "
                        f"{b.lo}..{a.hi - 1}) that were not gathered (build the window with partitioned_window)")
    p = a.lagged.shape[0] - 1
    lagged, totals, clipped = a.lagged + b.lagged, a.totals + b.totals, a.clipped_events + b.clipped_events
    if b.lo - (a.hi - 1) <= p:  # some bins of a and b are within p of each other
        start, stop = a.hi - p - 1, b.lo + p + 1
        rows_a = _placed(a.tail, a.hi - p - 1, start, stop)
        rows_b = _placed(b.head, b.lo, start, stop)
        sign_rows = ((1.0, rows_a + rows_b), (-1.0, rows_a), (-1.0, rows_b))
        for sign, rows in sign_rows:
            kept = _clip(rows, a.count_cap)
            lagged = lagged + sign * dense_lagged_products(kept, p)
            totals = totals + sign * kept.sum(axis=0)
            clipped += int(sign * (rows - kept).sum())
    lo, hi = a.lo, max(a.hi, b.hi)
    head = _placed(a.head, a.lo, lo, lo + p + 1) + _placed(b.head, b.lo, lo, lo + p + 1)
    tail = _placed(a.tail, a.hi - p - 1, hi - p - 1, hi) + _placed(b.tail, b.hi - p - 1, hi - p - 1, hi)
    return replace(a, lo=lo, hi=hi, lagged=lagged, totals=totals, head=head, tail=tail,
                   events=a.events + b.events, clipped_events=clipped,
                   dropped_events=a.dropped_events + b.dropped_events)


def _placed(rows: np.ndarray, first: int, start: int, stop: int) -> np.ndarray:
    """``rows`` (the rows from bin ``first`` on) laid into the dense window ``[start, stop)``."""
    out = np.zeros((stop - start, rows.shape[1]))
    lo, hi = max(first, start), min(first + rows.shape[0], stop)
    if lo < hi:
        out[lo - start:hi - start] = rows[lo - first:hi - first]
    return out


def _clip(rows: np.ndarray, count_cap: int | None) -> np.ndarray:
    return rows if count_cap is None else np.minimum(rows, count_cap)


def reduce_segments(segments, lags: int, count_cap: int | None = None) -> tuple[MomentPieces, dict]:
    """Reduce step: merge each sequence's segments in time order and sum the pieces over sequences.

    Returns
    -------
    pieces : MomentPieces
        Equal to :func:`~dphawkes_core.statistics.moments.moment_pieces` of the whole data.
    counts : dict
        ``n_bins``, ``n_events``, ``binned_events``, ``dropped_events``, ``clipped_events``, ``n_sequences``.

    Raises
    ------
    ConfigError
        When no sequence has more than p bins.
    """
    by_sequence: dict = {}
    for seg in segments:
        by_sequence.setdefault(seg.sequence, []).append(seg)
    merged = []
    for key in sorted(by_sequence, key=str):
        parts = sorted(by_sequence[key], key=lambda s: (s.lo, s.hi))
        whole = parts[0]
        for part in parts[1:]:
            whole = merge_segments(whole, part)
        merged.append(whole)
    p = int(lags)
    long = [s for s in merged if s.n_bins > p]
    if not long:
        raise ConfigError(f"no sequence is longer than p = {p} bins: use a smaller support or bin size")
    heads = np.array([_clip(_placed(s.head, s.lo, 0, p), count_cap) for s in long])
    tails = np.array([_clip(_placed(s.tail, s.hi - p - 1, s.n_bins - p, s.n_bins), count_cap) for s in long])
    pieces = MomentPieces(sum(s.lagged for s in long), sum(s.totals for s in long), heads, tails,
                          np.array([s.n_bins for s in long], dtype=np.int64), len(merged) - len(long), count_cap)
    counts = {"n_bins": int(sum(s.n_bins for s in merged)), "n_events": int(sum(s.events for s in merged)),
              "binned_events": int(sum(s.totals.sum() for s in merged)),
              "dropped_events": int(sum(s.dropped_events for s in merged)),
              "clipped_events": int(sum(s.clipped_events for s in merged)),
              "n_sequences": len(merged)}
    return pieces, counts


def partitioned_window(paths, executor=None, start_time: float | None = None,
                       end_time: float | None = None, dimensions: int | tuple | None = None,
                       sequences: tuple | None = None) -> Window:
    """The windows of a partitioned data set: ``[start_time, end_time]`` when stated, else from 0 (or the
    given start) to each sequence's last event; ``dimensions`` (d, or the names) and ``sequences`` (keys) declared,
    or read from the data when ``None``. A pre-pass over the partitions also finds the sequences whose partitions
    overlap in time (:func:`overlapping_sequences`), to be read whole."""
    names = _declared_names(dimensions)
    domain = Domain(dimensions=names, sequences=sequences)
    start = 0.0 if start_time is None else float(start_time)
    if sequences is not None and end_time is None:
        raise ConfigError("declared sequences need a stated window: give --end-time")
    if end_time is not None and not float(end_time) > start:
        raise ConfigError(f"the window end {end_time} is not after its start {start}")
    paths = list(paths)
    scans = list(map_partitions(executor, partial(scan_partition, domain=domain), paths))
    gathered = overlapping_sequences(paths, scans)
    dim = len(names) if names is not None else max(m for m, _ in scans) + 1
    if dim < 1:
        raise DataError("the partitions hold no events")
    if sequences is not None:
        return Window(start, {k: float(end_time) for k in sequences}, True, dim, names, tuple(sequences), gathered)
    last: dict = {}
    for _, per_seq in scans:
        for key, (_, t) in per_seq.items():
            last[key] = max(t, last.get(key, -np.inf))
    if end_time is not None:
        return Window(start, {k: float(end_time) for k in last}, True, dim, names, gathered=gathered)
    return Window(start, last, False, dim, names, gathered=gathered)


def _declared_names(dimensions: int | tuple | None) -> tuple | None:
    """Declared dimension names: given, or ``0 … d−1`` for a count d."""
    if dimensions is None or isinstance(dimensions, tuple):
        return dimensions
    return tuple(str(j) for j in range(int(dimensions)))


def partitioned_pieces(paths, bin_size: float, lags: int, count_cap: int | None = None, executor=None,
                       start_time: float | None = None, end_time: float | None = None) -> tuple[MomentPieces, dict]:
    """Moment pieces of the data in Parquet partitions ``paths``, mapped over ``executor``.

    Parameters
    ----------
    paths : list of str
        Parquet files with columns ``time, dimension[, sequence]`` (numeric times and dimensions);
        a sequence whose partitions overlap in time is read whole (:attr:`Window.gathered`).
    bin_size : float
        Δ.
    lags : int
        p.
    count_cap : int, optional
        Public per-bin cap C.
    executor : concurrent.futures.Executor, optional
        Where the map steps run (e.g. a Dask cluster's executor); in this process when None.
    start_time, end_time : float, optional
        The observation window ``[start, end]`` of every sequence (stated: public); by default from 0
        to each sequence's last event (read from the data).

    Returns
    -------
    pieces : MomentPieces
        Equal to the in-process pieces of the same events.
    info : dict
        ``data_info`` as from :func:`~dphawkes_core.estimators.prepare_stats`, plus ``partitions`` and
        ``outside_window``.
    """
    check_bin_size(bin_size)
    check_count_cap(count_cap)
    window = partitioned_window(paths, executor, start_time, end_time)
    check_design_size(window.dim, lags)
    return window_pieces(paths, window, bin_size, lags, count_cap, executor)


def window_pieces(paths, window: Window, bin_size: float, lags: int, count_cap: int | None,
                   executor) -> tuple[MomentPieces, DataInfo]:
    """:func:`partitioned_pieces` on an already read :class:`Window`."""
    mapped = list(map_partitions(executor, partial(partition_segments, window=window, bin_size=bin_size, lags=lags,
                                         count_cap=count_cap), paths))
    segments = [s for segs, _, _ in mapped for s in segs]
    if window.keys is not None:  # a declared key without rows: a sequence of empty bins, as in process
        present = {s.sequence for s in segments}
        segments += [segment_of(key, [np.empty(0)] * window.dim, bins_in_window(window.ends[key] - window.start,
                                                                                 bin_size), bin_size, lags, count_cap)
                     for key in window.keys if key not in present]
    pieces, counts = reduce_segments(segments, lags, count_cap)
    outside = sum(o for _, o, _ in mapped)
    info = DataInfo(n_bins=counts["n_bins"], n_events=counts["n_events"], binned_events=counts["binned_events"],
                    dropped_events=counts["dropped_events"], clipped_events=counts["clipped_events"],
                    skipped_sequences=pieces.skipped_sequences, window_stated=window.stated,
                    **window.domain_info(), outside_domain=sum(o for _, _, o in mapped),
                    outside_window=outside, partitions=len(paths))
    return pieces, info


def map_partitions(executor, fn, items):
    """``fn`` over ``items``: in this process without an executor, else on it (the map step of every reduce)."""
    return map(fn, items) if executor is None else executor.map(fn, items)


def _key(value):
    """A sequence value as a plain Python scalar (the same key from every partition)."""
    return value.item() if isinstance(value, np.generic) else value


_LANE_SALTS = np.array([0x9E3779B97F4A7C15, 0xC2B2AE3D27D4EB4F, 0x165667B19E3779F9, 0x27D4EB2F165667C5],
                       dtype=np.uint64)  # four independent 64-bit lanes of the multiset hash


def partitioned_fingerprint(paths, window: Window, executor=None) -> str:
    """Fingerprint of the events of partitions ``paths`` in ``window``: what a declaration made of the store's
    rows (a release's identity; the ledger key of format 2 — the ledger's key is now
    :func:`partitioned_rows_key`).

    A hash of the multiset of in-window events ``(sequence, dimension, time)`` and of the window (start,
    each sequence's end, d): every event is mixed into four 64-bit lanes in the map step
    (:func:`partition_fingerprint`) and the lanes add modulo 2⁶⁴ over partitions, so the fingerprint is
    the same whatever the files' names, dates, encoding, row order or partitioning — a renamed, copied,
    rewritten or re-partitioned store keeps its ledger — and one event more or less changes it. It is an
    identifier, not a cryptographic commitment (rows could be crafted to collide); it differs from
    :func:`~dphawkes_core.release.ledger.data_fingerprint` of the same events loaded from one file
    (``docs/scale.md``, "Privacy ledger").
    """
    lanes = sum((lane for lane in map_partitions(executor, partial(partition_fingerprint, window=window), paths)),
                np.zeros(_LANE_SALTS.size, dtype=np.uint64))
    digest = hashlib.sha256(b"dphawkes-partitions-v1")
    digest.update(np.float64([window.start, window.dim]).tobytes())
    for key in sorted(window.ends, key=repr):
        digest.update(f"{key!r}={window.ends[key]!r};".encode())
    digest.update(lanes.tobytes())
    return "partitions-" + digest.hexdigest()


def partitioned_rows_key(paths, executor=None) -> str:
    """The privacy ledger's key of a partitioned store: the key of every row of every partition
    (:mod:`~dphawkes_core.data.row_key`; the lanes add over partitions), whatever is declared about them — the same as
    the key of those rows in one CSV or Parquet file, so a store and its copy share one budget."""
    mapped = list(map_partitions(executor, partition_rows, paths))
    return rows_key(sum((lanes for lanes, _ in mapped), no_lanes()), sum(n for _, n in mapped))


def partition_rows(path: str) -> tuple[np.ndarray, int]:
    """Map step of :func:`partitioned_rows_key`: the lanes and the number of one partition's rows, as stored
    (none dropped or refused)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    name = Path(path).name
    try:
        table = pq.read_table(path)
    except (pa.ArrowException, OSError) as exc:
        raise DataError(f"{name}: not a readable Parquet file ({str(exc).splitlines()[0]})") from None
    columns = {str(c).strip().lower(): table.column(c) for c in table.column_names}
    if "time" not in columns or "dimension" not in columns:
        raise DataError(f"{name}: expected columns time,dimension[,sequence]")
    raw = {c: _stored_values(columns[c]) for c in PARTITION_COLUMNS if c in columns}
    return row_lanes(raw["time"], raw["dimension"], raw.get("sequence")), table.num_rows


def _stored_values(column) -> np.ndarray:
    """A column's cells: numbers (missing as NaN; booleans as 1 and 0, as every reader reads them:
    :func:`~dphawkes_core.data.io.table_columns`), datetimes, or text (missing as empty)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if pa.types.is_boolean(column.type):
        column = column.cast(pa.float64())
    if pa.types.is_integer(column.type) or pa.types.is_floating(column.type):
        return column.to_numpy(zero_copy_only=False).astype(np.float64)
    if pa.types.is_timestamp(column.type) or pa.types.is_date(column.type):
        return column.cast(pa.timestamp("ns")).to_numpy().astype("datetime64[ns]")
    return pc.fill_null(column.cast(pa.string()), "").to_numpy(zero_copy_only=False).astype(object)


def partition_fingerprint(path: str, window: Window) -> np.ndarray:
    """Map step of :func:`partitioned_fingerprint`: the four lanes summed over one partition's in-window events."""
    lanes = np.zeros(_LANE_SALTS.size, dtype=np.uint64)
    for key, per_dim, _, _ in window_sequences(path, window, 1.0):
        seq_hash = np.uint64(int.from_bytes(hashlib.sha256(repr(key).encode()).digest()[:8], "little"))
        for dim, times in enumerate(per_dim):
            bits = np.ascontiguousarray(times, dtype=np.float64).view(np.uint64)
            mixed = _mix(_mix(_mix(bits[None, :] ^ _LANE_SALTS[:, None]) ^ np.uint64(dim)) ^ seq_hash)
            lanes += mixed.sum(axis=1, dtype=np.uint64)  # arrays: the sums wrap modulo 2⁶⁴
    return lanes


def _mix(x: np.ndarray) -> np.ndarray:
    """SplitMix64's finaliser on every entry (a bijection of 64-bit words; products wrap modulo 2⁶⁴)."""
    x = x ^ (x >> np.uint64(30))
    x = x * np.uint64(0xBF58476D1CE4E5B9)
    x = x ^ (x >> np.uint64(27))
    x = x * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))
