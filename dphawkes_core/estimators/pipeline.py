"""The shared pipeline: the family's statistics, its calibration and its fit — every step asked of the family
(:mod:`~dphawkes_core.estimators.registry`), none chosen here by the method's name.

Every binned family sees the data only through :class:`~dphawkes_core.statistics.moments.SufficientStats`
(``A = ZZᵀ/N``, ``b = YZᵀ/N``); none ever builds Z.
"""

from __future__ import annotations

import time
from dataclasses import replace
from typing import TYPE_CHECKING

from dphawkes_core.errors import ConfigError
from dphawkes_core.estimators.config import FitConfig
from dphawkes_core.estimators.cost import CostEstimate, estimate_fit_cost
from dphawkes_core.estimators.result import FitResult
from dphawkes_core.privacy.noise import noise_source
from dphawkes_core.privacy.report import FormalStatus, PrivacyReport, formal_status
from dphawkes_core.privacy.sequence import cap_events
from dphawkes_core.statistics.binning import n_bins_for
from dphawkes_core.statistics.moments import SufficientStats

if TYPE_CHECKING:  # annotations only: the estimators must not pull in the CSV loader (pandas) at start-up
    from dphawkes_core.data.io import Events


def privacy_report(stats: SufficientStats, config: FitConfig) -> PrivacyReport:
    """Calibrate the noise of a private config: σ² (from ε, or as given) and ε under every calibration."""
    return config.family.privacy_report(stats, config)


def fit_private(stats: SufficientStats, config: FitConfig) -> FitResult:
    """A private family's fit with the noise calibrated by :func:`privacy_report`."""
    start = time.perf_counter()
    report = privacy_report(stats, config)
    result = run_private(stats, config, report)
    return replace(result, elapsed_s=time.perf_counter() - start)


def run_private(stats: SufficientStats, config: FitConfig, report: PrivacyReport | None,
                transcript: list | None = None) -> FitResult:
    """Run the family of ``config`` with the noise of an already computed ``report`` (``None`` for the
    non-private family).

    This is the whole mechanism after calibration (used as is by the privacy audit, which calibrates
    once and runs many seeds). An iterative family appends every noisy gradient it releases to
    ``transcript`` when given. The noise comes from :func:`~dphawkes_core.privacy.noise.noise_source`: numpy's
    ``default_rng(seed)`` for a seeded fit (as ever), the OS CSPRNG for a release — with the exact discrete
    Gaussian when ``report`` was calibrated for it (``report.discrete``), so the sampler is always the one the
    accounting assumed.
    """
    start = time.perf_counter()
    rng = noise_source(config.seed, discrete=bool(report is not None and report.discrete))
    U, history, info = config.family.run(stats, config, report, rng, transcript)
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
    """Run the estimator named in ``config`` on precomputed statistics (of the kind its family fits)."""
    if stats.kind != config.family.inputs.statistics:
        raise ConfigError(f"{config.family.label} fits {config.family.inputs.statistics} statistics, these are "
                          f"{stats.kind}: compute them with prepare_stats on its config")
    if stats.lags != config.lags:
        raise ConfigError(f"statistics were computed for p = {stats.lags}, config asks for {config.lags}")
    if not config.family.privacy.private:
        return run_private(stats, config, None)
    return fit_private(stats, config)


def fit_cls(stats: SufficientStats, bin_size: float) -> FitResult:
    """The non-private reference on ``stats``: CLS (Kirchner 2017), ``H = θ/Δ``."""
    return fit_stats(stats, FitConfig(method="cls", bin_size=bin_size, lags=stats.lags))


def release_status(config: FitConfig, data_info: dict, data_derived=(), released: bool = False) -> FormalStatus:
    """Whether a fit of ``config`` on data described by ``data_info`` (from :func:`prepare_stats`) is a
    formal (ε, δ)-DP release: :func:`~dphawkes_core.privacy.report.formal_status` from the calibration, the
    seed, the noise (σ² = 0 is none), the declared domain (window, dimensions and sequences stated, not read
    from the data), whether a privacy session released it (``released``: only :mod:`~dphawkes_core.release.session`
    passes True) and the settings the caller took from the data (``B``, ``r``, ``C``, ``T``, ``ridge``)."""
    calibration = config.calibration if config.family.privacy.private else None
    undeclared = tuple(name for name, key in (("d", "dimensions_declared"), ("S", "sequences_declared"))
                       if not data_info.get(key, False))
    return formal_status(calibration, seed=config.seed, window_stated=bool(data_info.get("window_stated", False)),
                         data_derived=tuple(data_derived) + undeclared,
                         noise=config.sigma2 is None or config.sigma2 > 0, released=released)


