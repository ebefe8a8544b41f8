"""The statistics of the exponential-kernel family: the Gram matrix of the exponentially weighted
event counts, their integrals and their values at the events, computed by the exponential recursion in
``O(events × decays)`` (plus ``O(events × (d·U)²)`` for the Gram's products) over each declared window
``[0, T]``. The model and the layout are described in :mod:`dphawkes_core.estimators.exp`; this module only
computes.

With ``g_ju(t) = Σ_{s ∈ j, s < t} β_u e^{−β_u (t − s)}``, between two consecutive events ``τ_m < τ_{m+1}``
(merged over dimensions) every ``g_ju`` decays from its value ``x_m[j, u]`` just after ``τ_m``, so

* ``∫_{τ_m}^{τ_{m+1}} g_ju g_kv dt = x_m[j, u] x_m[k, v] (1 − e^{−(β_u + β_v)(τ_{m+1} − τ_m)}) / (β_u + β_v)``,
* ``∫_{τ_m}^{τ_{m+1}} g_ju dt = x_m[j, u] (1 − e^{−β_u (τ_{m+1} − τ_m)}) / β_u``,
* ``g_ju(τ_m−) = x_{m−1}[j, u] e^{−β_u (τ_m − τ_{m−1})}`` and ``x_m = g(τ_m−) + β_u [j = j_m]``,

with the last interval ending at T and nothing before the first event (no history before the window: tick's
convention). ``g(t−)`` counts only events strictly before t: simultaneous events all see the value before the
first of them.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import ClassVar

import numpy as np

from dphawkes_core.errors import ConfigError
from dphawkes_core.statistics.exact_times import merged_events
from dphawkes_core.statistics.moments import SufficientStats

SPAN_LIMIT = 500.0  # β·(τ_last − τ_first) within one block of the recursion: e^{±500} stays a finite double
BLOCK_EVENTS = 1 << 16  # events per block (bounds the temporaries: U·block·d floats)


@dataclass(frozen=True)
class ExpPieces:
    """The statistics summed over sequences (layout: column ``u·d + j`` is decay u of source j).

    Attributes
    ----------
    gram : numpy.ndarray
        ``(dU, dU)``: ``∫_0^T g_ju g_kv dt`` (symmetric).
    integral : numpy.ndarray
        ``(dU,)``: ``∫_0^T g_ju dt``.
    pairs : numpy.ndarray
        ``(d, dU)``: ``c_i[(j, u)] = Σ_{t ∈ i} g_ju(t−)``.
    totals : numpy.ndarray
        ``(d,)`` events per dimension.
    decays : tuple of float
        The public decays β_u.
    duration : float
        ``Σ T`` over the sequences (public).
    sequences : int
        Sequences summed.
    count_cap : int or None
        The cap C the events were kept under (per dimension and w-bin).
    """

    gram: np.ndarray
    integral: np.ndarray
    pairs: np.ndarray
    totals: np.ndarray
    decays: tuple
    duration: float
    sequences: int
    count_cap: int | None = None

    @property
    def dim(self) -> int:
        """d."""
        return int(self.totals.shape[0])


def _blocks(t: np.ndarray, beta_max: float):
    """Index ranges ``[a, b)`` of about :data:`BLOCK_EVENTS` events spanning at most ``SPAN_LIMIT/β_max``, never
    splitting simultaneous events."""
    a, n = 0, t.size
    while a < n:
        b = max(min(int(np.searchsorted(t, t[a] + SPAN_LIMIT / beta_max, side="right")), a + BLOCK_EVENTS), a + 1)
        b = int(np.searchsorted(t, t[b - 1], side="right"))
        yield a, b
        a = b


def _block_states(rel: np.ndarray, onehot: np.ndarray, beta: float, start: np.ndarray) -> np.ndarray:
    """``x_m`` (``(n, d)``) of one decay over a block: ``start`` is ``g(τ_a−)`` at the block's first event,
    ``rel = τ − τ_a`` (``β·rel <= SPAN_LIMIT``, so the scaled cumulative sum stays finite; all its terms are
    positive, so it loses no precision)."""
    grow = np.exp(beta * rel)
    sums = np.cumsum(onehot * (beta * grow)[:, None], axis=0)
    return (sums + start[None, :]) * np.exp(-beta * rel)[:, None]


def sequence_pieces(t: np.ndarray, dims: np.ndarray, end: float, dim: int, decays, features: list | None = None
                    ) -> tuple[np.ndarray, ...]:
    """``(gram, integral, pairs)`` of one sequence (``t`` sorted in ``[0, end]``, ``dims`` its dimensions).
    ``features``: a list that receives, per block, every event's ``g(t−)`` (``(events, dU)``, decay-major)."""
    beta = np.asarray(decays, dtype=np.float64)
    d, U = int(dim), beta.size
    q = d * U
    gram, integral, pairs = np.zeros((q, q)), np.zeros(q), np.zeros((d, q))
    if t.size == 0:
        return gram, integral, pairs
    state = np.zeros((U, d))  # x just after the previous event …
    last = t[0]  # … at this time
    pair_sum = beta[:, None] + beta[None, :]
    for a, b in _blocks(t, float(beta.max())):
        tb, onehot = t[a:b], np.eye(d)[dims[a:b]]
        rel = tb - tb[0]
        gap = np.diff(np.append(tb, t[b] if b < t.size else end))  # interval after each event
        first = np.flatnonzero(np.diff(tb, prepend=-np.inf) > 0)  # the first of each group of simultaneous events
        tied = first[np.cumsum(np.diff(tb, prepend=-np.inf) > 0) - 1]  # … for each event
        x = np.empty((U, b - a, d))
        left = np.empty((U, b - a, d))
        for u in range(U):
            start = state[u] * np.exp(-beta[u] * (tb[0] - last))
            x[u] = _block_states(rel, onehot, beta[u], start)
            left[u, 0] = start
            left[u, 1:] = x[u, :-1] * np.exp(-beta[u] * np.diff(tb))[:, None]
            left[u] = left[u, tied]
            integral[u * d:(u + 1) * d] += (-np.expm1(-beta[u] * gap) / beta[u]) @ x[u]
            pairs[:, u * d:(u + 1) * d] += onehot.T @ left[u]
        if features is not None:
            features.append(left.transpose(1, 0, 2).reshape(b - a, q))
        for u in range(U):
            for v in range(u, U):
                weight = -np.expm1(-pair_sum[u, v] * gap) / pair_sum[u, v]
                block = (x[u] * weight[:, None]).T @ x[v]
                gram[u * d:(u + 1) * d, v * d:(v + 1) * d] += block
                if v != u:
                    gram[v * d:(v + 1) * d, u * d:(u + 1) * d] += block.T
        state, last = x[:, -1, :], tb[-1]
    return gram, integral, pairs


