"""Statistics of exact event times shared by the families that fit them (the grid-free least squares and the
maximum likelihood, neither owning them): the pair pieces of exact event times that the continuous-time
least-squares contrast with step kernels is made of (of the events kept under the cap,
:func:`~dphawkes_core.statistics.binning.keep_first`), and ``G`` and ``c`` assembled from the pieces
(:class:`GridFreeStats`). The model, the boundary terms
and the layout are described in :mod:`dphawkes_core.estimators.grid_free`, the family that fits and releases
them; this module only counts.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from dphawkes_core.errors import ConfigError
from dphawkes_core.statistics.binning import keep_first
from dphawkes_core.statistics.moments import SufficientStats
from dphawkes_core.statistics.pair_passes import offset_cells
from dphawkes_core.validation import check_bin_size

_PAIR_CHUNK = 1 << 20  # events whose later partners are enumerated at once (bounds the temporaries)

# --- the pieces -------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class GridFreePieces:
    """Everything ``G`` and ``c`` are made of, summed over sequences, in units of w (times divided by w).

    Attributes
    ----------
    lagged : numpy.ndarray
        ``(B, d, d)``: ``R[m, j, j'] = Σ_{x ∈ j, y ∈ j'} tri(x − y + m)`` (tri(x) = max(0, 1 − |x|); ``R[0]``
        symmetric, its diagonal includes each event with itself).
    pairs : numpy.ndarray
        ``(B, d, d)``: ``P[b, i, j] = #{(t ∈ i, u ∈ j) : t − u ∈ (b, b+1]}``.
    totals : numpy.ndarray
        ``(d,)`` events per dimension.
    head_gram, tail_gram : numpy.ndarray
        ``(dB, dB)`` ``∫ φ_K φ_Kᵀ`` over ``t < s`` and over ``t > T`` (φ_K: the kernel part of φ, lag-major).
    head_int, tail_int : numpy.ndarray
        ``(dB,)`` ``∫ N_j^b`` over ``t < s`` and over ``t > T``.
    head_pairs : numpy.ndarray
        ``(d, dB)`` the pairs of ``pairs`` whose target is in the head (``t < s``), as ``[i, b·d + j]``.
    head_counts : numpy.ndarray
        ``(d,)`` events in the heads.
    duration : float
        ``N = Σ (T − s)/w`` over the sequences used (public).
    total_time : float
        ``Σ T/w`` over the sequences used (public).
    edge_time : float
        ``Σ min(T, 2s)/w``: the time within s of a window's start or end (public; it sets the default edge share).
    sequences : int
        Sequences used (``T > s``).
    skipped_sequences : int
        Sequences with ``T <= s``.
    count_cap : int or None
        The cap C the events were kept under.
    """

    lagged: np.ndarray
    pairs: np.ndarray
    totals: np.ndarray
    head_gram: np.ndarray
    tail_gram: np.ndarray
    head_int: np.ndarray
    tail_int: np.ndarray
    head_pairs: np.ndarray
    head_counts: np.ndarray
    duration: float
    total_time: float
    sequences: int
    skipped_sequences: int = 0
    count_cap: int | None = None
    edge_time: float = 0.0

    @property
    def dim(self) -> int:
        """d."""
        return int(self.totals.shape[0])

    @property
    def lags(self) -> int:
        """B."""
        return int(self.lagged.shape[0])


def toeplitz_pieces(x: np.ndarray, dims: np.ndarray, dim: int, lags: int, rows: tuple | None = None
                    ) -> tuple[np.ndarray, np.ndarray]:
    """``R`` and ``P`` (:class:`GridFreePieces`) of one sequence: ``x`` times in units of w, sorted; ``dims``.

    Every pair (earlier e, later l) with ``δ = x_l − x_e <= B`` is visited once (offset by offset, a pair
    leaving the range ends its row: the times are sorted) and counted in its cell ``(⌊δ⌋, j_e, j_l)``, once
    plainly and once weighted by ``f = δ − ⌊δ⌋``. Then ``R[m] = counts[m] − F[m] + F[m−1]`` (a pair adds
    ``1 − f`` to ``R[⌊δ⌋, j_e, j_l]`` and f to the next lag), plus ``1 − δ`` to ``R[0, j_l, j_e]`` for ``δ < 1``
    (its ``x = l`` term) and 1 to ``R[0, j, j]`` per event; ``P[b, j_l, j_e]`` counts the pairs with
    ``δ ∈ (b, b+1]``: those of cell b, except a whole ``δ`` (one lag lower; ``δ = 0`` is no pair). The pairs are
    counted by one pass (:func:`~dphawkes_core.statistics.pair_passes.offset_cells`: NumPy, or compiled where that
    pays), which with ``rows`` also counts the sequence's rows of the likelihood's dense design.
    """
    d, B = int(dim), int(lags)
    counts, weighted, whole, near = offset_cells(x, dims * d, dims, d, B, _PAIR_CHUNK, rows)
    counts, weighted, whole = (a.reshape(B + 2, d, d) for a in (counts, weighted, whole))
    lagged = counts[:B] - weighted[:B]
    lagged[1:] += weighted[:B - 1]
    lagged[0] += near.reshape(d, d).T + np.diag(np.bincount(dims, minlength=d).astype(float))
    moved = counts - whole
    moved[:-1] += whole[1:]
    return lagged, np.ascontiguousarray(moved[:B].transpose(0, 2, 1))


def edge_pieces(x: np.ndarray, dims: np.ndarray, seq: np.ndarray, bound: np.ndarray, dim: int, lags: int,
                side: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The head (``side="head"``: ``t < bound``, bound = B) or tail (``"tail"``: ``t > bound``, bound = T/w) parts
    of ``∫ φ_K φ_Kᵀ``, ``∫ φ_K`` and (head only) the pairs whose target is in the head, for the events that
    can reach them (``x`` sorted within each sequence ``seq``, in units of w; ``bound`` per event).

    A pair (earlier e, later l, ``δ = ⌊δ⌋ + f``) overlaps ``(x_e + b, x_e + b + 1]`` with ``(x_l + b', …]`` for
    ``b − b' = k = ⌊δ⌋`` (on ``(x_e + b + f, x_e + b + 1]``, length 1 − f) and ``k = ⌊δ⌋ + 1`` (on
    ``(x_e + b, x_e + b + f]``, length f), each cut at the bound; it adds that length to ``[(b, j_e), (b', j_l)]``
    and its transpose, an event with itself to the diagonal. Cut at the bound, the length is the whole one on a
    run of consecutive b (the head: those ending before the bound; the tail: those starting after it), a part at
    most at one b, and 0 elsewhere; so each pair adds its run to a difference array over b (at its first b and,
    negated, after its last) and its part directly, and one cumulative sum over b gives every cell: ``O(pairs +
    B²d²)``, where laying each pair out over its B steps took ``O(pairs·B)`` and a ``(dB)²``-long ``bincount`` per
    offset (0.84 s of a 1.0 s fit at B = 160 on paper-4d, 50,000 events).

    Returns
    -------
    gram : (dB, dB) ndarray
    integral : (dB,) ndarray
    head_pairs : (d, dB) ndarray
    """
    d, B = int(dim), int(lags)
    q = d * B
    head = side == "head"
    steps = np.arange(B, dtype=np.float64)
    # each event with itself: (x + b, x + b + 1] on the diagonal; the same lengths are ∫ N_j^b
    start, edge = x[:, None] + steps, bound[:, None]
    own = np.maximum(np.minimum(start + 1.0, edge) - start, 0.0) if head else np.maximum(
        start + 1.0 - np.maximum(start, edge), 0.0)  # (n, B)
    cols = steps.astype(np.int64)[None, :] * d + dims[:, None]
    integral = np.bincount(cols.ravel(), weights=own.ravel(), minlength=q)
    earlier, later = _near_pairs(x, seq, B)
    delta = x[later] - x[earlier]
    whole = np.floor(delta)
    frac = delta - whole
    whole = whole.astype(np.int64)
    pair = (x[earlier], dims[earlier], dims[later], bound[earlier])
    keys, values = zip(*(_run_and_part(pair, k, lo, hi, d, B, head)
                         for k, lo, hi in ((whole, frac, np.ones_like(frac)), (whole + 1, np.zeros_like(frac), frac))))
    head_pairs = np.zeros(d * q)
    if head:
        positive = delta > 0
        bb = np.ceil(delta[positive]).astype(np.int64) - 1
        fits = bb < B
        je, jl = dims[earlier][positive][fits], dims[later][positive][fits]
        head_pairs += np.bincount(jl * q + bb[fits] * d + je, minlength=d * q)
    cells = _cells_from_runs(keys, values, d, B)
    return cells + cells.T + np.diag(integral), integral, head_pairs.reshape(d, q)


