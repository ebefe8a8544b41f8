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

The statistics are counted in :mod:`dphawkes_core.grid_free_stats`. Everything is computed in units of w (times divided by w), on the events sorted by time, by walking the
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
(:func:`~dphawkes_core.grid_free_stats.keep_first`). One release, once: the pieces ``R(0)`` (upper triangle), ``R(1 … B−1)``, ``P``, the
totals and the head and tail pieces (:func:`release_layout`), each divided by a public scale — ρ for the pieces
of G, κ more for the head and tail ones (:func:`part_scales`) — plus Gaussian noise of one std
(:func:`ctls_sensitivity`). Free post-processing: the noisy head and tail pieces are shrunk toward their stationary
prediction (:func:`shrink_edges`, exact at σ = 0), then a ridge, a roughness penalty across the steps (both scaled
by the released noise-to-signal ratio) and non-negativity as in DP-SSP. With a target ε, ``count_cap="auto"``
chooses C as DP-SSP does (tail counts of the w-bin counts; :mod:`~dphawkes_core.count_cap`).

Sequence unit (``privacy_unit="sequence"``, formal; ``docs/privacy.md``, "Grid-free estimation, sequence unit"):
every sequence cut to its first M events and kept under C alone, its own release vector (:func:`sequence_vector`,
every entry >= 0) scaled to L2 norm at most G, summed; one Gaussian release of sensitivity √2·G (over N), G stated,
from M (:func:`ctls_max_events_clip`) or chosen privately; then the same post-processing (:func:`prepare_sequence_stats`).

Partitioned (Parquet/Dask) statistics: :mod:`dphawkes_core.grid_free_distributed`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import numpy as np

from ..binning import bin_sparse, bins_in_window
from ..count_cap import AUTO, cap_rng, dp_count_cap
from ..data_info import DataInfo
from ..errors import ConfigError
from ..grid_free_stats import (GridFreePieces, GridFreeStats, grid_free_pieces, one_sequence_pieces, stats_from_pieces,
                               toeplitz_gram)
from ..privacy import calibrate_single_sensitivity
from ..sequence_privacy import cap_events, clip_rng, dp_sequence_clip
from ..stats import check_design_size, stats_fields
from ..validation import check_count_cap, check_positive_whole
from .binned import domain_info
from .family import Family
from .least_squares import paper_loss, solve_cls
from .sequence_unit import calibrate_sequence_release
from .settings import Setting, options_class
from .ssp import roughness_matrix, solve_nonnegative, stabilise

CTLS_RIDGE_FACTOR = 1.5  # λ = c·√r·ρσ√q (ρσ: the noise std of G's pieces, in the units of A; r: noise/signal)
SMOOTHING = 60.0  # default weight of the roughness penalty, in units of r·ρσ√q
GRAM_SCALE = 3.0  # default ρ: G's pieces get ρ times the pair counts' noise
EDGE_SHARE = 0.1  # the share of the squared sensitivity the head and tail pieces get, at most, by default …
EDGE_SHARE_MIN = 0.01  # … and at least (one long window: they carry nothing there)
NOTE = "formal (public C per dimension and w-bin, d, B, the windows; one Gaussian release of the pair statistics)"


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


# --- the sequence unit ------------------------------------------------------------------------------------------

SEQUENCE_NOTE = ("formal, privacy unit one sequence (replace-one; public S, windows, G, M, C, d, B): one Gaussian "
                 "release of the per-sequence grid-free pair statistics clipped at G")
SEQUENCE_RELEASE = "ctls"  # what SequenceStats-like statistics of this family say they clipped


@dataclass(frozen=True)
class GridFreeSequenceStats(GridFreeStats):
    """The grid-free statistics of the sequence unit: ``grid_pieces`` are the pieces of ``Σ_s clip_G(v_s)``
    (:func:`sequence_vector` of every sequence scaled to norm at most G), so :class:`GridFreeStats`' ``A``, ``b``
    are their G and c over the public N. ``kappa``, ``rho`` are the public scales the vectors were made with,
    ``sequence_clip`` the G (``auto_clip``: how it was chosen privately). The event unit refuses them (its
    sensitivity is not that of a clipped sum)."""

    sequence_clip: float = math.nan
    kappa: float = 1.0
    rho: float = 1.0
    release: str = SEQUENCE_RELEASE
    auto_clip: object = None


