"""The intensity of a fit at any time, and its integral when it is read as ``max(λ, f)`` (a fit whose kernels or
baseline can make it ≤ 0, scored by :func:`~dphawkes_experiments.prediction.score_heldout`).

A fit whose intensity can reach 0 is not a point process: it says the events where it does could not happen. The
held-out score reads such a fit as its *rectified* intensity ``λ⁺_i(t) = max(λ_i(t), f_i)``, with ``f_i`` a floor
(:data:`~dphawkes_core.estimators.settings.BASELINE_FLOOR_SHARE` of the training part's mean rate of i), and says
at how many test events ``λ_i ≤ 0``. The compensator of ``λ⁺`` is computed piece by piece: between two consecutive
*cuts* — the events, every event shifted by each edge of the step kernels, the baseline's part changes — a fit with
step kernels and a piecewise-constant baseline has a constant intensity, so its integral there is its value at the
piece's midpoint times its length: exact. Kernels that are not steps (sums of exponentials with a negative
coefficient) are smooth between events: each gap is cut in :data:`SMOOTH_PIECES` equal pieces and read at their
midpoints (the midpoint rule).
"""

from __future__ import annotations

import numpy as np

from dphawkes_core.data.baseline_bins import BaselineProfile

SMOOTH_PIECES = 32  # the midpoint rule's pieces per gap between events, for kernels that are not steps
_PAIR_CELLS = 4_000_000  # d·d·pairs kernel values held in memory at once


def intensities_at(kernels, profile: BaselineProfile, times: np.ndarray, dims: np.ndarray, query: np.ndarray,
                   start_time: float, end_time: float) -> np.ndarray:
    """``(len(query), d)``: every dimension's intensity at the (sorted) ``query`` times of one window, ``μ_i(t)`` plus
    ``h_ij(t − u)`` over the events ``u < t`` at most the kernels' support before (``times``, ``dims`` sorted)."""
    d = profile.dim
    lam = profile.values[:, profile.bins.index(query, start_time, end_time)].T.copy()
    last = np.searchsorted(times, query, side="left") - 1  # the last event strictly before each query
    chunk = max(1, _PAIR_CELLS // (d * d))
    targets, offset = np.arange(query.size), 0
    while targets.size:
        sources = last[targets] - offset
        near = (sources >= 0) & (query[targets] - times[np.maximum(sources, 0)] <= kernels.support)
        targets, sources = targets[near], sources[near]  # sorted times: a pair too far stays too far
        for lo in range(0, targets.size, chunk):
            tgt, src = targets[lo:lo + chunk], sources[lo:lo + chunk]
            values = kernels.values_at(query[tgt] - times[src])  # (d, d, n)
            np.add.at(lam, tgt, values[:, dims[src], np.arange(tgt.size)].T)
        offset += 1
    return lam


def rectified_integrals(kernels, profile: BaselineProfile, floor: np.ndarray, times: np.ndarray, dims: np.ndarray,
                        edges: np.ndarray, start_time: float, end_time: float) -> np.ndarray:
    """``Σ_i ∫ max(λ_i, f_i)`` over each block ``[edges[k], edges[k+1])`` of one window (``floor`` = f, ``(d,)``)."""
    a, b = float(edges[0]), float(edges[-1])
    cuts = [edges, times[(times > a) & (times < b)], profile.bins.edges(a, b, start_time, end_time)[0]]
    steps = getattr(kernels, "edges", None)
    if steps is not None:
        recent = times[(times > a - kernels.support) & (times < b)]
        cuts.append((recent[:, None] + np.asarray(steps)[None, :]).ravel())
    cuts = np.unique(np.clip(np.concatenate(cuts), a, b))
    if steps is None:  # smooth kernels: every gap in equal pieces (the midpoint rule)
        share = np.arange(SMOOTH_PIECES + 1) / SMOOTH_PIECES
        cuts = np.unique((cuts[:-1, None] + np.diff(cuts)[:, None] * share[None, :]).ravel())
    middles, lengths = 0.5 * (cuts[:-1] + cuts[1:]), np.diff(cuts)
    lam = intensities_at(kernels, profile, times, dims, middles, start_time, end_time)
    mass = np.maximum(lam, np.asarray(floor, dtype=float)[None, :]).sum(axis=1) * lengths
    block = np.clip(np.searchsorted(edges, middles, side="right") - 1, 0, edges.size - 2)
    return np.bincount(block, mass, edges.size - 1)


def can_be_nonpositive(kernels, profile: BaselineProfile) -> bool:
    """Whether the fit's intensity can be ≤ 0 somewhere: a negative kernel value (steps) or coefficient (sums of
    exponentials), or a baseline part ≤ 0 (with kernels >= 0 the intensity is then 0 wherever no recent event
    excites it)."""
    negative = [np.asarray(getattr(kernels, name)) for name in ("values", "adjacency") if hasattr(kernels, name)]
    return bool(np.any(profile.minimum() <= 0) or any(np.any(x < 0) for x in negative))
