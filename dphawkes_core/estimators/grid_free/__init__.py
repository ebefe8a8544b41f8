"""Grid-free estimation: continuous-time least squares with step kernels, non-private and formal.

The claim. The kernel ``h_ij`` is a step function ``a_ijb`` on ``(bw, (b+1)w]``, b = 0 … B−1 (``w =
config.bin_size``, ``B = config.lags``, support ``s = Bw``), fitted on the exact event times by the continuous-time
least-squares contrast, ``θ_i = G⁻¹ c_i``, with the first s of every window as history only; G and c are exact
sums of pair pieces over the events (``docs/privacy.md``, "Grid-free estimation": the model, the boundary terms and
the pieces; ``docs/accuracy.md`` on why it does not converge to the binned estimators' INAR limit). The event unit's
release (one Gaussian release of those pieces, events capped at a public C per (dimension, w-bin), or at a C chosen
privately with a share of ε, ``count_cap="auto"``) is (ε, δ)-DP from public bounds alone; shrinking the noisy head
and tail pieces, the ridge, the roughness penalty and non-negativity after it are post-processing. The sequence
unit clips each sequence's release vector at G (:mod:`~dphawkes_core.estimators.grid_free.sequence`). With
``ctls_width_choice="validation"`` the width and support are chosen inside that one release
(:mod:`~dphawkes_core.estimators.grid_free.width_choice`): Δ and s are then the finest width and the longest
support, and the chosen estimate comes back on that fine grid.

Layout. θ's columns are lag-major as the binned families' (column ``b·d + j`` is the step b of source j,
the last one the baseline), the statistics are reported as ``A = (G/w)/N``, ``b = c/N`` with
``N = Σ (T − s)/w`` (so ``A[-1, -1] = 1``), and the fit returns ``U = wθ``: the pipeline's ``H = U/Δ`` is
then θ itself, ``FitResult.kernels[i, j, b]`` is the height ``a_ijb`` on ``(bw, (b+1)w]`` and
:func:`~dphawkes_core.evaluation.lag_average.fit_steps` reads it as exactly that step function, so
:func:`~dphawkes_core.evaluation.metrics.kernel_function_error` measures the grid-free error of the estimate.

The family is this module (its settings, options, fit and the family's methods) and its siblings:
:mod:`~dphawkes_core.estimators.grid_free.release` (the release layout, the scales, the sensitivity and its
adversarial neighbours), :mod:`~dphawkes_core.estimators.grid_free.sequence` (the sequence unit),
:mod:`~dphawkes_core.estimators.grid_free.partitioned` (its statistics over partitions),
:mod:`~dphawkes_core.estimators.grid_free.solve` (its post-processing) and
:mod:`~dphawkes_core.estimators.grid_free.width_choice` (w and s chosen inside the release); the statistics are
counted in :mod:`dphawkes_core.statistics.exact_times`.
"""

from __future__ import annotations

import math

import numpy as np

from dphawkes_core.errors import ConfigError
from dphawkes_core.estimators.binned import cap_noise, chosen_count_cap, domain_info
from dphawkes_core.estimators.family import AuditHints, CostTags, InputTags, NoisedQuery, PrivacyTags, Statistics
from dphawkes_core.estimators.grid_free.release import (
    Sensitivity,
    ctls_sensitivity,
    default_edge_share,
    part_scales,
    pieces_from_release,
    raw_release,
    shrink_edges,
    worst_case_events,
)
from dphawkes_core.estimators.grid_free.sequence import (
    SEQUENCE_NOTE,
    GridFreeSequenceStats,
    expected_sequence_clip,
    prepare_sequence_stats,
)
from dphawkes_core.estimators.grid_free.solve import solve_released
from dphawkes_core.estimators.grid_free.width_choice import (
    CHOICE_SHARE,
    CONTRAST,
    RISK,
    VALIDATION_SHARE,
    GridFreeShareStats,
    GridFreeSplitStats,
    candidate_grid,
    ctls_cap_rule,
    direct_query,
    fit_by_share,
    fit_by_validation,
    noisy_split_query,
    prepare_share_stats,
    prepare_split_stats,
    private_caps,
    share_queries,
    share_report,
    split_query,
    split_sensitivity,
    stated_caps,
)
from dphawkes_core.estimators.releases import SingleRelease
from dphawkes_core.estimators.sequence_unit import calibrate_sequence_release, check_auto_clip
from dphawkes_core.estimators.settings import BASELINE_FLOOR, Setting, options_class
from dphawkes_core.estimators.solvers import paper_loss
from dphawkes_core.privacy.count_cap import AUTO
from dphawkes_core.statistics.binning import bins_in_window
from dphawkes_core.statistics.exact_times import GridFreeStats, grid_free_pieces, stats_from_pieces
from dphawkes_core.statistics.info import DataInfo
from dphawkes_core.statistics.moments import check_design_size
from dphawkes_core.validation import check_count_cap