def _near_pairs(x: np.ndarray, seq: np.ndarray, lags: int) -> tuple[np.ndarray, np.ndarray]:
    """The pairs (earlier, later) of events of one sequence at most ``lags`` apart (``x`` sorted within each
    sequence), offset by offset."""
    earlier, later = [], []
    n = x.size
    offset = 1
    active = np.arange(max(n - 1, 0))
    while active.size:
        partner = active + offset
        near = (seq[partner] == seq[active]) & (x[partner] - x[active] <= lags)  # sorted: a pair further is no nearer
        active = active[near]
        earlier.append(active)
        later.append(active + offset)
        offset += 1
        active = active[active + offset < n]
    if not earlier:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    return np.concatenate(earlier), np.concatenate(later)


def _run_and_part(pair: tuple, k: np.ndarray, lo: np.ndarray, hi: np.ndarray, d: int, B: int, head: bool
                  ) -> tuple[np.ndarray, np.ndarray]:
    """The difference-array entries (keys ``((k·d + j_e)·d + j_l)·(B+1) + b``, values) of the overlaps
    ``(x_e + b + lo, x_e + b + hi]`` at lag difference k of the pairs ``(x_e, j_e, j_l, bound)``, cut at the bound:
    ``hi − lo`` from the run's first b to its end, and the part at the one b the bound cuts (a run of one b)."""
    length = hi - lo
    ok = (k < B) & (length > 0)
    x, source, target, bound = (a[ok] for a in pair)
    k, lo, hi, length = k[ok], lo[ok], hi[ok], length[ok]
    base = ((k * d + source) * d + target) * (B + 1)
    cut = np.floor(bound - x - hi).astype(np.int64) + 1  # the first b whose interval ends after the bound
    cut_at = np.minimum(np.maximum(cut, 0), B)
    if head:  # whole on [k, cut); the part at cut: up to the bound
        first, last = k, np.maximum(np.minimum(cut_at, B), k)
        part = np.minimum(np.maximum(bound - (x + cut_at + lo), 0.0), length)
    else:  # the part at cut: from the bound; whole after it
        first, last = np.maximum(k, np.minimum(cut_at + 1, B)), np.full_like(k, B)
        part = np.minimum(np.maximum(x + cut_at + hi - np.maximum(x + cut_at + lo, bound), 0.0), length)
    has_part = (cut >= k) & (cut < B) & (part > 0)
    at = cut[has_part]
    keys = np.concatenate([base + first, base + last, base[has_part] + at, base[has_part] + at + 1])
    values = np.concatenate([length, -length, part[has_part], -part[has_part]])
    return keys, values