def sequence_bound_parts(dim: int, lags: int, max_events: int, count_cap: int | None = None) -> dict:
    """Squared bounds on the parts of one sequence's release vector (pieces' units, no scale applied) when it
    keeps at most M events, at most C per (dimension, w-bin) if C is given (``docs/privacy.md``, "Grid-free
    estimation, sequence unit"). With ``n_j`` its events in dimension j (``Σ n_j <= M``), ``c₂ = min(2C, M)``
    and ``c_B = min(C(B+1), M)`` (``M`` for both without C), using ``Σ v² <= max|v|·Σ|v|`` block by block:

    * ``lagged`` (all of ``R(0 … B−1)``) and ``pairs``: ``M²·c₂·c_B`` (an entry of ``R_jj'`` or ``P_ij`` is at
      most ``√(n_j n_j')·c₂``, its sum over the lags at most ``√(n_j n_j')·c_B``); ``pairs`` also at most
      ``(M(M−1)/2)²`` (``P`` counts each pair of events at most once);
    * ``totals``: ``M²``;
    * ``head_gram``, ``tail_gram``: ``(c₂·W)²`` with ``W = Σ_u (time u's steps spend in the head, tail) <=
      min(MB, dC·B(B+1)/2)`` (head), ``min(MB, dC·B(B+3)/2)`` (tail): ``||∫φφᵀ||_F <= ∫||φ||² <= c₂∫Σφ``;
    * ``head_int``, ``tail_int``: ``min(M, CB)·W``, ``min(M, C(B+1))·W``;
    * ``head_pairs``: ``min(c₂·min(M²c_B, dM·C²B(B+1)/2), (M(M−1)/2)²)``; ``head_counts``:
      ``min(M, CB)·min(M, dCB)``.
    """
    d, B = int(dim), int(lags)
    M = float(max_events)
    if count_cap is None:
        c2 = cB = c_head = c_tail = M
        w_head = w_tail = M * B
        head_pairs = (M * (M - 1) / 2) ** 2
        head_counts = M * M
    else:
        C = float(count_cap)
        c2, cB = min(2 * C, M), min(C * (B + 1), M)
        c_head, c_tail = min(M, C * B), min(M, C * (B + 1))
        w_head, w_tail = min(M * B, d * C * B * (B + 1) / 2), min(M * B, d * C * B * (B + 3) / 2)
        head_pairs = min(c2 * min(M * M * cB, d * M * C * C * B * (B + 1) / 2), (M * (M - 1) / 2) ** 2)
        head_counts = c_head * min(M, d * C * B)
    pair = min(M * M * c2 * cB, (M * (M - 1) / 2) ** 2)  # P and the head pairs: at most M(M−1)/2 pairs in all
    return {"lagged": M * M * c2 * cB, "pairs": pair, "totals": M * M, "head_gram": (c2 * w_head) ** 2,
            "tail_gram": (c2 * w_tail) ** 2, "head_int": c_head * w_head, "tail_int": c_tail * w_tail,
            "head_pairs": head_pairs, "head_counts": head_counts}


def _bound_split(parts: dict, rho: float) -> tuple[float, float]:
    """(Toeplitz part², edge part² before κ) of :func:`sequence_bound_parts` with G's pieces divided by ρ."""
    rho2 = float(rho) ** 2
    toeplitz = parts["lagged"] / rho2 + parts["pairs"] + parts["totals"]
    edge = ((parts["head_gram"] + parts["tail_gram"] + parts["head_int"] + parts["tail_int"]) / rho2
            + parts["head_pairs"] + parts["head_counts"])
    return toeplitz, edge


