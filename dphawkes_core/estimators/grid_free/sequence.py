"""The sequence unit of the grid-free family (method ``ctls``, ``privacy_unit="sequence"``; derivation in
``docs/privacy.md``, "Grid-free estimation, sequence unit"): every sequence cut to its first M events and kept
under C alone, its own release vector (:func:`sequence_vector`, every entry >= 0) scaled to L2 norm at most G,
summed; one Gaussian release of sensitivity √2·G over the public N; G stated, from M
(:func:`ctls_max_events_clip`) or chosen privately (:func:`~dphawkes_core.privacy.sequence.dp_sequence_clip`).
The family (:mod:`~dphawkes_core.estimators.grid_free`) calibrates and fits them as the event unit's.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from dphawkes_core.errors import ConfigError
from dphawkes_core.estimators.binned import domain_info
from dphawkes_core.estimators.grid_free.release import (
    ctls_sensitivity,
    default_edge_share,
    pieces_from_release,
    raw_release,
)
from dphawkes_core.privacy.count_cap import AUTO
from dphawkes_core.privacy.sequence import cap_events, clip_and_sum, clip_rng, dp_sequence_clip, vector_norm
from dphawkes_core.statistics.binning import bins_in_window
from dphawkes_core.statistics.exact_times import GridFreePieces, GridFreeStats, one_sequence_pieces, stats_from_pieces
from dphawkes_core.statistics.info import DataInfo
from dphawkes_core.statistics.moments import check_design_size, stats_fields
from dphawkes_core.validation import check_count_cap, check_positive_whole

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
    :func:`~dphawkes_core.statistics.exact_times.one_sequence_pieces`); shorter ones yield ``(None, 0, clipped)``."""
    for seq in events.sequences:
        pieces, kept, clipped = one_sequence_pieces(seq.times, seq.end_time, width, lags, count_cap)
        yield (None if pieces is None else sequence_vector(pieces, kappa, rho)), kept, clipped


def sequence_norms(events, width: float, lags: int, count_cap: int | None, kappa: float, rho: float) -> np.ndarray:
    """``‖v_s‖`` of every sequence longer than s: the norms :func:`clipped_sequence_sum` clips (and the private
    choice of G histograms, :func:`~dphawkes_core.privacy.sequence.dp_sequence_clip`)."""
    return np.asarray([vector_norm(v) for v, _, _ in sequence_contributions(events, width, lags, count_cap, kappa, rho)
                       if v is not None], float)


def clipped_sequence_sum(events, width: float, lags: int, count_cap: int | None, kappa: float, rho: float,
                         clip: float) -> tuple[np.ndarray, dict]:
    """``Σ_s v_s·min(1, G/‖v_s‖)`` (the raw release of the sequence unit, before noise) and counts for the data
    info (:func:`~dphawkes_core.privacy.sequence.clip_and_sum` of :func:`sequence_contributions`)."""
    return clip_and_sum(sequence_contributions(events, width, lags, count_cap, kappa, rho), clip)


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
    (:func:`~dphawkes_core.privacy.sequence.cap_events`), its events kept under C per (dimension, w-bin), its
    :func:`sequence_vector` scaled to norm at most G and summed (:func:`clipped_sequence_sum`); G stated, from M
    (:func:`ctls_max_events_clip`) or chosen privately (``"auto"``:
    :func:`~dphawkes_core.privacy.sequence.dp_sequence_clip` on :func:`sequence_norms`, top the G of M)."""
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
