"""The grid-free release (method ``ctls``, :mod:`~dphawkes_core.estimators.grid_free`): the released vector of
the pair pieces (:func:`release_layout`, each part over its public scale), its event-unit L2 sensitivity
(:func:`ctls_sensitivity`, derived in ``docs/privacy.md``, "Grid-free estimation"), the shrinkage of the noisy
head and tail pieces (free post-processing) and the adversarial neighbours that reach the bound
(:func:`worst_case_events`: the tests' and the audit's worst case). The family module runs them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import numpy as np

from dphawkes_core.errors import ConfigError
from dphawkes_core.statistics.exact_times import GridFreePieces, toeplitz_gram

EDGE_SHARE = 0.1  # the share of the squared sensitivity the head and tail pieces get, at most, by default …
EDGE_SHARE_MIN = 0.01  # … and at least (one long window: they carry nothing there)

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
    from dphawkes_core.data.io import from_arrays

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


def default_edge_share(pieces: GridFreePieces) -> float:
    """The share of S² the head and tail pieces get unless stated: ``min(0.1, max(0.01, f/5))`` with
    ``f = Σ min(T, 2s) / Σ T`` the fraction of the windows' time within s of an end (public: the windows).
    Measured on 3000 windows of length 4s (f = 0.5, paper-2d, ε = 1): 0.41 at a share of 0.01, 0.33 at 0.02,
    0.32 at 0.05–0.1, 0.34 at 0.5; on one long window the pieces are noise whatever the share, so it only
    costs the rest (``1/√(1 − share)`` more noise)."""
    fraction = pieces.edge_time / max(pieces.total_time, 1e-300)
    return float(min(EDGE_SHARE, max(EDGE_SHARE_MIN, fraction / 5)))
