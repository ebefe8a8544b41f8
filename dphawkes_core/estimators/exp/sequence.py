"""The sequence unit of the exponential family (method ``exp``, ``privacy_unit="sequence"``; derivation in
``docs/privacy.md``, "Exponential kernels, sequence unit"): every sequence cut to its first M events and kept under
C alone, its own release vector (:func:`sequence_vector`, every entry >= 0) scaled to L2 norm at most G, summed;
one Gaussian release of sensitivity √2·G over the public ``N = Σ T``. G is stated, the G that M guarantees
(:func:`exp_max_events_clip`) or chosen privately below it
(:func:`~dphawkes_core.privacy.sequence.dp_sequence_clip`). The family (:mod:`~dphawkes_core.estimators.exp`)
calibrates and fits the sums as the event unit's statistics.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from dphawkes_core.errors import ConfigError
from dphawkes_core.estimators.binned import domain_info
from dphawkes_core.estimators.exp.release import pieces_from_release, raw_release
from dphawkes_core.estimators.exp.statistics import (
    ExpPieces,
    ExpStats,
    merged_events,
    sequence_pieces,
    stats_from_pieces,
)
from dphawkes_core.privacy.count_cap import AUTO
from dphawkes_core.privacy.sequence import cap_events, clip_and_sum, clip_rng, dp_sequence_clip, vector_norm
from dphawkes_core.statistics.binning import bins_in_window
from dphawkes_core.statistics.info import DataInfo
from dphawkes_core.statistics.moments import stats_fields
from dphawkes_core.validation import check_count_cap, check_positive_whole

SEQUENCE_NOTE = ("formal, privacy unit one sequence (replace-one; public windows, G, M, C, d, the decays, ρ): one "
                 "Gaussian release of the per-sequence exponentially weighted statistics clipped at G")


@dataclass(frozen=True)
class ExpSequenceStats(ExpStats):
    """The exponential family's statistics of the sequence unit: ``exp_pieces`` are the pieces of
    ``Σ_s clip_G(v_s)`` (:func:`sequence_vector` of every sequence scaled to norm at most G), so :class:`ExpStats`'
    ``A``, ``b`` are their G and c over the public ``N = Σ T``. ``rho`` is the public scale the vectors were made
    with, ``sequence_clip`` the G (``auto_clip``: how it was chosen privately). The event unit refuses them (its
    sensitivity is not that of a clipped sum)."""

    sequence_clip: float = math.nan
    rho: float = 1.0
    auto_clip: object = None


def exp_max_events_clip(dim: int, decays, max_events: int, rho: float) -> float:
    """Public G that no sequence of at most M events exceeds (any decays, any window, with or without C): the norm
    of :func:`sequence_vector` under the bounds of ``docs/privacy.md`` ("Exponential kernels, sequence unit").

    With ``n_j`` the sequence's events in dimension j (``Σ n_j <= M``) and ``κ_uv = β_u β_v/(β_u + β_v)``: a Gram
    entry ``∫ g_ju g_kv <= κ_uv n_j n_k`` (each pair of events adds at most ``κ_uv e^{−…} <= κ_uv``), an integral
    ``∫ g_ju <= n_j``, a value at the events ``c_i[(j, u)] <= β_u p_ij`` (``p_ij``: the pairs of an event of j
    strictly before one of i, ``Σ p_ij <= M(M−1)/2``), a total ``n_i``; so
    ``G² = (Σ_uv κ_uv²) M⁴/ρ² + U M²/ρ² + (Σ_u β_u²) (M(M−1)/2)² + M²``.
    """
    check_positive_whole(max_events, "the cap M on events per sequence")
    beta = np.asarray(decays, dtype=float)
    M = float(max_events)
    kappa = np.outer(beta, beta) / (beta[:, None] + beta[None, :])
    rho2 = float(rho) ** 2
    return float(math.sqrt(float(np.sum(kappa**2)) * M**4 / rho2 + beta.size * M**2 / rho2
                           + float(np.sum(beta**2)) * (M * (M - 1) / 2) ** 2 + M**2))


def one_sequence_pieces(seq, dim: int, decays, width: float, cap: int | None) -> tuple[ExpPieces, int, int]:
    """One sequence's :class:`~dphawkes_core.estimators.exp.statistics.ExpPieces` (its events kept under C), its
    kept events and the events the cap removed."""
    t, dims, removed = merged_events(seq.times, width, cap)
    gram, integral, pairs = sequence_pieces(t, dims, float(seq.end_time), dim, decays)
    pieces = ExpPieces(gram, integral, pairs, np.bincount(dims, minlength=dim).astype(float),
                       tuple(float(b) for b in decays), float(seq.end_time), 1, None if cap is None else int(cap))
    return pieces, int(t.size), removed


def sequence_vector(pieces: ExpPieces, rho: float) -> np.ndarray:
    """One sequence's contribution ``v_s``: :func:`~dphawkes_core.estimators.exp.release.raw_release` of its own
    pieces. Every entry is ``>= 0`` (integrals of products of non-negative functions, sums of them at the events,
    counts); the floor at 0 only removes rounding, so that ``⟨v, v'⟩ >= 0`` holds exactly for the √2·G bound."""
    return np.maximum(raw_release(pieces, rho), 0.0)


