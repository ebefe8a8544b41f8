"""The exponential family's release (method ``exp``, :mod:`~dphawkes_core.estimators.exp`): the released vector
(:func:`raw_release`: the Gram's upper triangle and the integrals over the public scale ρ, the values at the
events and the totals as they are), its event-unit L2 sensitivity (:func:`exp_sensitivity`, derived in
``docs/privacy.md``, "Exponential kernels") and the adversarial neighbours that reach it
(:func:`worst_case_events`). The family module runs them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import numpy as np

from dphawkes_core.errors import ConfigError
from dphawkes_core.estimators.exp.statistics import ExpPieces

# --- the release ------------------------------------------------------------------------------------------


def release_layout(dim: int, n_decays: int) -> list[tuple[str, int]]:
    """The released numbers in order, ``(name, count)``: the Gram's upper triangle and the integrals (each over
    ρ), the values at the events ``c`` and the totals."""
    q = int(dim) * int(n_decays)
    return [("gram", q * (q + 1) // 2), ("integral", q), ("pairs", int(dim) * q), ("totals", int(dim))]


SCALED = ("gram", "integral")  # the parts of G: released over ρ


def raw_release(pieces: ExpPieces, rho: float) -> np.ndarray:
    """The release vector without noise, in the pieces' units (not yet divided by ``N = Σ T``)."""
    q = pieces.gram.shape[0]
    parts = {"gram": pieces.gram[np.triu_indices(q)], "integral": pieces.integral, "pairs": pieces.pairs.ravel(),
             "totals": pieces.totals}
    return np.concatenate([parts[name] / (rho if name in SCALED else 1.0)
                           for name, _ in release_layout(pieces.dim, len(pieces.decays))])


def pieces_from_release(vector: np.ndarray, template: ExpPieces, rho: float) -> ExpPieces:
    """The pieces a (noisy) release vector stands for (the Gram mirrored; the public decays, durations and
    numbers of sequences from ``template``)."""
    d, q = template.dim, template.gram.shape[0]
    parts, at = {}, 0
    for name, count in release_layout(d, len(template.decays)):
        parts[name] = vector[at:at + count] * (rho if name in SCALED else 1.0)
        at += count
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
        The bound: the largest ``sqrt(gram²/ρ² + rest²)`` over the corners of :func:`exp_sensitivity`.
    rho : float
        The public scale the Gram and the integrals are released over.
    corner : tuple
        ``(end, after)`` of the largest: where the added event sits in its w-bin (0: at its start, 1: at its
        end) and whether the other dimensions' events of its bin come after it.
    parts : dict
        ``{"gram": …, "rest": …}``: the squared bounds of the two parts at that corner (no scale applied).
    """

    total: float
    rho: float
    corner: tuple = (0, True)
    parts: dict = field(default_factory=dict)


def corner_bounds(dim: int, decays, width: float, count_cap: int, end: int, after: bool) -> dict:
    """Squared bounds of the change of each part of the release when one event z is added to dimension 0, at
    one corner of the adversary's choices (``docs/privacy.md``, "Exponential kernels").

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
    """
    beta = np.asarray(decays, dtype=float)
    d, C, w = int(dim), float(count_cap), float(width)
    q = np.exp(-beta * w)
    past, future = q**end / (1 - q), q ** (1 - end) / (1 - q)
    kappa = np.outer(beta, beta) / (beta[:, None] + beta[None, :])
    cross = C * kappa * (1 + past[None, :] + future[:, None])
    own = (kappa * ((C - 1) + C * past[None, :] + C * future[:, None])
           + kappa * ((C - 1) + C * past[:, None] + C * future[None, :]) + kappa)
    a = C if after else 0.0
    targets = beta * (a + C * future)
    sources = beta * ((C - a) + C * past)
    both = beta * ((C - 1) + C * (future + past))
    gram = (d - 1) * float(np.sum(cross**2)) + float(np.sum(own[np.triu_indices(beta.size)] ** 2)) + beta.size
    rest = (d - 1) * float(np.sum(targets**2) + np.sum(sources**2)) + float(np.sum(both**2)) + 1.0
    return {"gram": gram, "rest": rest}


def exp_sensitivity(dim: int, decays, width: float, count_cap: int, gram_scale: float = 1.0) -> ExpSensitivity:
    """L2 sensitivity of the release under one event added or removed, at most C events kept per (dimension,
    w-bin) by keeping the first C (derivation: ``docs/privacy.md``, "Exponential kernels").

    Every number released is a sum of non-negative terms, each of them at most its bound in
    :func:`corner_bounds`; the squared change is convex in where z sits in its bin and in how many of its bin's
    events come after it, so its largest value is at one of the four corners (z at either end of its bin; the
    other dimensions' events of its bin all after or all before it). A swap (z evicts the last kept event v of
    its bin) changes each number by a difference of two such non-negative sums, at most the larger: never more
    than an insertion, so the insertion's bound is the bound.
    """
    if count_cap is None or count_cap < 1:
        raise ConfigError("the exponential-kernel formal release needs a public count cap C >= 1 (events per "
                          "dimension per w-bin, the first C kept)")
    if not gram_scale > 0:
        raise ConfigError(f"the Gram scale must be positive, got {gram_scale!r}")
    best = None
    for end in (0, 1):
        for after in (True, False):
            parts = corner_bounds(dim, decays, width, count_cap, end, after)
            total = math.sqrt(parts["gram"] / gram_scale**2 + parts["rest"])
            if best is None or total > best.total:
                best = ExpSensitivity(total, float(gram_scale), (end, after), parts)
    return best


# --- adversarial neighbours (the tests' and the audit's worst case) ------------------------------------------

NEAR = 1e-6  # how close (in units of w) the adversary puts events to z and to the bin edges
REACH = math.log(1e6)  # earlier and later bins are filled until q^r < 1e-6
TAIL = 30.0  # the window runs on 30/β_min after the last event, so nothing is cut off by its end


def worst_case_events(dim: int, decays, width: float, count_cap: int, corner: tuple):
    """Neighbours at the bound's largest corner (:func:`exp_sensitivity`), in the limit the bound is a supremum
    of: D' adds z to dimension 0 at the start (``end = 0``) or the end (``end = 1``) of bin g, whose dimension
    0 holds C − 1 events in D; in every dimension, each of the R bins before g holds C events at its end and
    each of the R bins after g holds C events at its start (R: until ``q^R < 1e−6``); bin g holds C events of
    every other dimension right after z (``after``) or right before it (and dimension 0's C − 1 on the same
    side). Every distance the bound takes as 0 is ``<= 1e−6 w``.

    Returns
    -------
    D, D' : Events
        One sequence each, window stated; D' has one event more.
    """
    from dphawkes_core.data.io import from_arrays

    end, after = corner
    d, C, w = int(dim), int(count_cap), float(width)
    reach = math.ceil(REACH / (min(decays) * w))
    g = reach + 1
    z = g + NEAR if end == 0 else g + 1 - NEAR
    spread = NEAR * (np.arange(C) + 1) / (C + 1)  # C distinct times within NEAR
    own = z + spread if after else z - spread
    times = []
    for j in range(d):
        near = own if j else own[:C - 1]
        earlier = [(g - r + 1) - spread for r in range(1, reach + 1)]
        later = [(g + r) + spread for r in range(1, reach + 1)]
        times.append(np.concatenate([near, *earlier, *later]))
    window = (g + reach + 1) * w + TAIL / min(decays)

    def events(columns):
        return from_arrays([np.sort(t) * w for t in columns], end_time=window)

    return events(times), events([np.append(times[0], z), *times[1:]])