def fit_cost(events: Events, config: FitConfig) -> CostEstimate:
    """Predicted memory and time of fitting ``config`` on ``events`` (before anything is binned):
    :func:`~dphawkes_core.estimators.cost.estimate_fit_cost` for this family's kind of work, with the number of
    sequences, which decides how DP-PGD/DP-CG's gradient product runs, and the family's further solves."""
    return estimate_fit_cost(n_bins_for(events, config.bin_size), events.dim, config.lags, config.family.cost.kind,
                             iterations(config), n_events=events.n_events, sequences=events.n_sequences,
                             extra_solves=config.family.extra_solves(config, events.dim))


def iterations(config: FitConfig) -> int:
    """K of an iterative family, 1 for a one-shot one."""
    return int(config.iters) if config.family.cost.iterative else 1


def is_sequence_unit(config: FitConfig) -> bool:
    """True when ``config`` is a private fit with one sequence as the privacy unit."""
    return config.privacy_unit == "sequence" and config.family.privacy.private


def prepare_stats(events: Events, config: FitConfig) -> tuple[SufficientStats, dict]:
    """The statistics the family of ``config`` fits, and a data-info dict (:meth:`Family.prepare_stats
    <dphawkes_core.estimators.family.Family.prepare_stats>`): for the binned families, ``n_bins``,
    ``n_events``, ``binned_events``, ``dropped_events``, ``clipped_events``, ``skipped_sequences``,
    ``window_stated``, ``count_cap`` and, with ``count_cap="auto"``, ``auto_count_cap``.

    An event-level config with an enforced cap M (``config.max_events``) computes them on the events each sequence
    keeps (its first M, :func:`~dphawkes_core.privacy.sequence.cap_events`); the data info then also holds
    ``max_events`` and ``events_over_cap``, and ``n_events`` counts the events before the cap."""
    if config.privacy_unit != "event" or config.max_events is None:
        return config.family.prepare_stats(events, config)
    capped, over_cap = cap_events(events, config.max_events)
    stats, info = config.family.prepare_stats(capped, config)
    return stats, info.updated(n_events=events.n_events, privacy_unit="event", max_events=config.max_events,
                               events_over_cap=over_cap)


def prepare_partitioned(paths, config: FitConfig, window, executor=None) -> tuple[SufficientStats, dict]:
    """The statistics of ``config`` reduced over Parquet partitions in ``window``
    (:func:`~dphawkes_core.statistics.partitioned.partitioned_window`), as :func:`prepare_stats` gives them for one
    file. An event-level cap M is refused: keeping each sequence's first M events needs all of its events at once."""
    if config.privacy_unit == "event" and config.max_events is not None:
        raise ConfigError("the cap M on events per sequence at the event unit needs each sequence's events in one "
                          "place: fit one file, or drop --max-events")
    return config.family.prepare_partitioned(paths, config, window, executor)


def fit(events: Events, config: FitConfig) -> tuple[FitResult, dict]:
    """Statistics and fit: the whole data path in one call.

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


def fit_partitions(paths, config: FitConfig, executor=None, start_time: float | None = None,
                   end_time: float | None = None, dimensions: int | tuple | None = None,
                   sequences: tuple | None = None) -> tuple[FitResult, dict]:
    """Fit ``config`` on Parquet partitions: the window (with the declared ``dimensions`` — a count or the names —
    and ``sequences``,
    :func:`~dphawkes_core.statistics.partitioned.partitioned_window`) and the statistics (map steps over ``executor``),
    then the estimator on the assembled statistics (in this process).

    Returns
    -------
    result : FitResult
    data_info : dict
        As from :func:`prepare_partitioned`.
    """
    from dphawkes_core.statistics.partitioned import partitioned_window  # here: a fit of one file needs none

    start = time.perf_counter()
    window = partitioned_window(paths, executor, start_time, end_time, dimensions, sequences)
    stats, info = prepare_partitioned(paths, config, window, executor)
    result = fit_stats(stats, config)
    return replace(result, elapsed_s=time.perf_counter() - start), info