def _cells_from_runs(keys: list, values: list, d: int, B: int) -> np.ndarray:
    """``S`` with ``S[(b, j_e), (b − k, j_l)]`` the summed lengths of lag difference k at step b, from the difference
    arrays' entries (one cumulative sum over b); the gram is ``S + Sᵀ`` and the diagonal."""
    q = d * B
    runs = np.bincount(np.concatenate(keys), weights=np.concatenate(values), minlength=B * d * d * (B + 1))
    lengths = np.cumsum(runs.reshape(B, d, d, B + 1), axis=3)[..., :B]  # [k, j_e, j_l, b]
    k, b = np.nonzero(np.arange(B)[None, :] >= np.arange(B)[:, None])  # every (k, b) with b >= k
    je, jl = np.arange(d)[:, None], np.arange(d)[None, :]
    rows = b[:, None, None] * d + je
    columns = (b - k)[:, None, None] * d + jl
    flat = np.bincount((rows * q + columns).ravel(), weights=lengths[k, :, :, b].ravel(), minlength=q * q)
    return flat.reshape(q, q)


def merged_events(times, width: float, cap: int | None) -> tuple[np.ndarray, np.ndarray, int]:
    """One sequence's events kept under ``cap`` (the first C per dimension and w-bin), merged over dimensions and
    sorted by time (stable): ``(t, dims, removed)``, ``t`` in time units; shared by every family that fits exact
    times."""
    ts, ds, removed = [], [], 0
    for j, t in enumerate(times):
        t = np.asarray(t, dtype=np.float64)
        if t.size > 1 and np.any(t[1:] < t[:-1]):
            t = np.sort(t, kind="stable")
        keep = keep_first(t, width, cap)
        removed += int(t.size - np.count_nonzero(keep))
        ts.append(t[keep])
        ds.append(np.full(int(np.count_nonzero(keep)), j, dtype=np.int64))
    t = np.concatenate(ts) if ts else np.zeros(0)
    dims = np.concatenate(ds) if ds else np.zeros(0, dtype=np.int64)
    order = np.argsort(t, kind="stable")
    return t[order], dims[order], removed


