"""The shared pipeline: bin, compute statistics, calibrate the noise and run the chosen estimator.

Every estimator sees the data only through :class:`~dphawkes_core.stats.SufficientStats`
(``A = ZZᵀ/N``, ``b = YZᵀ/N``); none ever builds Z.
"""

from __future__ import annotations

import time
from dataclasses import replace
from typing import TYPE_CHECKING

import numpy as np

from ..binning import BinnedCounts, SparseCounts, bin_sparse, n_bins_for
from ..count_cap import AUTO, AutoCap, cap_rng, dp_count_cap
from ..errors import ConfigError
from ..resources import CostEstimate, estimate_fit_cost
from ..privacy import (FormalStatus, PrivacyReport, calibrate, calibrate_single_sensitivity, constraint_fro_radius,
                       data_R, formal_status, pgd_clip_sensitivity, ssp_lagged_sensitivity,
                       ssp_sensitivity)
from ..sequence_privacy import prepare_sequence_stats, sequence_privacy_report
from ..stats import MomentPieces, SufficientStats, assemble_stats, check_design_size, moment_pieces
from .clipped import BinnedStats, run_pgd_clip_config
from .config import FORMAL_ONLY_METHODS, FitConfig, FitResult
from .gradient import hessian_info, run_dp_cg, run_dp_pgd, theorem_step_scale
from .least_squares import fit_cls, paper_loss
from .ssp import run_ssp

if TYPE_CHECKING:  # annotations only: the estimators must not pull in the CSV loader (pandas) at start-up
    from ..events import Events


def privacy_report(stats: SufficientStats, config: FitConfig) -> PrivacyReport:
    """Calibrate the noise of a private config: σ² (from ε, or as given) and ε under every calibration."""
    if sequence_unit(config):
        return sequence_privacy_report(stats, config)
    if config.method in FORMAL_ONLY_METHODS:
        if config.method == "ssp":
            auto = config.count_cap == AUTO
            if config.count_cap is None or stats.count_cap != config.count_cap and not (auto and stats.count_cap):
                raise ConfigError("DP-SSP needs a public count cap C and statistics clipped at it")
            sensitivity = ssp_lagged_sensitivity if config.ssp_release == "lagged" else ssp_sensitivity
            sens, releases = sensitivity(stats.dim, stats.lags, stats.n_rows, stats.count_cap), 1
        else:
            sens, releases = pgd_clip_sensitivity(stats.lags, stats.n_rows, config.clip), config.iters
        return calibrate_single_sensitivity(
            config.method, sens, releases, config.calibration, config.dp_delta,
            epsilon=None if config.sigma2 is not None else config.epsilon, sigma2=config.sigma2, R=data_R(stats),
            auto_cap=(config.count_cap_share, stats.count_cap) if config.count_cap == AUTO else None)
    return calibrate(
        stats, config.method, config.bin_size, config.bound, config.radius, config.iters,
        config.calibration, config.dp_delta, epsilon=None if config.sigma2 is not None else config.epsilon,
        sigma2=config.sigma2, count_cap=config.count_cap,
    )


def fit_private(stats: SufficientStats, config: FitConfig) -> FitResult:
    """DP-PGD, DP-CG, DP-SSP or clipped-gradient DP-PGD with noise calibrated by :func:`privacy_report`."""
    start = time.perf_counter()
    report = privacy_report(stats, config)
    result = run_private(stats, config, report)
    return replace(result, elapsed_s=time.perf_counter() - start)


def run_private(stats: SufficientStats, config: FitConfig, report: PrivacyReport,
                transcript: list | None = None) -> FitResult:
    """Run the private estimator of ``config`` with the noise of an already computed ``report``.

    This is the whole mechanism after calibration (used as is by the privacy audit, which calibrates
    once and runs many seeds). For DP-PGD and DP-CG every noisy gradient released is appended to
    ``transcript`` when given.
    """
    start = time.perf_counter()
    rng = np.random.default_rng(config.seed)
    if config.method == "ssp":
        U, info = run_ssp(stats, report.sigma2, config.ridge, config.stabiliser, rng, ssp_release(config),
                          config.ssp_nonnegative, config.ssp_smoothing)
        history = [paper_loss(U, stats)]
    elif config.method == "pgd-clip":
        U, history, info = run_pgd_clip_config(stats, config, report, rng)
    elif config.method == "pgd":
        beta = constraint_fro_radius(config.method, config.bin_size, config.bound, config.radius)
        k = np.arange(1, config.iters + 1)
        if config.step == "constant":
            steps = np.full(config.iters, float(config.step_size))
        else:
            steps = theorem_step_scale(stats, config, report) / np.sqrt(k)
        U, history = run_dp_pgd(stats, beta, config.iters, report.sigma2, steps, rng, exact=report.formal,
                                transcript=transcript)
        info = {"step_rule": config.step, "first_step": float(steps[0]), "constraint_fro": beta}
    else:
        U, history = run_dp_cg(stats, config.radius, config.iters, report.sigma2, config.fw_step, rng,
                               exact=report.formal, transcript=transcript)
        info = {"step_rule": config.fw_step, "constraint_nuclear": config.radius}
    if config.method in ("pgd", "cg"):  # float64 on the formal path: rounding is not in the sensitivity
        info.update(hessian_info(stats, exact=report.formal))
    return FitResult(
        method=config.method,
        H=U / config.bin_size,
        bin_size=config.bin_size,
        lags=stats.lags,
        elapsed_s=time.perf_counter() - start,
        loss_history=tuple(history),
        privacy=report,
        info=info,
    )