def sequence_kappa(dim: int, lags: int, max_events: int | None, count_cap: int | None, edge_share: float,
                   gram_scale: float) -> float:
    """The public κ of the sequence unit: the edge part takes the share ``edge_share`` of the squared bound
    :func:`ctls_max_events_clip` (the event unit's rule, :func:`ctls_sensitivity`, on the sequence bound);
    without M, the event unit's κ for C (1 without C). Any public κ keeps the guarantee (G bounds the scaled
    vector whatever κ is); it only moves noise between the parts."""
    if not 0 < edge_share < 1:
        raise ConfigError(f"the edge share must be in (0, 1), got {edge_share!r}")
    if max_events is None:
        return ctls_sensitivity(dim, lags, 1 if count_cap is None else count_cap, edge_share, gram_scale).kappa
    toeplitz, edge = _bound_split(sequence_bound_parts(dim, lags, max_events, count_cap), gram_scale)
    return math.sqrt(edge / toeplitz) * math.sqrt((1 - edge_share) / edge_share)


def ctls_max_events_clip(dim: int, lags: int, max_events: int, count_cap: int | None, kappa: float,
                         rho: float) -> float:
    """Public G that no sequence of at most M events (at most C per dimension and w-bin, if given) exceeds:
    the norm of :func:`sequence_vector` under :func:`sequence_bound_parts`, ``√(T² + E²/κ²)``."""
    check_positive_whole(max_events, "the cap M on events per sequence")
    toeplitz, edge = _bound_split(sequence_bound_parts(dim, lags, max_events, count_cap), rho)
    return float(math.sqrt(toeplitz + edge / float(kappa) ** 2))


def sequence_vector(pieces: GridFreePieces, kappa: float, rho: float) -> np.ndarray:
    """One sequence's contribution ``v_s``: :func:`raw_release` of its own pieces (each part over its public
    scale). Every entry is ``>= 0`` (sums of tri weights, counts, integrals of products of counts); the floor
    at 0 only removes rounding, so that ``⟨v, v'⟩ >= 0`` holds exactly for the √2·G bound."""
    return np.maximum(raw_release(pieces, kappa, rho), 0.0)


def window_pieces(events, width: float, lags: int, count_cap: int | None) -> GridFreePieces:
    """The public part of the summed pieces, from the windows alone (zeros elsewhere): N, ``Σ T``, the edge
    time, the sequences used and skipped, C."""
    d, B = events.dim, int(lags)
    ends = np.array([float(s.end_time) / width for s in events.sequences])
    used = ends[ends > B]
    if not used.size:
        raise ConfigError(f"no sequence is longer than the support s = {B * width:g}: use a smaller support or "
                          "bin size")
    q = d * B
    return GridFreePieces(np.zeros((B, d, d)), np.zeros((B, d, d)), np.zeros(d), np.zeros((q, q)), np.zeros((q, q)),
                          np.zeros(q), np.zeros(q), np.zeros((d, q)), np.zeros(d), float(np.sum(used - B)),
                          float(np.sum(used)), int(used.size), int(ends.size - used.size),
                          None if count_cap is None else int(count_cap), float(np.sum(np.minimum(used, 2.0 * B))))


def sequence_contributions(events, width: float, lags: int, count_cap: int | None, kappa: float, rho: float):
    """``(v_s, kept, clipped)`` of every sequence longer than s, in order (:func:`sequence_vector` of
    :func:`~dphawkes_core.grid_free_stats.one_sequence_pieces`); shorter ones yield ``(None, 0, clipped)``."""
    for seq in events.sequences:
        pieces, kept, clipped = one_sequence_pieces(seq.times, seq.end_time, width, lags, count_cap)
        yield (None if pieces is None else sequence_vector(pieces, kappa, rho)), kept, clipped


def sequence_norms(events, width: float, lags: int, count_cap: int | None, kappa: float, rho: float) -> np.ndarray:
    """``‖v_s‖`` of every sequence longer than s: the norms :func:`clipped_sequence_sum` clips (and the private
    choice of G histograms, :func:`~dphawkes_core.sequence_privacy.dp_sequence_clip`)."""
    return np.asarray([_norm(v) for v, _, _ in sequence_contributions(events, width, lags, count_cap, kappa, rho)
                       if v is not None], float)


def _norm(vector: np.ndarray) -> float:
    """L2 norm without BLAS (whose threads cost more than the sum on these vectors)."""
    return math.sqrt(float(np.sum(vector * vector)))