def sequence_contributions(events, decays, width: float, cap: int | None, rho: float):
    """``(v_s, kept, removed)`` of every sequence, in order."""
    for seq in events.sequences:
        pieces, kept, removed = one_sequence_pieces(seq, events.dim, decays, width, cap)
        yield sequence_vector(pieces, rho), kept, removed


def clipped_sequence_sum(events, decays, width: float, cap: int | None, rho: float,
                         clip: float) -> tuple[np.ndarray, dict]:
    """``Σ_s v_s·min(1, G/‖v_s‖)`` (the raw release of the sequence unit, before noise) and counts for the data
    info (:func:`~dphawkes_core.privacy.sequence.clip_and_sum` of :func:`sequence_contributions`)."""
    return clip_and_sum(sequence_contributions(events, decays, width, cap, rho), clip)


def window_template(events, decays, cap: int | None) -> ExpPieces:
    """The public part of the summed pieces, from the windows alone (zeros elsewhere): ``Σ T``, the sequences,
    the decays and C."""
    d, q = events.dim, events.dim * len(decays)
    duration = float(sum(float(s.end_time) for s in events.sequences))
    if duration <= 0:
        raise ConfigError("the exponential-kernel fit needs a window of positive length")
    return ExpPieces(np.zeros((q, q)), np.zeros(q), np.zeros((d, q)), np.zeros(d), tuple(float(b) for b in decays),
                     duration, len(events.sequences), None if cap is None else int(cap))


def sequence_clip_of(config, dim: int) -> float | None:
    """G of a sequence-unit config from public numbers: stated, or that of M (``None`` with ``"auto"``)."""
    if config.sequence_clip == AUTO:
        return None
    if config.sequence_clip is not None:
        return float(config.sequence_clip)
    return exp_max_events_clip(dim, config.decays, config.max_events, config.exp_gram_scale)


def prepare_exp_sequence_stats(events, config) -> tuple[ExpSequenceStats, DataInfo]:
    """The sequence unit's statistics: every sequence cut to its first M events
    (:func:`~dphawkes_core.privacy.sequence.cap_events`), its events kept under C per (dimension, w-bin), its
    :func:`sequence_vector` scaled to norm at most G and summed (:func:`clipped_sequence_sum`); G stated, from M
    (:func:`exp_max_events_clip`) or chosen privately (``"auto"``:
    :func:`~dphawkes_core.privacy.sequence.dp_sequence_clip` on the norms, top the G of M)."""
    if config.exp_likelihood:
        raise ConfigError("maximum likelihood for exponential kernels reads the events themselves: it has no "
                          "sequence unit (it is non-private)")
    if config.count_cap is not None:
        check_count_cap(config.count_cap)
    capped, over_cap = cap_events(events, config.max_events)
    rho, cap, decays = float(config.exp_gram_scale), config.count_cap, tuple(config.decays)
    template = window_template(capped, decays, cap)
    clip, auto = sequence_clip_of(config, events.dim), None
    if clip is None:
        top = exp_max_events_clip(events.dim, decays, config.max_events, rho)
        contributions = sequence_contributions(capped, decays, config.bin_size, cap, rho)
        norms = np.asarray([vector_norm(v) for v, _, _ in contributions])
        auto = dp_sequence_clip(norms, top, config.epsilon, config.dp_delta, clip_rng(config.seed),
                                config.sequence_clip_share)
        clip = auto.sequence_clip
    total, counts = clipped_sequence_sum(capped, decays, config.bin_size, cap, rho, clip)
    base = stats_from_pieces(pieces_from_release(total, template, rho), config.bin_size, config.lags)
    fields = {f: getattr(base, f) for f in stats_fields(ExpStats)}
    stats = ExpSequenceStats(**fields, sequence_clip=float(clip), rho=rho, auto_clip=auto)
    info = DataInfo(
        n_bins=sum(bins_in_window(s.end_time, config.bin_size) for s in events.sequences),
        n_events=events.n_events, binned_events=counts["kept"], dropped_events=0, clipped_events=counts["clipped"],
        skipped_sequences=0, window_stated=bool(events.window_stated), **domain_info(events), count_cap=cap,
        privacy_unit="sequence", sequence_clip=float(clip), max_events=config.max_events, events_over_cap=over_cap,
        clipped_sequences=int(counts["clipped_sequences"]), sequences=counts["sequences"],
        auto_sequence_clip=auto.to_dict() if auto is not None else None)
    return stats, info


def expected_sequence_clip(stats: ExpSequenceStats, config) -> tuple[float, object]:
    """(G, auto) that statistics of ``config`` must carry: recomputed from the config's public numbers, the chosen G
    with ``"auto"``."""
    auto = getattr(stats, "auto_clip", None) if config.sequence_clip == AUTO else None
    return (auto.sequence_clip if auto is not None else sequence_clip_of(config, stats.dim)), auto
