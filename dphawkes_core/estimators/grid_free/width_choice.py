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
CONTRAST, RISK = "contrast", "risk"  # how share then direct scores its candidates (option ctls_choice_score)
RISK_DRAWS = 8  # the risk score's parametric bootstrap: fresh draws of the release's noise
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
                 grid=None, both_ways: bool = False) -> list[Candidate]:
    """Every candidate of ``grid`` (default :func:`candidate_grid`) fitted on ``train`` and scored on
    ``validation``, best first. ``fit(pieces, width) -> U`` is the post-processing of a candidate's pieces (the
    ctls fit); everything here reads released (or exact) pieces and public numbers only.

    ``both_ways``: two-fold cross-fitting — each candidate also fitted on ``validation`` and scored on ``train``, its
    score the two contrasts per unit of their blocks' time added (share then direct: measured better at 10⁵ events,
    ``docs/accuracy.md``, "Share then direct")."""
    grid = grid or candidate_grid(train.lags)
    scored = []
    for k, lags in grid:
        width = k * float(fine_width)
        score = _scored(train, validation, k, lags, width, fit)
        if both_ways:
            score = score / validation.duration + _scored(validation, train, k, lags, width, fit) / train.duration
        scored.append(Candidate(k, lags, width, lags * width, score if math.isfinite(score) else math.inf))
    return sorted(scored, key=lambda c: c.score)


def _scored(fitted: GridFreePieces, scored: GridFreePieces, factor: int, lags: int, width: float, fit) -> float:
    """The contrast on ``scored``'s pieces of candidate (k, B') fitted on ``fitted``'s."""
    return contrast(fit(candidate_pieces(fitted, factor, lags), width), candidate_pieces(scored, factor, lags), width)


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


# --- share then direct: choose with a share of the budget, release the chosen (w, s) with the rest ----------------

CHOICE_SHARE = 50.0  # default share of the release's μ² (in percent) the choice spends; the rest releases directly
DIRECT_LABEL = "noisy statistics at the chosen width and support"
CAPS_LABEL = "count caps C per candidate width (noisy tail counts)"


def stated_caps(cap: int | None, factors) -> dict:
    """The caps per w-bin of the candidate widths ``k·w0`` under a stated C per w0-bin: ``k·C`` (a w-bin spans k
    w0-bins, so as many events as the stated cap allows there; ``None`` for no cap)."""
    return {int(k): None if cap is None else int(cap) * int(k) for k in factors}


@dataclass(frozen=True)
class WidthCaps:
    """Caps per w-bin of every candidate width chosen privately in one release: the tail counts of the unclipped
    w-bin counts at each width k·w0 (one event moves one count of each width by one: sensitivity √K for K widths),
    with noise std ``multiplier·√K``, and each width's C chosen from its own tails by the automatic cap's rule
    (:func:`~dphawkes_core.privacy.count_cap.choose_cap` at the target of
    :func:`~dphawkes_core.privacy.count_cap.clip_target`).

    Attributes
    ----------
    caps : dict
        ``{k: C_k}``.
    multiplier : float
        The release's noise multiplier: that of the automatic cap at its share of ε.
    share : float
    max_cap : int
    """

    caps: dict
    multiplier: float
    share: float
    max_cap: int

    def to_dict(self) -> dict:
        """The data info's ``auto_count_cap``: the w0 cap first (the choice's release), then every width's."""
        return {"count_cap": self.caps[1], "share": self.share, "sigma": self.multiplier * math.sqrt(len(self.caps)),
                "max_cap": self.max_cap, "count_caps_by_width": {str(k): c for k, c in self.caps.items()}}


def ctls_cap_rule(width: float, support: float):
    """ctls's terms of the automatic cap's rule at (w, s) (:class:`~dphawkes_core.privacy.count_cap.CapRule`): the
    step-kernel scale, and the guard of the rule before (1 % of the events), so that its C is never below that rule's —
    a lower C was measured to hurt ctls at w = s/40 and on a near-critical process at 10⁴ events, a higher one to help
    it from 10⁶ events (``docs/accuracy.md``, "The automatic cap")."""
    from dphawkes_core.privacy.count_cap import AUTO_CAP_CLIPPED_FRACTION, step_cap_rule

    return step_cap_rule(width, support, AUTO_CAP_CLIPPED_FRACTION)