def clipped_sequence_sum(events, width: float, lags: int, count_cap: int | None, kappa: float, rho: float,
                         clip: float) -> tuple[np.ndarray, dict]:
    """``Σ_s v_s·min(1, G/‖v_s‖)`` (the raw release of the sequence unit, before noise) and counts for the data
    info (``kept``, ``clipped`` events, ``clipped_sequences``, ``sequences``)."""
    total, counts = None, {"kept": 0, "clipped": 0, "clipped_sequences": 0, "sequences": 0}
    for vector, kept, clipped in sequence_contributions(events, width, lags, count_cap, kappa, rho):
        counts["clipped"] += clipped
        if vector is None:
            continue
        norm = _norm(vector)
        scale = min(1.0, clip / norm) if norm > 0 else 1.0
        counts["clipped_sequences"] += scale < 1.0
        counts["kept"] += kept
        counts["sequences"] += 1
        total = vector * scale if total is None else total + vector * scale
    return total, counts


def sequence_edge_share(config, template: GridFreePieces) -> float:
    """The edge share: stated (percent), or :func:`default_edge_share` of the windows."""
    return default_edge_share(template) if config.ctls_edge_share is None else config.ctls_edge_share / 100.0


def sequence_setup(config, dim: int, template: GridFreePieces) -> tuple[float, float, float | None]:
    """(κ, ρ, G) of a sequence-unit config from public numbers: G stated, or from M (``None`` with ``"auto"``:
    chosen on the data, below the G of M)."""
    rho = float(config.ctls_gram_scale)
    kappa = sequence_kappa(dim, config.lags, config.max_events, config.count_cap,
                           sequence_edge_share(config, template), rho)
    if config.sequence_clip == AUTO:
        return kappa, rho, None
    if config.sequence_clip is not None:
        return kappa, rho, float(config.sequence_clip)
    return kappa, rho, ctls_max_events_clip(dim, config.lags, config.max_events, config.count_cap, kappa, rho)


def prepare_sequence_stats(events, config) -> tuple[GridFreeSequenceStats, DataInfo]:
    """The sequence unit's statistics: every sequence cut to its first M events
    (:func:`~dphawkes_core.sequence_privacy.cap_events`), its events kept under C per (dimension, w-bin), its
    :func:`sequence_vector` scaled to norm at most G and summed (:func:`clipped_sequence_sum`); G stated, from M
    (:func:`ctls_max_events_clip`) or chosen privately (``"auto"``:
    :func:`~dphawkes_core.sequence_privacy.dp_sequence_clip` on :func:`sequence_norms`, top the G of M)."""
    check_design_size(events.dim, config.lags)
    check_count_cap(config.count_cap)
    capped, over_cap = cap_events(events, config.max_events)
    template = window_pieces(capped, config.bin_size, config.lags, config.count_cap)
    kappa, rho, clip = sequence_setup(config, events.dim, template)
    auto = None
    if clip is None:
        top = ctls_max_events_clip(events.dim, config.lags, config.max_events, config.count_cap, kappa, rho)
        auto = dp_sequence_clip(sequence_norms(capped, config.bin_size, config.lags, config.count_cap, kappa, rho),
                                top, config.epsilon, config.dp_delta, clip_rng(config.seed), config.sequence_clip_share)
        clip = auto.sequence_clip
    total, counts = clipped_sequence_sum(capped, config.bin_size, config.lags, config.count_cap, kappa, rho, clip)
    pieces = pieces_from_release(total, template, kappa, rho)
    base = stats_from_pieces(pieces, config.bin_size)
    fields = {f: getattr(base, f) for f in stats_fields(GridFreeStats)}
    stats = GridFreeSequenceStats(**fields, sequence_clip=float(clip), kappa=float(kappa), rho=float(rho),
                                  auto_clip=auto)
    info = DataInfo(
        n_bins=sum(bins_in_window(s.end_time, config.bin_size) for s in events.sequences),
        n_events=events.n_events, binned_events=counts["kept"], dropped_events=0, clipped_events=counts["clipped"],
        skipped_sequences=template.skipped_sequences, window_stated=bool(events.window_stated), **domain_info(events),
        count_cap=config.count_cap, privacy_unit="sequence", sequence_clip=float(clip), max_events=config.max_events,
        events_over_cap=over_cap, clipped_sequences=int(counts["clipped_sequences"]), sequences=counts["sequences"],
        auto_sequence_clip=auto.to_dict() if auto is not None else None)
    return stats, info