def exp_pieces(events, decays, width: float, cap: int | None) -> tuple[ExpPieces, dict]:
    """:class:`ExpPieces` of every sequence of ``events`` (kept under ``cap``), summed, with counts for the data
    info (``kept``, ``clipped``)."""
    d = events.dim
    q = d * len(decays)
    gram, integral, pairs, totals = np.zeros((q, q)), np.zeros(q), np.zeros((d, q)), np.zeros(d)
    duration = kept = clipped = 0
    for seq in events.sequences:
        t, dims, removed = merged_events(seq.times, width, cap)
        g, i, p = sequence_pieces(t, dims, float(seq.end_time), d, decays)
        gram, integral, pairs = gram + g, integral + i, pairs + p
        totals += np.bincount(dims, minlength=d)
        duration += float(seq.end_time)
        kept, clipped = kept + t.size, clipped + removed
    if duration <= 0:
        raise ConfigError("the exponential-kernel fit needs a window of positive length")
    pieces = ExpPieces(gram, integral, pairs, totals, tuple(float(b) for b in decays), duration,
                       len(events.sequences), None if cap is None else int(cap))
    return pieces, {"kept": kept, "clipped": clipped}


def event_features(events, decays, width: float, cap: int | None) -> tuple[list, np.ndarray, float]:
    """The likelihood's design of the events kept under ``cap``: per target dimension i, ``g(t−)`` at each of its
    events (``(n_i, dU)``, decay-major: the intensity is ``μ_i + Σ a_iju g_ju(t−)``), with ``∫ g_ju`` over the
    windows (``(dU,)``, the compensator's coefficients) and ``Σ T``."""
    d = events.dim
    rows = [[] for _ in range(d)]
    integral, duration = np.zeros(d * len(decays)), 0.0
    for seq in events.sequences:
        t, dims, _ = merged_events(seq.times, width, cap)
        blocks = []
        integral += sequence_pieces(t, dims, float(seq.end_time), d, decays, blocks)[1]
        values = np.concatenate(blocks) if blocks else np.zeros((0, integral.size))
        for i in range(d):
            rows[i].append(values[dims == i])
        duration += float(seq.end_time)
    return [np.concatenate(r) for r in rows], integral, duration