def private_caps(events, width: float, factors, epsilon: float, delta: float, share: float, max_cap: int,
                 rng, support: float) -> WidthCaps:
    """:class:`WidthCaps` of ``events`` at the widths ``k·w0``, ``k`` in ``factors`` (1 among them), spending
    ``share·ε`` (the multiplier of :func:`~dphawkes_core.privacy.count_cap.cap_noise_sigma`); each width's C under
    :func:`ctls_cap_rule` at that width and the support s_max."""
    from dphawkes_core.privacy.count_cap import cap_noise_sigma, choose_cap, clip_target
    from dphawkes_core.statistics.binning import bin_sparse, tail_counts

    factors = sorted({int(k) for k in factors})
    multiplier = cap_noise_sigma(epsilon, delta, share)
    sigma = multiplier * math.sqrt(len(factors))
    caps = {}
    for k in factors:
        tails = tail_counts(bin_sparse(events, k * width), int(max_cap))
        rule = ctls_cap_rule(k * width, support)
        caps[k] = choose_cap(tails + sigma * rng.standard_normal(tails.size), sigma,
                             clip_target(epsilon, delta, share, scale=rule.scale), max_fraction=rule.max_fraction)
    return WidthCaps(caps, float(multiplier), float(share), int(max_cap))


@dataclass(frozen=True)
class GridFreeShareStats(GridFreeSplitStats):
    """The statistics of ctls with the width and support chosen by a share of the budget and released directly:
    the two blocks' pieces at (w0, s_max) (the choice's release, as :class:`GridFreeSplitStats`, kept at C per
    w0-bin) and, for every candidate (k, B') of the grid, the whole windows' pieces at (k·w0, B') of the events kept
    at its own cap C_k per w-bin (the direct release's; the head ``[0, s_max)`` of every candidate).
    ``choice_share``: the share of μ² the choice spends (a fraction), public."""

    direct_pieces: tuple = ()  # ((factor, lags, cap, pieces), ...)
    choice_share: float = math.nan

    def direct(self, factor: int, lags: int) -> tuple[int | None, GridFreePieces]:
        """The direct release's cap and pieces of candidate (k, B')."""
        for k, b, cap, pieces in self.direct_pieces:
            if (k, b) == (int(factor), int(lags)):
                return cap, pieces
        raise ConfigError(f"no statistics for the candidate (k, B') = ({factor}, {lags})")