def sequence_arrays(times, width: float, cap: int | None) -> tuple[np.ndarray, np.ndarray, int]:
    """:func:`merged_events` with the times in units of w: ``(x, dims, removed)``."""
    t, dims, removed = merged_events(times, width, cap)
    return t / width, dims, removed


class PieceSums:
    """The sums of :class:`GridFreePieces` over sequences, built one sequence at a time (in process, or in the
    reduce of :mod:`~dphawkes_core.estimators.grid_free.partitioned`): the Toeplitz pieces add, the events near each
    window's ends are kept for the head and tail pieces, computed once at the end (:meth:`pieces`)."""

    def __init__(self, dim: int, lags: int):
        d, B = int(dim), int(lags)
        self.dim, self.lags = d, B
        self.lagged, self.pairs, self.totals = np.zeros((B, d, d)), np.zeros((B, d, d)), np.zeros(d)
        self.heads, self.tails = [], []
        self.duration = self.total_time = self.edge_time = 0.0
        self.used = self.skipped = 0

    def add(self, index: int, end: float, lagged: np.ndarray, pairs: np.ndarray, totals: np.ndarray,
            head: tuple[np.ndarray, np.ndarray], tail: tuple[np.ndarray, np.ndarray]) -> None:
        """Add one sequence longer than s: its window end ``end`` and its ``R``, ``P`` and totals (units of w), and
        ``(x, dims)`` of (at least) its kept events within s of its start (``head``) and of its end (``tail``)."""
        B = self.lags
        self.used += 1
        self.duration += end - B
        self.total_time += end
        self.edge_time += min(end, 2.0 * B)
        self.lagged += lagged
        self.pairs += pairs
        self.totals += totals
        for side, (x, dims), near, bound in ((self.heads, head, head[0] < B, float(B)),
                                             (self.tails, tail, tail[0] > end - B, end)):
            n = int(np.count_nonzero(near))
            side.append((x[near], dims[near], np.full(n, index), np.full(n, bound)))

    def pieces(self, width: float, cap: int | None) -> GridFreePieces:
        """The summed pieces with the exact head and tail pieces of every window (:func:`edge_pieces`)."""
        d, B = self.dim, self.lags
        if not self.used:
            raise ConfigError(f"no sequence is longer than the support s = {B * width:g}: use a smaller support or "
                              "bin size")

        def stacked(parts):
            return tuple(np.concatenate([p[i] for p in parts]) for i in range(4))

        heads, tails = stacked(self.heads), stacked(self.tails)
        head_gram, head_int, head_pairs = edge_pieces(*heads, d, B, "head")
        tail_gram, tail_int, _ = edge_pieces(*tails, d, B, "tail")
        head_counts = np.bincount(heads[1], minlength=d).astype(float)
        return GridFreePieces(self.lagged, self.pairs, self.totals, head_gram, tail_gram, head_int, tail_int,
                              head_pairs, head_counts, self.duration, self.total_time, self.used, self.skipped,
                              None if cap is None else int(cap), self.edge_time)