def gram_from_values(pieces: ExpPieces) -> ExpPieces:
    """``pieces`` with the Gram and the integrals computed from the values at the events and the totals (the decays
    basis' layout): what a release of those alone (``--exp-gram derived``) implies, as post-processing.

    For two events s <= s′ (dimensions j and k) the product of their features integrates over ``[s′, ∞)`` to
    ``κ_uv e^{−β (s′ − s)}`` with ``κ_uv = β_u β_v/(β_u + β_v)`` and β the earlier event's decay, and an event with
    itself to ``κ_uv``; the values at the events ``c_k[(j, u)] = Σ_{s′ ∈ k} Σ_{s ∈ j, s < s′} β_u e^{−β_u (s′ − s)}``
    sum exactly those exponentials, so

    ``∫_0^∞ g_ju g_kv dt = κ_uv [δ_jk n_j + c_k[(j, u)]/β_u + c_j[(k, v)]/β_v]`` and ``∫_0^∞ g_ju dt = n_j``.

    The windows are integrated to ∞ rather than to their ends, and events at one time are not paired (``c`` counts
    only strictly earlier events): exact up to the events within a few ``1/β_min`` of a window's end and ties.
    """
    beta = np.asarray(pieces.decays, dtype=float)
    d, U = pieces.dim, beta.size
    kappa = np.outer(beta, beta) / (beta[:, None] + beta[None, :])
    values = pieces.pairs.reshape(d, U, d)  # [target k, decay u, source j]
    gram = (np.einsum("uv,jk,j->ujvk", kappa, np.eye(d), pieces.totals)
            + np.einsum("uv,kuj->ujvk", kappa / beta[:, None], values)
            + np.einsum("uv,jvk->ujvk", kappa / beta[None, :], values)).reshape(U * d, U * d)
    return replace(pieces, gram=gram, integral=np.tile(np.asarray(pieces.totals, dtype=float), U))


def assemble(pieces: ExpPieces) -> tuple[np.ndarray, np.ndarray]:
    """``G = ∫ φφᵀ`` (``(dU+1, dU+1)``, φ = (g, 1)) and ``c`` (``(d, dU+1)``): the contrast's normal equations
    ``θ_i G = c_i``; exact for exact pieces, correspondingly noisy for noisy ones."""
    q = pieces.gram.shape[0]
    G = np.empty((q + 1, q + 1))
    G[:q, :q] = pieces.gram
    G[:q, q] = G[q, :q] = pieces.integral
    G[q, q] = pieces.duration
    c = np.concatenate([pieces.pairs, pieces.totals[:, None]], axis=1)
    return G, c


@dataclass(frozen=True)
class ExpStats(SufficientStats):
    """The exponential family's statistics: ``A = G/N``, ``b = c/N`` (``N = Σ T``), so that ``θ A = b`` is the
    least-squares fit, and the pieces they were assembled from. ``lags`` is the p of the lag grid the estimate
    is reported on (not a dimension of A: θ has ``dU + 1`` columns).

    ``count_cap`` is ``None`` on purpose (as for the grid-free statistics): the cap here bounds events per w-bin
    of exact times, and no binned family's sensitivity holds for these numbers. The cap is :attr:`event_cap`.
    """

    kind: ClassVar[str] = "events"
    exp_pieces: ExpPieces | None = None
    event_cap: int | None = None
    width: float = 1.0
    counts: None = None  # no per-bin rows (pgd-clip needs them)
    pieces: None = None  # no binned moment pieces
    likelihood_design: tuple | None = None  # (g(t−) per target dimension, ∫g, Σ T): event_features, non-private
    periodic: object = None  # a baseline that follows the clock: its parts' statistics (exp.baseline.PeriodicPieces)
    likelihood_parts: tuple | None = None  # … and the part of each event of likelihood_design's rows

    @property
    def n_params(self) -> int:
        """Columns of θ: ``dU + 1``."""
        return int(self.A.shape[0])

    @property
    def design(self):
        """Per-bin rows do not exist for exact event times."""
        raise ConfigError("the exponential-kernel statistics have no per-bin rows: pgd-clip needs binned counts")


def stats_from_pieces(pieces: ExpPieces, width: float, lags: int) -> ExpStats:
    """:class:`ExpStats` assembled from ``pieces`` (``lags``: the p of the grid the estimate is reported on)."""
    G, c = assemble(pieces)
    N = pieces.duration
    return ExpStats(A=G / N, b=c / N, yy=0.0, n_rows=max(int(round(N)), 1), dim=pieces.dim, lags=int(lags),
                    count_cap=None, exp_pieces=pieces, event_cap=pieces.count_cap, width=float(width))
