"""Statistics of binned counts — what every family but the grid-free one fits: bin the events (clipped at the
public count cap C, or at a C chosen privately), then the moment pieces and ``A = ZZᵀ/N``, ``b = YZᵀ/N``,
in process (:func:`prepare_binned`) or reduced over Parquet partitions (:func:`prepare_partitioned`).

A family reads its statistics through :meth:`~dphawkes_core.estimators.family.Family.prepare_stats`, whose
default is this module.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING

from dphawkes_core.errors import ConfigError
from dphawkes_core.privacy.count_cap import AUTO, AutoCap, cap_from_tails, cap_rng, dp_count_cap
from dphawkes_core.privacy.noise import NoiseSource, discrete_noise
from dphawkes_core.statistics.binning import BinnedCounts, SparseCounts, bin_sparse
from dphawkes_core.statistics.info import DataInfo, domain_info  # noqa: F401 - several families import it from here
from dphawkes_core.statistics.moments import (
    MomentPieces,
    SufficientStats,
    assemble_stats,
    check_design_size,
    moment_pieces,
    stats_fields,
)
from dphawkes_core.statistics.partitioned import Window, partitioned_tails, window_pieces
from dphawkes_core.statistics.per_bin import BinDesign, bin_design
from dphawkes_core.validation import check_bin_size, check_count_cap

if TYPE_CHECKING:  # annotations only: the estimators must not pull in the CSV loader (pandas) at start-up
    from dphawkes_core.data.io import Events


@dataclass(frozen=True)
class BinnedStats(SufficientStats):
    """Sufficient statistics that also carry the non-zero bins (needed by per-bin methods: ``pgd-clip``)
    and the moment pieces they were assembled from (needed by the ``lagged`` DP-SSP release)."""

    counts: SparseCounts | None = None
    pieces: MomentPieces | None = None  # what A, b are made of (the lagged DP-SSP release)

    @cached_property
    def design(self) -> BinDesign:
        """The informative per-bin rows (built on first use, then kept)."""
        if self.counts is None:
            raise ConfigError("pgd-clip needs the per-bin counts: compute the statistics with prepare_stats")
        return bin_design(self.counts, self.lags)


def prepare_binned(events: Events, config) -> tuple[SufficientStats, DataInfo]:
    """Bin the events (with the config's count cap) and compute the sufficient statistics (event unit).

    Returns
    -------
    stats : BinnedStats
        The statistics, carrying the non-zero bins for per-bin methods.
    data_info : DataInfo
        ``n_bins``, ``n_events`` (in the data), ``binned_events``, ``dropped_events``,
        ``clipped_events``, ``skipped_sequences``, ``window_stated`` (whether the user stated the
        observation window, which the formal guarantee needs: :func:`release_status`), ``count_cap``
        (the C the counts were clipped at) and, with ``count_cap="auto"``, ``auto_count_cap``
        (:meth:`~dphawkes_core.privacy.count_cap.AutoCap.to_dict`: the chosen C, the share of ε, the noise std).
    """
    check_design_size(events.dim, config.lags)
    binned, auto_cap = bin_with_cap(events, config)
    stats = binned_stats(binned, config.lags)
    info = DataInfo(
        n_bins=binned.n_bins, n_events=events.n_events, binned_events=binned.n_events,
        dropped_events=binned.dropped_events, clipped_events=binned.clipped_events,
        skipped_sequences=stats.skipped_sequences, window_stated=bool(events.window_stated),
        **domain_info(events), count_cap=binned.count_cap,
        auto_count_cap=auto_cap.to_dict() if auto_cap is not None else None,
    )
    return stats, info


def bin_with_cap(events: Events, config) -> tuple[SparseCounts, AutoCap | None]:
    """Bin the events clipped at the config's cap C; with ``count_cap="auto"``, C is chosen first by
    :func:`~dphawkes_core.privacy.count_cap.dp_count_cap` on the unclipped counts (a share of ε, its own noise)."""
    if config.count_cap != AUTO:
        return bin_sparse(events, config.bin_size, config.count_cap), None
    auto = dp_count_cap(bin_sparse(events, config.bin_size), config.epsilon, config.dp_delta, cap_noise(config),
                        config.count_cap_share, config.count_cap_max, config.family.cap_rule(config))
    return bin_sparse(events, config.bin_size, auto.count_cap), auto


def chosen_count_cap(events: Events, config) -> tuple[int | None, AutoCap | None]:
    """C of ``config`` on in-process events and, with ``count_cap="auto"``, the private choice that set it
    (:func:`~dphawkes_core.privacy.count_cap.dp_count_cap` on the unclipped w-bin counts, a share of ε, its own
    noise: :func:`cap_noise`); ``None`` for no cap. A stated C is checked."""
    if config.count_cap != AUTO:
        if config.count_cap is not None:
            check_count_cap(config.count_cap)
        return config.count_cap, None
    auto = dp_count_cap(bin_sparse(events, config.bin_size), config.epsilon, config.dp_delta, cap_noise(config),
                        config.count_cap_share, config.count_cap_max, config.family.cap_rule(config))
    return auto.count_cap, auto


def partitioned_count_cap(paths, window: Window, config, executor=None) -> tuple[int | None, AutoCap | None]:
    """:func:`chosen_count_cap` over Parquet partitions: an automatic C is chosen from the partitioned w-bin count
    tails (:func:`~dphawkes_core.statistics.partitioned.partitioned_tails`) with the in-process rule and noise
    stream, so the same events and seed give the same C (one pass over the partitions before the statistics')."""
    if config.count_cap != AUTO:
        if config.count_cap is not None:
            check_count_cap(config.count_cap)
        return config.count_cap, None
    max_cap = config.count_cap_max
    if int(max_cap) != max_cap or max_cap < 1:
        raise ConfigError(f"the largest automatic count cap must be a positive integer, got {max_cap!r}")
    tails = partitioned_tails(paths, window, config.bin_size, int(max_cap), executor)
    auto = cap_from_tails(tails, config.epsilon, config.dp_delta, cap_noise(config), config.count_cap_share,
                          config.family.cap_rule(config))
    return auto.count_cap, auto


def cap_noise(config) -> NoiseSource:
    """The automatic cap's noise: its own stream of a seeded fit, else the OS CSPRNG — the discrete Gaussian when the
    fit is drawn from it (:func:`~dphawkes_core.privacy.noise.discrete_noise`)."""
    return cap_rng(config.seed, discrete_noise(config))


def binned_stats(binned: SparseCounts | BinnedCounts, lags: int) -> BinnedStats:
    """:func:`~dphawkes_core.statistics.moments.sufficient_stats` plus the non-empty bins of ``binned`` (sparse, or
    dense for small data) and the moment pieces the statistics were assembled from."""
    counts = binned if isinstance(binned, SparseCounts) else SparseCounts.from_binned(binned)
    return pieces_stats(moment_pieces(counts, lags), counts)


def pieces_stats(pieces: MomentPieces, counts: SparseCounts | None = None) -> BinnedStats:
    """The statistics assembled from ``pieces``, carrying them (and the non-empty bins, when known: a
    partitioned fit has only the pieces, so pgd-clip cannot run on it)."""
    stats = assemble_stats(pieces)
    return BinnedStats(**{f: getattr(stats, f) for f in stats_fields(SufficientStats)},
                       counts=counts, pieces=pieces)


def prepare_partitioned(paths, config, window: Window, executor=None):
    """The statistics of ``config`` on Parquet partitions in ``window`` (:func:`partitioned_window`), as
    :func:`~dphawkes_core.estimators.prepare_stats` gives them for one file.

    With ``config.count_cap = "auto"``, C is chosen first from :func:`partitioned_tails` by
    :func:`~dphawkes_core.privacy.count_cap.cap_from_tails` — the same release (its own noise stream of a
    seeded fit, ``count_cap_share`` of ε) and rule as in process, so the same C on the same events and
    seed — and the pieces are then reduced clipped at it (a second pass over the partitions).

    Returns
    -------
    stats : BinnedStats
        Assembled from the reduced pieces (no per-bin rows).
    data_info : dict
        As from :func:`partitioned_pieces`, with ``count_cap`` and, for an automatic cap,
        ``auto_count_cap`` (:meth:`~dphawkes_core.privacy.count_cap.AutoCap.to_dict`).

    Raises
    ------
    ConfigError
        For a per-bin family (clipped DP-PGD): it needs every non-empty bin, which the reduce step does not gather.
    """
    if config.family.inputs.per_bin:
        raise ConfigError(f"{config.family.label} needs every non-empty bin, which a partitioned fit does not "
                          "gather; use a method on the summed statistics")
    check_bin_size(config.bin_size)
    check_design_size(window.dim, config.lags)
    count_cap, auto = partitioned_count_cap(paths, window, config, executor)
    check_count_cap(count_cap)
    pieces, info = window_pieces(paths, window, config.bin_size, config.lags, count_cap, executor)
    return pieces_stats(pieces), info.updated(count_cap=count_cap,
                                              auto_count_cap=auto.to_dict() if auto is not None else None)