def expected_sequence_clip(stats: GridFreeSequenceStats, config) -> tuple[float, float, float, object]:
    """(κ, ρ, G, auto) that statistics of ``config`` must carry: recomputed from the config and the windows'
    public numbers (``stats.grid_pieces``' durations), G the chosen one with ``"auto"``."""
    kappa, rho, clip = sequence_setup(config, stats.dim, stats.grid_pieces)
    auto = getattr(stats, "auto_clip", None) if config.sequence_clip == AUTO else None
    return kappa, rho, (auto.sequence_clip if auto is not None else clip), auto


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
    units = ("event", "sequence")
    settings = SETTINGS
    options_type = CTLSOptions
    auto_count_cap = True
    statistics = "events"  # its own statistics of exact times; neighbours built from events (worst_case_events)
    worst_case_lags = 25  # the worst-case audit's B: its adversarial events reach 0.95 of the bound (0.84 at B = 3)
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

    def check(self, config) -> None:
        super().check(config)
        if config.unit.name == "sequence" and config.sequence_clip == AUTO and (
                config.epsilon is None or config.sigma2 is not None):
            raise ConfigError(f"an automatic clip norm G is available for {self.label} with a target ε (it spends a "
                              "share of ε) and a public cap M on events per sequence (the top of its grid)")

    def prepare_stats(self, events, config):
        """The grid-free pieces (:func:`grid_free_pieces`) of the events kept under C (``"auto"``: C chosen first,
        as DP-SSP chooses it, from the w-bin counts), assembled into :class:`GridFreeStats`; the data info counts
        the kept events as ``binned_events`` and the events the cap removed as ``clipped_events`` (none are
        dropped: the last partial bin is kept). The sequence unit: :func:`prepare_sequence_stats`."""
        if config.unit.name == "sequence":
            return prepare_sequence_stats(events, config)
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
        """The statistics of :meth:`prepare_stats` reduced over Parquet partitions in ``window`` (map steps over
        ``executor``): :func:`~dphawkes_core.grid_free_distributed.prepare_grid_free_partitioned`."""
        from ..grid_free_distributed import prepare_grid_free_partitioned

        return prepare_grid_free_partitioned(paths, config, window, executor)

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
        if config.unit.name == "sequence":
            return self._sequence_report(stats, config)
        if isinstance(stats, GridFreeSequenceStats):
            raise ConfigError(f"{self.label}: these statistics are clipped sums of the sequence unit; the event unit's "
                              "sensitivity does not hold for them")
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

    def _sequence_report(self, stats, config):
        """One Gaussian release of the clipped sums: sensitivity √2·G/N (N = Σ(T − s)/w, public), composed with
        the private choice of G (:func:`~dphawkes_core.estimators.sequence_unit.calibrate_sequence_release`)."""
        kappa, rho, clip, auto = (expected_sequence_clip(stats, config) if isinstance(stats, GridFreeSequenceStats)
                                  else (None,) * 4)
        if (not isinstance(stats, GridFreeSequenceStats) or stats.sequence_clip != clip
                or stats.event_cap != config.count_cap or (stats.kappa, stats.rho) != (kappa, rho)
                or config.sequence_clip == AUTO and (auto is None or auto.share != config.sequence_clip_share)):
            raise ConfigError("the sequence unit needs statistics clipped per sequence at the config's G and C, for "
                              "its release: compute them with prepare_stats on the sequence-unit config")
        return calibrate_sequence_release(stats, config, clip, auto, SEQUENCE_NOTE,
                                          normaliser=stats.grid_pieces.duration)

    def _scales(self, stats, config) -> tuple[float, float]:
        """(κ, ρ) of the release."""
        if isinstance(stats, GridFreeSequenceStats):
            return stats.kappa, stats.rho
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