SMOOTHING = 15.0  # default weight of the roughness penalty, in units of r·ρσ√q (chosen on held-out simulations:
# docs/privacy.md, "Grid-free estimation")
GRAM_SCALE = 3.0  # default ρ: G's pieces get ρ times the pair counts' noise
NOTE = "formal (public C per dimension and w-bin, d, B, the windows; one Gaussian release of the pair statistics)"
STATED, VALIDATION, SHARE = "stated", "validation", "share"  # the choices of ctls_width_choice
CHOOSING = (VALIDATION, SHARE)  # the choices that choose w and s


# --- the family ---------------------------------------------------------------------------------------------

def released_pieces(stats: GridFreeStats, sigma: float, kappa: float, rho: float,
                    rng: np.random.Generator) -> np.ndarray:
    """The noisy raw release vector (one draw of ``len`` standard normals, times ``σN``)."""
    pieces = stats.grid_pieces
    clean = raw_release(pieces, kappa, rho)
    if sigma <= 0:
        return clean
    return clean + sigma * pieces.duration * rng.standard_normal(clean.size)


SETTINGS = (
    Setting("ctls_ridge", "ridge λ", "float", None, "λ added to the noisy A (Â + λI)", minimum=0.0, optional=True,
            none_means="the rule 1.5·√r·ρσ√(dB+1), r = ρσ√(dB+1) / the mean diagonal of the released A"),
    Setting("ctls_nonnegative", "kernels and baselines >= 0", "bool", True,
            "post-processing: constrain the estimate to be non-negative (no privacy cost)",
            cli_flag="--ctls-allow-negative", cli_negates=True),
    Setting("ctls_smoothing", "smoothing across steps", "float", SMOOTHING,
            "weight of the roughness penalty across the kernel steps, in units of r·ρσ√(dB+1) (r: the noise against "
            "the released A's mean diagonal; 0: none)", minimum=0.0, step=10.0),
    Setting("ctls_gram_scale", "noise of G relative to c", "float", GRAM_SCALE,
            "the pieces of G are released with this many times the pair counts' noise (G's noise reaches the "
            "estimate multiplied by the small coefficients)", minimum=0.0, minimum_exclusive=True, step=0.5),
    Setting("ctls_edge_share", "edge share of the sensitivity (%)", "float", None,
            "percent of the squared sensitivity given to the pieces within s of a window's ends (more: less noise "
            "on them, more on the rest)", minimum=0.0, maximum=100.0, minimum_exclusive=True, optional=True,
            none_means="from the windows: min(10, max(1, 20·f)) %, f = the time within s of an end", step=5.0),
    Setting("ctls_width_choice", "width w and support s", "choice", STATED,
            "As set: fit at Δ and s as given. By validation: choose them inside the release — Δ is then the finest "
            "width w0 and s the longest support s_max; one Gaussian release (same ε, δ) of a training block and a "
            "validation block of every window at (w0, s_max); every w = k·w0 (k = 1, 2, 4, 8 dividing B) with "
            "s = ¼, ½ or all of s_max is fitted on the training block and scored on the validation block, and the "
            "best is fitted again on both: post-processing, no extra privacy cost. Measured at ε = 1, it beat a fixed "
            "width that knows the effect's length only at 10⁶ events, on two processes of three (with a fine grid); "
            "below, state Δ and s from what you know. With a share of the budget: the same choice made from that "
            "release at a share of the budget (the next option), each block fitted and scored on the other, then the "
            "chosen w and s released directly with the rest (one ledger entry, two Gaussian releases): measured at "
            "ε = 1 on two processes never used for tuning, 1.22 and 1.41 × the best of three fixed widths at 10⁴ "
            "events and 1.36 and 1.14 × at 10⁵ (worst on a delayed effect), against 1.44–1.89 × by validation",
            choices=(STATED, VALIDATION, SHARE),
            primary=True, added_later=True),
    Setting("ctls_validation_share", "validation share of each window (%)", "float", VALIDATION_SHARE,
            "with the width chosen by validation: the last share of every declared window (cut at a multiple of "
            "w0) is the validation block, the rest the training block", minimum=0.0, maximum=100.0,
            minimum_exclusive=True, step=5.0, added_later=True),
    Setting("ctls_choice_share", "share of the budget for the choice (%)", "float", CHOICE_SHARE,
            "with the width chosen by 'share': the percent of the releases' budget (of μ², the Gaussian releases' "
            "exact composition) the choice of w and s spends; the direct release at the chosen w and s gets the rest",
            minimum=0.0, maximum=100.0, minimum_exclusive=True, step=5.0, added_later=True),
    Setting("ctls_choice_score", "how the choice is scored", "choice", CONTRAST,
            "with the width chosen by 'share': by the validation contrast (how well each candidate predicts the other "
            "block; it finds a support shorter than stated) or by an estimate of each candidate's kernel error (its "
            "distance to the finest, longest candidate less that distance's noise, plus its own noise at the direct "
            "release, bootstrapped from the release: post-processing). Measured at ε = 1 on two processes never used "
            "for tuning, with a choice share of 20 %: 1.22 and 1.16 × the best of three fixed widths at 10⁵ events, "
            "1.10 and 1.04 × at 10⁴ (the contrast: 1.36 and 1.14, 1.22 and 1.41); use it where the support is stated "
            "from what is known, the contrast where it may be far too long",
            choices=(CONTRAST, RISK), added_later=True),
    BASELINE_FLOOR,
)


