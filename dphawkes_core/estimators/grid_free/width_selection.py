"""The width w and the support s of ``ctls`` chosen inside one release, at no extra privacy cost.

**Coarser statistics are sums of finer ones** (:func:`coarsen_pieces`). With step kernels of width ``w = k·w0``,
``N_j^b`` at w is the sum of ``N_j^{bk+r}`` at w0 (r = 0 … k−1), so every piece of
:class:`~dphawkes_core.statistics.exact_times.GridFreePieces` at (k·w0, s_max) is an exact linear function of the
pieces at (w0, s_max): the full-line Toeplitz products ``R`` are block sums of the fine block-Toeplitz Gram, the pair
counts ``P`` sums of k fine lags, the head and tail Grams block sums, ``∫ N`` and the head pairs sums, over the same
head ``[0, s_max)`` and tail. A support ``s = B'·w < s_max`` keeps the first ``d·B'`` features: its statistics are
the leading blocks (:func:`truncate_pieces`), with the history-only head still ``[0, s_max)`` — the contrast of
every candidate is taken over ``[s_max, T]``, so that one head serves them all.

**One release, two blocks.** A public time V cuts every window into a training block ``[0, V)`` and a validation
block ``[V, T]``: ``V = w0·floor((1 − share)·T/w0)`` from the window's declared length T and a public share
(:func:`validation_cut`), so V lies on a w0-bin boundary and keeping the first C per bin within each block keeps
exactly the events the whole window keeps. Each block is a window of its own (its first s_max history only), so a
pair of events on both sides of V belongs to neither, and every event to exactly one block. The released vector is
the concatenation of the two blocks' release vectors (:func:`~dphawkes_core.estimators.grid_free.release.raw_release`
at one public κ, ρ) plus Gaussian noise of one std: adding or removing an event changes the statistics of its own
block only, by at most :func:`~dphawkes_core.estimators.grid_free.release.ctls_sensitivity` (which holds for any
set of windows), so the concatenation's L2 sensitivity is that same bound (``docs/privacy.md``, "Width and support
inside the release").

**Selection is post-processing** (:func:`select_width`): for every candidate (k, B') of a public grid, the training
block's noisy pieces (their edges shrunk at w0) are coarsened and truncated and fitted by the ctls post-processing;
its estimate θ is scored on the validation block's noisy pieces by the least-squares contrast
``Σ_i θ_iᵀ G_val θ_i − 2 θ_iᵀ c_val,i`` (unbiased for the noiseless contrast: the validation noise is independent of
θ and has mean zero). The best candidate is fitted again on the two blocks' pieces summed and expressed on the fine
grid (:func:`on_fine_grid`), so the family's fit (option ``ctls_width_choice="validation"``,
:func:`prepare_split_stats`, :func:`fit_by_validation`) returns an estimate of the declared shape.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields, replace

import numpy as np

from dphawkes_core.data.io import EventSequence
from dphawkes_core.errors import ConfigError
from dphawkes_core.estimators.grid_free.release import (
    Sensitivity,
    ctls_sensitivity,
    default_edge_share,
    part_scales,
    pieces_from_release,
    raw_release,
    shrink_edges,
)
from dphawkes_core.estimators.grid_free.solve import solve_released
from dphawkes_core.statistics.exact_times import (
    GridFreePieces,
    GridFreeStats,
    assemble,
    grid_free_pieces,
    stats_from_pieces,
    toeplitz_gram,
)

WIDTH_FACTORS = (1, 2, 4, 8)  # candidate widths k·w0
SUPPORT_FRACTIONS = (0.25, 0.5, 1.0)  # candidate supports, as fractions of s_max
VALIDATION_SHARE = 30.0  # default share of every window in the validation block, in percent


def _block_sum(matrix: np.ndarray, dim: int, factor: int, lags: int) -> np.ndarray:
    """``(d·lags, d·lags)`` block sums of a lag-major ``(d·B, d·B)`` matrix over k consecutive lags each way."""
    d, k = int(dim), int(factor)
    fine = matrix[: d * k * lags, : d * k * lags].reshape(lags, k, d, lags, k, d)
    return fine.sum(axis=(1, 4)).reshape(lags * d, lags * d)


def _lag_sum(vector: np.ndarray, dim: int, factor: int, lags: int) -> np.ndarray:
    """Sums over k consecutive lags of a lag-major last axis ``(…, d·B)``."""
    d, k = int(dim), int(factor)
    head = vector[..., : d * k * lags]
    return head.reshape(*vector.shape[:-1], lags, k, d).sum(axis=-2).reshape(*vector.shape[:-1], lags * d)


def coarsen_pieces(pieces: GridFreePieces, factor: int) -> GridFreePieces:
    """The pieces at width ``k·w0`` and the same support (``B/k`` lags) from the pieces at w0 with B lags.

    Exact (up to rounding) for exact pieces; for noisy ones, the same linear map of the noise (post-processing).
    Every quantity in units of w0 becomes one in units of k·w0 (divided by k); counts stay counts.

    Parameters
    ----------
    pieces : GridFreePieces
        At the fine width w0, ``B`` lags (``s_max = B·w0``).
    factor : int
        k, a divisor of B.
    """
    k, d, B = int(factor), pieces.dim, pieces.lags
    if k < 1 or B % k:
        raise ConfigError(f"the width factor {factor!r} must divide the number of fine lags {B}")
    if k == 1:
        return pieces
    lags = B // k
    fine_gram = toeplitz_gram(pieces.lagged)
    coarse_gram = _block_sum(fine_gram, d, k, lags) / k
    lagged = np.stack([coarse_gram[m * d:(m + 1) * d, :d] for m in range(lags)])  # block (m, 0) is R(m)
    pairs = pieces.pairs.reshape(lags, k, d, d).sum(axis=1)
    return replace(pieces, lagged=lagged, pairs=pairs,
                   head_gram=_block_sum(pieces.head_gram, d, k, lags) / k,
                   tail_gram=_block_sum(pieces.tail_gram, d, k, lags) / k,
                   head_int=_lag_sum(pieces.head_int, d, k, lags) / k,
                   tail_int=_lag_sum(pieces.tail_int, d, k, lags) / k,
                   head_pairs=_lag_sum(pieces.head_pairs, d, k, lags),
                   duration=pieces.duration / k, total_time=pieces.total_time / k, edge_time=pieces.edge_time / k)


def truncate_pieces(pieces: GridFreePieces, lags: int) -> GridFreePieces:
    """The pieces of the first ``lags`` steps only (support ``lags·w``; the head stays the pieces' own)."""
    d, B = pieces.dim, pieces.lags
    if not 1 <= lags <= B:
        raise ConfigError(f"a support of {lags} steps is not within the released {B}")
    q = d * int(lags)
    return replace(pieces, lagged=pieces.lagged[:lags], pairs=pieces.pairs[:lags],
                   head_gram=pieces.head_gram[:q, :q], tail_gram=pieces.tail_gram[:q, :q],
                   head_int=pieces.head_int[:q], tail_int=pieces.tail_int[:q], head_pairs=pieces.head_pairs[:, :q])


def add_pieces(first: GridFreePieces, second: GridFreePieces) -> GridFreePieces:
    """The pieces of two sets of windows together (every piece is a sum over windows)."""
    summed = ("lagged", "pairs", "totals", "head_gram", "tail_gram", "head_int", "tail_int", "head_pairs",
              "head_counts", "duration", "total_time", "sequences", "skipped_sequences", "edge_time")
    return replace(first, **{name: getattr(first, name) + getattr(second, name) for name in summed})


def validation_cut(end_time: float, width: float, share: float) -> float:
    """The public start V of a window's validation block: ``w0·floor((1 − share)·T/w0)`` from its declared length
    T, the fine width w0 and the validation ``share`` (a fraction), so that V lies on a w0-bin boundary."""
    return float(width) * math.floor((1.0 - float(share)) * float(end_time) / float(width))


def validation_cuts(sequences, width: float, share: float) -> list[float]:
    """:func:`validation_cut` of every window."""
    return [validation_cut(seq.end_time, width, share) for seq in sequences]


def _per_window(cuts, count: int) -> list[float]:
    if isinstance(cuts, (int, float)):
        return [float(cuts)] * count
    cuts = [float(cut) for cut in cuts]
    if len(cuts) != count:
        raise ConfigError(f"{len(cuts)} split times for {count} windows")
    return cuts


def split_sequences(sequences, cuts) -> tuple[list[EventSequence], list[EventSequence]]:
    """Every window cut at its public time (``cuts``: one per window, from its start, e.g.
    :func:`validation_cuts`; or one number for every window): the training windows ``[0, V)`` and the validation
    windows ``[V, T]`` shifted to start at 0 (a window shorter than its V is training only). Every event goes to
    exactly one block."""
    train, validation = [], []
    for seq, split in zip(sequences, _per_window(cuts, len(sequences)), strict=True):
        cut = min(split, float(seq.end_time))
        train.append(replace(seq, times=tuple(t[t < cut] for t in seq.times), end_time=cut))
        if seq.end_time > cut:
            validation.append(replace(seq, times=tuple(t[t >= cut] - cut for t in seq.times),
                                      end_time=float(seq.end_time) - cut))
    return train, validation


def contrast(U: np.ndarray, pieces: GridFreePieces, width: float) -> float:
    """The least-squares contrast ``Σ_i θ_iᵀ G θ_i − 2 θ_iᵀ c_i`` (time units) of the estimate ``U = wθ`` (the
    layout :func:`~dphawkes_core.statistics.exact_times.assemble` and the ctls fit share) on ``pieces``."""
    G_over_w, c = assemble(pieces)
    return float(np.sum((U @ G_over_w) * U) - 2.0 * np.sum(U * c)) / float(width)


@dataclass(frozen=True)
class Candidate:
    """One (w, s) of the grid and its validation contrast.

    Attributes
    ----------
    factor : int
        k: the width is ``k·w0``.
    lags : int
        B': the support is ``B'·k·w0``.
    width, support : float
    score : float
        The validation contrast of the candidate's training fit (lower is better).
    """

    factor: int
    lags: int
    width: float
    support: float
    score: float


def candidate_grid(fine_lags: int, factors=WIDTH_FACTORS, fractions=SUPPORT_FRACTIONS) -> list[tuple[int, int]]:
    """The public grid ``(k, B')``: each k dividing the fine B, each support fraction f of s_max as
    ``B' = max(1, round(f·B/k))`` steps (duplicates once)."""
    grid = []
    for k in factors:
        if fine_lags % k:
            continue
        for f in fractions:
            pair = (int(k), max(1, int(round(f * fine_lags / k))))
            if pair not in grid:
                grid.append(pair)
    if not grid:
        raise ConfigError(f"no width factor of {tuple(factors)} divides the {fine_lags} fine lags")
    return grid


def candidate_pieces(pieces: GridFreePieces, factor: int, lags: int) -> GridFreePieces:
    """The pieces of candidate (k, B') from the fine pieces."""
    return truncate_pieces(coarsen_pieces(pieces, factor), lags)


def select_width(train: GridFreePieces, validation: GridFreePieces, fine_width: float, fit,
                 grid=None) -> list[Candidate]:
    """Every candidate of ``grid`` (default :func:`candidate_grid`) fitted on ``train`` and scored on
    ``validation``, best first. ``fit(pieces, width) -> U`` is the post-processing of a candidate's pieces (the
    ctls fit); everything here reads released (or exact) pieces and public numbers only."""
    grid = grid or candidate_grid(train.lags)
    scored = []
    for k, lags in grid:
        width = k * float(fine_width)
        U = fit(candidate_pieces(train, k, lags), width)
        score = contrast(U, candidate_pieces(validation, k, lags), width)
        scored.append(Candidate(k, lags, width, lags * width, score if math.isfinite(score) else math.inf))
    return sorted(scored, key=lambda c: c.score)


# --- the release of the two blocks ---------------------------------------------------------------------------

@dataclass(frozen=True)
class SplitRelease:
    """The training and validation blocks' pieces at (w0, s_max), released together (or exact, σ = 0).

    Attributes
    ----------
    train, validation : GridFreePieces
        The blocks' (noisy, edges shrunk) pieces.
    fine_width : float
        w0.
    raw_sigma : float
        The noise std of every released number, in the pieces' units (before the part scales).
    kappa, rho : float
        The public part scales of the release.
    """

    train: GridFreePieces
    validation: GridFreePieces
    fine_width: float
    raw_sigma: float
    kappa: float
    rho: float


def block_pieces(events, cuts, width: float, lags: int, cap: int | None
                 ) -> tuple[GridFreePieces, GridFreePieces, dict]:
    """The pieces of the training and the validation block (:func:`split_sequences` at ``cuts``), each block's
    events kept under ``cap`` per (dimension, w0-bin of its own windows), and the events kept and clipped in
    both (``kept``, ``clipped``)."""
    train, validation = split_sequences(events.sequences, cuts)
    if not validation:
        raise ConfigError("every window ends before its validation block starts: nothing to score on")
    (train, counts), (validation, more) = (grid_free_pieces(replace(events, sequences=tuple(block)), width, lags,
                                                            cap) for block in (train, validation))
    return train, validation, {name: counts[name] + more[name] for name in ("kept", "clipped")}


def split_sensitivity(dim: int, lags: int, count_cap: int, edge_share: float, gram_scale: float) -> Sensitivity:
    """The L2 sensitivity of the two blocks' release vectors concatenated: an event added or removed changes the
    statistics of its own block only (a block's windows hold its events only, and the cap is kept per block), so
    the concatenation moves by what one block's release moves, at most
    :func:`~dphawkes_core.estimators.grid_free.release.ctls_sensitivity`, whose bound holds for any set of windows.
    Returns that :class:`~dphawkes_core.estimators.grid_free.release.Sensitivity`."""
    return ctls_sensitivity(dim, lags, count_cap, edge_share, gram_scale)


def split_vector(train: GridFreePieces, validation: GridFreePieces, kappa: float, rho: float) -> np.ndarray:
    """The released numbers without noise: the training block's release vector, then the validation block's."""
    return np.concatenate([raw_release(train, kappa, rho), raw_release(validation, kappa, rho)])


def noisy_split_vector(train: GridFreePieces, validation: GridFreePieces, kappa: float, rho: float,
                       raw_sigma: float, rng) -> np.ndarray:
    """:func:`split_vector` plus one draw of Gaussian noise of std ``raw_sigma`` per number (none at 0)."""
    clean = split_vector(train, validation, kappa, rho)
    return clean + raw_sigma * rng.standard_normal(clean.size) if raw_sigma > 0 else clean


def release_blocks(train: GridFreePieces, validation: GridFreePieces, width: float, raw_sigma: float, kappa: float,
                   rho: float, rng) -> SplitRelease:
    """One Gaussian release of :func:`split_vector` with noise std ``raw_sigma`` (0: exact), drawn from ``rng``;
    the noisy edges are shrunk at w0 (post-processing,
    :func:`~dphawkes_core.estimators.grid_free.release.shrink_edges`)."""
    if raw_sigma > 0:
        noisy = noisy_split_vector(train, validation, kappa, rho, raw_sigma, rng)
        size = noisy.size // 2  # the two blocks have the same layout (d, B)
        scales = part_scales(kappa, rho)
        train, validation = (shrink_edges(pieces_from_release(part, template, kappa, rho), raw_sigma, scales)
                             for part, template in ((noisy[:size], train), (noisy[size:], validation)))
    return SplitRelease(train, validation, float(width), float(raw_sigma), float(kappa), float(rho))


def release_split(events, cuts, width: float, lags: int, cap: int, noise_multiplier: float, gram_scale: float,
                  rng: np.random.Generator, edge_share: float | None = None) -> SplitRelease:
    """:func:`release_blocks` of the blocks at ``cuts`` (:func:`block_pieces`) at (w0 = ``width``, B = ``lags``)
    with noise std ``noise_multiplier ×`` :func:`split_sensitivity` (``noise_multiplier`` 0: exact).

    ``edge_share`` None: the default share of the windows of both blocks (public)."""
    train, validation, _ = block_pieces(events, cuts, width, lags, cap)
    share = default_edge_share(add_pieces(train, validation)) if edge_share is None else float(edge_share)
    sens = split_sensitivity(train.dim, lags, cap, share, gram_scale)
    return release_blocks(train, validation, width, float(noise_multiplier) * sens.total, sens.kappa, sens.rho, rng)


# --- the choice (post-processing of the release) ----------------------------------------------------------------

@dataclass(frozen=True)
class WidthChoice:
    """The candidates scored on the validation block and the best one fitted on both blocks.

    Attributes
    ----------
    candidates : tuple of Candidate
        Best first.
    U : numpy.ndarray
        ``(d, d·B' + 1)``: the chosen candidate's estimate ``U = wθ`` on the two blocks' pieces summed.
    info : dict
        The post-processing's diagnostics of that fit (ridge, smoothing, solver).
    """

    candidates: tuple[Candidate, ...]
    U: np.ndarray
    info: dict

    @property
    def chosen(self) -> Candidate:
        return self.candidates[0]


def solve_candidate(release: SplitRelease, config, pieces: GridFreePieces, width: float) -> tuple[np.ndarray, dict]:
    """The ctls post-processing of a candidate's pieces from ``release``, its ridge and smoothing scaled by the
    noise of the candidate's Gram pieces in its units of A: a coarse ``R(m)`` sums about k fine products of each
    lag (``(1/k)·Σ_{r,r'} R(mk + r − r')``), so its noise std is about ``√k`` times the fine one."""
    factor = max(width / release.fine_width, 1.0)
    gram_sigma = release.rho * release.raw_sigma * math.sqrt(factor) / max(pieces.duration, 1e-300)
    return solve_released(stats_from_pieces(pieces, width), gram_sigma, config)


def choose_width(release: SplitRelease, config, grid=None) -> WidthChoice:
    """Score every candidate (:func:`select_width`) and fit the best on the two blocks together: post-processing
    of ``release`` with ``config``'s ctls options (ridge, smoothing, non-negativity)."""
    candidates = select_width(release.train, release.validation, release.fine_width,
                              lambda pieces, width: solve_candidate(release, config, pieces, width)[0], grid)
    best = candidates[0]
    both = candidate_pieces(add_pieces(release.train, release.validation), best.factor, best.lags)
    U, info = solve_candidate(release, config, both, best.width)
    return WidthChoice(tuple(candidates), U, info)


def on_fine_grid(U: np.ndarray, factor: int, fine_lags: int) -> np.ndarray:
    """A candidate's ``U = wθ`` at ``(k·w0, B')`` as ``U = w0·θ`` on the fine grid ``(d, d·B + 1)``: each coarse
    height repeated over its k fine steps, zero beyond ``B'·k``, the baseline last (the same step functions and
    baselines, read at w0)."""
    d, k = U.shape[0], int(factor)
    lags = (U.shape[1] - 1) // d
    if lags * k > fine_lags:
        raise ConfigError(f"a support of {lags}×{k} fine steps is beyond the released {fine_lags}")
    scaled = np.asarray(U, float) / k  # w0·θ
    fine = np.zeros((d, int(fine_lags), d))
    fine[:, :lags * k] = np.repeat(scaled[:, :-1].reshape(d, lags, d), k, axis=1)
    return np.concatenate([fine.reshape(d, int(fine_lags) * d), scaled[:, -1:]], axis=1)


# --- the family's option: statistics and fit ------------------------------------------------------------------

@dataclass(frozen=True)
class GridFreeSplitStats(GridFreeStats):
    """The statistics of ctls with the width and support chosen inside the release: ``grid_pieces`` (hence ``A``,
    ``b`` and N, the public normaliser) are the two blocks' pieces summed at (w0, s_max); ``train_pieces`` and
    ``validation_pieces`` the blocks' own, which is what is released (:func:`split_vector`). ``share``: the
    validation share of every window (a fraction), public."""

    train_pieces: GridFreePieces | None = None
    validation_pieces: GridFreePieces | None = None
    share: float = math.nan


def check_split_windows(sequences, cuts, support: float) -> None:
    """Refuse windows that cannot hold both blocks: some window's training block ``[0, V)`` and some window's
    validation block ``[V, T]`` must be longer than s_max (each block's first s_max is history only)."""
    ends = [float(seq.end_time) for seq in sequences]
    if not any(cut > support for cut in cuts):
        raise ConfigError(f"no window holds a training block longer than the support s = {support:g}: choosing the "
                          "width by validation needs a longer window, a smaller support or a smaller validation share")
    if not any(end - cut > support for end, cut in zip(ends, cuts, strict=True)):
        raise ConfigError(f"no window holds a validation block longer than the support s = {support:g} (the "
                          f"longest is {max(end - cut for end, cut in zip(ends, cuts, strict=True)):g}): choosing "
                          "the width by validation needs a longer window, a smaller support or a larger validation "
                          "share")


def prepare_split_stats(events, width: float, lags: int, cap: int | None, share: float
                        ) -> tuple[GridFreeSplitStats, dict]:
    """:class:`GridFreeSplitStats` of ``events`` at (w0 = ``width``, B = ``lags``), every window cut at its
    :func:`validation_cut` for ``share`` (a fraction), the events kept under ``cap`` per block (the same events the
    whole window keeps: V is on a bin boundary), and the counts of :func:`block_pieces`."""
    cuts = validation_cuts(events.sequences, width, share)
    check_split_windows(events.sequences, cuts, width * lags)
    train, validation, counts = block_pieces(events, cuts, width, lags, cap)
    summed = stats_from_pieces(add_pieces(train, validation), width)
    stats = GridFreeSplitStats(**{f.name: getattr(summed, f.name) for f in fields(summed)}, train_pieces=train,
                               validation_pieces=validation, share=float(share))
    return stats, counts


def split_query(stats: GridFreeSplitStats, kappa: float, rho: float) -> np.ndarray:
    """The released numbers without noise over the public N (the units of A)."""
    return split_vector(stats.train_pieces, stats.validation_pieces, kappa, rho) / stats.grid_pieces.duration


def noisy_split_query(stats: GridFreeSplitStats, kappa: float, rho: float, sigma: float, rng) -> np.ndarray:
    """:func:`split_query` plus noise of std σ (the units of A), as :func:`fit_by_validation` draws it."""
    N = stats.grid_pieces.duration
    return noisy_split_vector(stats.train_pieces, stats.validation_pieces, kappa, rho, sigma * N, rng) / N


def fit_by_validation(stats: GridFreeSplitStats, config, sigma: float, kappa: float, rho: float, rng
                      ) -> tuple[np.ndarray, dict]:
    """The release of both blocks with noise std σ (the units of A) drawn from ``rng``, the choice among the
    candidates (:func:`choose_width`) and the chosen estimate on the fine grid (:func:`on_fine_grid`): ``U`` of
    shape ``(d, d·B + 1)`` and the info (the choice, every candidate's w, s and score, the fit's diagnostics)."""
    release = release_blocks(stats.train_pieces, stats.validation_pieces, stats.width,
                             sigma * stats.grid_pieces.duration, kappa, rho, rng)
    choice = choose_width(release, config)
    best = choice.chosen
    info = dict(choice.info)
    info.update({
        "width_choice": "validation", "chosen_width": best.width, "chosen_support": best.support,
        "validation_share": stats.share,
        "candidates": [{"width": c.width, "support": c.support, "score": c.score} for c in choice.candidates],
        "chosen_in_release": (f"width w = {best.width:g} and support s = {best.support:g} chosen inside the "
                              "release by the validation contrast (post-processing: no extra privacy cost)"),
    })
    return on_fine_grid(choice.U, best.factor, stats.lags), info