def grid_free_pieces(events, width: float, lags: int, cap: int | None, arrays: list | None = None,
                     rows=None) -> tuple[GridFreePieces, dict]:
    """:class:`GridFreePieces` of every sequence of ``events`` (kept under ``cap``), summed, and counts for the
    data info (``kept``, ``clipped``, ``pairs``). ``arrays``: each sequence's :func:`sequence_arrays`, when already
    made; ``rows``: a :class:`~dphawkes_core.statistics.pair_passes.DenseLayout` of the sequences longer than s, whose
    rows the same walk fills (the likelihood's design: :mod:`~dphawkes_core.estimators.mle`)."""
    check_bin_size(width)
    d, B = events.dim, int(lags)
    sums = PieceSums(d, B)
    kept = clipped = 0
    for s_idx, seq in enumerate(events.sequences):
        end = float(seq.end_time) / width
        x, dims, cut = arrays[s_idx] if arrays is not None else sequence_arrays(seq.times, width, cap)
        clipped += cut
        if end <= B:
            sums.skipped += 1
            continue
        kept += x.size
        r, p = toeplitz_pieces(x, dims, d, B, None if rows is None else rows.place(sums.used))
        sums.add(s_idx, end, r, p, np.bincount(dims, minlength=d), (x, dims), (x, dims))
    pieces = sums.pieces(width, cap)
    return pieces, {"kept": kept, "clipped": clipped, "pairs": float(pieces.pairs.sum())}


# --- G and c from the pieces ------------------------------------------------------------------------------

def toeplitz_gram(lagged: np.ndarray) -> np.ndarray:
    """``(dB, dB)`` block-Toeplitz ``Σ_{u,v} tri(u − v + (b − b'))`` from ``R`` (lag-major blocks: block (b, b')
    is ``R[b − b']`` below and on the diagonal, ``R[b' − b]ᵀ`` above)."""
    B, d, _ = lagged.shape
    both = np.concatenate([lagged[:0:-1].transpose(0, 2, 1), lagged])  # [B − 1 + m] = R(m), m = −(B−1) … B−1
    steps = np.arange(B)
    blocks = both[steps[:, None] - steps[None, :] + B - 1]  # (b, b', d, d)
    return blocks.transpose(0, 2, 1, 3).reshape(B * d, B * d)


def assemble(pieces: GridFreePieces) -> tuple[np.ndarray, np.ndarray]:
    """``G/w`` (``(dB+1, dB+1)``) and ``c`` (``(d, dB+1)``), exact for exact pieces, correspondingly noisy for
    noisy ones."""
    B, d = pieces.lags, pieces.dim
    q = d * B + 1
    G = np.empty((q, q))
    G[:-1, :-1] = toeplitz_gram(pieces.lagged) - pieces.head_gram - pieces.tail_gram
    intercept = np.tile(pieces.totals, B) - pieces.head_int - pieces.tail_int
    G[:-1, -1] = intercept
    G[-1, :-1] = intercept
    G[-1, -1] = pieces.duration
    c = np.empty((d, q))
    c[:, :-1] = pieces.pairs.transpose(1, 0, 2).reshape(d, B * d) - pieces.head_pairs
    c[:, -1] = pieces.totals - pieces.head_counts
    return G, c


