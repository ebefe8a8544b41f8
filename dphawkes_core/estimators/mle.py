"""Non-private maximum likelihood on exact event times with step kernels: the reference on exact times.

The model is the grid-free family's (:mod:`dphawkes_core.estimators.grid_free`): ``λ_i(t) = μ_i + Σ_j Σ_b a_ijb
N_j^b(t)``, ``N_j^b(t) = #{u ∈ j : t − u ∈ (bw, (b+1)w]}``, b = 0 … B−1, support ``s = Bw``; with the same
boundary convention: **the first s of every window is history only** (events there are sources, never targets,
and the compensator runs over ``[s, T]``). The log-likelihood of ``θ = (a, μ)`` is

``ℓ(θ) = Σ_k log λ_{i_k}(t_k) − Σ_i μ_i T_eff − Σ_{i,j,b} a_ijb E_jb``

over the targets ``t_k ≥ s``, with ``T_eff = Σ (T − s)`` and ``E_jb = ∫_s^T N_j^b dt``, the exact exposure of each
step (the intercept column of ctls's ``G``, edge-corrected at both ends). With ``X[k, (j, b)] = N_j^b(t_k)`` (the
number of earlier events of j in the step b of target k: the pairs at most s apart), ``λ_k = μ_{i_k} +
Σ_c a_{i_k c} X[k, c]`` is linear in θ, so ℓ is concave and each target dimension i is its own problem.

The fit is Newton's method on each target dimension's concave ℓ_i with the bounds θ >= 0 (projected Newton,
Bertsekas 1982): at θ the gradient ``g = X̃ᵀ(1/λ) − e`` and the curvature ``H = X̃ᵀ diag(1/λ²) X̃`` (``X̃ = [X, 1]``,
``e`` the exposures and ``T_eff``); a parameter at 0 whose gradient points below 0 stays there, the others move
by ``H_FF⁻¹ g_F``, projected onto θ >= 0 and halved until ℓ rises by the Armijo share of the projected step
(an intensity ≤ 0 at a target is ℓ = −∞: rejected). Baselines therefore stay positive wherever ℓ is finite and
kernels non-negative; a step with no exposure has no pairs and stays 0. It starts from ctls's least-squares
solution clipped to positive values and stops when the largest change of a parameter is below ``mle_tol`` times
the largest parameter (the Newton iterations — of the slowest dimension —, the final relative change and ℓ are
reported in the result's ``info``). One iteration builds ``H`` from the ``nnz(X)`` non-zero (target, source-step)
cells (BLAS on dense rows, or one compiled pass over sparse ones: :mod:`~dphawkes_core.statistics.pair_passes`) and
solves a ``(q+1)``-square system; it converges in 5–16 iterations where EM (Lewis & Mohler 2011; tick's
``HawkesEM``), SQUAREM-accelerated, took 60–2,000 cycles (Japan quakes at s = 20 days: 0.55 s against 15.8 s;
``docs/accuracy.md``). EM's fixed point is the same maximum: the tests compare the two.

Not private: it reads the events themselves; no privacy report (like CLS). A count cap C given in the config is
applied as ctls applies it (the first C events per dimension and w-bin), so it fits the same events as ctls.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields
from typing import ClassVar

import numpy as np

from dphawkes_core.data.baseline_bins import BaselineBins
from dphawkes_core.errors import ConfigError
from dphawkes_core.estimators.family import AuditHints, CostTags, Family, InputTags, PrivacyTags, Statistics
from dphawkes_core.estimators.settings import (
    BASELINE_BINS,
    BASELINE_FLOOR,
    BASELINE_PERIOD,
    Setting,
    baseline_bins_of,
    options_class,
)
from dphawkes_core.estimators.solvers import newton_dimension, paper_loss, solve_cls, with_baseline_columns
from dphawkes_core.statistics.binning import bins_in_window
from dphawkes_core.statistics.exact_times import (
    GridFreePieces,
    GridFreeStats,
    grid_free_pieces,
    sequence_arrays,
    stats_from_pieces,
)
from dphawkes_core.statistics.info import DataInfo, domain_info
from dphawkes_core.statistics.moments import check_design_size
from dphawkes_core.statistics.pair_passes import dense_layout, stored_cells, target_matrices
from dphawkes_core.validation import check_count_cap

START_KERNEL_FLOOR = 1e-3  # the start's kernel heights are at least this times 1/s (a branching ratio of 1e-3)
START_BASELINE_FLOOR = 0.1  # the start's baselines are at least this times the dimension's mean rate


# --- the pair design ------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class PairDesign:
    """``X`` (targets × (d·B) source steps, lag-major columns ``b·d + j``) per target dimension, and the exposures.

    Attributes
    ----------
    matrices : tuple of numpy.ndarray or scipy.sparse.csr_matrix
        One per target dimension i (dense or CSR: :func:`~dphawkes_core.statistics.pair_passes.target_matrices`):
        ``X_i[k, c]``, the earlier events of source j with ``t_k − u ∈ (bw, (b+1)w]``
        for its k-th target (time order).
    exposure : numpy.ndarray
        ``(q,)`` ``E_c = ∫ N_j^b dt`` over the fit windows (time units).
    baseline_time : float
        ``T_eff``: the total length of the fit windows.
    """

    matrices: tuple
    exposure: np.ndarray
    baseline_time: float

    @property
    def targets(self) -> np.ndarray:
        """``(d,)`` targets per dimension."""
        return np.array([X.shape[0] for X in self.matrices])

    @property
    def cells(self) -> int:
        """Non-zero cells of ``X`` (what one pass of EM walks)."""
        return sum(stored_cells(X) for X in self.matrices)


def pair_design(events, width: float, lags: int, cap: int | None, exposure: np.ndarray, baseline_time: float,
                history: bool = True) -> PairDesign:
    """:class:`PairDesign` of ``events`` (kept under ``cap``, as ctls keeps them) for steps of ``width``, with the
    given exposures. ``history``: the first s of every window is history only (the family's convention); without
    it every event is a target (tick's ``HawkesEM``). Sequences with ``T <= s`` are skipped when ``history``. The
    rows are dense or CSR, whichever pays (:func:`~dphawkes_core.statistics.pair_passes.target_matrices`)."""
    first = float(lags) if history else -math.inf
    sequences = [sequence_arrays(seq.times, width, cap)[:2] for seq in events.sequences
                 if not history or float(seq.end_time) / width > lags]
    matrices = target_matrices(sequences, events.dim, int(lags), first)
    return PairDesign(matrices, np.asarray(exposure, dtype=np.float64), float(baseline_time))


def pieces_and_design(events, width: float, lags: int, cap: int | None) -> tuple[GridFreePieces, dict, PairDesign]:
    """ctls's pieces (:func:`~dphawkes_core.statistics.exact_times.grid_free_pieces`) and the :class:`PairDesign`
    (history-only first s, exact exposures ``E_jb`` from ctls's intercept column) of ``events`` kept under ``cap``:
    each sequence's events made once, and where the design's rows are dense, counted on the same walk of the pairs
    as ctls's cells (:func:`~dphawkes_core.statistics.pair_passes.numpy_offset_cells`) — what :func:`pair_design`
    counts on a walk of its own."""
    arrays = [sequence_arrays(seq.times, width, cap) for seq in events.sequences]
    used = [(x, dims) for (x, dims, _), seq in zip(arrays, events.sequences) if float(seq.end_time) / width > lags]
    layout = dense_layout(used, events.dim, int(lags), float(lags))
    pieces, counts = grid_free_pieces(events, width, lags, cap, arrays, layout)
    exposure = width * (np.tile(pieces.totals, pieces.lags) - pieces.head_int - pieces.tail_int)
    matrices = layout.matrices() if layout is not None else target_matrices(used, events.dim, int(lags), float(lags))
    return pieces, counts, PairDesign(matrices, exposure, width * pieces.duration)


# --- the likelihood and EM ------------------------------------------------------------------------------------

def intensities(theta: np.ndarray, design: PairDesign) -> list[np.ndarray]:
    """``λ`` at the targets of each dimension for ``θ`` (``(d, q+1)``: kernel heights lag-major, the baseline
    last)."""
    return [X @ theta[i, :-1] + theta[i, -1] for i, X in enumerate(design.matrices)]


def log_likelihood(theta: np.ndarray, design: PairDesign, lam: list | None = None) -> float:
    """``ℓ(θ)`` (``-inf`` where an intensity at a target is not positive); ``lam``: :func:`intensities` at θ."""
    lam = intensities(theta, design) if lam is None else lam
    if any(np.any(values <= 0) for values in lam):
        return -math.inf
    return float(sum(np.sum(np.log(values)) for values in lam) - theta[:, -1].sum() * design.baseline_time
                 - np.sum(theta[:, :-1] * design.exposure))


@dataclass(frozen=True)
class MLOutcome:
    """The maximum-likelihood fit: ``theta`` (``(d, q+1)``), ``log_likelihood``, Newton ``iterations`` (the largest
    over the target dimensions), the final ``relative_change`` and whether it fell below the tolerance
    (``converged``)."""

    theta: np.ndarray
    log_likelihood: float
    iterations: int
    relative_change: float
    converged: bool


def maximise_likelihood(design: PairDesign, start: np.ndarray, tol: float, max_iter: int,
                        lower: np.ndarray | None = None) -> MLOutcome:
    """Projected Newton (:func:`~dphawkes_core.estimators.solvers.newton_dimension`) on every target dimension
    from ``start`` (positive) until ``max|Δθ_i| <= tol·max|θ_i|`` or ``max_iter`` iterations; θ >= ``lower``
    (``(d, q+1)``, default 0: a baseline floor)."""
    theta = np.array(start, dtype=np.float64)
    exposure = np.append(design.exposure, design.baseline_time)
    iterations, changes, converged = [], [], True
    for i, X in enumerate(design.matrices):
        theta[i], count, change, done = newton_dimension(X, exposure, theta[i], tol, max_iter,
                                                         None if lower is None else lower[i])
        iterations.append(count)
        changes.append(change)
        converged &= done
    return MLOutcome(theta, log_likelihood(theta, design), max(iterations), max(changes), bool(converged))


def positive_start(theta_ls: np.ndarray, design: PairDesign, support: float) -> np.ndarray:
    """The least-squares ``θ`` clipped to positive values: kernel heights at least ``START_KERNEL_FLOOR/s``,
    baselines at least ``START_BASELINE_FLOOR`` times the dimension's mean rate over the fit windows (EM's
    multiplicative update never revives a zero). Steps with no exposure start (and stay) at 0."""
    start = np.array(theta_ls, dtype=np.float64)
    start[:, :-1] = np.maximum(start[:, :-1], START_KERNEL_FLOOR / support) * (design.exposure > 0)
    rates = design.targets / max(design.baseline_time, 1e-300)
    start[:, -1] = np.maximum(start[:, -1], START_BASELINE_FLOOR * np.maximum(rates, 1e-300))
    return start


# --- a baseline that follows the clock (dphawkes_core.data.baseline_bins) ------------------------------------

@dataclass(frozen=True)
class BaselineDesign:
    """The parts of a periodic (or windowed) baseline at the targets: ``parts[i]`` (the part of each target of
    dimension i, in the order of :attr:`PairDesign.matrices`' rows), ``exposure`` (``(K,)``: the fit windows' time in
    each part) and the :class:`~dphawkes_core.data.baseline_bins.BaselineBins`."""

    parts: tuple
    exposure: np.ndarray
    bins: BaselineBins


def baseline_design(events, width: float, lags: int, cap: int | None, bins: BaselineBins) -> BaselineDesign:
    """:class:`BaselineDesign` of the targets of :func:`pair_design` (history-only first s: the events at ``t >= s``
    of every window longer than s, kept under ``cap``) and the exposure of each part over ``[s, T]``."""
    d, parts, exposure = events.dim, [[] for _ in range(events.dim)], np.zeros(bins.bins)
    for seq in events.sequences:
        if float(seq.end_time) / width <= lags:
            continue
        x, dims, _ = sequence_arrays(seq.times, width, cap)
        target = x >= float(lags)
        part = bins.index(x[target] * width, seq.start_time, seq.end_time)
        for i in range(d):
            parts[i].append(part[dims[target] == i])
        exposure += bins.exposure(width * lags, float(seq.end_time), seq.start_time, float(seq.end_time))
    return BaselineDesign(tuple(np.concatenate(p) if p else np.zeros(0, np.int64) for p in parts), exposure, bins)


def maximise_periodic(design: PairDesign, baseline: BaselineDesign, start: np.ndarray, tol: float, max_iter: int,
                      floor: np.ndarray) -> tuple[MLOutcome, np.ndarray]:
    """The likelihood with the baseline ``μ_ik`` of each part: per target dimension, projected Newton on ``[X, B]``
    (B: the parts' indicators, exposures the parts' times; the intercept column held at 0 by a zero exposure) from
    the constant ``start`` (``(d, q+1)``), every part at least ``floor[i]`` — a part no fit window reaches (all of it
    within s of a window's start) has no likelihood and is set to the floor. Returns the outcome (``theta``
    ``(d, q+K)``: kernels, then the parts) and the profile ``(d, K)``."""
    q, K = design.exposure.size, baseline.bins.bins
    exposure = np.concatenate([design.exposure, baseline.exposure, [0.0]])
    theta, total, iterations, changes, converged = np.zeros((start.shape[0], q + K)), 0.0, [], [], True
    for i, X in enumerate(design.matrices):
        wide = with_baseline_columns(X, baseline.parts[i], K)
        first = np.concatenate([start[i, :-1], np.full(K, start[i, -1]), [0.0]])
        lower = np.concatenate([np.zeros(q), np.full(K, floor[i]), [0.0]])
        theta_i, count, change, done = newton_dimension(wide, exposure, first, tol, max_iter, lower)
        theta[i] = theta_i[:-1]
        theta[i, q:] = np.where(baseline.exposure > 0, theta[i, q:], floor[i])  # unseen parts: the floor
        total += float(np.sum(np.log(wide @ theta[i])) - theta[i] @ exposure[:-1])
        iterations.append(count)
        changes.append(change)
        converged &= done
    outcome = MLOutcome(theta, total, max(iterations), max(changes), bool(converged))
    return outcome, theta[:, q:]


# --- the family -------------------------------------------------------------------------------------------------

SETTINGS = (
    Setting("mle_tol", "tolerance", "float", 1e-8,
            "Newton stops when the largest change of a parameter is below this times the largest parameter",
            minimum=0.0, minimum_exclusive=True),
    Setting("mle_max_iter", "largest number of iterations", "int", 500,
            "Newton stops after this many iterations even if not converged (the result says so)",
            minimum=1, step=100),
    BASELINE_FLOOR,
    BASELINE_PERIOD,
    BASELINE_BINS,
)

MLEOptions = options_class("MLEOptions", SETTINGS, "exact event times (maximum likelihood)", __name__)


@dataclass(frozen=True)
class MLEStats(GridFreeStats):
    """ctls's statistics of the events (the least-squares start, the exposures) and the :class:`PairDesign`: a kind
    of their own (``"pairs"``), so a sweep or a comparison never hands ctls's statistics (without the design) to
    this family."""

    kind: ClassVar[str] = "pairs"
    pair_design: PairDesign | None = None
    baseline_design: BaselineDesign | None = None


class MLE(Family):
    """Non-private maximum likelihood with step kernels on exact event times: the reference on exact times."""

    name = "mle"
    label = "exact event times (maximum likelihood)"
    summary = ("non-private: the baselines and step kernels (width Δ, over pΔ) under which the observed times are "
               "the most probable, by Newton's method from the least-squares solution; positive baselines and "
               "non-negative kernels")
    settings = SETTINGS
    options_type = MLEOptions
    privacy = PrivacyTags(private=False, units=("event", "sequence"))
    inputs = InputTags(statistics=Statistics.PAIRS)
    cost = CostTags(kind="likelihood")
    audit_hints = AuditHints(noiseless_limit="maximum likelihood", noiseless_options=dict(baseline_floor=0.0))

    def prepare_stats(self, events, config):
        """ctls's statistics of the events kept under ``config.count_cap`` (all when None) and their pair design
        (history-only first s, exact exposures ``E_jb`` from ctls's intercept column)."""
        check_design_size(events.dim, config.lags)
        cap = config.count_cap
        check_count_cap(cap)
        w = config.bin_size
        pieces, counts, design = pieces_and_design(events, w, config.lags, cap)
        grid = stats_from_pieces(pieces, w)
        bins = baseline_bins_of(config)
        periodic = None if bins.constant else baseline_design(events, w, config.lags, cap, bins)
        stats = MLEStats(**{f.name: getattr(grid, f.name) for f in fields(grid)}, pair_design=design,
                         baseline_design=periodic)
        info = DataInfo(
            n_bins=sum(bins_in_window(s.end_time, w) for s in events.sequences), n_events=events.n_events,
            binned_events=counts["kept"], dropped_events=0, clipped_events=counts["clipped"],
            skipped_sequences=pieces.skipped_sequences, window_stated=bool(events.window_stated),
            **domain_info(events), count_cap=cap, auto_count_cap=None)
        return stats, info

    def prepare_partitioned(self, paths, config, window, executor=None):
        """Refused: the likelihood's statistics are one row per event (:func:`pair_design`: its earlier events
        up to s before it, across a partition's edge too), not sums a reduce adds, and every Newton iteration
        reads them all; a store would have to travel whole to one process, which is what one file does."""
        raise ConfigError(f"{self.label} is not available on a partitioned store: its statistics are one row per "
                          "event (the events up to s before it, across partition edges too), not sums the "
                          "partitions can add; fit it on one file")

    def run(self, stats, config, report, rng, transcript=None):
        if not isinstance(stats, MLEStats) or stats.pair_design is None:
            raise ConfigError(f"{self.label} fits exact event times: compute its statistics with its prepare_stats")
        w = stats.width
        design = stats.pair_design
        theta_ls = solve_cls(stats)[0] / w
        lower = np.zeros((design.targets.size, design.exposure.size + 1))
        lower[:, -1] = config.baseline_floor * np.maximum(design.targets, 1) / max(design.baseline_time, 1e-300)
        start = positive_start(theta_ls, design, w * stats.lags)
        periodic = stats.baseline_design
        if (periodic is None) != baseline_bins_of(config).constant or (
                periodic is not None and periodic.bins != baseline_bins_of(config)):
            raise ConfigError(f"{self.label}: these statistics were computed for another baseline (its period and "
                              "parts): compute them with prepare_stats on this config")
        extra = {}
        if periodic is None:
            outcome = maximise_likelihood(design, start, config.mle_tol, config.mle_max_iter, lower)
            U = w * outcome.theta
        else:
            outcome, profile = maximise_periodic(design, periodic, start, config.mle_tol, config.mle_max_iter,
                                                 lower[:, -1])
            mean = profile @ periodic.exposure / max(float(periodic.exposure.sum()), 1e-300)
            U = w * np.column_stack([outcome.theta[:, :design.exposure.size], mean])
            extra = {**periodic.bins.to_dict(), "baseline_profile": profile.tolist(),
                     "baseline_note": "the baseline of each part; 'baseline' is their mean over the fit windows"}
        info = {"solver": "projected Newton", "start": "ctls least squares clipped to positive", **extra,
                "iterations": outcome.iterations, "relative_change": outcome.relative_change,
                "tolerance": float(config.mle_tol), "converged": outcome.converged,
                "log_likelihood": outcome.log_likelihood, "targets": int(design.targets.sum()),
                "cells": design.cells, "statistics": "exact event times",
                "baseline_floor_share": config.baseline_floor, "baseline_floor": lower[:, -1].tolist()}
        return U, [paper_loss(U, stats)], info
