"""The sequence unit applied to a fit: cap each sequence at M events, bin, clip its contribution at G (public,
or chosen privately) and calibrate the one Gaussian release of the clipped sums (√2·G/N).

The mechanism's pieces (contributions, clipping, the private choice of G, the conversion between units) are in
:mod:`~dphawkes_core.privacy.sequence`; this module runs them for a :class:`~dphawkes_core.estimators.FitConfig`
of a family that supports the unit (DP-SSP).
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from dphawkes_core.errors import ConfigError
from dphawkes_core.estimators.binned import domain_info
from dphawkes_core.privacy.calibration import calibrate_single_sensitivity, compose_sequence_clip, data_R
from dphawkes_core.privacy.count_cap import AUTO
from dphawkes_core.privacy.report import PrivacyReport
from dphawkes_core.privacy.sequence import (
    SEQUENCE_NOTE,
    SequenceStats,
    cap_events,
    clip_rng,
    clipped_sums,
    contribution_norms,
    dp_sequence_clip,
    max_events_clip,
    sequence_sensitivity,
)
from dphawkes_core.statistics.binning import bin_sparse
from dphawkes_core.statistics.info import DataInfo
from dphawkes_core.statistics.moments import SufficientStats

if TYPE_CHECKING:
    from dphawkes_core.data.io import Events


def check_auto_clip(config) -> None:
    """Refuse an automatic G (``sequence_clip="auto"``) without a target ε: its choice spends a share of ε, and
    its grid's top is the G that the public cap M on events per sequence guarantees."""
    if config.unit.name == "sequence" and config.sequence_clip == AUTO and (
            config.epsilon is None or config.sigma2 is not None):
        raise ConfigError(f"an automatic clip norm G is available for {config.family.label} with a target ε (it "
                          "spends a share of ε) and a public cap M on events per sequence (the top of its grid)")


def effective_clip(config) -> float:
    """G of a sequence-level config: the stated one, or :func:`max_events_clip` from the public M (and C);
    with ``"auto"``, that ``G_M`` is the top of the grid G is chosen on (:func:`dp_sequence_clip`)."""
    if config.sequence_clip is not None and config.sequence_clip != AUTO:
        return float(config.sequence_clip)
    return max_events_clip(config.lags, config.max_events, config.count_cap, config.ssp_release)


def sequence_privacy_report(stats: SufficientStats, config) -> PrivacyReport:
    """Noise of the sequence-level release: one Gaussian release of sensitivity :func:`sequence_sensitivity`.

    Raises
    ------
    ConfigError
        Unless ``stats`` are :class:`SequenceStats` clipped at the config's G (and C).
    """
    auto = getattr(stats, "auto_clip", None) if config.sequence_clip == AUTO else None
    clip = auto.sequence_clip if auto is not None else effective_clip(config)
    if (not isinstance(stats, SequenceStats) or stats.sequence_clip != clip or stats.count_cap != config.count_cap
            or stats.release != config.ssp_release
            or config.sequence_clip == AUTO and (auto is None or auto.share != config.sequence_clip_share)):
        raise ConfigError("the sequence unit needs statistics clipped per sequence at the config's G and C, for "
                          "its release: compute them with prepare_stats on the sequence-unit config")
    return calibrate_sequence_release(stats, config, clip, auto)


def calibrate_sequence_release(stats: SufficientStats, config, clip: float, auto=None,
                               note: str = SEQUENCE_NOTE, normaliser: float | None = None) -> PrivacyReport:
    """The report of one Gaussian release of per-sequence vectors clipped at ``clip`` (G), summed and divided by
    the public N (``normaliser``, by default ``stats.n_rows``): sensitivity √2·G/N (:func:`sequence_sensitivity`),
    composed with the private choice of G when ``auto``
    (:func:`~dphawkes_core.privacy.calibration.compose_sequence_clip`).
    The caller has checked that ``stats`` are such sums for ``config`` (:func:`sequence_privacy_report` for
    DP-SSP; the grid-free family for its own release, whose N is not a whole number)."""
    sensitivity = sequence_sensitivity(clip, stats.n_rows if normaliser is None else normaliser)
    if auto is None:
        report = calibrate_single_sensitivity(
            note, sensitivity, 1, config.calibration, config.dp_delta,
            **config.privacy_target, R=data_R(stats))
        return replace(report, note=note, privacy_unit="sequence")
    sigma, split = compose_sequence_clip(config.epsilon, config.dp_delta, sensitivity, auto.share, clip)
    report = calibrate_single_sensitivity(note, sensitivity, 1, config.calibration, config.dp_delta,
                                          sigma2=sigma**2, R=data_R(stats))
    return replace(report, epsilon=float(config.epsilon), budget_split=split, privacy_unit="sequence",
                   epsilon_by_calibration={**report.epsilon_by_calibration, "formal": split.epsilon_total},
                   note=f"{note}; G = {clip:.4g} chosen privately with {auto.share:.0%} of ε")


def prepare_sequence_stats(events: Events, config) -> tuple[SufficientStats, dict]:
    """Cap events per sequence at M, bin (counts clipped at C), clip every sequence's contribution at G.

    Returns
    -------
    stats : SufficientStats
        The clipped sums over the public N.
    data_info : dict
        As :func:`~dphawkes_core.estimators.prepare_stats`, plus ``privacy_unit``, ``sequence_clip`` (G),
        ``max_events`` (M), ``events_over_cap`` (dropped by M), ``clipped_sequences`` and ``sequences``.
    """
    capped, over_cap = cap_events(events, config.max_events)
    binned = bin_sparse(capped, config.bin_size, config.count_cap)
    auto = None
    if config.sequence_clip == AUTO:
        auto = dp_sequence_clip(contribution_norms(binned, config.lags, config.ssp_release), effective_clip(config),
                                config.epsilon, config.dp_delta, clip_rng(config.seed), config.sequence_clip_share)
    clip = auto.sequence_clip if auto is not None else effective_clip(config)
    sums = clipped_sums(binned, config.lags, clip, config.ssp_release)
    info = DataInfo(
        n_bins=binned.n_bins, n_events=events.n_events, binned_events=binned.n_events,
        dropped_events=binned.dropped_events, clipped_events=binned.clipped_events,
        skipped_sequences=sums.stats.skipped_sequences, window_stated=bool(events.window_stated),
        **domain_info(events), count_cap=binned.count_cap, privacy_unit="sequence", sequence_clip=clip,
        max_events=config.max_events, events_over_cap=over_cap, clipped_sequences=sums.clipped_sequences,
        sequences=sums.sequences, auto_sequence_clip=auto.to_dict() if auto is not None else None,
    )
    if auto is None:
        return sums.stats, info
    return replace(sums.stats, auto_clip=auto), info