def prepare_share_stats(events, width: float, lags: int, caps: dict, share: float, choice_share: float
                        ) -> tuple[GridFreeShareStats, dict]:
    """:func:`prepare_split_stats` at the w0 cap ``caps[1]`` and every candidate's direct pieces at its width's cap
    (:class:`GridFreeShareStats`)."""
    split, counts = prepare_split_stats(events, width, lags, caps[1], share)
    direct = []
    for k in sorted({k for k, _ in candidate_grid(lags)}):
        coarse, _ = grid_free_pieces(events, k * width, lags // k, caps[k])
        direct += [(k, b, caps[k], truncate_pieces(coarse, b)) for kk, b in candidate_grid(lags) if kk == k]
    stats = GridFreeShareStats(**{f.name: getattr(split, f.name) for f in fields(split)}, direct_pieces=tuple(direct),
                               choice_share=float(choice_share))
    return stats, counts


@dataclass(frozen=True)
class ShareMultipliers:
    """The noise multipliers (σ/S) of share then direct, from public numbers only.

    Attributes
    ----------
    choice, direct : float
        Of the choice's release (μ² share q of what the caps leave) and of the direct release (1 − q).
    cap : float or None
        Of the automatic caps' tail counts (the automatic cap's share of ε), if any.
    """

    choice: float
    direct: float
    cap: float | None = None


def share_multipliers(epsilon: float, delta: float, choice_share: float, cap_share: float | None = None
                      ) -> ShareMultipliers:
    """The multipliers that make the releases together exactly (ε, δ)-DP, from the accountant
    (:mod:`~dphawkes_core.privacy.accounting`): automatic caps take the automatic cap's share of ε
    (:func:`~dphawkes_core.privacy.accounting.split`, as every automatic cap), the releases after them the rest,
    divided between the choice (the share q of its μ²) and the direct release (the remainder,
    :func:`~dphawkes_core.privacy.accounting.divided`)."""
    from dphawkes_core.privacy.accounting import divided, gaussian_multiplier, split

    if not 0.0 < choice_share < 1.0:
        raise ConfigError(f"the shares leave nothing for one of the releases (choice share {choice_share:g})")
    if cap_share is None:
        cap, rest = None, gaussian_multiplier(epsilon, delta)
    else:
        parts = split(epsilon, delta, cap_share, what="the automatic caps")
        cap, rest = parts.selection_multiplier, parts.rest_multiplier
    choice, direct = divided(rest, (choice_share, 1.0 - choice_share))
    return ShareMultipliers(choice, direct, cap)


def share_report(stats: GridFreeShareStats, config, choice_sensitivity: float, note: str):
    """The privacy report of share then direct: the choice's release first (its σ² and sensitivity, in the units of
    A), the direct release as a further Gaussian of its own multiplier, automatic caps as the budget split; ε all of
    them composed. σ² = 0: both exact (not private)."""
    from dphawkes_core.privacy.accounting import Mechanism, compose_epsilon
    from dphawkes_core.privacy.count_cap import AUTO
    from dphawkes_core.privacy.report import BudgetSplit, PrivacyReport

    if config.sigma2 == 0:
        z = ShareMultipliers(0.0, 0.0)
    elif config.epsilon is None:
        raise ConfigError("choosing the width with a share of the budget splits ε: give ε, not σ²")
    else:
        z = share_multipliers(config.epsilon, config.dp_delta, stats.choice_share,
                              config.count_cap_share if config.count_cap == AUTO else None)
    releases = [Mechanism("gaussian", z.choice), Mechanism("gaussian", z.direct)] if z.choice else []
    epsilon = compose_epsilon(releases + ([Mechanism("gaussian", z.cap)] if z.cap else []), config.dp_delta) \
        if releases else math.inf
    split = None if z.cap is None else BudgetSplit(
        share=float(config.count_cap_share), cap_sigma=float(z.cap),
        cap_epsilon=float(config.count_cap_share * config.epsilon),
        release_epsilon=compose_epsilon(releases, config.dp_delta), epsilon_total=epsilon, count_cap=stats.event_cap)
    return PrivacyReport(
        sigma2=float((z.choice * choice_sensitivity) ** 2) if z.choice else 0.0,
        epsilon=float(config.epsilon or epsilon), dp_delta=float(config.dp_delta), calibration="formal",
        sensitivity=float(choice_sensitivity), R=math.nan,
        epsilon_by_calibration={"paper": None, "tight-paper": None, "formal": epsilon},
        sensitivity_by_calibration={"paper": None, "tight-paper": None, "formal": float(choice_sensitivity)},
        formal=True, iters=1, budget_split=split, further=((float(z.direct), DIRECT_LABEL),) if z.direct else (),
        note=note + f"; w and s chosen with {stats.choice_share:.0%} of the releases' budget, then released "
                    "directly" + ("; count caps chosen privately, one per candidate width, with "
                                  f"{config.count_cap_share:.0%} of ε" if split else ""))


def direct_sensitivity(pieces: GridFreePieces, cap: int, config) -> Sensitivity:
    """The ctls bound of one candidate's direct release: its B', its cap per w-bin, the windows' edge share (or the
    stated one) and the config's ρ."""
    share = default_edge_share(pieces) if config.ctls_edge_share is None else config.ctls_edge_share / 100.0
    return ctls_sensitivity(pieces.dim, pieces.lags, cap, share, config.ctls_gram_scale)


def direct_release(pieces: GridFreePieces, width: float, cap: int | None, config, multiplier: float, rng):
    """The direct release of one candidate's pieces at noise multiplier ``multiplier`` (0: exact) and its ctls fit:
    ``(U, info)`` (the ctls post-processing of the stated fit: the edges shrunk, ridge, smoothing, non-negative)."""
    sens = direct_sensitivity(pieces, cap, config) if cap is not None else None
    raw_sigma = float(multiplier) * sens.total if sens is not None else 0.0
    kappa, rho = (sens.kappa, sens.rho) if sens is not None else (1.0, float(config.ctls_gram_scale))
    noisy = pieces
    if raw_sigma > 0:
        vector = raw_release(pieces, kappa, rho)
        noisy = shrink_edges(pieces_from_release(vector + raw_sigma * rng.standard_normal(vector.size), pieces, kappa,
                                                 rho), raw_sigma, part_scales(kappa, rho))
    U, info = solve_released(stats_from_pieces(noisy, width), rho * raw_sigma / max(pieces.duration, 1e-300), config)
    info.update({"direct_sensitivity": sens.total if sens is not None else None, "direct_count_cap": cap,
                 "direct_kappa": kappa})
    return U, info


def direct_query(stats: GridFreeShareStats, config, factor: int, lags: int) -> tuple[np.ndarray, float]:
    """The direct release of candidate (k, B') without noise and its sensitivity, both in the units of A (over the
    candidate's public N): the vector the second release adds noise to, for the tests and the audit."""
    cap, pieces = stats.direct(factor, lags)
    sens = direct_sensitivity(pieces, cap, config)
    return raw_release(pieces, sens.kappa, sens.rho) / pieces.duration, sens.total / pieces.duration


def _fine_heights(release: SplitRelease, config, grid) -> dict:
    """Every candidate of ``grid`` fitted on ``release``'s two blocks together, as its kernels' heights θ on the fine
    grid (``(d, d·B)``, the baseline left out)."""
    both = add_pieces(release.train, release.validation)
    heights = {}
    for k, lags in grid:
        U = solve_candidate(release, config, candidate_pieces(both, k, lags), k * release.fine_width)[0]
        heights[k, lags] = on_fine_grid(U, k, release.train.lags)[:, :-1] / release.fine_width
    return heights


def risk_candidates(release: SplitRelease, config, choice_share: float, rng) -> list[Candidate]:
    """Every candidate of the grid (:func:`candidate_grid`) scored by an estimate of its kernel error after the direct
    release, best first (option ``ctls_choice_score="risk"``; ``docs/accuracy.md``, "Share then direct", round 3).

    Each candidate c is fitted on the two released blocks together (:func:`_fine_heights`); ``ref`` is the finest
    width at the longest support (the least biased). ``‖f_c − f_ref‖²`` estimates the squared bias of c plus the
    variance of the difference, so the score is ``‖f_c − f_ref‖² − Var(f_c − f_ref)`` (floored at 0) plus
    ``Var(f_c)·q/(1 − q)`` — c's variance at the direct release's share of μ² (``q`` the choice's). The variances come
    from a parametric bootstrap: :data:`RISK_DRAWS` fresh draws of the release's noise (its public σ, κ, ρ) added to the
    released blocks, refitted. Post-processing of the release; ``rng`` the fit's generator."""
    grid = candidate_grid(release.train.lags)
    base = _fine_heights(release, config, grid)
    boot = [_fine_heights(release_blocks(release.train, release.validation, release.fine_width, release.raw_sigma,
                                         release.kappa, release.rho, rng), config, grid) for _ in range(RISK_DRAWS)]
    ref = max(grid, key=lambda c: (c[0] * c[1], -c[0]))
    scale = choice_share / (1.0 - choice_share)
    scored = []
    for k, lags in grid:
        differences = np.array([b[k, lags] - b[ref] for b in boot])
        variance = float(np.sum(np.var(np.array([b[k, lags] for b in boot]), axis=0)))
        bias2 = max(float(np.sum((base[k, lags] - base[ref]) ** 2)) - float(np.sum(np.var(differences, axis=0))), 0.0)
        width = k * release.fine_width
        scored.append(Candidate(k, lags, width, lags * width, bias2 + scale * variance))
    return sorted(scored, key=lambda c: c.score)


def fit_by_share(stats: GridFreeShareStats, config, report, kappa: float, rho: float, rng
                 ) -> tuple[np.ndarray, dict]:
    """Share then direct: the two blocks released at the report's σ (the choice's share), every candidate scored both
    ways (:func:`select_width`) or by its estimated kernel risk (:func:`risk_candidates`, ``ctls_choice_score``), the
    chosen (k, B') released directly from its own pieces at the further multiplier, and its fit on the fine grid
    (:func:`on_fine_grid`), with the choice and its candidates in the info."""
    sigma = math.sqrt(report.sigma2) if report is not None else 0.0
    release = release_blocks(stats.train_pieces, stats.validation_pieces, stats.width,
                             sigma * stats.grid_pieces.duration, kappa, rho, rng)
    if config.ctls_choice_score == RISK:
        candidates = risk_candidates(release, config, stats.choice_share, rng)
        how = "by an estimate of each candidate's kernel error (its distance to the finest, longest one, bootstrapped)"
    else:
        candidates = select_width(release.train, release.validation, release.fine_width,
                                  lambda pieces, width: solve_candidate(release, config, pieces, width)[0],
                                  both_ways=True)
        how = "by the validation contrast (each block fitted and scored on the other)"
    best = candidates[0]
    multiplier = report.further[0][0] if report is not None and report.further else 0.0
    cap, pieces = stats.direct(best.factor, best.lags)
    U, info = direct_release(pieces, best.width, cap, config, multiplier, rng)
    info.update({
        "width_choice": "share", "chosen_width": best.width, "chosen_support": best.support,
        "validation_share": stats.share, "choice_share": stats.choice_share, "choice_score": config.ctls_choice_score,
        "candidates": [{"width": c.width, "support": c.support, "score": c.score} for c in candidates],
        "chosen_in_release": (f"width w = {best.width:g} and support s = {best.support:g} chosen with "
                              f"{stats.choice_share:.0%} of the budget {how}, then released directly with the rest"),
    })
    return on_fine_grid(U, best.factor, stats.lags), info


def share_queries(stats: GridFreeShareStats, config, choice: np.ndarray, choice_sensitivity: float) -> list:
    """Every vector share then direct adds noise to, ``(name, vector, sensitivity)`` in the units of A: the choice's
    release (given: the family's query and its stated sensitivity), then each candidate's direct release
    (:func:`direct_query`: any of them may be the one released) — for a neighbour search that measures every noised
    vector against its own bound."""
    queries = [("choice", np.asarray(choice, dtype=float), float(choice_sensitivity))]
    for factor, lags, _, _ in stats.direct_pieces:
        vector, sensitivity = direct_query(stats, config, factor, lags)
        queries.append((f"direct (k = {factor}, B' = {lags})", vector, sensitivity))
    return queries
