"""Sequence-level differential privacy: one sequence (one person) is the privacy unit.

The paper's unit is one event. Here two data sets are neighbours when **one sequence is replaced by any
other sequence** on the same public window (replace-one, "bounded" DP): the number of sequences S, every
window, Δ, p, d and the bounds below are public; everything inside a sequence — how many events, when, in
which dimension — is protected.

The claim: the sum over sequences of each sequence's own release vector, clipped to L2 norm G (public), has
replace-one sensitivity √2·G (every entry is non-negative), and one Gaussian release of it is (ε, δ)-DP per
sequence; rebuilding the statistics from it and the solve are post-processing. ``sequence_clip="auto"`` chooses
G privately with a share of ε. Derivation, the release vectors (``lagged``, ``full``) and the measured costs:
``docs/sequence_privacy.md`` and ``docs/privacy.md`` ("Sequence-level privacy").

:func:`clip_and_sum` is the clip-and-sum every family's sequence unit releases (its own vectors in, the clipped
sum out); :func:`max_events_clip` gives the public G that a cap of M events guarantees never clips;
:mod:`~dphawkes_core.privacy.unit_conversion` converts a guarantee between the two units (group privacy in GDP).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import numpy as np

from dphawkes_core.errors import ConfigError
from dphawkes_core.privacy.count_cap import cap_noise_sigma
from dphawkes_core.privacy.noise import NoiseSource, noise_source
from dphawkes_core.statistics.binning import SparseCounts
from dphawkes_core.statistics.moments import (
    SufficientStats,
    SummedPieces,
    assemble_stats,
    assemble_summed,
    check_design_size,
    design_matrix,
    moment_pieces,
    rows_between,
    stats_fields,
    summed_pieces,
)
from dphawkes_core.validation import check_positive_whole

if TYPE_CHECKING:  # annotations only: the core must not pull in the CSV loader (pandas) at start-up
    from dphawkes_core.data.io import Events

PRIVACY_UNITS = ("event", "sequence")
UNIT_LABELS = {"event": "one event (the paper's unit)", "sequence": "one sequence (one person, replaced whole)"}
_DENSE_DESIGN_CELLS = 200_000  # n·(dp+1) up to which a sequence's design is laid out densely
AUTO_CLIP_SHARE = 0.05  # share of ε spent on an automatic G
AUTO_CLIP_LEVELS = 12  # K: G is chosen on the public grid G_M·2^(−k), k = 0..K
AUTO_CLIP_FRACTION = 0.05  # ρ: clip at most about this fraction of the sequences
_CLIP_NOISE_MARGIN = 2.0  # noise std a noisy count above G must leave below ρ·S
_CLIP_SEED_STREAM = 0x5E9C  # G's noise is drawn from its own stream of a seeded fit
SEQUENCE_NOTE = ("formal, privacy unit one sequence (replace-one; public S, windows, G, M, C, d, p): one Gaussian "
                 "release of the per-sequence statistics clipped at G")


def cap_events(events: Events, max_events: int | None) -> tuple[Events, int]:
    """Keep the first ``max_events`` events of each sequence (by time, ties by dimension); drop the rest.

    The choice looks at one sequence only, so it is a per-sequence transformation and costs no privacy.

    Returns
    -------
    events : Events
        The capped data (unchanged when ``max_events`` is None).
    dropped : int
        Events dropped over all sequences.
    """
    if max_events is None:
        return events, 0
    kept_sequences, dropped = [], 0
    for seq in events.sequences:
        times = np.concatenate(seq.times) if seq.times else np.empty(0)
        if times.size <= max_events:
            kept_sequences.append(seq)
            continue
        dims = np.concatenate([np.full(len(t), j) for j, t in enumerate(seq.times)])
        keep = np.lexsort((dims, times))[:max_events]
        kept = tuple(np.sort(times[keep][dims[keep] == j]) for j in range(len(seq.times)))
        kept_sequences.append(replace(seq, times=kept))
        dropped += times.size - max_events
    return replace(events, sequences=tuple(kept_sequences)), dropped


#: Capped events one raw event moves: added or removed before the cap M, it can enter (or leave) the kept first M
#: and push the M-th out (or let the (M+1)-th in) — a swap, two capped events (``docs/privacy.md``).
RAW_EVENT_GROUP = 2


def capped_event_group(unit: str, max_events: int) -> int:
    """How many events of the capped data one neighbour of ``unit`` moves, for a release calibrated for one event
    under the enforced cap M (``max_events``): its group-privacy factor in that view.

    * ``"event"``: one raw event added or removed changes at most two capped events (:data:`RAW_EVENT_GROUP`).
    * ``"sequence"``: one sequence replaced whole (the sequence unit's neighbours) removes at most M capped events
      and adds at most M: ``2M``.

    By the triangle inequality a group of k capped events moves every release vector by at most ``k`` times its
    sensitivity, so a μ-GDP release is ``kμ``-GDP for the group (ρ-zCDP: ``k²ρ``; pure ε: ``kε``).
    """
    check_positive_whole(max_events, "the cap M on events per sequence")
    if unit == "event":
        return RAW_EVENT_GROUP
    if unit == "sequence":
        return 2 * int(max_events)
    raise ConfigError(f"unknown privacy unit {unit!r}; choose one of {', '.join(PRIVACY_UNITS)}")


def max_events_clip(lags: int, max_events: int, count_cap: int | None, release: str) -> float:
    """Public G that no sequence of at most M events exceeds (``c = min(C, M)``; ``docs/privacy.md``).

    With ``a_m = ||X[m]||``, ``Σ_m a_m² <= M c`` and ``u_t`` the lagged counts of row t:

    * ``full``: ``||Σ_t u_t u_tᵀ||_F <= p M c``, the intercept column ``||Σ_t u_t|| <= √p M``,
      ``||Σ_t y_t u_tᵀ||_F <= √p M c``, ``||Σ_t y_t|| <= M``: ``G_M = M·√((p c² + 1)(p + 1))``;
    * ``lagged``: ``||C[τ]||_F <= Σ_m a_m a_{m-τ} <= M c`` (τ = 0..p), ``||totals|| <= M``, each edge Gram
      matrix ``||h hᵀ||_F = ||h||² <= M c`` and each edge row sum ``||h||² <= M c``:
      ``G_M = √((p + 3) c² M² + M² + 2 c M)``.
    """
    check_positive_whole(max_events, "the cap on events per sequence M")
    c = float(min(count_cap, max_events)) if count_cap is not None else float(max_events)
    p, m = int(lags), float(max_events)
    if release == "lagged":
        return float(math.sqrt((p + 3.0) * c * c * m * m + m * m + 2.0 * c * m))
    return float(m * math.sqrt((p * c * c + 1.0) * (p + 1.0)))


def sequence_contribution(counts: SparseCounts, index: int, lags: int) -> tuple[np.ndarray, np.ndarray, float, int]:
    """Raw ``ZZᵀ_s``, ``YZᵀ_s``, ``Σ_t ||y_t||²`` and the row count ``n_s − p`` of sequence ``index``
    (from its dense design when that is small, else from its moment pieces)."""
    n, d = counts.lengths[index], counts.dim
    if n * (d * lags + 1) <= _DENSE_DESIGN_CELLS:
        x = rows_between(counts.bins[index], counts.dims[index], counts.values[index], 0, n, d)
        zt, yt = design_matrix(x, lags)
        return zt.T @ zt, yt.T @ zt, float(np.sum(yt**2)), n - lags
    stats = assemble_stats(moment_pieces(_one_sequence(counts, index), lags))
    rows = stats.n_rows
    return stats.A * rows, stats.b * rows, stats.yy * rows, rows


def _one_sequence(counts: SparseCounts, index: int) -> SparseCounts:
    return SparseCounts((counts.lengths[index],), (counts.bins[index],), (counts.dims[index],),
                        (counts.values[index],), counts.dim, counts.bin_size, count_cap=counts.count_cap)


def sequence_pieces(counts: SparseCounts, index: int, lags: int) -> SummedPieces:
    """The moment pieces of sequence ``index`` alone, its edges as Gram matrices and sums (needs ``n_s > p``)."""
    return summed_pieces(moment_pieces(_one_sequence(counts, index), lags))


def pieces_vector(pieces: SummedPieces) -> np.ndarray:
    """The numbers the sequence unit's ``lagged`` release adds noise to, in this order: the upper triangle of
    ``C[0]``, ``C[1..p]``, the totals, the upper triangles of the head and tail Gram matrices (as
    ``(pd, pd)`` matrices), the head and tail row sums. All are sums of counts or of their products (>= 0).
    Everything :func:`~dphawkes_core.statistics.moments.assemble_summed` reads, each number once."""
    p, d = pieces.lags, pieces.dim
    upper_d, upper_pd = np.triu_indices(d), np.triu_indices(p * d)
    return np.concatenate([pieces.lagged[0][upper_d], pieces.lagged[1:].ravel(), pieces.totals,
                           pieces.head_gram.reshape(p * d, p * d)[upper_pd],
                           pieces.tail_gram.reshape(p * d, p * d)[upper_pd],
                           pieces.head_sum.ravel(), pieces.tail_sum.ravel()])


def vector_pieces(vector: np.ndarray, like: SummedPieces) -> SummedPieces:
    """Inverse of :func:`pieces_vector`: the symmetric parts mirrored; N, C and the skipped count from ``like``."""
    p, d = like.lags, like.dim
    sizes = [d * (d + 1) // 2, p * d * d, d, p * d * (p * d + 1) // 2, p * d * (p * d + 1) // 2, p * d, p * d]
    c0, lagged, totals, head, tail, head_sum, tail_sum = np.split(np.asarray(vector, float), np.cumsum(sizes)[:-1])
    return replace(like, lagged=np.concatenate([_symmetric(c0, d)[None], lagged.reshape(p, d, d)]), totals=totals,
                   head_gram=_symmetric(head, p * d).reshape(p, d, p, d),
                   tail_gram=_symmetric(tail, p * d).reshape(p, d, p, d),
                   head_sum=head_sum.reshape(p, d), tail_sum=tail_sum.reshape(p, d))


def _symmetric(upper: np.ndarray, size: int) -> np.ndarray:
    out = np.zeros((size, size))
    out[np.triu_indices(size)] = upper
    return out + np.triu(out, 1).T


def release_pieces_vector(
    pieces: SummedPieces, raw_sigma: float, rng: NoiseSource | np.random.Generator
) -> SummedPieces:
    """The sequence unit's ``lagged`` release: Gaussian noise of std ``raw_sigma`` on every number of
    :func:`pieces_vector` (one draw, in its order); N stays exact (public). The clipped sums are real numbers:
    always continuous noise (the OS CSPRNG's in a release, :mod:`~dphawkes_core.privacy.noise`)."""
    if raw_sigma <= 0:
        return pieces
    vector = pieces_vector(pieces)
    return vector_pieces(vector + raw_sigma * rng.standard_normal(vector.size), pieces)


def contribution_norm(zz: np.ndarray, yz: np.ndarray) -> float:
    """L2 norm of ``v_s``: the upper triangle of ``ZZᵀ_s`` (diagonal included, intercept corner excluded)
    and the whole of ``YZᵀ_s`` — exactly the entries DP-SSP's ``full`` release adds noise to."""
    upper_sq = (np.sum(zz**2) + np.sum(np.diag(zz) ** 2)) / 2.0 - zz[-1, -1] ** 2
    return float(math.sqrt(max(upper_sq, 0.0) + np.sum(yz**2)))


@dataclass(frozen=True)
class SequenceStats(SufficientStats):
    """Statistics made of per-sequence contributions clipped at ``sequence_clip`` (G): the only statistics
    :func:`sequence_privacy_report` calibrates (event-level statistics would make its claim false).

    ``release`` says which vector was clipped (``full``: ``(ZZᵀ_s, YZᵀ_s)``; ``lagged``: :func:`pieces_vector`);
    for ``lagged`` the clipped sums are kept in ``summed_pieces`` (what that release adds noise to); with
    ``sequence_clip="auto"``, ``auto_clip`` says how G was chosen."""

    sequence_clip: float = math.nan
    release: str = "full"
    summed_pieces: SummedPieces | None = None
    auto_clip: AutoClip | None = None


@dataclass(frozen=True)
class ClippedSums:
    """``Σ_s clip_G(v_s)`` as statistics, and what clipping did.

    Attributes
    ----------
    stats : SequenceStats
        ``A``, ``b`` of the clipped sums divided by the public N (corner ``A[-1,-1] = 1``).
    clipped_sequences : int
        Sequences whose norm exceeded G (scaled down). A diagnostic for the data holder, not released.
    sequences : int
        Sequences that contributed rows (``n_s > p``).
    """

    stats: SequenceStats
    clipped_sequences: int
    sequences: int


def clipped_sums(counts: SparseCounts, lags: int, clip: float, release: str = "full") -> ClippedSums:
    """Every sequence's released vector scaled to norm at most G, summed, over the public N.

    ``full``: ``(ZZᵀ_s, YZᵀ_s)`` (:func:`contribution_norm`; corner kept); ``lagged``: :func:`pieces_vector`
    (:func:`clipped_pieces_sums`)."""
    if release == "lagged":
        return clipped_pieces_sums(counts, lags, clip)
    d = counts.dim
    check_design_size(d, lags)
    q = d * lags + 1
    zz_sum, yz_sum, yy_sum, rows_sum = np.zeros((q, q)), np.zeros((d, q)), 0.0, 0
    clipped = used = 0
    for s, n in enumerate(counts.lengths):
        if n <= lags:
            continue
        zz, yz, yy, rows = sequence_contribution(counts, s, lags)
        norm = contribution_norm(zz, yz)
        scale = min(1.0, clip / norm) if norm > 0 else 1.0
        clipped += scale < 1.0
        corner = zz[-1, -1]
        zz = zz * scale
        zz[-1, -1] = corner
        zz_sum += zz
        yz_sum += yz * scale
        yy_sum += yy * scale
        rows_sum += rows
        used += 1
    if not used:
        raise ConfigError(f"no sequence is longer than p = {lags} bins: use a smaller support or bin size")
    stats = SequenceStats(zz_sum / rows_sum, yz_sum / rows_sum, yy_sum / rows_sum, rows_sum, d, lags,
                          len(counts.lengths) - used, counts.count_cap, float(clip))
    return ClippedSums(stats, int(clipped), used)


def clipped_pieces_sums(counts: SparseCounts, lags: int, clip: float) -> ClippedSums:
    """Every sequence's :func:`pieces_vector` scaled to norm at most G and summed; the statistics are
    assembled from the sums (:func:`~dphawkes_core.statistics.moments.assemble_summed`) and carry them."""
    check_design_size(counts.dim, lags)
    total, rows_sum, like, clipped, used = None, 0, None, 0, 0
    for s, n in enumerate(counts.lengths):
        if n <= lags:
            continue
        like = sequence_pieces(counts, s, lags)
        vector = pieces_vector(like)
        norm = float(np.linalg.norm(vector))
        scale = min(1.0, clip / norm) if norm > 0 else 1.0
        clipped += scale < 1.0
        total = vector * scale if total is None else total + vector * scale
        rows_sum += like.n_rows
        used += 1
    if not used:
        raise ConfigError(f"no sequence is longer than p = {lags} bins: use a smaller support or bin size")
    summed = vector_pieces(total, replace(like, n_rows=rows_sum, skipped_sequences=len(counts.lengths) - used))
    stats = assemble_summed(summed)
    fields = {f: getattr(stats, f) for f in stats_fields(SufficientStats)}
    return ClippedSums(SequenceStats(**fields, sequence_clip=float(clip), release="lagged", summed_pieces=summed),
                       int(clipped), used)


def contribution_norms(counts: SparseCounts, lags: int, release: str) -> np.ndarray:
    """``‖v_s‖`` of every sequence with rows (``n_s > p``), in order: the norms :func:`clipped_sums` clips."""
    norms = []
    for s, n in enumerate(counts.lengths):
        if n <= lags:
            continue
        if release == "lagged":
            norms.append(float(np.linalg.norm(pieces_vector(sequence_pieces(counts, s, lags)))))
        else:
            zz, yz, _, _ = sequence_contribution(counts, s, lags)
            norms.append(contribution_norm(zz, yz))
    return np.asarray(norms, float)


# --- G chosen privately (``FitConfig.sequence_clip = "auto"``) ----------------------------------------------


@dataclass(frozen=True)
class AutoClip:
    """The privately chosen clip norm G and what it cost (:func:`dp_sequence_clip`).

    Attributes
    ----------
    sequence_clip : float
        The chosen G (a value of the public grid).
    share : float
        Share of ε spent on it.
    sigma : float
        Noise std of each released bucket count (sensitivity √2).
    grid_top : float
        The public top of the grid, ``G_M``.
    levels : int
        The public K: the grid is ``G_M·2^(−k)``, k = 0..K.
    clipped_fraction : float
        The target ρ.
    """

    sequence_clip: float
    share: float
    sigma: float
    grid_top: float
    levels: int = AUTO_CLIP_LEVELS
    clipped_fraction: float = AUTO_CLIP_FRACTION

    def to_dict(self) -> dict:
        """Plain dict for the result info and JSON export."""
        return {"sequence_clip": self.sequence_clip, "share": self.share, "sigma": self.sigma,
                "grid_top": self.grid_top, "levels": self.levels, "clipped_fraction": self.clipped_fraction,
                "chosen": "privately (noisy histogram of the per-sequence norms)"}


def clip_grid(top: float, levels: int = AUTO_CLIP_LEVELS) -> np.ndarray:
    """The public grid ``top·2^(−k)``, k = K..0, ascending (``top·2^(−K)`` is the floor of G)."""
    return float(top) * 2.0 ** -np.arange(int(levels), -1, -1, dtype=float)


def norm_histogram(norms: np.ndarray, grid: np.ndarray) -> np.ndarray:
    """Sequences per bucket of the ascending ``grid``: bucket 0 holds ``‖v_s‖ <= g_0``, bucket i
    ``g_{i−1} < ‖v_s‖ <= g_i``; a norm above the top joins the top bucket. Replacing one sequence moves it
    from one bucket to another: one count −1, one +1, L2 sensitivity √2 whatever the data."""
    buckets = np.minimum(np.searchsorted(grid, np.asarray(norms, float), side="left"), grid.size - 1)
    return np.bincount(buckets, minlength=grid.size).astype(float)


def choose_clip(noisy_histogram: np.ndarray, grid: np.ndarray, sigma: float, sequences: int,
                clipped_fraction: float = AUTO_CLIP_FRACTION) -> float:
    """Smallest ``g_i`` whose noisy count above it, ``T̂_i = Σ_{j>i} ĥ_j``, stays at most ``ρ·S`` with two
    noise std to spare: ``T̂_i + 2σ·√(K−i) <= ρ·S`` (S public; ``σ√(K−i)`` is the std of ``T̂_i``); the top
    ``G_M`` (nothing above it) when none does. Post-processing only.

    The noise is added, not max-ed with ``ρ·S`` as for the count cap: clipping more sequences than planned
    biases the estimate by an amount nothing bounds, while a G one grid step too large only doubles the
    release's noise (∝ G). So when the histogram cannot resolve the tail (``2σ`` near ``ρ·S``), G stays high."""
    tails = np.concatenate([np.cumsum(noisy_histogram[::-1])[::-1][1:], [0.0]])  # [i] = Σ_{j>i} ĥ_j
    noise_std = sigma * np.sqrt(np.arange(grid.size - 1, -1, -1, dtype=float))
    ok = tails + _CLIP_NOISE_MARGIN * noise_std <= clipped_fraction * sequences
    ok[-1] = True
    return float(grid[int(np.argmax(ok))])


def clip_noise_sigma(epsilon: float, delta: float, share: float) -> float:
    """Noise std of the bucket counts: the Gaussian mechanism of sensitivity √2 at ``(share·ε, δ)``
    (public numbers only; the noise multiplier is the count cap's,
    :func:`~dphawkes_core.privacy.count_cap.cap_noise_sigma`)."""
    return math.sqrt(2.0) * cap_noise_sigma(epsilon, delta, share)


def dp_sequence_clip(
    norms: np.ndarray,
    top: float,
    epsilon: float,
    delta: float,
    rng: NoiseSource | np.random.Generator,
    share: float = AUTO_CLIP_SHARE,
    levels: int = AUTO_CLIP_LEVELS,
) -> AutoClip:
    """Choose G from the per-sequence norms with one Gaussian release of their histogram on the public grid.

    Parameters
    ----------
    norms : numpy.ndarray
        ``‖v_s‖`` of the S sequences (:func:`contribution_norms`); S is public.
    top : float
        ``G_M`` (:func:`max_events_clip`), the grid's top.
    epsilon, delta : float
        The fit's whole budget; ``share·ε`` is spent here.
    rng : NoiseSource or numpy.random.Generator
        Noise source (:func:`clip_rng`). The histogram's counts are integers, but the release it selects G for
        is real-valued (continuous noise, exact Gaussian accounting): it stays continuous, so the fit composes
        as one Gaussian mechanism.
    share : float
        Share of ε spent on G.
    levels : int
        K: the grid is ``top·2^(−k)``, k = 0..K.
    """
    grid = clip_grid(top, levels)
    sigma = clip_noise_sigma(epsilon, delta, share)
    noisy = norm_histogram(norms, grid) + sigma * rng.standard_normal(grid.size)
    return AutoClip(choose_clip(noisy, grid, sigma, len(norms)), float(share), sigma, float(top), int(levels))


def clip_rng(seed: int | None) -> NoiseSource:
    """G's noise: the OS CSPRNG (continuous), or numpy's stream of a seeded fit apart from the release's and the
    cap's."""
    return noise_source(None if seed is None else (int(seed), _CLIP_SEED_STREAM))


def sequence_sensitivity(clip: float, n_rows: int) -> float:
    """Replace-one L2 sensitivity of the released ``(Â, b̂)`` in the units of ``A``: ``√2·G/N``."""
    if clip is None or not clip > 0:
        raise ConfigError("the sequence unit needs a positive public clip norm G")
    return math.sqrt(2.0) * float(clip) / n_rows


def vector_norm(vector: np.ndarray) -> float:
    """L2 norm without BLAS (whose threads cost more than the sum on these short vectors)."""
    return math.sqrt(float(np.sum(vector * vector)))


def clip_and_sum(contributions: Iterable[tuple[np.ndarray | None, int, int]],
                 clip: float) -> tuple[np.ndarray | None, dict]:
    """``Σ_s v_s·min(1, G/‖v_s‖)``, the raw release of a family's sequence unit before noise, and counts for the
    data info.

    Parameters
    ----------
    contributions : iterable of (v_s or None, kept, removed)
        Each sequence's own release vector (every entry >= 0, so the sum's replace-one sensitivity is √2·G), the
        events it kept under C and the events C removed; ``None`` for a sequence with no vector (too short for the
        family's statistics): only its removed events are counted.
    clip : float
        The public (or privately chosen) G.

    Returns
    -------
    total : numpy.ndarray or None
        The clipped sum (``None`` when no sequence had a vector).
    counts : dict
        ``kept`` and ``clipped`` events, ``clipped_sequences`` (scaled down), ``sequences`` (with a vector).
    """
    total, counts = None, {"kept": 0, "clipped": 0, "clipped_sequences": 0, "sequences": 0}
    for vector, kept, removed in contributions:
        counts["clipped"] += removed
        if vector is None:
            continue
        norm = vector_norm(vector)
        scale = min(1.0, clip / norm) if norm > 0 else 1.0
        counts["clipped_sequences"] += scale < 1.0
        counts["kept"] += kept
        counts["sequences"] += 1
        total = vector * scale if total is None else total + vector * scale
    return total, counts