def _check_options(options) -> None:
    if options.ctls_edge_share is not None and options.ctls_edge_share >= 100:
        raise ConfigError("the edge share of the sensitivity must be below 100 %")
    if options.ctls_validation_share >= 100:
        raise ConfigError("the validation share of each window must be below 100 %")
    if options.ctls_choice_share >= 100:
        raise ConfigError("the choice's share of the budget must be below 100 %")


CTLSOptions = options_class("CTLSOptions", SETTINGS, "exact event times (continuous-time least squares)", __name__,
                            _check_options)


class CTLS(SingleRelease):
    """Continuous-time least squares with step kernels on exact event times: one Gaussian release of the pair
    statistics of events kept under a public C per (dimension, w-bin), then least squares as free
    post-processing. With σ² = 0 (and no ridge, smoothing or constraint) it is the exact non-private fit."""

    note = NOTE
    noiseless_without_cap = True  # the non-private fit (σ² = 0) of its own uncapped statistics
    name = "ctls"
    label = "exact event times (continuous-time least squares)"
    summary = ("step kernels of width Δ fitted to the times themselves, not to counts in bins (no binning bias): "
               "one noisy release of the pair statistics, formal from public bounds")
    settings = SETTINGS
    options_type = CTLSOptions
    privacy = PrivacyTags(calibrations=("formal",), units=("event", "sequence"), auto_count_cap=True)
    # its own statistics of exact times; neighbours built from events (worst_case_events)
    inputs = InputTags(statistics=Statistics.EVENTS)
    cost = CostTags(kind="pairs")  # its statistics walk the pairs of events at most s apart, with no FFT shortcut
    audit_hints = AuditHints(
        noiseless_limit="continuous least squares",
        noiseless_options=dict(ctls_ridge=0.0, ctls_smoothing=0.0, ctls_nonnegative=False),
        # 0.84 at d, B, C = 2, 3, 3 (the contract suite's grid); 0.95 at B >= 20 (docs/privacy.md)
        sensitivity_fraction=0.8,
        worst_case_lags=25,  # the worst-case audit's B: its adversarial events reach 0.95 of the bound (0.84 at B = 3)
    )

    def worst_case_events(self, config, dim: int):
        """Of the two kinds of :func:`worst_case_events` (for ``config``'s B, C, w), the pair whose release moves
        most under ``config``'s scales: the neighbours the contract suite and the tests measure."""
        return self.largest_move([worst_case_events(dim, config.lags, config.count_cap, config.bin_size, kind)
                                  for kind in ("insert", "swap")], config)

    def cap_rule(self, config):
        """:func:`~dphawkes_core.estimators.grid_free.width_choice.ctls_cap_rule` at (w, s)."""
        return ctls_cap_rule(config.bin_size, config.bin_size * config.lags)

    def check(self, config) -> None:
        super().check(config)
        check_auto_clip(config)
        if config.ctls_width_choice in CHOOSING:
            if config.unit.name == "sequence":
                raise ConfigError("choosing the width by validation is for the event unit: the sequence unit's "
                                  "clipped sums have no training and validation blocks; use --ctls-width-choice stated")
            if config.ctls_width_choice == SHARE and config.sigma2 not in (None, 0.0):
                raise ConfigError("choosing the width with a share of the budget splits ε between two releases: "
                                  "give ε, not σ²")
            if len(candidate_grid(config.lags)) < 2:
                raise ConfigError(f"choosing the width by validation needs something to choose: B = {config.lags} "
                                  "fine steps give one candidate (no k = 2, 4, 8 divides it and ¼, ½, all of s_max "
                                  "are one support); give a larger support or a finer Δ")

    def extra_solves(self, config, dim: int) -> tuple[int, ...]:
        """With the width chosen by validation: one solve per candidate of the grid (``d·B' + 1`` parameters) and
        the chosen one's again on both blocks (costed as the largest)."""
        if config.ctls_width_choice not in CHOOSING:
            return ()
        sizes = tuple(dim * lags + 1 for _, lags in candidate_grid(config.lags))
        return sizes + (max(sizes),)

    def prepare_stats(self, events, config):
        """The grid-free pieces (:func:`grid_free_pieces`) of the events kept under C (``"auto"``: C chosen first,
        as DP-SSP chooses it, from the w-bin counts), assembled into :class:`GridFreeStats`; the data info counts
        the kept events as ``binned_events`` and the events the cap removed as ``clipped_events`` (none are
        dropped: the last partial bin is kept). The sequence unit: :func:`prepare_sequence_stats`. With
        ``ctls_width_choice="validation"``: C chosen the same way, then the two blocks' pieces at (Δ, s) =
        (w0, s_max) (:func:`~dphawkes_core.estimators.grid_free.width_choice.prepare_split_stats`)."""
        if config.unit.name == "sequence":
            return prepare_sequence_stats(events, config)
        check_design_size(events.dim, config.lags)
        if config.ctls_width_choice == SHARE:
            return self._prepare_share(events, config)
        cap, auto = chosen_count_cap(events, config)
        check_count_cap(cap)
        if config.ctls_width_choice == VALIDATION:
            stats, counts = prepare_split_stats(events, config.bin_size, config.lags, cap,
                                                config.ctls_validation_share / 100.0)
        else:
            pieces, counts = grid_free_pieces(events, config.bin_size, config.lags, cap)
            stats = stats_from_pieces(pieces, config.bin_size)
        info = DataInfo(
            n_bins=sum(bins_in_window(s.end_time, config.bin_size) for s in events.sequences),
            n_events=events.n_events, binned_events=counts["kept"], dropped_events=0,
            clipped_events=counts["clipped"],
            skipped_sequences=sum(float(s.end_time) / config.bin_size <= config.lags for s in events.sequences),
            window_stated=bool(events.window_stated), **domain_info(events), count_cap=cap,
            auto_count_cap=auto.to_dict() if auto is not None else None)
        return stats, info

    def _prepare_share(self, events, config):
        """The statistics of share then direct (:func:`prepare_share_stats`): the caps of every candidate width
        stated (k·C) or chosen privately in one release (:func:`private_caps`, the automatic cap's share and noise
        stream); the data info's C is the w0 cap."""
        factors = {k for k, _ in candidate_grid(config.lags)}
        if config.count_cap == AUTO:
            auto = private_caps(events, config.bin_size, factors, config.epsilon, config.dp_delta,
                                config.count_cap_share, config.count_cap_max, cap_noise(config),
                                config.bin_size * config.lags)
            caps = auto.caps
        else:
            if config.count_cap is not None:
                check_count_cap(config.count_cap)
            auto, caps = None, stated_caps(config.count_cap, factors)
        stats, counts = prepare_share_stats(events, config.bin_size, config.lags, caps,
                                            config.ctls_validation_share / 100.0, config.ctls_choice_share / 100.0)
        info = DataInfo(
            n_bins=sum(bins_in_window(s.end_time, config.bin_size) for s in events.sequences),
            n_events=events.n_events, binned_events=counts["kept"], dropped_events=0,
            clipped_events=counts["clipped"],
            skipped_sequences=sum(float(s.end_time) / config.bin_size <= config.lags for s in events.sequences),
            window_stated=bool(events.window_stated), **domain_info(events), count_cap=caps[1],
            auto_count_cap=auto.to_dict() if auto is not None else None)
        return stats, info

    def prepare_partitioned(self, paths, config, window, executor=None):
        """The statistics of :meth:`prepare_stats` reduced over Parquet partitions in ``window`` (map steps over
        ``executor``): :func:`~dphawkes_core.estimators.grid_free.partitioned.prepare_grid_free_partitioned`."""
        from dphawkes_core.estimators.grid_free.partitioned import prepare_grid_free_partitioned

        if config.ctls_width_choice in CHOOSING:
            raise ConfigError("choosing the width by validation cuts every window into two blocks in this process: "
                              "not for a partitioned store; fit one file, or use --ctls-width-choice stated")
        return prepare_grid_free_partitioned(paths, config, window, executor)

    def _stats(self, stats, config) -> GridFreeStats:
        if not isinstance(stats, GridFreeStats) or stats.grid_pieces is None:
            raise ConfigError(f"{self.label} fits exact event times: compute its statistics with its prepare_stats, "
                              "not from binned counts")
        if (isinstance(stats, GridFreeSplitStats) != (config.ctls_width_choice in CHOOSING)
                or isinstance(stats, GridFreeShareStats) != (config.ctls_width_choice == SHARE)
                or isinstance(stats, GridFreeSplitStats) and stats.share != config.ctls_validation_share / 100.0
                or isinstance(stats, GridFreeShareStats) and stats.choice_share != config.ctls_choice_share / 100.0):
            raise ConfigError(f"{self.label}: these statistics were computed for another choice of the width (stated "
                              "or by validation, and its share): compute them with prepare_stats on this config")
        return stats

    def sensitivity(self, stats: GridFreeStats, config) -> Sensitivity:
        """:func:`ctls_sensitivity` for the statistics' d, B and C and the config's scales (the edge share stated
        in percent, or :func:`default_edge_share` of the windows)."""
        share = (default_edge_share(stats.grid_pieces) if config.ctls_edge_share is None
                 else config.ctls_edge_share / 100.0)
        bound = split_sensitivity if isinstance(stats, GridFreeSplitStats) else ctls_sensitivity
        return bound(stats.dim, stats.lags, stats.event_cap, share, config.ctls_gram_scale)

    def release_stats(self, stats, config) -> GridFreeStats:
        return self._stats(stats, config)

    def release_cap(self, stats):
        if isinstance(stats, GridFreeSequenceStats):
            raise ConfigError(f"{self.label}: these statistics are clipped sums of the sequence unit; the event unit's "
                              "sensitivity does not hold for them")
        return stats.event_cap

    def release_sensitivity(self, stats, config) -> float:
        """:meth:`sensitivity`'s total in the units of A (over N)."""
        return self.sensitivity(stats, config).total / stats.grid_pieces.duration

    def noised_queries(self, stats, config, state=None):
        """The one release (:meth:`Family.noised_queries`); with the width chosen with a share of the budget, the
        choice's release and every candidate's direct release, each at its own bound (:func:`share_queries`)."""
        checked = self._stats(stats, config)
        if state is not None or not isinstance(checked, GridFreeShareStats):
            return super().noised_queries(stats, config, state)
        choice = self.query_vector(stats, config)
        return tuple(NoisedQuery(name, vector, sensitivity) for name, vector, sensitivity in
                     share_queries(checked, config, choice, self.privacy_report(stats, config).sensitivity))

    def privacy_report(self, stats, config):
        """The template's report (:class:`~dphawkes_core.estimators.releases.SingleRelease`); with the width chosen
        with a share of the budget, :func:`share_report` at the first release's sensitivity (the cap checked by the
        template as for every release)."""
        report = super().privacy_report(stats, config)
        stats = self.release_stats(stats, config)
        if isinstance(stats, GridFreeShareStats):
            return share_report(stats, config, report.sensitivity, self.note)
        return report

    def sequence_report(self, stats, config):
        """One Gaussian release of the clipped sums: sensitivity √2·G/N (N = Σ(T − s)/w, public), composed with
        the private choice of G (:func:`~dphawkes_core.estimators.sequence_unit.calibrate_sequence_release`)."""
        kappa, rho, clip, auto = (expected_sequence_clip(stats, config) if isinstance(stats, GridFreeSequenceStats)
                                  else (None,) * 4)
        if (not isinstance(stats, GridFreeSequenceStats) or stats.sequence_clip != clip
                or stats.event_cap != config.count_cap or (stats.kappa, stats.rho) != (kappa, rho)
                or config.sequence_clip == AUTO and (auto is None or auto.share != config.sequence_clip_share)):
            raise ConfigError("the sequence unit needs statistics clipped per sequence at the config's G and C, for "
                              "its release: compute them with prepare_stats on the sequence-unit config")
        return calibrate_sequence_release(stats, config, clip, auto, SEQUENCE_NOTE,
                                          normaliser=stats.grid_pieces.duration)

    def _scales(self, stats, config) -> tuple[float, float]:
        """(κ, ρ) of the release."""
        if isinstance(stats, GridFreeSequenceStats):
            return stats.kappa, stats.rho
        if stats.event_cap is None:
            return 1.0, float(config.ctls_gram_scale)
        sens = self.sensitivity(stats, config)
        return sens.kappa, sens.rho

    def query_vector(self, stats, config) -> np.ndarray:
        """The released numbers without noise in the units of A (divided by N), each part divided by its public
        scale (:func:`release_layout`, :func:`part_scales`); with the width chosen by validation, the two blocks'
        numbers (:func:`split_query`)."""
        stats = self._stats(stats, config)
        if isinstance(stats, GridFreeSplitStats):
            return split_query(stats, *self._scales(stats, config))
        return raw_release(stats.grid_pieces, *self._scales(stats, config)) / stats.grid_pieces.duration

    def noisy_output(self, stats, config, report, rng, state=None):
        """The noisy release vector, in the units of A (as :meth:`run` draws it). With the width chosen by a share of
        the budget, ``state = (k, B')``: the choice's release followed by the direct release of candidate (k, B')."""
        stats = self._stats(stats, config)
        if state is not None:
            if not isinstance(stats, GridFreeShareStats):
                raise ConfigError(f"{self.label} has no state to release at")
            return np.concatenate([self.noisy_output(stats, config, report, rng), self._direct_output(
                stats, config, report, rng, *(int(x) for x in state))])
        if isinstance(stats, GridFreeSplitStats):
            return noisy_split_query(stats, *self._scales(stats, config), math.sqrt(report.sigma2), rng)
        return released_pieces(stats, math.sqrt(report.sigma2), *self._scales(stats, config), rng) \
            / stats.grid_pieces.duration

    def _direct_output(self, stats: GridFreeShareStats, config, report, rng, factor: int, lags: int) -> np.ndarray:
        """The direct release of candidate (k, B') (:func:`direct_query`) with noise at the report's further
        multiplier."""
        clean, sensitivity = direct_query(stats, config, factor, lags)
        return clean + report.further[0][0] * sensitivity * rng.standard_normal(clean.size)

    def run(self, stats, config, report, rng, transcript=None):
        """The release and its post-processing; with the width chosen by validation, :func:`fit_by_validation`
        (the chosen estimate on the fine grid, the choice in ``info``)."""
        stats = self._stats(stats, config)
        sigma = math.sqrt(report.sigma2)
        kappa, rho = self._scales(stats, config)
        if isinstance(stats, GridFreeShareStats):
            U, info = fit_by_share(stats, config, report, kappa, rho, rng)
            info.update({"kappa": kappa, "gram_scale": rho, "statistics": "exact event times"})
            return U, [paper_loss(U, stats)], info
        if isinstance(stats, GridFreeSplitStats):
            U, info = fit_by_validation(stats, config, sigma, kappa, rho, rng)
            info.update({"kappa": kappa, "gram_scale": rho, "statistics": "exact event times"})
            return U, [paper_loss(U, stats)], info
        pieces = stats.grid_pieces
        if sigma > 0:
            raw_sigma = sigma * pieces.duration
            noisy = pieces_from_release(released_pieces(stats, sigma, kappa, rho, rng), pieces, kappa, rho)
            noisy_stats = stats_from_pieces(shrink_edges(noisy, raw_sigma, part_scales(kappa, rho)), stats.width)
        else:
            noisy_stats = stats
        U, info = solve_released(noisy_stats, rho * sigma, config)
        info.update({"kappa": kappa, "gram_scale": rho, "statistics": "exact event times"})
        return U, [paper_loss(U, stats)], info
