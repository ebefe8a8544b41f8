"""The exponential family's release (method ``exp``, :mod:`~dphawkes_core.estimators.exp`): the released vector
(:func:`raw_release`: the Gram's upper triangle and the integrals over the public scale ρ, the values at the
events and the totals as they are; at ρ = :data:`DERIVED` the values and the totals alone, the Gram derived from them
by :func:`~dphawkes_core.estimators.exp.statistics.gram_from_values`), its event-unit L2 sensitivity
(:func:`exp_sensitivity`, derived in ``docs/privacy.md``, "Exponential kernels") and the adversarial neighbours that
reach it (:func:`worst_case_events`). The family module runs them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import numpy as np

from dphawkes_core.errors import ConfigError
from dphawkes_core.estimators.exp.statistics import ExpPieces

# --- the release ------------------------------------------------------------------------------------------


DERIVED = math.inf
"""ρ of a release that gives the Gram no budget (``--exp-gram derived``): the Gram over an infinite scale is not
released at all (:func:`release_layout` leaves it out, every bound's Gram part over ρ² is 0) and is computed from
the released values instead (:func:`~dphawkes_core.estimators.exp.statistics.gram_from_values`)."""


def release_layout(dim: int, n_decays: int, rho: float = 1.0) -> list[tuple[str, int]]:
    """The released numbers in order, ``(name, count)``: the Gram's upper triangle and the integrals (each over
    ρ; none at ρ = :data:`DERIVED`), the values at the events ``c`` and the totals."""
    q = int(dim) * int(n_decays)
    values = [("pairs", int(dim) * q), ("totals", int(dim))]
    return values if math.isinf(rho) else [("gram", q * (q + 1) // 2), ("integral", q), *values]


SCALED = ("gram", "integral")  # the parts of G: released over ρ


def _with_totals(parts: dict, totals_weight: float) -> dict:
    """``parts`` with the totals times ``totals_weight`` (a derived Gram's release: :mod:`.totals`)."""
    return parts if totals_weight == 1.0 else {**parts, "totals": parts["totals"] * totals_weight}


def raw_release(pieces: ExpPieces, rho: float, totals_weight: float = 1.0) -> np.ndarray:
    """The release vector without noise, in the pieces' units (not yet divided by ``N = Σ T``); the totals times
    ``totals_weight``."""
    q = pieces.gram.shape[0]
    parts = _with_totals({"gram": pieces.gram[np.triu_indices(q)], "integral": pieces.integral,
                          "pairs": pieces.pairs.ravel(), "totals": pieces.totals}, totals_weight)
    return np.concatenate([parts[name] / (rho if name in SCALED else 1.0)
                           for name, _ in release_layout(pieces.dim, len(pieces.decays), rho)])


def pieces_from_release(vector: np.ndarray, template: ExpPieces, rho: float, totals_weight: float = 1.0) -> ExpPieces:
    """The pieces a (noisy) release vector stands for (the Gram mirrored; the public decays, durations and
    numbers of sequences from ``template``; the totals' weight divided out). At ρ = :data:`DERIVED` the vector
    holds no Gram: the Gram and the integrals are left NaN, to be derived
    (:func:`~dphawkes_core.estimators.exp.statistics.gram_from_values`) once the values are back in the decays
    basis."""
    d, q = template.dim, template.gram.shape[0]
    parts, at = {"gram": np.full(q * (q + 1) // 2, np.nan), "integral": np.full(q, np.nan)}, 0
    for name, count in release_layout(d, len(template.decays), rho):
        parts[name] = vector[at:at + count] * (rho if name in SCALED else 1.0)
        at += count
    parts = _with_totals(parts, 1.0 / totals_weight)
    gram = np.zeros((q, q))
    gram[np.triu_indices(q)] = parts["gram"]
    gram = gram + np.triu(gram, 1).T
    return replace(template, gram=gram, integral=parts["integral"], pairs=parts["pairs"].reshape(d, q),
                   totals=parts["totals"])


# --- sensitivity ------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class ExpSensitivity:
    """The event unit's L2 sensitivity of the release (in the pieces' units, before dividing by N).

    Attributes
    ----------
    total : float
        The bound: the largest ``sqrt(gram²/ρ² + rest²)`` over the four insertion corners of
        :func:`corner_bounds` and the swap of :func:`swap_bounds`.
    rho : float
        The public scale the Gram and the integrals are released over.
    corner : tuple
        Where the largest is: ``(end, after)`` of an insertion (z at the start, ``end = 0``, or the end, ``1``, of
        its w-bin; the other dimensions' events of its bin after it or before), or ``("swap",)``.
    parts : dict
        ``{"gram": …, "rest": …}``: the squared bounds of the two parts there (no scale applied).
    """

    total: float
    rho: float
    corner: tuple = (0, True)
    parts: dict = field(default_factory=dict)

    @property
    def kind(self) -> str:
        """``insert`` or ``swap``: the kind of neighbour whose bound is the largest."""
        return "swap" if self.corner == SWAP else "insert"


SWAP = ("swap",)  # the corner of :class:`ExpSensitivity` when the swap's bound is the largest


def _gram_entries(decays, width: float, count_cap: int, end: int) -> tuple[np.ndarray, np.ndarray]:
    """Bounds of the Gram's entries when z is inserted at one end of its w-bin (:func:`corner_bounds`): the
    ``U × U`` entries against another dimension (row: z's decay u, column: the other's decay v) and the upper
    triangle of the entries within z's own dimension."""
    beta = np.asarray(decays, dtype=float)
    C, w = float(count_cap), float(width)
    q = np.exp(-beta * w)
    past, future = q**end / (1 - q), q ** (1 - end) / (1 - q)
    kappa = np.outer(beta, beta) / (beta[:, None] + beta[None, :])
    cross = C * kappa * (1 + past[None, :] + future[:, None])
    own = (kappa * ((C - 1) + C * past[None, :] + C * future[:, None])
           + kappa * ((C - 1) + C * past[:, None] + C * future[None, :]) + kappa)
    return cross, own[np.triu_indices(beta.size)]


def corner_bounds(dim: int, decays, width: float, count_cap: int, end: int, after: bool,
                  totals_weight: float = 1.0) -> dict:
    """Squared bounds of the change of each part of the release when one event z is inserted into dimension 0
    (its w-bin kept fewer than C), at one corner of the adversary's choices (``docs/privacy.md``, "Exponential
    kernels").

    With ``q_u = e^{−β_u w}``, z at the start (``end = 0``) or the end (``end = 1``) of its bin: the earlier
    bins' events are at least ``φ + (r − 1)w`` before z (``P_u = q_u^{end}/(1 − q_u)`` summed), the later ones
    at least ``(1 − end)w + (r − 1)w`` after (``F_u = q_u^{1 − end}/(1 − q_u)``), the C events of its own bin
    (C − 1 in dimension 0) at any distance ≥ 0 (weight <= 1), after z (``after``) or before; ``κ_uv =
    β_u β_v/(β_u + β_v)``. The entries:

    * Gram, row z's dimension and decay u, column another dimension k, decay v: ``C κ_uv (1 + P_v + F_u)``;
    * Gram, both in z's dimension (u <= v): ``κ_uv [(C−1) + C P_v + C F_u] + κ_uv [(C−1) + C P_u + C F_v] +
      κ_uv``;
    * the integrals of z's dimension: 1 each;
    * ``c_i[(0, u)]``, i ≠ 0: ``β_u (a + C F_u)``; ``c_0[(k, v)]``, k ≠ 0: ``β_v ((C − a) + C P_v)`` with
      ``a = C`` (after) or 0; ``c_0[(0, u)]``: ``β_u ((C − 1) + C (F_u + P_u))``; the total of dimension 0: 1.

    With the totals released times ``totals_weight`` the total's bound is that weight.
    """
    beta = np.asarray(decays, dtype=float)
    d, C, w = int(dim), float(count_cap), float(width)
    q = np.exp(-beta * w)
    past, future = q**end / (1 - q), q ** (1 - end) / (1 - q)
    cross, own = _gram_entries(decays, width, count_cap, end)
    a = C if after else 0.0
    targets = beta * (a + C * future)
    sources = beta * ((C - a) + C * past)
    both = beta * ((C - 1) + C * (future + past))
    gram = (d - 1) * float(np.sum(cross**2)) + float(np.sum(own**2)) + beta.size
    rest = (d - 1) * float(np.sum(targets**2) + np.sum(sources**2)) + float(np.sum(both**2)) + totals_weight**2
    return {"gram": gram, "rest": rest}


def swap_bounds(dim: int, decays, width: float, count_cap: int) -> dict:
    """Squared bounds of the change of each part of the release when z, inserted into a full w-bin of dimension
    0 ahead of its last kept event v, evicts v (a *swap*: the kept sets differ by v removed and z inserted;
    ``docs/privacy.md``, "Exponential kernels", where each line is proved).

    The change of every number is ``f_z − f_v``, the changes of inserting z and of inserting v into the events
    both sets keep, each a sum of non-negative terms:

    * the Gram (both parts) and the integrals: ``|f_z − f_v| <= max(f_z, f_v)``, so each entry is at most its
      largest insertion bound over the two ends of the bin (:func:`_gram_entries`), the integrals 1;
    * the values at the events cancel in part: with ``q_u = e^{−β_u w}``, ``c_0[(k, v)]``, k ≠ 0 (z and v as
      targets), moves by at most ``β_v (C + n_b (1 − q_v))`` and ``c_k[(0, u)]`` (z and v as sources) by at most
      ``β_u (C + n_a (1 − q_u))``, where ``n_b`` and ``n_a`` (``n_b + n_a <= C``) are dimension k's events of
      the bin before z and after v; the square of the pair is convex in ``(n_b, n_a)``, largest at ``n_b = C``
      (or ``n_a = C``): ``C² Σ_u β_u² (1 + (2 − q_u)²)`` per other dimension; ``c_0[(0, u)]`` by at most
      ``β_u (2C − 1)``; the totals do not move.
    """
    beta = np.asarray(decays, dtype=float)
    d, C = int(dim), float(count_cap)
    q = np.exp(-beta * float(width))
    starts, ends = _gram_entries(decays, width, count_cap, 0), _gram_entries(decays, width, count_cap, 1)
    cross, own = np.maximum(starts[0], ends[0]), np.maximum(starts[1], ends[1])
    gram = (d - 1) * float(np.sum(cross**2)) + float(np.sum(own**2)) + beta.size
    rest = (d - 1) * C**2 * float(np.sum(beta**2 * (1 + (2 - q) ** 2))) + (2 * C - 1) ** 2 * float(np.sum(beta**2))
    return {"gram": gram, "rest": rest}


def exp_sensitivity(dim: int, decays, width: float, count_cap: int, gram_scale: float = 1.0,
                    totals_weight: float = 1.0) -> ExpSensitivity:
    """L2 sensitivity of the release under one event added or removed, at most C events kept per (dimension,
    w-bin) by keeping the first C (derivation: ``docs/privacy.md``, "Exponential kernels").

    Keeping the first C, an added event z changes nothing (its bin already kept C events before it), is inserted
    (its bin kept fewer than C), or evicts the bin's last kept event v (a swap). An insertion: every number
    released is a sum of non-negative terms, each of them at most its bound in :func:`corner_bounds`; the squared
    change is convex in where z sits in its bin and in how many of its bin's events come after it, so its largest
    value is at one of the four corners (z at either end of its bin; the other dimensions' events of its bin all
    after or all before it). A swap: :func:`swap_bounds` (its change can mix the two ends' corners, one number
    at z's and another at v's: up to 1.12× the insertions' bound where the decays are fast against w). The bound
    is the largest of the five. With the totals released times ``totals_weight`` (a derived Gram's release) an
    insertion's total moves by that weight (a swap's not at all).
    """
    if count_cap is None or count_cap < 1:
        raise ConfigError("the exponential-kernel formal release needs a public count cap C >= 1 (events per "
                          "dimension per w-bin, the first C kept)")
    if not gram_scale > 0:
        raise ConfigError(f"the Gram scale must be positive, got {gram_scale!r}")
    cases = [((end, after), corner_bounds(dim, decays, width, count_cap, end, after, totals_weight))
             for end in (0, 1) for after in (True, False)]
    cases.append((SWAP, swap_bounds(dim, decays, width, count_cap)))
    best = None
    for corner, parts in cases:
        total = math.sqrt(parts["gram"] / gram_scale**2 + parts["rest"])
        if best is None or total > best.total:
            best = ExpSensitivity(total, float(gram_scale), corner, parts)
    return best


# --- adversarial neighbours (the tests' and the audit's worst case) ------------------------------------------

NEAR = 1e-6  # how close (in units of w) the adversary puts events to z and to the bin edges
REACH = math.log(1e6)  # earlier and later bins are filled until q^r < 1e-6
TAIL = 30.0  # the window runs on 30/β_min after the last event, so nothing is cut off by its end


def worst_case_events(dim: int, decays, width: float, count_cap: int, corner: tuple):
    """Neighbours at the bound's largest case (:func:`exp_sensitivity`), in the limit the bound is a supremum
    of (every distance the bound takes as 0 is ``<= 2e−6 w``; in every dimension, each of the R bins before z's
    bin g holds C events at its end and each of the R bins after it C events at its start, R until
    ``q^R < 1e−6``).

    An insertion corner ``(end, after)``: D' adds z to dimension 0 at the start (``end = 0``) or the end
    (``end = 1``) of bin g, whose dimension 0 holds C − 1 events in D; bin g holds C events of every other
    dimension right after z (``after``) or right before it (and dimension 0's C − 1 on the same side).

    The swap (``corner == SWAP``): bin g of dimension 0 holds C events in D, its last v at the bin's end and the
    C − 1 others right after z; D' adds z near the bin's start, which evicts v; bin g holds C events of every
    other dimension between the bin's start and z. The values at the events reach their bound in
    :func:`swap_bounds` as ``q → 0``; the Gram's (the largest of two insertions) is not reached.

    Returns
    -------
    D, D' : Events
        One sequence each, window stated; D' has one event more.
    """
    from dphawkes_core.data.io import from_arrays

    d, C, w = int(dim), int(count_cap), float(width)
    reach = math.ceil(REACH / (min(decays) * w))
    g = reach + 1
    spread = NEAR * (np.arange(C) + 1) / (C + 1)  # C distinct times within NEAR
    if corner == SWAP:
        z = g + 2 * NEAR
        own = {0: np.append(z + spread[:C - 1], g + 1 - NEAR), "other": g + spread}
    else:
        end, after = corner
        z = g + NEAR if end == 0 else g + 1 - NEAR
        near = z + spread if after else z - spread
        own = {0: near[:C - 1], "other": near}
    times = []
    for j in range(d):
        earlier = [(g - r + 1) - spread for r in range(1, reach + 1)]
        later = [(g + r) + spread for r in range(1, reach + 1)]
        times.append(np.concatenate([own[0] if j == 0 else own["other"], *earlier, *later]))
    window = (g + reach + 1) * w + TAIL / min(decays)

    def events(columns):
        return from_arrays([np.sort(t) * w for t in columns], end_time=window)

    return events(times), events([np.append(times[0], z), *times[1:]])
