"""The exponential family's statistics (:mod:`dphawkes_core.estimators.exp.statistics`) of a partitioned event store
as a map-reduce (Dask, or any executor), equal to the in-process
:func:`~dphawkes_core.estimators.exp.statistics.exp_pieces` up to the order of floating-point sums.

An exponential kernel has no finite support, so a partition cannot count its pairs alone as ctls's can; but
everything before a partition's first event reaches it only through one number per (decay, dimension), the state
``s = g(τ_1−)`` at its first event τ_1, and the statistics are polynomials of degree at most two in s. Between τ_1 and
the partition's last event τ_n, ``g(t) = g⁰(t) + s_u e^{−β_u (t − τ_1)}`` (``g⁰``: the partition's own events), so

* ``∫ g_c g_c' = ∫ g⁰_c g⁰_c' + s_c R[u_c, c'] + s_c' R[u_c', c] + s_c s_c' K_{u_c u_c'}``, with the *response*
  ``R[u, c] = ∫ e^{−β_u (t − τ_1)} g⁰_c dt`` and ``K_uv = (1 − e^{−(β_u + β_v)(τ_n − τ_1)})/(β_u + β_v)``;
* ``∫ g_c = ∫ g⁰_c + s_c (1 − e^{−β_u (τ_n − τ_1)})/β_u``;
* ``c_i[c] = c⁰_i[c] + s_c Σ_{t ∈ i} e^{−β_u (t − τ_1)}``;
* the state after τ_n is the partition's own plus ``s e^{−β (τ_n − τ_1)}``.

The map step computes, per sequence of a partition, the partition's own pieces on ``[τ_1, τ_n]`` and R (the Gram of
a *probe*: one extra source with a single event at τ_1, whose column of decay u is ``β_u e^{−β_u (t − τ_1)}``,
through the same recursion, :func:`~dphawkes_core.estimators.exp.statistics.sequence_pieces`); the reduce merges a
sequence's parts in time order, carrying the state, and adds the interval between two parts and the last one up
to the window's end. Events at the same instant in two partitions (ranges that touch) see the state *before* that
instant, as in process, so the state is carried both just after and just before the last event.

The cap (the first C per dimension and w-bin) is enforced as ctls's partitioned statistics enforce it
(:mod:`~dphawkes_core.estimators.grid_free.partitioned`): a part's kept events of its *first* w-bin are held back
(an earlier partition may hold the start of that bin); the reduce keeps the first ``C − m`` of them, m the events
the earlier parts kept in that bin, and merges them as a part of their own before the rest. Partitions may split
the data by sequence, by time, or both; a sequence whose partitions overlap in time is read whole from its first
partition (``Window.gathered``).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import partial

import numpy as np

from dphawkes_core.errors import ConfigError, DataError
from dphawkes_core.estimators.binned import partitioned_count_cap
from dphawkes_core.estimators.exp.statistics import ExpPieces, sequence_pieces, stats_from_pieces
from dphawkes_core.statistics.binning import bin_index, bins_in_window
from dphawkes_core.statistics.info import DataInfo
from dphawkes_core.statistics.partitioned import (
    Window,
    hold_first_bin,
    map_partitions,
    outside_domain,
    window_sequences,
)
from dphawkes_core.validation import check_bin_size


@dataclass(frozen=True)
class ExpPart:
    """The statistics of some of one sequence's events, all at or after ``first``, with no history before it.

    Attributes
    ----------
    first, last : float
        τ_1 and τ_n, the part's first and last event (relative to the window start).
    gram, integral, pairs, totals : numpy.ndarray
        The part's own pieces on ``[τ_1, τ_n]`` (layout of :class:`~dphawkes_core.estimators.exp.statistics.ExpPieces`).
    response : numpy.ndarray
        ``(U, dU)``: ``R[u, c] = ∫_{τ_1}^{τ_n} e^{−β_u (t − τ_1)} g⁰_c(t) dt``.
    reach : numpy.ndarray
        ``(d, U)``: ``Σ_{t ∈ i, t > τ_1} e^{−β_u (t − τ_1)}`` (how much of the incoming state each dimension's
        later events see).
    at_first : numpy.ndarray
        ``(d,)`` events at τ_1 (they see the state just before τ_1).
    after, before : numpy.ndarray
        ``(U, d)``: the part's own state just after τ_n and just before it (``g⁰(τ_n−)``).
    last_bin : int
        The w-bin of τ_n.
    last_bin_counts : numpy.ndarray
        ``(d,)`` the part's events in that w-bin.
    """

    first: float
    last: float
    gram: np.ndarray
    integral: np.ndarray
    pairs: np.ndarray
    totals: np.ndarray
    response: np.ndarray
    reach: np.ndarray
    at_first: np.ndarray
    after: np.ndarray
    before: np.ndarray
    last_bin: int
    last_bin_counts: np.ndarray


def exp_part(t: np.ndarray, dims: np.ndarray, dim: int, decays, width: float) -> ExpPart | None:
    """The :class:`ExpPart` of the events ``(t, dims)`` (sorted by time); None without events."""
    if not t.size:
        return None
    beta = np.asarray(decays, dtype=np.float64)
    d, U = int(dim), beta.size
    first, last = float(t[0]), float(t[-1])
    probe_t = np.concatenate([[first], t])
    probe_dims = np.concatenate([[d], dims])  # the probe is source d, before the part's events at τ_1
    gram, integral, pairs = sequence_pieces(probe_t, probe_dims, last, d + 1, beta)
    own = np.array([u * (d + 1) + j for u in range(U) for j in range(d)])
    probe = np.array([u * (d + 1) + d for u in range(U)])
    later = t > first
    reach = np.stack([np.bincount(dims, weights=np.exp(-b * (t - first)) * later, minlength=d) for b in beta], axis=1)
    since = np.exp(-np.outer(beta, last - t)) * beta[:, None]  # (U, n): β_u e^{−β_u (τ_n − t)}
    after = np.stack([np.bincount(dims, weights=since[u], minlength=d) for u in range(U)])
    before = np.stack([np.bincount(dims, weights=since[u] * (t < last), minlength=d) for u in range(U)])
    last_bin = int(bin_index(np.array([last]), width)[0])
    in_last = bin_index(t, width) == last_bin
    return ExpPart(first, last, gram[np.ix_(own, own)], integral[own], pairs[:d][:, own],
                   np.bincount(dims, minlength=d).astype(float), gram[np.ix_(probe, own)] / beta[:, None], reach,
                   np.bincount(dims[t == first], minlength=d).astype(float), after, before, last_bin,
                   np.bincount(dims[in_last], minlength=d))


@dataclass(frozen=True)
class ExpSegment:
    """One sequence's events inside one partition, reduced.

    Attributes
    ----------
    sequence : object
        The sequence's value in the ``sequence`` column.
    end : float
        The sequence's window end T (relative to its start).
    pending : tuple of numpy.ndarray
        ``(times, dimensions)``: the events of the first w-bin kept by this partition's own cap, not settled yet
        (none without a cap).
    settled : ExpPart or None
        The part of the other kept events (all in later w-bins).
    first, last : float
        The first and the last event in the window (NaN without events).
    events, clipped : int
        In-window events; events the cap removed.
    """

    sequence: object
    end: float
    pending: tuple
    settled: ExpPart | None
    first: float
    last: float
    events: int
    clipped: int


def _merged(per_dim) -> tuple[np.ndarray, np.ndarray]:
    t = np.concatenate([np.asarray(x, dtype=np.float64) for x in per_dim]) if per_dim else np.zeros(0)
    dims = np.concatenate([np.full(len(x), j, dtype=np.int64) for j, x in enumerate(per_dim)]) if per_dim else \
        np.zeros(0, dtype=np.int64)
    order = np.argsort(t, kind="stable")
    return t[order], dims[order]


def exp_segment(sequence, per_dim, end: float, decays, width: float, cap: int | None) -> ExpSegment:
    """Map step for one sequence: the :class:`ExpSegment` of its events ``per_dim[j]`` (relative to its window
    start) in one partition."""
    d = len(per_dim)
    per_dim = [np.sort(np.asarray(t, dtype=np.float64)) for t in per_dim]
    events = int(sum(t.size for t in per_dim))
    if not events:
        return ExpSegment(sequence, float(end), _merged([]), None, np.nan, np.nan, 0, 0)
    first = min(float(t[0]) for t in per_dim if t.size)
    last = max(float(t[-1]) for t in per_dim if t.size)
    settled, pending, clipped = hold_first_bin(per_dim, width, cap)
    part = exp_part(*_merged(settled), d, decays, width)
    return ExpSegment(sequence, float(end), _merged(pending), part, first, last, events, clipped)


@dataclass(frozen=True)
class History:
    """A sequence's statistics so far, from its window start to its last merged event ``time``, and the state
    there: ``after`` (``g`` just after ``time``) and ``before`` (``g(time−)``), each ``(U, d)``."""

    gram: np.ndarray
    integral: np.ndarray
    pairs: np.ndarray
    totals: np.ndarray
    time: float | None
    after: np.ndarray
    before: np.ndarray
    last_bin: int | None
    last_bin_counts: np.ndarray
    kept: int

    @classmethod
    def empty(cls, dim: int, n_decays: int) -> History:
        q = dim * n_decays
        zero = np.zeros((n_decays, dim))
        return cls(np.zeros((q, q)), np.zeros(q), np.zeros((dim, q)), np.zeros(dim), None, zero, zero, None,
                   np.zeros(dim, dtype=np.int64), 0)


def _decayed(history: History, until: float, beta: np.ndarray) -> History:
    """``history`` carried to ``until`` (no event in between): the integrals over ``(time, until]`` added."""
    if history.time is None or until <= history.time:
        return history
    gap = until - history.time
    x = history.after.ravel()  # decay-major, as the columns
    rates = np.repeat(beta, history.after.shape[1])
    pair_rates = rates[:, None] + rates[None, :]
    fade = np.exp(-beta * gap)[:, None]
    return replace(history, gram=history.gram + np.outer(x, x) * (-np.expm1(-pair_rates * gap) / pair_rates),
                   integral=history.integral + x * (-np.expm1(-rates * gap) / rates), time=until,
                   after=history.after * fade, before=history.after * fade)


def extend(history: History, part: ExpPart | None, decays) -> History:
    """``history`` followed by ``part`` (whose first event is at or after ``history.time``)."""
    if part is None:
        return history
    beta = np.asarray(decays, dtype=np.float64)
    history = _decayed(history, part.first, beta)
    U, d = history.after.shape
    s_after, s_before = history.after.ravel(), history.before.ravel()
    rates = np.repeat(beta, d)
    span = part.last - part.first
    pair_rates = rates[:, None] + rates[None, :]
    response = np.repeat(part.response, d, axis=0)  # row c: R[u_c, ·]
    cross = s_after[:, None] * response
    gram = (history.gram + part.gram + cross + cross.T
            + np.outer(s_after, s_after) * (-np.expm1(-pair_rates * span) / pair_rates))
    integral = history.integral + part.integral + s_after * (-np.expm1(-rates * span) / rates)
    pairs = (history.pairs + part.pairs + np.repeat(part.reach, d, axis=1) * s_after[None, :]
             + part.at_first[:, None] * s_before[None, :])
    fade = np.exp(-beta * span)[:, None]
    carried = history.after * fade
    before = part.before + (carried if span > 0 else history.before)
    same_bin = history.last_bin == part.last_bin
    counts = part.last_bin_counts + (history.last_bin_counts if same_bin else 0)
    return History(gram, integral, pairs, history.totals + part.totals, part.last, part.after + carried, before,
                   part.last_bin, counts, history.kept + int(part.totals.sum()))


def _settle_pending(history: History, segment: ExpSegment, cap: int | None, decays, width: float
                    ) -> tuple[History, int]:
    """``segment``'s pending events, per dimension the first ``C − m`` (m: the events ``history`` kept in their
    w-bin), merged into ``history``; and how many the cap removed."""
    t, dims = segment.pending
    if not t.size:
        return history, 0
    d = history.totals.size
    allowed = np.full(d, int(cap))
    if history.last_bin is not None and history.last_bin == bin_index(t[:1], width)[0]:
        allowed = np.maximum(allowed - history.last_bin_counts, 0)
    rank = np.zeros(t.size, dtype=np.int64)
    for j in range(d):
        rows = dims == j
        rank[rows] = np.arange(int(np.count_nonzero(rows)))
    keep = rank < allowed[dims]
    return extend(history, exp_part(t[keep], dims[keep], d, decays, width), decays), int(t.size - keep.sum())


def merge_sequence(segments, dim: int, decays, width: float, cap: int | None) -> tuple[History, dict]:
    """One sequence's segments (any order) merged in time order, up to its window's end: its :class:`History`
    and counts (``events``, ``clipped``)."""
    full = sorted((s for s in segments if s.events), key=lambda s: (s.first, s.last))
    history = History.empty(dim, len(decays))
    events = clipped = 0
    for seg in full:
        if history.time is not None and seg.first < history.time:
            raise DataError(f"internal error: sequence {seg.sequence!r} has segments overlapping in time "
                            f"({seg.first:g} .. {history.time:g}) that were not gathered (build the window with "
                            "partitioned_window)")
        history, removed = _settle_pending(history, seg, cap, decays, width)
        history = extend(history, seg.settled, decays)
        events, clipped = events + seg.events, clipped + seg.clipped + removed
    end = segments[0].end
    return _decayed(history, end, np.asarray(decays, dtype=np.float64)), {"events": events, "clipped": clipped}


def reduce_exp_segments(segments, dim: int, decays, width: float, cap: int | None) -> tuple[ExpPieces, dict]:
    """Reduce step: merge each sequence's segments and sum the pieces over sequences, as
    :func:`~dphawkes_core.estimators.exp.statistics.exp_pieces` does in process.

    Returns
    -------
    pieces : ExpPieces
    counts : dict
        ``kept``, ``clipped``, ``events``, ``n_bins``, ``sequences``.
    """
    by_sequence: dict = {}
    for seg in segments:
        by_sequence.setdefault(seg.sequence, []).append(seg)
    q = dim * len(decays)
    gram, integral, pairs, totals = np.zeros((q, q)), np.zeros(q), np.zeros((dim, q)), np.zeros(dim)
    duration = 0.0
    counts = {"kept": 0, "clipped": 0, "events": 0, "n_bins": 0, "sequences": len(by_sequence)}
    for key in sorted(by_sequence, key=str):
        history, seq_counts = merge_sequence(by_sequence[key], dim, decays, width, cap)
        gram, integral, pairs = gram + history.gram, integral + history.integral, pairs + history.pairs
        totals = totals + history.totals
        end = by_sequence[key][0].end
        duration += end
        counts["kept"] += history.kept
        counts["clipped"] += seq_counts["clipped"]
        counts["events"] += seq_counts["events"]
        counts["n_bins"] += bins_in_window(end, width)
    if duration <= 0:
        raise ConfigError("the exponential-kernel fit needs a window of positive length")
    pieces = ExpPieces(gram, integral, pairs, totals, tuple(float(b) for b in decays), duration, len(by_sequence),
                       None if cap is None else int(cap))
    return pieces, counts


def partition_exp_segments(path: str, window: Window, decays, width: float,
                           cap: int | None) -> tuple[list[ExpSegment], int, int]:
    """Map step: the :class:`ExpSegment` of every sequence in one partition, its events outside the window and its
    rows outside the declared domain."""
    segments, outside = [], 0
    for key, per_dim, _, out in window_sequences(path, window, width):
        segments.append(exp_segment(key, per_dim, window.ends[key] - window.start, decays, width, cap))
        outside += out
    return segments, outside, outside_domain(path, window)


def window_exp_pieces(paths, window: Window, decays, width: float, cap: int | None,
                      executor=None) -> tuple[ExpPieces, DataInfo]:
    """The exponential family's pieces of the events of partitions ``paths`` in ``window`` kept under ``cap`` (map
    steps over ``executor``, in this process when None), and the data info as the in-process statistics give it
    (plus ``outside_window`` and ``partitions``)."""
    check_bin_size(width)
    mapped = list(map_partitions(
        executor, partial(partition_exp_segments, window=window, decays=tuple(decays), width=width, cap=cap), paths))
    segments = [s for segs, _, _ in mapped for s in segs]
    if window.keys is not None:  # a declared key without rows: a sequence without events, as in process
        present = {s.sequence for s in segments}
        segments += [exp_segment(key, [np.empty(0)] * window.dim, window.ends[key] - window.start, decays, width,
                                 cap) for key in window.keys if key not in present]
    if not segments:
        raise DataError("the partitions hold no events in the window")
    pieces, counts = reduce_exp_segments(segments, window.dim, decays, width, cap)
    info = DataInfo(n_bins=counts["n_bins"], n_events=counts["events"], binned_events=counts["kept"],
                    dropped_events=0, clipped_events=counts["clipped"], skipped_sequences=0,
                    window_stated=window.stated, **window.domain_info(), outside_domain=sum(o for _, _, o in mapped),
                    outside_window=sum(o for _, o, _ in mapped), partitions=len(paths))
    return pieces, info


def prepare_exp_partitioned(paths, config, window: Window, executor=None):
    """:meth:`Exp.prepare_partitioned <dphawkes_core.estimators.exp.Exp.prepare_partitioned>`: the
    :class:`~dphawkes_core.estimators.exp.statistics.ExpStats` of ``config`` on Parquet partitions in ``window``, as
    ``Exp.prepare_stats`` gives them for the same events in one process.

    With ``config.count_cap = "auto"``, C is chosen first from the partitioned w-bin count tails
    (:func:`~dphawkes_core.statistics.partitioned.partitioned_tails`) with the in-process release and noise stream
    (the same C on the same events and seed), then the pieces are reduced under it (a second pass).
    """
    label = config.family.label
    if config.unit.name != "event":
        raise ConfigError(f"{label}: partitioned statistics are of the event unit only; fit the "
                          f"{config.unit.name} unit on the events loaded into one process")
    if config.exp_likelihood:
        raise ConfigError(f"{label}: maximum likelihood reads every event's intensity, so it runs on one events "
                          "file, not on partitions")
    check_bin_size(config.bin_size)
    cap, auto = partitioned_count_cap(paths, window, config, executor)
    pieces, info = window_exp_pieces(paths, window, config.decays, config.bin_size, cap, executor)
    return stats_from_pieces(pieces, config.bin_size, config.lags), info.updated(
        count_cap=cap, auto_count_cap=auto.to_dict() if auto is not None else None)