@dataclass(frozen=True)
class GridFreeStats(SufficientStats):
    """The grid-free statistics: ``A = (G/w)/N``, ``b = c/N`` (so least squares on them is the grid-free fit) and
    the pieces they were assembled from.

    ``count_cap`` (the field the binned families check their statistics against) is ``None`` on purpose: the
    cap here bounds events per w-bin of exact times, and a binned family's formal sensitivity does not hold for
    these statistics, so a binned family handed them refuses them. The cap is :attr:`event_cap`.
    """

    kind: ClassVar[str] = "events"
    grid_pieces: GridFreePieces | None = None
    event_cap: int | None = None
    width: float = 1.0
    counts: None = None  # no per-bin rows (pgd-clip needs them)
    pieces: None = None  # no binned moment pieces (the lagged DP-SSP release needs them)

    @property
    def design(self):
        """Per-bin rows do not exist for exact event times."""
        raise ConfigError("the grid-free statistics have no per-bin rows: pgd-clip needs binned counts")


def stats_from_pieces(pieces: GridFreePieces, width: float) -> GridFreeStats:
    """:class:`GridFreeStats` assembled from ``pieces``."""
    G, c = assemble(pieces)
    N = pieces.duration
    return GridFreeStats(A=G / N, b=c / N, yy=0.0, n_rows=max(int(round(N)), 1), dim=pieces.dim, lags=pieces.lags,
                         skipped_sequences=pieces.skipped_sequences, count_cap=None, grid_pieces=pieces,
                         event_cap=pieces.count_cap, width=float(width))


# --- one sequence alone (the sequence unit) ------------------------------------------------------------------

def one_sequence_pieces(times, end_time: float, width: float, lags: int, cap: int | None
                        ) -> tuple[GridFreePieces | None, int, int]:
    """:class:`GridFreePieces` of one sequence alone (``times`` per dimension, window ``[0, end_time]``), its
    events kept under ``cap``: what :func:`grid_free_pieces` adds for it, so that the pieces of every sequence
    summed are :func:`grid_free_pieces`'s (up to the order of floating-point sums). Every number is ``>= 0``
    (sums of ``tri`` weights, counts, integrals of products of counts). ``None`` when ``T <= s`` (the sequence
    contributes nothing). Also returns the events kept and the events the cap removed."""
    check_bin_size(width)
    d, B = len(times), int(lags)
    end = float(end_time) / width
    x, dims, clipped = sequence_arrays(times, width, cap)
    if end <= B:
        return None, 0, clipped
    lagged, pairs = toeplitz_pieces(x, dims, d, B)
    h, t = x < B, x > end - B
    head_gram, head_int, head_pairs = edge_pieces(x[h], dims[h], np.zeros(int(h.sum()), dtype=np.int64),
                                                  np.full(int(h.sum()), float(B)), d, B, "head")
    tail_gram, tail_int, _ = edge_pieces(x[t], dims[t], np.zeros(int(t.sum()), dtype=np.int64),
                                         np.full(int(t.sum()), end), d, B, "tail")
    pieces = GridFreePieces(lagged, pairs, np.bincount(dims, minlength=d).astype(float), head_gram, tail_gram,
                            head_int, tail_int, head_pairs, np.bincount(dims[h], minlength=d).astype(float),
                            end - B, end, 1, 0, None if cap is None else int(cap), min(end, 2.0 * B))
    return pieces, int(x.size), clipped
