"""Grid-free estimation: continuous-time least squares with step kernels (issue 22), non-private and formal.

The model. ``λ_i(t) = μ_i + Σ_j Σ_b a_ijb N_j^b(t)`` with ``N_j^b(t) = #{u ∈ j : t − u ∈ (bw, (b+1)w]}``,
b = 0 … B−1 (``w = config.bin_size``, ``B = config.lags``, support ``s = Bw``): the kernel ``h_ij`` is the step
function ``a_ijb`` on ``(bw, (b+1)w]``. The least-squares contrast ``∫ λ_i² dt − 2 Σ_{t_k ∈ i} λ_i(t_k)`` over
each sequence's fit window is minimised by ``θ_i = G⁻¹ c_i`` with ``φ(t) = (N_j^b(t), 1)``,
``G = ∫ φ φᵀ dt`` and ``c_i = Σ_{t_k ∈ i} φ(t_k)``; it has an unbiased estimating equation whenever the
kernels are such steps (Hansen, Reynaud-Bouret & Rivoirard 2015; Bacry et al. 2020), so it does not converge
to the binned estimators' INAR limit (``docs/accuracy.md``).

Boundaries. Events before a window's start are not observed, so **the first s of every window is history
only**: the contrast integrates over ``[s, T]`` and counts targets ``t ≥ s``; events in ``[0, s)`` enter as
regressors only (the binned families' convention: their first p bins are history only). A sequence with
``T <= s`` contributes nothing (``skipped_sequences``). The terms at both ends are exact:

* ``∫_ℝ N_j^b N_{j'}^{b'} dt = Σ_{u ∈ j, v ∈ j'} tri_w(u − v + (b − b')w)`` with ``tri_w(x) = max(0, w − |x|)``
  depends on ``(j, j', b − b')`` only: ``R_{jj'}(m)``, m = 0 … B−1 (:attr:`GridFreePieces.lagged`), a
  block-Toeplitz matrix like DP-SSP's lagged products;
* ``∫_{−∞}^{s}`` of the same product involves only events in ``[0, s)`` (the *head*), ``∫_T^∞`` only events in
  ``(T − s, T]`` (the *tail*): ``G = Toeplitz(R) − E_head − E_tail`` exactly, per sequence, summed over
  sequences; the intercept column is ``w n_j`` minus the head's and tail's parts of ``∫ N_j^b``;
* ``c_i[(j,b)] = P_ij(b) − (pairs whose target is in the head)``, ``P_ij(b) = #{(t ∈ i, u ∈ j) : t − u ∈
  (bw, (b+1)w]}``; ``c_i[1] = n_i − (events of i in the head)``; ``G[1, 1] = Σ (T − s)``.

Everything is computed in units of w (times divided by w), on the events sorted by time, by walking the
pairs at most s apart one offset at a time (``O(pairs)`` time, ``O(events)`` memory); head and tail pieces
by the same walk on the few events within s of a window's ends.

Layout. θ's columns are lag-major as the binned families' (column ``b·d + j`` is the step b of source j,
the last one the baseline), the statistics are reported as ``A = (G/w)/N``, ``b = c/N`` with
``N = Σ (T − s)/w`` (so ``A[-1, -1] = 1``), and the fit returns ``U = wθ``: the pipeline's ``H = U/Δ`` is
then θ itself, ``FitResult.kernels[i, j, b]`` is the height ``a_ijb`` on ``(bw, (b+1)w]`` and
:func:`~dphawkes_core.lag_average.fit_steps` reads it as exactly that step function, so
:func:`~dphawkes_core.metrics.kernel_function_error` measures the grid-free error of the estimate.

Privacy (event unit, formal; derivation in ``docs/privacy.md``, "Grid-free estimation"). A public cap C on
the events per (dimension, grid bin ``[kw, (k+1)w)``) is enforced on the data by keeping the first C
(:func:`keep_first`). One release, once: the pieces ``R(0)`` (upper triangle), ``R(1 … B−1)``, ``P``, the
totals and the head and tail pieces (:func:`release_layout`), each divided by a public scale — ρ for the pieces
of G, κ more for the head and tail ones (:func:`part_scales`) — plus Gaussian noise of one std
(:func:`ctls_sensitivity`). Free post-processing: the noisy head and tail pieces are shrunk toward their stationary
prediction (:func:`shrink_edges`, exact at σ = 0), then a ridge, a roughness penalty across the steps (both scaled
by the released noise-to-signal ratio) and non-negativity as in DP-SSP. With a target ε, ``count_cap="auto"``
chooses C as DP-SSP does (tail counts of the w-bin counts; :mod:`~dphawkes_core.count_cap`).

Not here: the sequence unit and partitioned (Parquet/Dask) statistics (``prepare_partitioned`` refuses).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import numpy as np

from ..binning import bin_index, bin_sparse, bins_in_window
from ..count_cap import AUTO, cap_rng, dp_count_cap
from ..data_info import DataInfo
from ..errors import ConfigError
from ..privacy import calibrate_single_sensitivity
from ..stats import SufficientStats, check_design_size
from ..validation import check_bin_size, check_count_cap
from .binned import domain_info
from .family import Family
from .least_squares import paper_loss, solve_cls
from .settings import Setting, options_class
from .ssp import roughness_matrix, solve_nonnegative, stabilise

CTLS_RIDGE_FACTOR = 1.5  # λ = c·√r·ρσ√q (ρσ: the noise std of G's pieces, in the units of A; r: noise/signal)
SMOOTHING = 60.0  # default weight of the roughness penalty, in units of r·ρσ√q
GRAM_SCALE = 3.0  # default ρ: G's pieces get ρ times the pair counts' noise
EDGE_SHARE = 0.1  # the share of the squared sensitivity the head and tail pieces get, at most, by default …
EDGE_SHARE_MIN = 0.01  # … and at least (one long window: they carry nothing there)
NOTE = "formal (public C per dimension and w-bin, d, B, the windows; one Gaussian release of the pair statistics)"
_PAIR_CHUNK = 1 << 20  # events whose later partners are enumerated at once (bounds the temporaries)


# --- the cap ----------------------------------------------------------------------------------------------

def keep_first(times: np.ndarray, width: float, cap: int | None) -> np.ndarray:
    """Mask of the events kept under the cap: the first ``cap`` of every grid bin ``[kw, (k+1)w)`` (bins by
    :func:`~dphawkes_core.binning.bin_index`, the binned families' exact edges). ``times`` sorted; ties keep
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


def toeplitz_pieces(x: np.ndarray, dims: np.ndarray, dim: int, lags: int) -> tuple[np.ndarray, np.ndarray]:
    """``R`` and ``P`` (:class:`GridFreePieces`) of one sequence: ``x`` times in units of w, sorted; ``dims``.

    Every pair (earlier e, later l) with ``δ = x_l − x_e <= B`` is visited once (offset by offset, a pair
    leaving the range ends its row: the times are sorted) and counted in its cell ``(⌊δ⌋, j_e, j_l)``, once
    plainly and once weighted by ``f = δ − ⌊δ⌋``. Then ``R[m] = counts[m] − F[m] + F[m−1]`` (a pair adds
    ``1 − f`` to ``R[⌊δ⌋, j_e, j_l]`` and f to the next lag), plus ``1 − δ`` to ``R[0, j_l, j_e]`` for ``δ < 1``
    (its ``x = l`` term) and 1 to ``R[0, j, j]`` per event; ``P[b, j_l, j_e]`` counts the pairs with
    ``δ ∈ (b, b+1]``: those of cell b, except a whole ``δ`` (one lag lower; ``δ = 0`` is no pair). Two
    counting passes per offset, the few whole and near pairs apart.
    """
    d, B = int(dim), int(lags)
    dd = d * d
    size = (B + 2) * dd  # ⌊δ⌋ = 0 … B + 1
    counts = np.zeros(size)
    weighted = np.zeros(size)
    whole = np.zeros(size)  # pairs at a whole δ
    near = np.zeros(dd)  # Σ (1 − δ) over pairs with δ < 1, by (j_e, j_l)
    codes = dims * d
    n = x.size
    for start in range(0, n - 1, _PAIR_CHUNK):
        active = np.arange(start, min(start + _PAIR_CHUNK, n - 1))
        offset = 1
        while active.size:
            later = active + offset
            delta = x[later] - x[active]
            ok = delta <= B
            if not ok.all():
                active, later, delta = active[ok], later[ok], delta[ok]
                if not active.size:
                    break
            floor = np.floor(delta)
            frac = delta - floor
            cell = floor.astype(np.int64) * dd + (codes[active] + dims[later])
            counts += np.bincount(cell, minlength=size)
            weighted += np.bincount(cell, weights=frac, minlength=size)
            exact = frac == 0.0
            if exact.any():
                whole += np.bincount(cell[exact], minlength=size)
            small = floor == 0.0
            if small.any():
                near += np.bincount(cell[small], weights=1.0 - frac[small], minlength=dd)
            offset += 1
            if active[-1] + offset >= n:
                active = active[active + offset < n]
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
    ``b − b' = ⌊δ⌋`` (on ``(x_e + b + f, x_e + b + 1]``) and ``b − b' = ⌊δ⌋ + 1`` (on ``(x_e + b, x_e + b + f]``),
    each cut at the bound; it adds that length to ``[(b, j_e), (b', j_l)]`` and its transpose, an event with
    itself to the diagonal.

    Returns
    -------
    gram : (dB, dB) ndarray
    integral : (dB,) ndarray
    head_pairs : (d, dB) ndarray
    """
    d, B = int(dim), int(lags)
    q = d * B
    gram = np.zeros(q * q)
    head_pairs = np.zeros(d * q)
    steps = np.arange(B, dtype=np.float64)
    head = side == "head"

    def cut(lo, hi, edge):  # length of (lo, hi] inside the side's region
        if head:
            return np.maximum(np.minimum(hi, edge) - lo, 0.0)
        return np.maximum(hi - np.maximum(lo, edge), 0.0)

    # each event with itself: (x + b, x + b + 1] on the diagonal; the same lengths are ∫ N_j^b
    own = cut(x[:, None] + steps, x[:, None] + steps + 1.0, bound[:, None])  # (n, B)
    cols = steps.astype(np.int64)[None, :] * d + dims[:, None]
    integral = np.bincount(cols.ravel(), weights=own.ravel(), minlength=q)
    gram += np.bincount((cols * (q + 1)).ravel(), weights=own.ravel(), minlength=q * q)
    n = x.size
    offset = 1
    active = np.arange(max(n - 1, 0))
    while active.size:
        later = active + offset
        same = seq[later] == seq[active]
        active, later = active[same], later[same]
        if not active.size:
            break
        delta = x[later] - x[active]
        je, jl, xe, edge = dims[active], dims[later], x[active], bound[active]
        fl = np.floor(delta).astype(np.int64)
        frac = delta - fl
        for k, lo_shift, hi_shift in ((fl, frac, np.ones_like(frac)), (fl + 1, np.zeros_like(frac), frac)):
            b = steps.astype(np.int64)[None, :]
            valid = (b >= k[:, None]) & (k[:, None] < B)
            start = xe[:, None] + steps[None, :]
            length = cut(start + lo_shift[:, None], start + hi_shift[:, None], edge[:, None]) * valid
            row = b * d + je[:, None]
            col = (b - k[:, None]) * d + jl[:, None]
            keep = length > 0
            if keep.any():
                r, c, v = row[keep], col[keep], length[keep]
                gram += np.bincount(r * q + c, weights=v, minlength=q * q)
                gram += np.bincount(c * q + r, weights=v, minlength=q * q)
        if head:
            positive = delta > 0
            bb = np.ceil(delta[positive]).astype(np.int64) - 1
            fits = bb < B
            head_pairs += np.bincount(jl[positive][fits] * q + bb[fits] * d + je[positive][fits], minlength=d * q)
        offset += 1
        active = active[active + offset < n]
    return gram.reshape(q, q), integral, head_pairs.reshape(d, q)


def sequence_arrays(times, width: float, cap: int | None) -> tuple[np.ndarray, np.ndarray, int]:
    """One sequence's kept events merged over dimensions and sorted by time: ``x`` (units of w), ``dims``, and
    the number of events the cap removed."""
    xs, ds, clipped = [], [], 0
    for j, t in enumerate(times):
        t = np.asarray(t, dtype=np.float64)
        if t.size > 1 and np.any(t[1:] < t[:-1]):
            t = np.sort(t)
        keep = keep_first(t, width, cap)
        clipped += int(t.size - np.count_nonzero(keep))
        xs.append(t[keep])
        ds.append(np.full(int(np.count_nonzero(keep)), j, dtype=np.int64))
    t = np.concatenate(xs) if xs else np.zeros(0)
    dims = np.concatenate(ds) if ds else np.zeros(0, dtype=np.int64)
    order = np.argsort(t, kind="stable")
    return t[order] / width, dims[order], clipped


def grid_free_pieces(events, width: float, lags: int, cap: int | None) -> tuple[GridFreePieces, dict]:
    """:class:`GridFreePieces` of every sequence of ``events`` (kept under ``cap``), summed, and counts for the
    data info (``kept``, ``clipped``, ``pairs``)."""
    check_bin_size(width)
    d, B = events.dim, int(lags)
    lagged = np.zeros((B, d, d))
    pairs = np.zeros((B, d, d))
    totals = np.zeros(d)
    heads, tails = [], []
    duration = total_time = edge_time = 0.0
    used = skipped = kept = clipped = 0
    for s_idx, seq in enumerate(events.sequences):
        end = float(seq.end_time) / width
        x, dims, cut = sequence_arrays(seq.times, width, cap)
        clipped += cut
        if end <= B:
            skipped += 1
            continue
        used += 1
        kept += x.size
        duration += end - B
        total_time += end
        edge_time += min(end, 2.0 * B)
        r, p = toeplitz_pieces(x, dims, d, B)
        lagged += r
        pairs += p
        totals += np.bincount(dims, minlength=d)
        h = x < B
        heads.append((x[h], dims[h], np.full(int(h.sum()), s_idx), np.full(int(h.sum()), float(B))))
        t = x > end - B
        tails.append((x[t], dims[t], np.full(int(t.sum()), s_idx), np.full(int(t.sum()), end)))
    if not used:
        raise ConfigError(f"no sequence is longer than the support s = {B * width:g}: use a smaller support or "
                          "bin size")

    def stacked(parts):
        return tuple(np.concatenate([p[i] for p in parts]) for i in range(4))

    head_gram, head_int, head_pairs = edge_pieces(*stacked(heads), d, B, "head")
    tail_gram, tail_int, _ = edge_pieces(*stacked(tails), d, B, "tail")
    head_counts = np.bincount(stacked(heads)[1], minlength=d).astype(float)
    pieces = GridFreePieces(lagged, pairs, totals, head_gram, tail_gram, head_int, tail_int, head_pairs,
                            head_counts, duration, total_time, used, skipped, None if cap is None else int(cap),
                            edge_time)
    return pieces, {"kept": kept, "clipped": clipped, "pairs": float(pairs.sum())}


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


# --- the release ------------------------------------------------------------------------------------------

def _upper(matrix: np.ndarray) -> np.ndarray:
    return matrix[np.triu_indices(matrix.shape[0])]


def _symmetric(values: np.ndarray, size: int) -> np.ndarray:
    out = np.zeros((size, size))
    out[np.triu_indices(size)] = values
    return out + np.triu(out, 1).T


def release_layout(dim: int, lags: int) -> list[tuple[str, int]]:
    """The released numbers in order, ``(name, count)``: ``R[0]`` upper triangle, ``R[1 … B−1]``, ``P``, the
    totals (the Toeplitz part), then the head and tail Grams (upper triangles), ``∫ N`` at both ends, the head
    pairs and head counts (the edge part). Each part is released divided by its public scale
    (:func:`part_scales`), plus noise of one std σ: its own noise std is scale·σ."""
    d, B = int(dim), int(lags)
    q = d * B
    return [("lagged0", d * (d + 1) // 2), ("lagged", (B - 1) * d * d), ("pairs", B * d * d), ("totals", d),
            ("head_gram", q * (q + 1) // 2), ("tail_gram", q * (q + 1) // 2), ("head_int", q), ("tail_int", q),
            ("head_pairs", d * q), ("head_counts", d)]


EDGE_PARTS = ("head_gram", "tail_gram", "head_int", "tail_int", "head_pairs", "head_counts")
GRAM_PARTS = ("lagged0", "lagged", "head_gram", "tail_gram", "head_int", "tail_int")  # what G is made of


def part_scales(kappa: float, rho: float) -> dict:
    """Public scale of each released part: ρ for the pieces of G, κ more for the head and tail pieces."""
    return {name: (rho if name in GRAM_PARTS else 1.0) * (kappa if name in EDGE_PARTS else 1.0)
            for name in GRAM_PARTS + EDGE_PARTS + ("pairs", "totals")}


def raw_release(pieces: GridFreePieces, kappa: float, rho: float = 1.0) -> np.ndarray:
    """The release vector without noise, in the pieces' units (not yet divided by N), each part divided by its
    scale (:func:`part_scales`)."""
    parts = {"lagged0": _upper(pieces.lagged[0]), "lagged": pieces.lagged[1:].ravel(), "pairs": pieces.pairs.ravel(),
             "totals": pieces.totals, "head_gram": _upper(pieces.head_gram), "tail_gram": _upper(pieces.tail_gram),
             "head_int": pieces.head_int, "tail_int": pieces.tail_int, "head_pairs": pieces.head_pairs.ravel(),
             "head_counts": pieces.head_counts}
    scales = part_scales(kappa, rho)
    return np.concatenate([parts[name] / scales[name] for name, _ in release_layout(pieces.dim, pieces.lags)])


def pieces_from_release(vector: np.ndarray, template: GridFreePieces, kappa: float, rho: float = 1.0) -> GridFreePieces:
    """The pieces a (noisy) raw release vector stands for (each part multiplied back by its scale; symmetric
    parts mirrored; the public durations and counts of sequences from ``template``)."""
    d, B = template.dim, template.lags
    q = d * B
    scales = part_scales(kappa, rho)
    parts, at = {}, 0
    for name, count in release_layout(d, B):
        parts[name] = vector[at:at + count] * scales[name]
        at += count
    lagged = np.empty((B, d, d))
    lagged[0] = _symmetric(parts["lagged0"], d)
    lagged[1:] = parts["lagged"].reshape(B - 1, d, d)
    return replace(template, lagged=lagged, pairs=parts["pairs"].reshape(B, d, d), totals=parts["totals"],
                   head_gram=_symmetric(parts["head_gram"], q), tail_gram=_symmetric(parts["tail_gram"], q),
                   head_int=parts["head_int"], tail_int=parts["tail_int"],
                   head_pairs=parts["head_pairs"].reshape(d, q), head_counts=parts["head_counts"])


def edge_prediction(pieces: GridFreePieces) -> dict:
    """What the head and tail pieces would be for a stationary process with the (released) Toeplitz pieces:
    per unit time ``R/Σ T`` and ``P/Σ T``, over a head where a product of windows b, b' is complete for
    ``t ∈ [(max(b, b') + 1), s)`` (plus half a unit for the partial one) and a tail of ``min(b, b') + ½``.
    Only the shrinkage target of :func:`shrink_edges`: post-processing, any target keeps the guarantee."""
    d, B = pieces.dim, pieces.lags
    per_time = max(pieces.total_time, 1e-300)
    L = pieces.sequences
    b = np.repeat(np.arange(B), d).astype(float)  # the lag of each column b·d + j
    head_len = np.maximum(B - np.maximum.outer(b, b) - 0.5, 0.0)
    tail_len = np.minimum.outer(b, b) + 0.5
    density = toeplitz_gram(pieces.lagged) / per_time
    rate = np.tile(pieces.totals, B) / per_time
    pair_rate = pieces.pairs.transpose(1, 0, 2).reshape(d, B * d) / per_time
    return {"head_gram": L * density * head_len, "tail_gram": L * density * tail_len,
            "head_int": L * rate * (B - b - 0.5), "tail_int": L * rate * (b + 0.5),
            "head_pairs": L * pair_rate * (B - b - 0.5)[None, :], "head_counts": L * pieces.totals / per_time * B}


EDGE_NOISE_TEST = 4.0  # the edges' residuals count as noise unless ||z||² exceeds M by this many standard deviations


def shrink_edges(noisy: GridFreePieces, raw_sigma: float, scales: dict) -> GridFreePieces:
    """The released head and tail pieces shrunk toward :func:`edge_prediction`, all parts by one factor.

    With ``z`` the released numbers' residuals from the prediction, each divided by its noise std
    (``scale·raw_sigma``), and M their number: when ``||z||² <= M + 4√(2M)`` the residuals are what noise alone
    gives (one long window: the pieces carry nothing) and the prediction is used; otherwise every part becomes
    ``π + (1 − M/||z||²)(x̃ − π)`` (James–Stein's factor, pooled: a part of d numbers alone would let a random
    share of its noise through). Uses only the release and public numbers; exact at σ = 0."""
    if raw_sigma <= 0:
        return noisy
    target = edge_prediction(noisy)
    residual = {}
    for name in EDGE_PARTS:
        diff = getattr(noisy, name) - target[name]
        residual[name] = (_upper(diff) if name.endswith("gram") else diff.ravel()) / (scales[name] * raw_sigma)
    z = np.concatenate(list(residual.values()))
    size, norm = z.size, float(np.sum(z**2))
    noise_only = norm <= size + EDGE_NOISE_TEST * math.sqrt(2 * size)
    factor = 0.0 if noise_only else 1.0 - size / norm
    return replace(noisy, **{name: target[name] + factor * (getattr(noisy, name) - target[name])
                             for name in EDGE_PARTS})


# --- sensitivity ------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Sensitivity:
    """The event unit's L2 sensitivity of the release (in the pieces' units, before dividing by N).

    Attributes
    ----------
    total : float
        ``max over the two kinds of neighbour of sqrt(toeplitz² + edge²/κ²)``, each part divided by its scale.
    kappa, rho : float
        The public scales: G's pieces are released divided by ρ, the head and tail pieces by κ more.
    toeplitz, edge : dict
        ``{"insert": …, "swap": …}``: the bounds of the Toeplitz part and of the edge part (G's pieces divided
        by ρ, the edge part not yet by κ).
    parts : dict
        The squared bounds of each block for each kind of neighbour (``docs/privacy.md``).
    """

    total: float
    kappa: float
    rho: float = 1.0
    toeplitz: dict = field(default_factory=dict)
    edge: dict = field(default_factory=dict)
    parts: dict = field(default_factory=dict)


def sensitivity_parts(dim: int, lags: int, count_cap: int) -> dict:
    """Squared bounds, per kind of neighbour (``insert``, ``swap``), of the change of each block of the release
    in the pieces' units (no scale applied): ``lagged`` (``R(1 … B−1)``), ``lagged0`` (``R(0)``'s upper
    triangle), ``pairs``, ``totals``, ``edge_gram`` (head and tail Grams and ``∫ N``) and ``edge_count`` (head
    pairs and counts). See :func:`ctls_sensitivity`."""
    d, B, C = int(dim), int(lags), float(count_cap)
    a_ins = min(2 * C * C * B, 4 * C * C * (B - 1))
    e_gram = 2 * C * math.sqrt(2 * d * B * (B + 1)) + math.sqrt(B)
    insert = {"lagged": 2 * (d + 1) * a_ins, "lagged0": 4 * (d - 1) * C * C + (4 * C - 1) ** 2,
              "pairs": 4 * (d + 1) * C * C * (B + 1), "totals": 1.0, "edge_gram": 2 * (e_gram**2 + B)}
    swap = {"lagged": 8 * (d + 1) * C * C * (B - 1), "lagged0": 4 * (d - 1) * C * C + (4 * C - 2) ** 2,
            "pairs": 2 * (d + 1) * C * C * B, "totals": 0.0, "edge_gram": 2 * (4 * e_gram**2 + B)}
    insert["edge_count"] = insert["pairs"] + 1.0
    swap["edge_count"] = swap["pairs"]
    return {"insert": insert, "swap": swap}


def ctls_sensitivity(dim: int, lags: int, count_cap: int, edge_share: float = EDGE_SHARE,
                     gram_scale: float = 1.0) -> Sensitivity:
    """L2 sensitivity of the grid-free release under one event added or removed, at most C events kept per
    (dimension, w-bin) by keeping the first C (derivation: ``docs/privacy.md``, "Grid-free estimation").

    Keeping the first C, an added event z either changes nothing, or is inserted (its bin had fewer than C), or
    is inserted while the bin's last kept event v leaves (a *swap*: u = z before v, both in one bin). In units
    of w, with ``F(m) = Σ_y tri(y − z − m) <= 2C`` and ``Σ_m F(m) <= CB`` (an interval of length 2 meets at most
    three bins, with weights summing to at most 2; the weights of one partner sum to at most 1):

    * insertion — ``R(m >= 1)``: ``2(d+1)·min(2C²B, 4C²(B−1))`` (each of the 2(d−1) off-diagonal rows and
      columns ``min(2C·CB, (B−1)(2C)²)``; the ``[k, k]`` entry takes both, four times that); ``R(0)``:
      ``4(d−1)C² + (4C−1)²``; ``P``: ``4(d+1)C²(B+1)`` (a count of a window of length 1 is at most 2C, its sum
      over b at most C(B+1)); the totals: 1;
    * swap — ``R(m >= 1)``: ``8(d+1)C²(B−1)`` (each entry a difference of two values in [0, 2C]); ``R(0)``:
      ``4(d−1)C² + (4C−2)²``; ``P``: ``2(d+1)C²B`` (u and v in one bin: each window count changes by the events
      of two strips inside single bins, at most C); the totals: 0;
    * head/tail pieces (an event within s of a window's end): a Gram changes by ``M + Mᵀ + D``,
      ``||M||_F² <= 2dC²B(B+1)``, ``||D||_F² <= B``, so by at most ``e = 2C√(2dB(B+1)) + √B``; ``∫ N`` by at most
      √B; the head pairs as ``P``; the head counts by 1 (insertion only). A swap is a difference of two
      insertions: 2e. Head and tail both count (a window shorter than 2s).

    The parts of G (``R``, the edge Grams and ``∫ N``) are released divided by the public ``gram_scale`` ρ
    (their noise is ρ times the pair counts': G's noise reaches the estimate multiplied by the small θ); the
    edge part by κ more, public, chosen so that it takes the share ``edge_share`` of the squared total:
    ``κ = (max edge / max Toeplitz)·sqrt((1 − share)/share)``.
    """
    if count_cap is None or count_cap < 1:
        raise ConfigError("the grid-free formal release needs a public count cap C >= 1 (events per dimension per "
                          "w-bin, the first C kept)")
    if not 0 < edge_share < 1:
        raise ConfigError(f"the edge share must be in (0, 1), got {edge_share!r}")
    if not gram_scale > 0:
        raise ConfigError(f"the Gram scale must be positive, got {gram_scale!r}")
    parts = sensitivity_parts(dim, lags, count_cap)
    rho2 = float(gram_scale) ** 2
    toeplitz = {kind: math.sqrt((p["lagged"] + p["lagged0"]) / rho2 + p["pairs"] + p["totals"])
                for kind, p in parts.items()}
    edge = {kind: math.sqrt(p["edge_gram"] / rho2 + p["edge_count"]) for kind, p in parts.items()}
    kappa = max(edge.values()) / max(toeplitz.values()) * math.sqrt((1 - edge_share) / edge_share)
    total = max(math.sqrt(toeplitz[k] ** 2 + edge[k] ** 2 / kappa**2) for k in parts)
    return Sensitivity(total, kappa, float(gram_scale), toeplitz, edge, parts)


# --- adversarial neighbours (the tests' and the audit's worst case) ------------------------------------------

WORST_CASE_OFFSETS = {"u": 0.002, "v": 0.004, "forward_end": 0.006, "backward_start": 0.003, "backward_end": 0.001}


def worst_case_events(dim: int, lags: int, count_cap: int, width: float = 1.0, kind: str = "swap"):
    """Neighbours that move the release by most of :func:`ctls_sensitivity` (units of w below).

    ``kind="swap"`` (the worst case of the lagged products R): in dimension 0, bin ``[g, g+1)`` holds C events in
    D, the last at ``v = g + 1 − ε_v``; D' adds ``u = g + ε_u``, which evicts v (keep-first-C). Every other bin
    within s + 2 of g, in every dimension, holds C events, in clusters of 2C around every second grid point
    ``g ± 2r`` (C just before the point, at the end of one bin, and C at or just after it, at the start of the
    next), so that u's partners sit at even and v's at odd whole distances: each ``R(m)`` moves by about ±2C,
    the ``[0, 0]`` entry by ±4C with both directions in step. The small offsets (:data:`WORST_CASE_OFFSETS`)
    put the clusters' events inside or outside the strips ``[u, v)`` shifted by whole units, so that the pair
    counts P move by ±C with the forward and backward partners in step too.

    ``kind="insert"`` (the worst case of the pair counts P): D' adds ``z = g + ½`` to a bin of dimension 0 that
    holds C − 1; clusters of 2C at ``g + 1, g + 3, …`` and ``g − 2, g − 4, …`` (and C at ``g − 0``) fill every
    second window ``(z + b, z + b + 1]`` and ``[z − b − 1, z − b)`` with 2C partners, both directions in step.

    The window leaves s + 2 free before the events and is long after them (``20(B + 2)`` in all), so no head or
    tail piece moves and the default edge share is its minimum (:func:`default_edge_share`).

    Returns
    -------
    D, D' : Events
        One sequence each, window stated; D' has one event more.
    """
    from ..events import from_arrays

    d, B, C = int(dim), int(lags), int(count_cap)
    g = 2 * B + 4
    end = 20 * (B + 2)
    reach = B // 2 + 1
    times = [[] for _ in range(d)]
    if kind == "swap":
        o = WORST_CASE_OFFSETS
        for j in range(d):
            for r in range(1, reach + 1):
                ahead, behind = g + 2 * r, g - 2 * r
                times[j] += [ahead - o["forward_end"]] * C + [float(ahead)] * C
                times[j] += [behind - o["backward_end"]] * C + [behind + o["backward_start"]] * C
            times[j] += [g - o["backward_end"]] * C + ([g + o["backward_start"]] * C if j else [])
        times[0] += [g + o["backward_start"]] * (C - 1) + [g + 1 - o["v"]]
        added = g + o["u"]
    elif kind == "insert":
        eta = 0.01
        for j in range(d):
            for r in range(reach + 1):
                ahead = g + 2 * r + 1
                times[j] += ([ahead - eta] * C if (r or j) else [ahead - eta] * (C - 1)) + [float(ahead)] * C
                if r:
                    behind = g - 2 * r
                    times[j] += [behind - eta] * C + [float(behind)] * C
            times[j] += [g - eta] * C
        added = g + 0.5
    else:
        raise ValueError(f"kind must be 'swap' or 'insert', got {kind!r}")
    d_events = from_arrays([np.sort(np.asarray(t, dtype=float)) * width for t in times], end_time=end * width)
    times[0].append(added)
    d_prime = from_arrays([np.sort(np.asarray(t, dtype=float)) * width for t in times], end_time=end * width)
    return d_events, d_prime


# --- the family ---------------------------------------------------------------------------------------------

def default_edge_share(pieces: GridFreePieces) -> float:
    """The share of S² the head and tail pieces get unless stated: ``min(0.1, max(0.01, f/5))`` with
    ``f = Σ min(T, 2s) / Σ T`` the fraction of the windows' time within s of an end (public: the windows).
    Measured on 3000 windows of length 4s (f = 0.5, paper-2d, ε = 1): 0.41 at a share of 0.01, 0.33 at 0.02,
    0.32 at 0.05–0.1, 0.34 at 0.5; on one long window the pieces are noise whatever the share, so it only
    costs the rest (``1/√(1 − share)`` more noise)."""
    fraction = pieces.edge_time / max(pieces.total_time, 1e-300)
    return float(min(EDGE_SHARE, max(EDGE_SHARE_MIN, fraction / 5)))


def noise_to_signal(A_hat: np.ndarray, noise: float) -> float:
    """``r = ρσ√q / ā``: the noise scale of G's pieces against the mean diagonal ā of the (released) kernel block
    of Â (about ``rate·w``; floored far below any real one). Post-processing: released and public numbers."""
    diagonal = float(np.mean(np.diag(A_hat)[:-1]))
    return noise / max(diagonal, 1e-12)


def ctls_ridge(noise: float, ratio: float) -> float:
    """Public default ridge ``λ = CTLS_RIDGE_FACTOR·√r·ρσ√q`` (``noise = ρσ√q``, ``ratio`` = r of
    :func:`noise_to_signal`); 0 without noise."""
    return float(CTLS_RIDGE_FACTOR * math.sqrt(ratio) * noise)


def released_pieces(stats: GridFreeStats, sigma: float, kappa: float, rho: float,
                    rng: np.random.Generator) -> np.ndarray:
    """The noisy raw release vector (one draw of ``len`` standard normals, times ``σN``)."""
    pieces = stats.grid_pieces
    clean = raw_release(pieces, kappa, rho)
    if sigma <= 0:
        return clean
    return clean + sigma * pieces.duration * rng.standard_normal(clean.size)


SETTINGS = (
    Setting("ctls_ridge", "ridge λ", "float", None, "λ added to the noisy A (Â + λI)", minimum=0.0, optional=True,
            none_means="the rule 1.5·√r·ρσ√(dB+1), r = ρσ√(dB+1) / the mean diagonal of the released A"),
    Setting("ctls_nonnegative", "kernels and baselines >= 0", "bool", True,
            "post-processing: constrain the estimate to be non-negative (no privacy cost)",
            cli_flag="--ctls-allow-negative", cli_negates=True),
    Setting("ctls_smoothing", "smoothing across steps", "float", SMOOTHING,
            "weight of the roughness penalty across the kernel steps, in units of r·ρσ√(dB+1) (r: the noise against "
            "the released A's mean diagonal; 0: none)", minimum=0.0, step=10.0),
    Setting("ctls_gram_scale", "noise of G relative to c", "float", GRAM_SCALE,
            "the pieces of G are released with this many times the pair counts' noise (G's noise reaches the "
            "estimate multiplied by the small coefficients)", minimum=0.0, minimum_exclusive=True, step=0.5),
    Setting("ctls_edge_share", "edge share of the sensitivity (%)", "float", None,
            "percent of the squared sensitivity given to the pieces within s of a window's ends (more: less noise "
            "on them, more on the rest)", minimum=0.0, maximum=100.0, minimum_exclusive=True, optional=True,
            none_means="from the windows: min(10, max(1, 20·f)) %, f = the time within s of an end", step=5.0),
)


def _check_options(options) -> None:
    if options.ctls_edge_share is not None and options.ctls_edge_share >= 100:
        raise ConfigError("the edge share of the sensitivity must be below 100 %")


CTLSOptions = options_class("CTLSOptions", SETTINGS, "exact event times (continuous-time least squares)", __name__,
                            _check_options)


class CTLS(Family):
    """Continuous-time least squares with step kernels on exact event times: one Gaussian release of the pair
    statistics of events kept under a public C per (dimension, w-bin), then least squares as free
    post-processing. With σ² = 0 (and no ridge, smoothing or constraint) it is the exact non-private fit."""

    name = "ctls"
    label = "exact event times (continuous-time least squares)"
    summary = ("least squares on the exact event times with step kernels of width Δ (no binning bias): one noisy "
               "release of its pair statistics, formal from public bounds")
    calibrations = ("formal",)
    units = ("event",)
    settings = SETTINGS
    options_type = CTLSOptions
    auto_count_cap = True
    statistics = "events"  # the contract suite builds its neighbours from events (worst_case_events)
    sensitivity_fraction = 0.8  # 0.84 at d, B, C = 2, 3, 3 (the contract suite's grid); 0.95 at B >= 20 (docs/privacy.md)
    noiseless_limit = "continuous least squares"
    noiseless_options = dict(ctls_ridge=0.0, ctls_smoothing=0.0, ctls_nonnegative=False)

    def worst_case_events(self, config, dim: int):
        """Of the two kinds of :func:`worst_case_events` (for ``config``'s B, C, w), the pair whose release moves
        most under ``config``'s scales: the neighbours the contract suite and the tests measure."""
        best = None
        for kind in ("insert", "swap"):
            pair = worst_case_events(dim, config.lags, config.count_cap, config.bin_size, kind)
            d, d_prime = (self.prepare_stats(events, config)[0] for events in pair)
            moved = float(np.linalg.norm(self.release_vector(d_prime, config) - self.release_vector(d, config)))
            if best is None or moved > best[0]:
                best = (moved, pair)
        return best[1]

    def prepare_stats(self, events, config):
        """The grid-free pieces (:func:`grid_free_pieces`) of the events kept under C (``"auto"``: C chosen first,
        as DP-SSP chooses it, from the w-bin counts), assembled into :class:`GridFreeStats`; the data info counts
        the kept events as ``binned_events`` and the events the cap removed as ``clipped_events`` (none are
        dropped: the last partial bin is kept)."""
        check_design_size(events.dim, config.lags)
        auto = None
        cap = config.count_cap
        if cap == AUTO:
            auto = dp_count_cap(bin_sparse(events, config.bin_size), config.epsilon, config.dp_delta,
                                cap_rng(config.seed), config.count_cap_share, config.count_cap_max)
            cap = auto.count_cap
        check_count_cap(cap)
        pieces, counts = grid_free_pieces(events, config.bin_size, config.lags, cap)
        stats = stats_from_pieces(pieces, config.bin_size)
        info = DataInfo(
            n_bins=sum(bins_in_window(s.end_time, config.bin_size) for s in events.sequences),
            n_events=events.n_events, binned_events=counts["kept"], dropped_events=0,
            clipped_events=counts["clipped"], skipped_sequences=pieces.skipped_sequences,
            window_stated=bool(events.window_stated), **domain_info(events), count_cap=cap,
            auto_count_cap=auto.to_dict() if auto is not None else None)
        return stats, info

    def prepare_partitioned(self, paths, config, window, executor=None):
        raise ConfigError(f"{self.label}: partitioned (Parquet/Dask) statistics are not implemented; load the events "
                          "into one process")

    def _stats(self, stats) -> GridFreeStats:
        if not isinstance(stats, GridFreeStats) or stats.grid_pieces is None:
            raise ConfigError(f"{self.label} fits exact event times: compute its statistics with its prepare_stats, "
                              "not from binned counts")
        return stats

    def sensitivity(self, stats: GridFreeStats, config) -> Sensitivity:
        """:func:`ctls_sensitivity` for the statistics' d, B and C and the config's scales (the edge share stated
        in percent, or :func:`default_edge_share` of the windows)."""
        share = (default_edge_share(stats.grid_pieces) if config.ctls_edge_share is None
                 else config.ctls_edge_share / 100.0)
        return ctls_sensitivity(stats.dim, stats.lags, stats.event_cap, share, config.ctls_gram_scale)

    def privacy_report(self, stats, config):
        stats = self._stats(stats)
        auto = config.count_cap == AUTO
        if stats.event_cap is None and config.sigma2 == 0:  # the non-private fit: no cap, no noise
            sens = math.inf
        else:
            if config.count_cap is None or stats.event_cap != config.count_cap and not (auto and stats.event_cap):
                raise ConfigError(f"{self.label} needs a public count cap C and events kept under it")
            sens = self.sensitivity(stats, config).total / stats.grid_pieces.duration
        return calibrate_single_sensitivity(
            NOTE, sens, 1, config.calibration, config.dp_delta,
            epsilon=None if config.sigma2 is not None else config.epsilon, sigma2=config.sigma2,
            auto_cap=(config.count_cap_share, stats.event_cap) if auto else None)

    def _scales(self, stats, config) -> tuple[float, float]:
        """(κ, ρ) of the release."""
        if stats.event_cap is None:
            return 1.0, float(config.ctls_gram_scale)
        sens = self.sensitivity(stats, config)
        return sens.kappa, sens.rho

    def release_vector(self, stats, config) -> np.ndarray:
        """The released numbers without noise in the units of A (divided by N), each part divided by its public
        scale (:func:`release_layout`, :func:`part_scales`)."""
        stats = self._stats(stats)
        return raw_release(stats.grid_pieces, *self._scales(stats, config)) / stats.grid_pieces.duration

    def observed_release(self, stats, config, report, rng, state=None):
        """The noisy release vector, in the units of A (as :meth:`run` draws it)."""
        if state is not None:
            raise ConfigError(f"{self.label} has no state to release at")
        stats = self._stats(stats)
        return released_pieces(stats, math.sqrt(report.sigma2), *self._scales(stats, config), rng) \
            / stats.grid_pieces.duration

    def run(self, stats, config, report, rng, transcript=None):
        stats = self._stats(stats)
        sigma = math.sqrt(report.sigma2)
        kappa, rho = self._scales(stats, config)
        pieces = stats.grid_pieces
        if sigma > 0:
            raw_sigma = sigma * pieces.duration
            noisy = pieces_from_release(released_pieces(stats, sigma, kappa, rho, rng), pieces, kappa, rho)
            noisy_stats = stats_from_pieces(shrink_edges(noisy, raw_sigma, part_scales(kappa, rho)), stats.width)
        else:
            noisy_stats = stats
        noise = rho * sigma * math.sqrt(stats.n_params)
        ratio = noise_to_signal(noisy_stats.A, noise)
        lam = ctls_ridge(noise, ratio) if config.ctls_ridge is None else float(config.ctls_ridge)
        A_tilde = stabilise(noisy_stats.A, lam, "ridge")
        smooth = config.ctls_smoothing * ratio * noise
        if smooth > 0:
            A_tilde = A_tilde + smooth * roughness_matrix(stats.dim, stats.lags)
        if config.ctls_nonnegative:
            U, info = solve_nonnegative(A_tilde, noisy_stats.b), {"solver": "nnls"}
        else:
            U, info = solve_cls(replace(noisy_stats, A=A_tilde))
        info.update({"ridge": lam, "nonnegative": config.ctls_nonnegative, "smoothing": config.ctls_smoothing,
                     "smoothing_weight": smooth, "noise_to_signal": ratio, "kappa": kappa, "gram_scale": rho,
                     "statistics": "exact event times"})
        return U, [paper_loss(U, stats)], info