def fit_stats(stats: SufficientStats, config: FitConfig) -> FitResult:
    """Run the estimator named in ``config`` on precomputed statistics."""
    if stats.lags != config.lags:
        raise ConfigError(f"statistics were computed for p = {stats.lags}, config asks for {config.lags}")
    if config.method == "cls":
        return fit_cls(stats, config.bin_size)
    return fit_private(stats, config)


def release_status(config: FitConfig, data_info: dict, data_derived=()) -> FormalStatus:
    """Whether a fit of ``config`` on data described by ``data_info`` (from :func:`prepare_stats`) is a
    formal (ε, δ)-DP release: :func:`~dphawkes_core.privacy.formal_status` from the calibration, the
    seed, the window and the settings the caller took from the data (``B``, ``r``, ``C``, ``T``, ``ridge``)."""
    calibration = None if config.method == "cls" else config.calibration
    return formal_status(calibration, seed=config.seed, window_stated=bool(data_info.get("window_stated", False)),
                         data_derived=data_derived)


def fit_cost(events: Events, config: FitConfig) -> CostEstimate:
    """Predicted memory and time of fitting ``config`` on ``events`` (before anything is binned):
    :func:`~dphawkes_core.resources.estimate_fit_cost` for this fit's shape, with the number of sequences,
    which decides how DP-PGD/DP-CG's gradient product runs (the sequence unit is DP-SSP only: no gradient)."""
    return estimate_fit_cost(n_bins_for(events, config.bin_size), events.dim, config.lags, config.method,
                             config.iters, n_events=events.n_events, sequences=events.n_sequences)


def sequence_unit(config: FitConfig) -> bool:
    """True when ``config`` is a private fit with one sequence as the privacy unit."""
    return config.privacy_unit == "sequence" and config.method != "cls"


def ssp_release(config: FitConfig) -> str:
    """What DP-SSP releases: ``config.ssp_release``, for either unit (the sequence unit clips each sequence's
    vector of that release: :func:`~dphawkes_core.sequence_privacy.clipped_sums`)."""
    return config.ssp_release


def prepare_stats(events: Events, config: FitConfig) -> tuple[SufficientStats, dict]:
    """Bin the events (with the config's count cap) and compute the sufficient statistics.

    Returns
    -------
    stats : BinnedStats
        The statistics, carrying the non-zero bins for per-bin methods.
    data_info : dict
        ``n_bins``, ``n_events`` (in the data), ``binned_events``, ``dropped_events``,
        ``clipped_events``, ``skipped_sequences``, ``window_stated`` (whether the user stated the
        observation window, which the formal guarantee needs: :func:`release_status`), ``count_cap``
        (the C the counts were clipped at) and, with ``count_cap="auto"``, ``auto_count_cap``
        (:meth:`~dphawkes_core.count_cap.AutoCap.to_dict`: the chosen C, the share of ε, the noise std).
        The sequence unit: :func:`~dphawkes_core.sequence_privacy.prepare_sequence_stats`.
    """
    if sequence_unit(config):
        return prepare_sequence_stats(events, config)
    check_design_size(events.dim, config.lags)
    binned, auto_cap = bin_with_cap(events, config)
    stats = binned_stats(binned, config.lags)
    info = {
        "n_bins": binned.n_bins,
        "n_events": events.n_events,
        "binned_events": binned.n_events,
        "dropped_events": binned.dropped_events,
        "clipped_events": binned.clipped_events,
        "skipped_sequences": stats.skipped_sequences,
        "window_stated": bool(events.window_stated),
        "count_cap": binned.count_cap,
    }
    if auto_cap is not None:
        info["auto_count_cap"] = auto_cap.to_dict()
    return stats, info


def bin_with_cap(events: Events, config: FitConfig) -> tuple[SparseCounts, AutoCap | None]:
    """Bin the events clipped at the config's cap C; with ``count_cap="auto"``, C is chosen first by
    :func:`~dphawkes_core.count_cap.dp_count_cap` on the unclipped counts (a share of ε, its own noise)."""
    if config.count_cap != AUTO:
        return bin_sparse(events, config.bin_size, config.count_cap), None
    auto = dp_count_cap(bin_sparse(events, config.bin_size), config.epsilon, config.dp_delta, cap_rng(config.seed),
                        config.count_cap_share, config.count_cap_max)
    return bin_sparse(events, config.bin_size, auto.count_cap), auto


def binned_stats(binned: SparseCounts | BinnedCounts, lags: int) -> BinnedStats:
    """:func:`~dphawkes_core.stats.sufficient_stats` plus the non-empty bins of ``binned`` (sparse, or dense
    for small data) and the moment pieces the statistics were assembled from."""
    counts = binned if isinstance(binned, SparseCounts) else SparseCounts.from_binned(binned)
    return pieces_stats(moment_pieces(counts, lags), counts)


def pieces_stats(pieces: MomentPieces, counts: SparseCounts | None = None) -> BinnedStats:
    """The statistics assembled from ``pieces``, carrying them (and the non-empty bins, when known: a
    partitioned fit has only the pieces, so pgd-clip cannot run on it)."""
    stats = assemble_stats(pieces)
    return BinnedStats(**{f: getattr(stats, f) for f in SufficientStats.__dataclass_fields__},
                       counts=counts, pieces=pieces)


def fit(events: Events, config: FitConfig) -> tuple[FitResult, dict]:
    """Bin, compute statistics and fit: the whole data path in one call.

    Returns
    -------
    result : FitResult
        ``elapsed_s`` includes binning and statistics.
    data_info : dict
        As returned by :func:`prepare_stats`.
    """
    start = time.perf_counter()
    stats, info = prepare_stats(events, config)
    result = fit_stats(stats, config)
    return replace(result, elapsed_s=time.perf_counter() - start), info
