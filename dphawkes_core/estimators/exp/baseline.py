"""The exponential family's baseline that follows the clock (``baseline_period``, ``baseline_bins``;
:mod:`dphawkes_core.data.baseline_bins`): its statistics, its least squares and likelihood, and its formal release.

With ``μ_i(t) = μ_ik`` on part k, the least-squares contrast's features are ``φ(t) = (g(t), 1_1(t), …, 1_K(t))``
(tick's ``HawkesSumExpKern(period_length=P, n_baselines=K)``), so ``G = ∫ φφᵀ`` holds the Gram of g (as for the
constant baseline), ``J[c, k] = ∫ g_c 1_k`` (the integral of each feature over each part) and ``diag(E)`` (``E_k``
the windows' time in part k, public), and ``c_i = (Σ_{t ∈ i} g(t−), n_i1 … n_iK)`` (``n_ik`` the events of i in part
k). ``J`` comes from the primitive ``∫_0^x g_ju = N_j(x−) − g_ju(x)/β_u`` at the cuts where the part changes, ``g``
read from the state after the last event before each cut (the exponential recursion).

**The formal release** appends ``(J/ρ, n)`` to the family's release vector (:func:`periodic_vector`), with the same
noise on every number, and adds :func:`periodic_sensitivity` to its sensitivity in quadrature: under one event added
to dimension j₀ (kept under C), ``J``'s columns of j₀ change, for each decay u, by the event's kernel mass split over
the parts (non-negative, summing to at most 1: L2 at most 1), and one count by 1; when the event evicts the last kept
event of its (dimension, w-bin) (a swap, at most w apart), each decay's change is a difference of two such vectors,
L2 at most ``min(√2, 2(1 − e^{−β_u w}))``, and two counts change by 1. So ``S_per² = max(1 + U/ρ², 2 + Σ_u
min(2, 4(1 − e^{−β_u w})²)/ρ²)`` (derivation: ``docs/privacy.md``, "Exponential kernels, a baseline that follows
the clock"); the whole vector's bound is ``√(S_exp² + S_per²)``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from dphawkes_core.data.baseline_bins import BaselineBins
from dphawkes_core.estimators.exp.statistics import _block_states, _blocks
from dphawkes_core.statistics.exact_times import merged_events


@dataclass(frozen=True)
class PeriodicPieces:
    """The baseline parts' statistics summed over sequences (columns ``u·d + j`` as :class:`~dphawkes_core.estimators.
    exp.statistics.ExpPieces`).

    Attributes
    ----------
    integral : numpy.ndarray
        ``(q, K)``: ``J[c, k] = ∫ g_c 1_k`` over the windows.
    exposure : numpy.ndarray
        ``(K,)``: the windows' time in each part (public).
    counts : numpy.ndarray
        ``(d, K)``: the kept events of each dimension in each part.
    bins : BaselineBins
    """

    integral: np.ndarray
    exposure: np.ndarray
    counts: np.ndarray
    bins: BaselineBins


def states_after(t: np.ndarray, dims: np.ndarray, dim: int, decays) -> np.ndarray:
    """``(n, U, d)``: ``g_ju`` just after each event (all the events at or before it), by the exponential recursion in
    blocks (:func:`~dphawkes_core.estimators.exp.statistics._block_states`)."""
    beta = np.asarray(decays, dtype=float)
    out = np.zeros((t.size, beta.size, dim))
    state, last = np.zeros((beta.size, dim)), t[0] if t.size else 0.0
    for a, b in _blocks(t, float(beta.max())):
        tb, onehot = t[a:b], np.eye(dim)[dims[a:b]]
        for u in range(beta.size):
            out[a:b, u] = _block_states(tb - tb[0], onehot, beta[u], state[u] * np.exp(-beta[u] * (tb[0] - last)))
        state, last = out[b - 1], tb[-1]
    return out


def primitive_at(x: np.ndarray, t: np.ndarray, dims: np.ndarray, dim: int, decays, after: np.ndarray) -> np.ndarray:
    """``(len(x), dU)``: ``∫_0^x g_ju = N_j(x−) − g_ju(x)/β_u`` at the sorted ``x`` (``after``:
    :func:`states_after`)."""
    beta = np.asarray(decays, dtype=float)
    last = np.searchsorted(t, x, side="left") - 1  # the last event before each x
    seen = np.concatenate([np.zeros((1, dim)), np.cumsum(np.eye(dim)[dims], axis=0)])[last + 1]  # (len(x), d)
    held = np.where(last[:, None, None] >= 0, after[np.maximum(last, 0)], 0.0)  # (len(x), U, d)
    gap = np.where(last >= 0, x - t[np.maximum(last, 0)], 0.0)
    g = held * np.exp(-np.outer(gap, beta))[:, :, None]
    return (seen[:, None, :] - g / beta[None, :, None]).reshape(x.size, -1)


def periodic_pieces(events, decays, width: float, cap: int | None, bins: BaselineBins) -> PeriodicPieces:
    """:class:`PeriodicPieces` of the events kept under ``cap`` (as the family keeps them), over every window."""
    d, q = events.dim, events.dim * len(decays)
    integral, exposure, counts = np.zeros((q, bins.bins)), np.zeros(bins.bins), np.zeros((d, bins.bins))
    for seq in events.sequences:
        t, dims, _ = merged_events(seq.times, width, cap)
        end = float(seq.end_time)
        cuts, parts = bins.edges(0.0, end, seq.start_time, end)
        after = states_after(t, dims, d, decays)
        integral += (np.diff(primitive_at(cuts, t, dims, d, decays, after), axis=0).T
                     @ np.eye(bins.bins)[parts])
        exposure += np.bincount(parts, np.diff(cuts), bins.bins)
        np.add.at(counts, (dims, bins.index(t, seq.start_time, end)), 1.0)
    return PeriodicPieces(integral, exposure, counts, bins)


def event_parts(events, width: float, cap: int | None, bins: BaselineBins) -> list[np.ndarray]:
    """Per dimension, the part of each of its kept events, in the order of
    :func:`~dphawkes_core.estimators.exp.statistics.event_features`' rows."""
    rows = [[] for _ in range(events.dim)]
    for seq in events.sequences:
        t, dims, _ = merged_events(seq.times, width, cap)
        part = bins.index(t, seq.start_time, float(seq.end_time))
        for i in range(events.dim):
            rows[i].append(part[dims == i])
    return [np.concatenate(r) if r else np.zeros(0, dtype=np.int64) for r in rows]


# --- least squares -------------------------------------------------------------------------------------------------

def periodic_normal_equations(gram: np.ndarray, pairs: np.ndarray, periodic: PeriodicPieces, duration: float
                              ) -> tuple[np.ndarray, np.ndarray]:
    """``A = G/N`` (``(q+K, q+K)``: the Gram of g, J and diag(E)) and ``b = c/N`` (``(d, q+K)``: the values at the
    events and the counts per part), ``N = Σ T``."""
    q, K = gram.shape[0], periodic.exposure.size
    G = np.zeros((q + K, q + K))
    G[:q, :q], G[:q, q:], G[q:, :q] = gram, periodic.integral, periodic.integral.T
    G[q:, q:] = np.diag(periodic.exposure)
    return G / duration, np.concatenate([pairs, periodic.counts], axis=1) / duration


def part_floor(periodic: PeriodicPieces, share: float) -> np.ndarray:
    """``(d,)``: every part's floor, ``share`` times the dimension's mean rate (its released counts over the released
    parts' time, at least one event over the windows)."""
    total = float(periodic.exposure.sum())
    return share * np.maximum(periodic.counts.sum(axis=1), 1.0) / max(total, 1e-300)


def mean_baseline(parts: np.ndarray, periodic: PeriodicPieces) -> np.ndarray:
    """``(d,)``: the baseline's mean over the windows, ``Σ_k μ_ik E_k / Σ E_k``."""
    return parts @ periodic.exposure / max(float(periodic.exposure.sum()), 1e-300)


# --- the formal release --------------------------------------------------------------------------------------------

def periodic_vector(periodic: PeriodicPieces, rho: float) -> np.ndarray:
    """The numbers the formal release appends: ``J/ρ`` (row by row) and the counts per part."""
    return np.concatenate([periodic.integral.ravel() / rho, periodic.counts.ravel()])


def periodic_from_release(vector: np.ndarray, template: PeriodicPieces, rho: float) -> PeriodicPieces:
    """The pieces a (noisy) :func:`periodic_vector` stands for (the public exposure and parts from ``template``)."""
    size = template.integral.size
    return PeriodicPieces(vector[:size].reshape(template.integral.shape) * rho, template.exposure,
                          vector[size:].reshape(template.counts.shape), template.bins)


def periodic_sensitivity(decays, width: float, rho: float) -> float:
    """L2 bound of the change of :func:`periodic_vector` under one event added or removed, at most C kept per
    (dimension, w-bin) by keeping the first C (the module's docstring; ``docs/privacy.md``)."""
    beta = np.asarray(decays, dtype=float)
    swap = np.minimum(2.0, 4.0 * (-np.expm1(-beta * float(width))) ** 2)
    return math.sqrt(max(1.0 + beta.size / rho**2, 2.0 + float(swap.sum()) / rho**2))
