"""The exponential family's release in a better-conditioned basis of the same kernels (option ``exp_basis``).

**Why.** The kernels ``h_ij(t) = Σ_u a_iju β_u e^{−β_u t}`` are fitted from the Gram of the features
``g_ju(t) = Σ_{s ∈ j, s < t} β_u e^{−β_u (t − s)}``, one per public decay. Those features are nearly collinear: the
L² Gram of ``β_u e^{−β_u t}`` at the default decays (0.7, 1.5, 3) has condition number 379, so the release's
isotropic noise reaches the fitted kernels through ``G⁻¹`` amplified along the directions the decays barely tell
apart (``docs/accuracy.md``, "A formal fit for exponential kernels").

**The basis.** With the decays sorted, ``β_(1) < … < β_(U)``, the *differences* basis is
``f_m(τ) ∝ e^{−β_(m) τ} − e^{−β_(m+1) τ}`` (m < U) and ``f_U(τ) ∝ e^{−β_(U) τ}``. It spans the same functions (the
fit is the same least squares: with σ² = 0 the estimate is exp's), every ``f_m`` is **non-negative** (the decays
increase), and at the default decays the Gram's condition number, each function normalised, is 19 instead of 294.
Each carries the mass :data:`BASIS_MASS` (2: with the default ρ = 3 this is the share of noise between the Gram and
the pair counts that was best on the tuning processes, the same as ρ = 1.5 at mass 1). The released numbers are
exp's statistics of the features ``g'_jm(t) = Σ_{s ∈ j, s < t} f_m(t − s)`` — a public linear map ``T`` of exp's
pieces (:func:`to_basis`), released by exp's own layout
(:func:`~dphawkes_core.estimators.exp.release.raw_release`) — and the fit maps them back (:func:`from_basis`):
post-processing.

**The bound** (:func:`basis_sensitivity`, derived in ``docs/privacy.md``, "Exponential kernels in the differences
basis"). Every released number is a sum of non-negative terms (the basis functions are non-negative), one per event
or pair of events, each at most the supremum of a known exponential sum (a *profile* of their distance) over the
distances the cap allows. An insertion is one configuration: the largest total over the corners (where z sits in
its bin, which side of it its bin's events are on). A swap changes each number by the difference of two such sums:
at most the larger (its largest insertion bound over every corner, since z and v may sit at different corners) and
for a pair count at most the sum of its profiles' oscillations (z and v are less than w apart, so each other event's
two distances are too; not for the Gram, whose integrals the window's end cuts); the smaller, number by number. The
suprema and infima of a profile over an interval are taken at its ends and its critical points (at most U − 1), the
bins beyond the last one summed by a geometric tail.

The same bound for the decays basis itself (``f_u = β_u e^{−β_u τ}``) reproduces exp's insertion bound: a
cross-check the tests make.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field, replace

import numpy as np

from dphawkes_core.errors import ConfigError
from dphawkes_core.estimators.exp.statistics import ExpPieces

DECAYS_BASIS, DIFFERENCES = "decays", "differences"
BASES = (DECAYS_BASIS, DIFFERENCES)
BASIS_MASS = 2.0  # ∫_0^∞ f_m of each differences-basis function (with ρ = 3: the noise share chosen in tuning)
PHASE_CELLS = 16  # cells of the added event's position in its bin; each cell's ranges cover all its positions
OSCILLATION_CELLS = 32  # cells of a window's start in :meth:`_Profile.oscillation`; each cell's window covers them all
TAIL = 40.0  # bins are summed until e^{−β_min·distance} < e^{−40}; the rest by a geometric series


# --- the basis ------------------------------------------------------------------------------------------------

def basis_matrix(decays, basis: str = DIFFERENCES) -> np.ndarray:
    """``A`` (``U × U``): basis function m is ``f_m(τ) = Σ_u A[m, u] e^{−β_u τ}``, u in the config's order of the
    decays. ``decays``: ``A = diag(β)`` (exp's own features, each of mass 1); ``differences``: the differences of
    consecutive sorted decays, the fastest alone, each of mass ``∫_0^∞ f_m =`` :data:`BASIS_MASS`."""
    beta = np.asarray(decays, dtype=float)
    if basis == DECAYS_BASIS:
        return np.diag(beta)
    if basis != DIFFERENCES:
        raise ConfigError(f"unknown basis {basis!r}; choose one of {', '.join(BASES)}")
    if np.unique(beta).size != beta.size:
        raise ConfigError("the differences basis needs distinct decays (a repeated decay adds nothing to the span)")
    order = np.argsort(beta)
    A = np.zeros((beta.size, beta.size))
    for m, u in enumerate(order):
        A[m, u] = 1.0
        if m + 1 < beta.size:
            A[m, order[m + 1]] = -1.0
    return BASIS_MASS * A / (A @ (1.0 / beta))[:, None]


def feature_map(decays, basis: str = DIFFERENCES) -> np.ndarray:
    """``T`` (``U × U``) with ``g'_m = Σ_u T[m, u] g_u``: exp's feature of decay u is ``β_u e^{−β_u τ}``, so
    ``T = A·diag(1/β)``."""
    return basis_matrix(decays, basis) / np.asarray(decays, dtype=float)[None, :]


def _full_map(decays, dim: int, basis: str) -> np.ndarray:
    """``T`` on the decay-major layout (column ``u·d + j``): ``T ⊗ I_d``."""
    return np.kron(feature_map(decays, basis), np.eye(int(dim)))


def to_basis(pieces: ExpPieces, basis: str) -> ExpPieces:
    """exp's pieces of the features ``g'`` (``gram' = T gram Tᵀ``, ``integral' = T integral``, ``pairs' = pairs
    Tᵀ``; the totals and the public numbers unchanged). The decays basis: the pieces themselves."""
    if basis == DECAYS_BASIS:
        return pieces
    T = _full_map(pieces.decays, pieces.dim, basis)
    return replace(pieces, gram=T @ pieces.gram @ T.T, integral=T @ pieces.integral, pairs=pieces.pairs @ T.T)


def from_basis(pieces: ExpPieces, basis: str) -> ExpPieces:
    """The inverse of :func:`to_basis` (post-processing of a noisy release)."""
    if basis == DECAYS_BASIS:
        return pieces
    T_inv = np.linalg.inv(_full_map(pieces.decays, pieces.dim, basis))
    return replace(pieces, gram=T_inv @ pieces.gram @ T_inv.T, integral=T_inv @ pieces.integral,
                   pairs=pieces.pairs @ T_inv.T)


# --- suprema of exponential sums ------------------------------------------------------------------------------------

def _critical_points(coef: np.ndarray, rate: np.ndarray) -> np.ndarray:
    """Every x >= 0 where ``p(x) = Σ_m coef[m] e^{−rate[m] x}`` has a local extremum: the sign changes of p' on a fine
    grid of ``[0, X]`` (X: where every term is below e^{−60} of its size at 0), refined by bisection. An exponential
    sum with n distinct rates has at most n − 1 real zeros (Descartes' rule of signs for exponential sums), and p' is
    one; beyond X, p' keeps the sign of its slowest term."""
    from scipy.optimize import brentq

    def slope(x):
        return -(np.exp(-np.multiply.outer(x, rate)) @ (coef * rate))

    reach = 60.0 / float(rate.min())
    grid = np.concatenate([np.linspace(0.0, 1.0, 2001)[:-1] * min(reach, 1.0),
                           np.geomspace(min(reach, 1.0), reach, 4001)])
    values = slope(grid)
    changes = np.flatnonzero(np.sign(values[:-1]) * np.sign(values[1:]) < 0)
    return np.array([brentq(slope, grid[k], grid[k + 1], xtol=1e-14) for k in changes])


@dataclass(frozen=True)
class _Profile:
    """One kind of contribution as a function of the distance x >= 0 between the added event and another event:
    ``Σ_m coef[m] e^{−rate[m] x}`` (one coefficient per distinct rate), non-negative (an integral of products of
    non-negative basis functions, or one of them). Its supremum over an interval is at an end or at one of its
    :func:`_critical_points`."""

    coef: np.ndarray
    rate: np.ndarray

    def __post_init__(self):
        rates, where = np.unique(self.rate, return_inverse=True)
        object.__setattr__(self, "rate", rates)
        object.__setattr__(self, "coef", np.bincount(where, weights=self.coef, minlength=rates.size))

    @functools.cached_property
    def critical(self) -> np.ndarray:
        """Where the profile has its local extrema (:func:`_critical_points`)."""
        return _critical_points(self.coef, self.rate)

    def __call__(self, x) -> np.ndarray:
        return np.exp(-np.multiply.outer(np.asarray(x, dtype=float), self.rate)) @ self.coef

    def plus(self, other: _Profile) -> _Profile:
        return _Profile(np.concatenate([self.coef, other.coef]), np.concatenate([self.rate, other.rate]))

    def sup(self, lo, hi) -> np.ndarray:
        """``sup_{x ∈ [lo, hi]} p(x)`` for arrays ``lo <= hi`` of one shape."""
        lo, hi = np.asarray(lo, dtype=float), np.asarray(hi, dtype=float)
        best = np.maximum(self(lo), self(hi))
        for x in self.critical:
            best = np.where((lo <= x) & (x <= hi), np.maximum(best, float(self(x))), best)
        return best

    def own(self, lo: float, hi: float) -> float:
        return float(self.sup(lo, hi))

    def inf(self, lo, hi) -> np.ndarray:
        """``inf_{x ∈ [lo, hi]} p(x)`` for arrays ``lo <= hi`` of one shape."""
        lo, hi = np.asarray(lo, dtype=float), np.asarray(hi, dtype=float)
        least = np.minimum(self(lo), self(hi))
        for x in self.critical:
            least = np.where((lo <= x) & (x <= hi), np.minimum(least, float(self(x))), least)
        return least

    def oscillation(self, lo, hi, reach: float) -> np.ndarray:
        """An upper bound on ``sup |p(a) − p(b)|`` over ``a, b ∈ [lo, hi]`` with ``|a − b| <= reach`` (arrays of one
        shape, ``hi − lo >= reach``): every such pair lies in a window ``[y, y + reach]`` with ``y ∈ [lo, hi −
        reach]``; that range is cut into :data:`OSCILLATION_CELLS` cells, and for y in the cell ``[y_k, y_{k+1}]``
        the window lies in ``[y_k, y_{k+1} + reach]``, whose supremum minus infimum bounds it."""
        lo, hi = np.asarray(lo, dtype=float), np.asarray(hi, dtype=float)
        step = (hi - lo - reach) / OSCILLATION_CELLS
        largest = np.zeros(lo.shape)
        for k in range(OSCILLATION_CELLS):
            start, stop = lo + k * step, np.minimum(lo + (k + 1) * step + reach, hi)
            largest = np.maximum(largest, self.sup(start, stop) - self.inf(start, stop))
        return largest

    def tail(self, start: float, width: float) -> float:
        """Upper bound on ``Σ_{r >= 0}`` of the profile's supremum (or any move of it) beyond ``start + r·w``: each at
        most ``Σ_m |coef[m]| e^{−rate[m]·(start + r·w)}``, a geometric series."""
        return float(np.sum(np.abs(self.coef) * np.exp(-self.rate * start) / -np.expm1(-self.rate * width)))

    def bins(self, first_lo: float, first_hi: float, width: float, count: int) -> float:
        """``Σ_{r < count} sup over [first_lo + r·w, first_hi + r·w]``, plus the bins beyond as a geometric series
        (each at most ``Σ_m |coef[m]| e^{−rate[m]·lo}``)."""
        shift = np.arange(count) * width
        return float(np.sum(self.sup(first_lo + shift, first_hi + shift))) + self.tail(first_lo + count * width, width)

    def oscillation_bins(self, width: float, count: int) -> float:
        """``Σ_{r >= 1}`` of the :meth:`oscillation` over ``[(r − 1)·w, (r + 1)·w]`` at reach w (the distances a bin r
        away reaches from two events of one bin, which are less than w apart), plus the bins beyond as a geometric
        series."""
        lo = np.arange(count) * width
        return float(np.sum(self.oscillation(lo, lo + 2 * width, width))) + self.tail(count * width, width)


def _profiles(A: np.ndarray, beta: np.ndarray) -> dict:
    """The contributions' profiles for basis functions ``f = A e^{−β·}``:

    * ``f[m]``: ``f_m(x)`` (a pair count: a target x after a source);
    * ``after[m, m']``: ``∫_x^∞ f_m(y) f_m'(y − x) dy``, the Gram product of the added event's feature m with the
      feature m' of an event x after it; ``before[m, m']``: ``∫_0^∞ f_m(y) f_m'(y + x) dy``, of an event x before it;
    * ``both[m, m']``: their sum, what an event of the added event's own dimension adds to the Gram entry of its
      features m and m' (z's m with its m', and its m with z's m': ``before[m, m'](x) = after[m', m](x)``).
    """
    inv = 1.0 / (beta[:, None] + beta[None, :])
    U = beta.size
    f = [_Profile(A[m].copy(), beta.copy()) for m in range(U)]
    after = [[_Profile(A[m] * (inv @ A[m2]), beta.copy()) for m2 in range(U)] for m in range(U)]
    before = [[_Profile(A[m2] * (inv @ A[m]), beta.copy()) for m2 in range(U)] for m in range(U)]
    both = [[after[m][m2].plus(before[m][m2]) for m2 in range(U)] for m in range(U)]
    return {"f": f, "after": after, "before": before, "both": both, "self": A @ inv @ A.T}


# --- the bound ---------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class BasisSensitivity:
    """The event unit's L2 sensitivity of exp's release in a basis (in the pieces' units, before dividing by N).

    Attributes
    ----------
    total : float
        The larger of the insertion's and the swap's bound, ``sqrt((gram + integral)/ρ² + pairs + totals)``.
    rho : float
        The public scale the Gram and the integrals are released over.
    basis : str
    kind : str
        Which bound is the larger: ``insert`` or ``swap``.
    parts : dict
        The squared bounds of ``gram`` (both kinds of Gram block), ``integral``, ``pairs`` and ``totals`` (no scale)
        of that kind.
    entries : dict
        Per kind, the per-number bounds (``cross[m, m']``, ``own[m, m']``, ``integral[m]``, ``out[m]``, ``in[m]``,
        ``self_pairs[m]``) at that kind's worst corner, for the tests.
    """

    total: float
    rho: float
    basis: str = DIFFERENCES
    kind: str = "insert"
    parts: dict = field(default_factory=dict)
    entries: dict = field(default_factory=dict)


def _insertion_bounds(prof: dict, U: int, C: float, w: float, pa: float, pb: float, side: str,
                      count: int) -> dict:
    """Every number's bound when the added event z sits at a phase in ``[pa, pb]`` of its bin (time units) and the
    other dimensions' events of its bin are all on ``side`` of it (``after`` or ``before``): events of a later bin
    r >= 1 are at distances in ``[r·w − pb, (r+1)·w − pa]``, of an earlier bin r >= 1 in ``[(r−1)·w + pa, r·w + pb]``,
    of z's own bin in ``[0, w − pa]`` after z and ``[0, pb]`` before it. Each bin's C events (C − 1 of z's dimension
    in its own bin, on either side) count at the supremum of their profile over their bin's distances."""
    def around(later: _Profile, earlier: _Profile) -> float:
        return later.bins(w - pb, 2 * w - pa, w, count) + earlier.bins(pa, w + pb, w, count)

    after_side = side == "after"
    cross, own = np.zeros((U, U)), np.zeros((U, U))
    for m in range(U):
        for m2 in range(U):
            after, before, both = prof["after"][m][m2], prof["before"][m][m2], prof["both"][m][m2]
            near = after.own(0.0, w - pa) if after_side else before.own(0.0, pb)
            cross[m, m2] = C * (around(after, before) + near)
            own[m, m2] = (C * around(both, both) + (C - 1) * max(both.own(0.0, w - pa), both.own(0.0, pb))
                          + prof["self"][m, m2])
    out, into, self_pairs = np.zeros(U), np.zeros(U), np.zeros(U)
    for m in range(U):
        f = prof["f"][m]
        later, earlier = f.bins(w - pb, 2 * w - pa, w, count), f.bins(pa, w + pb, w, count)
        out[m] = C * (later + (f.own(0.0, w - pa) if after_side else 0.0))
        into[m] = C * (earlier + (0.0 if after_side else f.own(0.0, pb)))
        self_pairs[m] = (C - 1) * max(f.own(0.0, w - pa), f.own(0.0, pb)) + C * (later + earlier)
    return {"cross": cross, "own": own, "out": out, "in": into, "self_pairs": self_pairs}


def _swap_bounds(prof: dict, U: int, C: float, w: float, count: int) -> dict:
    """The pair counts' bounds under a swap, by the oscillation of their profiles: z added and v evicted, both in one
    bin (z < v, so ``v − z < w``), change each pair count by ``Σ_s [f(s − z) − f(s − v)]`` over the other events s
    (each term present only where s is after the source, or before the target). An event of another bin, r bins away,
    is on one side of both, at distances from z and v within ``[(r−1)·w, (r+1)·w]`` and less than w apart: its term
    is at most the profile's :meth:`~_Profile.oscillation` there at reach w. An event of z's own bin is at most the
    supremum of ``f`` on ``[0, w]`` (its terms are one or two values of the non-negative ``f``: their difference is at
    most the larger). The Gram's entries are not bounded this way: their integrals end at the window's end, which
    cuts z's and v's terms by different amounts (:func:`_corner_bounds` bounds them by their insertions)."""
    out, into, self_pairs = np.zeros(U), np.zeros(U), np.zeros(U)
    for m in range(U):
        f = prof["f"][m]
        far, near = f.oscillation_bins(w, count), f.own(0.0, w)
        out[m] = into[m] = C * (far + near)
        self_pairs[m] = C * 2 * far + (C - 1) * near
    return {"out": out, "in": into, "self_pairs": self_pairs}


def _squared_parts(entries: dict, dim: int, integral: np.ndarray, totals: float) -> dict:
    """The squared bounds of each part from the per-number bounds ``entries`` (``totals``: the totals' squared
    change, the totals' weight squared for an insertion, 0 for a swap)."""
    U = integral.size
    return {"gram": (dim - 1) * float(np.sum(entries["cross"] ** 2))
            + float(np.sum(entries["own"][np.triu_indices(U)] ** 2)),
            "integral": float(np.sum(integral**2)),
            "pairs": (dim - 1) * float(np.sum(entries["out"] ** 2) + np.sum(entries["in"] ** 2))
            + float(np.sum(entries["self_pairs"] ** 2)),
            "totals": totals}


def _scaled(parts: dict, rho: float) -> float:
    return math.sqrt((parts["gram"] + parts["integral"]) / rho**2 + parts["pairs"] + parts["totals"])


@functools.lru_cache(maxsize=256)
def _corner_bounds(decays: tuple, width: float, count_cap: int, basis: str) -> tuple:
    """The insertion's per-number bounds at every corner (phase cell, side) and the swap's per-number bounds: each
    number's largest insertion bound over the corners, and for the pair counts the smaller of that and their
    oscillation bound (:func:`_swap_bounds`)."""
    beta = np.asarray(decays, dtype=float)
    A = basis_matrix(beta, basis)
    prof = _profiles(A, beta)
    U, C, w = beta.size, float(count_cap), float(width)
    count = int(math.ceil(TAIL / (float(beta.min()) * w))) + 1
    edges = np.linspace(0.0, w, PHASE_CELLS + 1)
    corners = [_insertion_bounds(prof, U, C, w, float(a), float(b), side, count)
               for a, b in zip(edges[:-1], edges[1:]) for side in ("after", "before")]
    largest = {name: np.max([corner[name] for corner in corners], axis=0) for name in corners[0]}
    moves = _swap_bounds(prof, U, C, w, count)
    swap = {name: np.minimum(largest[name], moves[name]) if name in moves else largest[name] for name in largest}
    return corners, swap, A @ (1.0 / beta)


def basis_sensitivity(dim: int, decays, width: float, count_cap: int, gram_scale: float = 1.0,
                      basis: str = DIFFERENCES, totals_weight: float = 1.0) -> BasisSensitivity:
    """L2 sensitivity of exp's release of the features ``g'`` in ``basis`` under one event added or removed, at most
    C events kept per (dimension, w-bin) by keeping the first C (derivation: ``docs/privacy.md``, "Exponential
    kernels in the differences basis").

    With z added to dimension 0 (any dimension, by symmetry), each released number changes by a sum of non-negative
    contributions of the events z meets — per event, a profile of their distance, at most its supremum over the
    distances the cap allows (C per other bin and dimension, C − 1 others in z's own bin of its own dimension):

    * the Gram entry of z's feature m and feature m' of another dimension k: ``(d − 1)U²`` numbers;
    * the Gram entries of two features of z's own dimension (z against each event both ways, and z with itself):
      ``U(U + 1)/2``;
    * the integrals of z's features: ``∫ f_m`` each;
    * the pair counts of z as a source (targets of another dimension after it), as a target (sources of another
      dimension before it), and both within its own dimension; the total of its dimension: 1.

    **Insertion**: one configuration, so one corner for every number — z's phase (:data:`PHASE_CELLS` cells, each
    covering all its positions) and the side of z its bin's other events are on (each number affine in how many are
    after z, the total convex: the largest at all after or all before, per dimension, the same by symmetry); the
    bound is the largest total over the corners. **Swap** (z in, the last kept event v of its bin out): each number
    changes by the difference of z's and v's non-negative sums, at most the larger — its largest insertion bound over
    every corner (z and v may sit at different corners) — and, for a pair count, at most the sum of the oscillations
    of its profile between distances less than w apart (:func:`_swap_bounds`; not for the Gram, whose integrals the
    window's end cuts): the smaller of the two, number by number. The bound is the larger of the two kinds. With the
    totals released times ``totals_weight`` (a derived Gram's release) an insertion's total moves by it.
    """
    if count_cap is None or count_cap < 1:
        raise ConfigError("the exponential-kernel formal release needs a public count cap C >= 1 (events per "
                          "dimension per w-bin, the first C kept)")
    if not gram_scale > 0:
        raise ConfigError(f"the Gram scale must be positive, got {gram_scale!r}")
    corners, swap, integral = _corner_bounds(tuple(float(b) for b in decays), float(width), int(count_cap), basis)
    d, rho = int(dim), float(gram_scale)
    total = float(totals_weight) ** 2
    insert = max(corners, key=lambda entries: _scaled(_squared_parts(entries, d, integral, total), rho))
    kinds = {"insert": (insert, _squared_parts(insert, d, integral, total)),
             "swap": (swap, _squared_parts(swap, d, integral, 0.0))}
    kind = max(kinds, key=lambda name: _scaled(kinds[name][1], rho))
    return BasisSensitivity(_scaled(kinds[kind][1], rho), rho, basis, kind, kinds[kind][1],
                            {name: {**entries, "integral": integral} for name, (entries, _) in kinds.items()})


# --- adversarial neighbours ---------------------------------------------------------------------------------------

NEAR = 1e-6  # the C events of one placement are spread over this many w (distinct times, the same weights)
SEARCH_POINTS = 41  # candidate positions per bin
ROUNDS = 4  # rounds of re-aiming the placements at the change they make together
INSERT, SWAP = "insert", "swap"


def _contributions(prof: dict, U: int, delta: np.ndarray, own_dimension: bool) -> np.ndarray:
    """Per candidate signed distance ``delta`` (> 0: after the reference event), the change one event there makes to
    each number it touches, flattened as ``[gram block (U·U), pairs out (U), pairs in (U)]`` (another dimension) or
    ``[own gram (U·U), own pairs (U)]`` (the reference's dimension)."""
    x, after = np.abs(delta), delta > 0
    if own_dimension:
        gram = [prof["both"][m][m2](x) for m in range(U) for m2 in range(U)]
        return np.stack(gram + [prof["f"][m](x) for m in range(U)], axis=1)
    gram = [np.where(after, prof["after"][m][m2](x), prof["before"][m][m2](x)) for m in range(U) for m2 in range(U)]
    out = [np.where(after, prof["f"][m](x), 0.0) for m in range(U)]
    into = [np.where(after, 0.0, prof["f"][m](x)) for m in range(U)]
    return np.stack(gram + out + into, axis=1)


def _placement(prof: dict, U: int, C: int, w: float, refs: tuple, reach: int, rho: float) -> dict:
    """Where to put the events of each bin (bin 0 starts at time 0; one position per (kind of dimension, bin), C
    events there, C − 1 in bin 0 of the changed dimension) so that the release moves much: each bin's position
    maximises the inner product of its change with the total change, re-aimed :data:`ROUNDS` times. ``refs``: the
    added event's time, or (z, v) for a swap — z added, v (the last kept of bin 0) evicted; the changed dimension's
    own events of bin 0 then lie before v."""
    scale = {False: np.concatenate([np.full(U * U, 1 / rho), np.ones(2 * U)]),
             True: np.concatenate([np.full(U * U, 1 / rho), np.ones(U)])}
    offsets = np.linspace(0.0, 1.0, SEARCH_POINTS) * (1 - 2 * NEAR) + NEAR
    table = {}
    for own in (False, True):
        for r in range(-reach, reach + 1):
            where = (r + offsets) * w
            if own and r == 0 and len(refs) == 2:
                where = where[where < refs[1]]
            change = _contributions(prof, U, where - refs[0], own)
            if len(refs) == 2:
                change = change - _contributions(prof, U, where - refs[1], own)
            table[own, r] = (where, change)
    weight = dict(scale)
    for _ in range(ROUNDS):
        chosen, total = {}, {False: 0.0, True: 0.0}
        for (own, r), (where, change) in table.items():
            best = int(np.argmax(change @ weight[own]))
            chosen[own, r] = float(where[best])
            total[own] = total[own] + (C - 1 if own and r == 0 else C) * change[best]
        weight = {own: total[own] * scale[own] ** 2 for own in (False, True)}
    return chosen


def adversarial_events(dim: int, decays, width: float, count_cap: int, gram_scale: float = 1.0,
                       basis: str = DIFFERENCES, kind: str = INSERT, totals_weight: float = 1.0):
    """Neighbours that move the release of ``basis`` by much of :func:`basis_sensitivity`, told the bound's form but
    not its corners. ``insert``: D' adds z to dimension 0 at the phase of its bin (of 9 tried) where the placement
    moves the release most. ``swap``: D holds v, the last of C kept events of z's bin, and D' holds z instead (z
    added before v evicts it), at the (z, v) phases of a few tried. Every other bin of every dimension within the
    reach of the slowest decay holds C events at one position (z's own bin: C − 1 of dimension 0), chosen by
    :func:`_placement`; measured on the release with its totals times ``totals_weight``. Returns D, D' (one
    sequence each, window stated)."""
    from dphawkes_core.data.io import from_arrays
    from dphawkes_core.estimators.exp.release import raw_release
    from dphawkes_core.estimators.exp.statistics import exp_pieces

    beta = np.asarray(decays, dtype=float)
    prof, U, C, w = _profiles(basis_matrix(beta, basis), beta), beta.size, int(count_cap), float(width)
    reach = int(math.ceil(math.log(1e6) / (float(beta.min()) * w)))
    if kind == INSERT:
        trials = [(p,) for p in np.linspace(NEAR, 1 - NEAR, 9) * w]
    elif kind == SWAP:
        trials = [(a * w, b * w) for a in (NEAR, 0.25, 0.5) for b in (0.5, 0.75, 1 - 2 * NEAR) if a < b]
    else:
        raise ValueError(f"kind must be {INSERT!r} or {SWAP!r}, got {kind!r}")
    origin = (reach + 1) * w  # bin 0 of the placement is bin reach + 1 of the window
    spread = NEAR * w * (np.arange(C) + 1) / (C + 1)
    best = None
    for refs in trials:
        chosen = _placement(prof, U, C, w, refs, reach, float(gram_scale))
        times = [np.concatenate([origin + chosen[j == 0, r] + spread[:C - 1 if (j == 0 and r == 0) else C]
                                 for r in range(-reach, reach + 1)]) for j in range(int(dim))]
        window = origin + (reach + 2) * w + 40.0 / float(beta.min())
        added = [np.append(times[0], origin + refs[0]), *times[1:]]
        base = [np.append(times[0], origin + refs[1]), *times[1:]] if kind == SWAP else times
        pair = [from_arrays([np.sort(t) for t in cols], end_time=window) for cols in (base, added)]
        released = [raw_release(to_basis(exp_pieces(e, decays, w, C)[0], basis), gram_scale, totals_weight)
                    for e in pair]
        moved = float(np.linalg.norm(released[1] - released[0]))
        if best is None or moved > best[0]:
            best = (moved, pair)
    return tuple(best[1])


def worst_case_basis_events(dim: int, decays, width: float, count_cap: int, gram_scale: float = 1.0,
                            basis: str = DIFFERENCES, totals_weight: float = 1.0):
    """The larger-moving of :func:`adversarial_events`' two kinds (insertion and swap), the totals released times
    ``totals_weight``: the family's worst case."""
    from dphawkes_core.estimators.exp.release import raw_release
    from dphawkes_core.estimators.exp.statistics import exp_pieces

    best = None
    for kind in (INSERT, SWAP):
        pair = adversarial_events(dim, decays, width, count_cap, gram_scale, basis, kind, totals_weight)
        released = [raw_release(to_basis(exp_pieces(e, decays, width, count_cap)[0], basis), gram_scale,
                                totals_weight) for e in pair]
        moved = float(np.linalg.norm(released[1] - released[0]))
        if best is None or moved > best[0]:
            best = (moved, pair)
    return best[1]
