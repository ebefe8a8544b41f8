"""Exponential kernels on public decays: least squares on exact event times, non-private and formal.

The model. ``λ_i(t) = μ_i + Σ_j Σ_u a_iju g_ju(t)``, ``g_ju(t) = Σ_{s ∈ j, s < t} β_u e^{−β_u (t − s)}``: the
kernel ``h_ij(t) = Σ_u a_iju β_u e^{−β_u t}`` on the public decays β_1 … β_U (``--decays 0.7,1.5,3``; one
decay is the common case), so ``a_iju`` is the kernel's integral carried by decay u. The least-squares
contrast ``∫_0^T λ_i² dt − 2 Σ_{t ∈ i} λ_i(t)`` over each declared window (tick's ``HawkesSumExpKern`` and
``HawkesExpKern`` minimise the same, normalised differently) is minimised by ``θ_i G = c_i`` with
``φ(t) = (g_ju(t), 1)``, ``G = ∫ φφᵀ dt`` and ``c_i = Σ_{t ∈ i} φ(t−)``. No history before a window's start
(tick's convention). The statistics are computed by the exponential recursion
(:mod:`dphawkes_core.estimators.exp.statistics`).

Layout. θ's columns are decay-major (column ``u·d + j`` is decay u of source j, the last one the baseline);
the statistics are reported as ``A = G/N``, ``b = c/N`` with ``N = Σ T``. The estimate the pipeline carries
is the fitted kernels on the shared lag grid: ``H[i, k·d + j]`` is the mean of ``ĥ_ij`` over
``(kΔ, (k+1)Δ]`` (k < p = ``config.lags``), its baseline μ̂_i, so every consumer of a fit (the grid-free
error, the plots, the comparison) reads it as the step function closest to the fitted kernel; the decays'
coefficients themselves are in the result's info (``decays``, ``adjacency[i][j][u]``, ``baseline``).
Reporting on the grid is post-processing.

Privacy (event unit, formal; derivation in ``docs/privacy.md``, "Exponential kernels"). A cap C on the events per
(dimension, w-bin ``[kw, (k+1)w)``, ``w = config.bin_size``) — public, or chosen privately with a share of ε from the
w-bin counts (``count_cap="auto"``, as ctls and DP-SSP choose it, composed with the release) — is enforced on the data
by keeping the first C (:func:`~dphawkes_core.statistics.binning.keep_first`). One release, once: the Gram's upper
triangle and the integrals over the public scale ρ (``exp_gram_scale``), the values at the events and the totals, plus
Gaussian noise of one std, calibrated to :func:`~dphawkes_core.estimators.exp.release.exp_sensitivity`; the adversarial
neighbours that reach it are :func:`~dphawkes_core.estimators.exp.release.worst_case_events`. Free post-processing: a
ridge scaled by the released noise-to-signal ratio, and non-negativity (the shared solve of
:mod:`~dphawkes_core.estimators.solvers`). The windows, d, w, the decays, ρ and a public C are public.
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from dphawkes_core.errors import ConfigError
from dphawkes_core.estimators.binned import chosen_count_cap, domain_info
from dphawkes_core.estimators.exp.baseline import (
    event_parts,
    mean_baseline,
    part_floor,
    periodic_from_release,
    periodic_normal_equations,
    periodic_pieces,
    periodic_sensitivity,
    periodic_vector,
)
from dphawkes_core.estimators.exp.basis import (
    BASES,
    DECAYS_BASIS,
    basis_matrix,
    basis_sensitivity,
    from_basis,
    to_basis,
    worst_case_basis_events,
)
from dphawkes_core.estimators.exp.recost import (
    GRAM_END_VERSION,
    SHORT_BOUND_VERSION,
    gram_end_correction,
    short_bound_correction,
)
from dphawkes_core.estimators.exp.release import (
    DERIVED,
    SWAP,
    corner_bounds,
    exp_sensitivity,
    pieces_from_release,
    raw_release,
    worst_case_events,
)
from dphawkes_core.estimators.exp.sequence import (
    SEQUENCE_NOTE,
    ExpSequenceStats,
    expected_sequence_clip,
    prepare_exp_sequence_stats,
)
from dphawkes_core.estimators.exp.statistics import (
    ExpStats,
    event_features,
    exp_pieces,
    gram_from_values,
    stats_from_pieces,
)
from dphawkes_core.estimators.exp.totals import totals_weight
from dphawkes_core.estimators.family import AuditHints, InputTags, PrivacyTags, Statistics
from dphawkes_core.estimators.releases import SingleRelease
from dphawkes_core.estimators.sequence_unit import calibrate_sequence_release, check_auto_clip
from dphawkes_core.estimators.settings import (
    BASELINE_BINS,
    BASELINE_FLOOR,
    BASELINE_PERIOD,
    Setting,
    baseline_bins_of,
    options_class,
)
from dphawkes_core.estimators.solvers import (
    baseline_floor,
    newton_dimension,
    paper_loss,
    solve_cls,
    solve_nonnegative,
    stabilise,
    with_baseline_columns,
)
from dphawkes_core.privacy.count_cap import AUTO
from dphawkes_core.statistics.binning import bins_in_window
from dphawkes_core.statistics.info import DataInfo

LIKELIHOOD_START_FLOOR = 1e-3  # the likelihood's start lifts each parameter to at least this share of its scale
LIKELIHOOD_TOL, LIKELIHOOD_MAX_ITER = 1e-10, 500  # Newton stops when no parameter moves by 1e-10 of the largest
RIDGE_FACTOR = 5.0  # λ = c·√r·ρσ√q, the grid-free family's rule with c = 5 (chosen on exp-2d: docs/accuracy.md)
BASIS_RIDGE_SCALE = 2.0  # differences basis: λ = ā·(r/2)³, ā at r = 2 (chosen on tuning processes: docs/accuracy.md)
GRAM_SCALE = 3.0  # default ρ (3 against 1 and 10 on the tuning process exp-2d: docs/accuracy.md)
GRAM_RELEASED, GRAM_DERIVED = "released", "derived"  # the Gram released with the values (over ρ), or derived from them
DERIVED_RIDGE_NOISE = 3.0  # a derived Gram's ridge rule reads the noise as at ρ = 3 (chosen on tuning networks)
DERIVED_EDGE_LIMIT = 0.01  # a derived Gram's windows: beyond this edge share its result carries a note of its bias
DECAYS = (0.7, 1.5, 3.0)
NOTE = ("formal (public C per dimension and w-bin, d, the decays, the windows; one Gaussian release of the "
        "exponentially weighted statistics)")

SETTINGS = (
    Setting("decays", "decays β", "floats", DECAYS,
            "the public decays of the kernels h_ij(t) = Σ_u a_iju β_u exp(−β_u t) (one or more; the sensitivity "
            "depends on them)", minimum=0.0, minimum_exclusive=True, public_bound=True),
    Setting("exp_ridge", "ridge λ", "float", None, "λ added to the noisy A (Â + λI)", minimum=0.0, optional=True,
            none_means=("the rule 5·√r·ρσ√(dU+1), r = ρσ√(dU+1) / the mean diagonal ā of the released A (decays "
                        "basis); ā·(r/2)³ (differences basis)")),
    Setting("exp_nonnegative", "kernels and baselines >= 0", "bool", True,
            "post-processing: constrain the estimate to be non-negative (no privacy cost)",
            cli_flag="--exp-allow-negative", cli_negates=True),
    Setting("exp_likelihood", "maximum likelihood (non-private)", "bool", False,
            "maximise the likelihood (Newton from the least-squares fit) instead of least squares; it reads the "
            "events themselves, so only without noise (σ² = 0)"),
    Setting("exp_gram_scale", "noise of G relative to c", "float", GRAM_SCALE,
            "the Gram and the integrals are released with this many times the noise of the values at the events "
            "(with the Gram derived from the values, only a baseline that follows the clock has parts released so)",
            minimum=0.0, minimum_exclusive=True, step=0.5),
    Setting("exp_basis", "basis of the release", "choice", DECAYS_BASIS,
            "One feature per decay: release the statistics of each decay's exponential. Differences: release them "
            "for the differences of consecutive decays' exponentials (the same kernels, the same least squares, a "
            "better-conditioned release: less of the noise reaches the kernels; event unit only). Measured at ε = 1 "
            "on 5-d exponential networks: 0.70 of the decays basis' error at 10⁵ events (0.165 against 0.235), 0.86 "
            "at 10⁴, 0.84 at 10⁶; on the quake catalogues (about 5,000 events) not better: use it from 10⁵ events",
            choices=BASES, added_later=True),
    Setting("exp_gram", "the Gram", "choice", GRAM_RELEASED,
            "Released: the Gram and its integrals are released beside the values at the events (over ρ). Derived: "
            "release the values at the events and the counts alone, with the whole budget, and compute the Gram from "
            "them (exact for exponential features up to the events near a window's end: for one long window or a "
            "few, not many short ones, which the result notes; ρ then scales only the parts of a baseline that "
            "follows the clock; the counts are released multiplied by a tenth of the values' bound, so they carry "
            "little of the noise; event unit). Measured at ε = 1 on ten 5-d exponential networks in the differences "
            "basis: 0.130 against 0.166 with the Gram released at 10⁵ events, 0.023 against 0.030 at 10⁶, 0.425 "
            "against 0.512 at 10⁴",
            choices=(GRAM_RELEASED, GRAM_DERIVED), added_later=True),
    BASELINE_FLOOR,
    BASELINE_PERIOD,
    BASELINE_BINS,
)

ExpOptions = options_class("ExpOptions", SETTINGS, "exponential kernels", __name__)


def grid_kernels(theta: np.ndarray, decays, bin_size: float, lags: int) -> np.ndarray:
    """``U = Δ·H`` on the lag grid from θ (``(d, dU+1)``): ``U[i, k·d + j] = ∫_{kΔ}^{(k+1)Δ} ĥ_ij = Σ_u a_iju
    (e^{−β_u kΔ} − e^{−β_u (k+1)Δ})``, ``U[i, −1] = Δ μ̂_i``."""
    beta = np.asarray(decays, dtype=float)
    d = theta.shape[0]
    edges = np.exp(-np.outer(beta, np.arange(lags + 1) * bin_size))  # (U, p+1)
    mass = edges[:, :-1] - edges[:, 1:]  # (U, p)
    a = theta[:, :-1].reshape(d, beta.size, d)  # [i, u, j]
    U = np.empty((d, d * lags + 1))
    U[:, :-1] = np.einsum("iuj,uk->ikj", a, mass).reshape(d, lags * d)
    U[:, -1] = bin_size * theta[:, -1]
    return U


def adjacency(theta: np.ndarray, n_decays: int) -> np.ndarray:
    """``(d, d, U)``: ``a[i, j, u]``, the integral of ``ĥ_ij`` carried by decay u."""
    d = theta.shape[0]
    return theta[:, :-1].reshape(d, n_decays, d).transpose(0, 2, 1)


def derived_edge_share(pieces) -> float:
    """How much of a derived Gram's time scale the windows' ends are: ``windows / (β_min Σ T)``, from public numbers
    only (the declared windows and decays). The Gram the values imply integrates each window to ∞; the part beyond
    a window's end is ``x(T)x(T)ᵀ/(β_u + β_v)`` of its end state x(T), so its share of the Gram is about this
    (measured: 2·10⁻⁵ here against 3–8·10⁻⁵ on one window of 10⁵ events; 0.18 against 0.20 of the integrals, 0.08 of
    the Gram and 0.13 of the noiseless fit on the taxi data's 2,000 shifts)."""
    return pieces.sequences / (min(pieces.decays) * pieces.duration)


def derived_edge_note(pieces) -> str | None:
    """The note a derived Gram's result carries when :func:`derived_edge_share` passes :data:`DERIVED_EDGE_LIMIT`
    (the release stays private: only its accuracy suffers)."""
    share = derived_edge_share(pieces)
    if share <= DERIVED_EDGE_LIMIT:
        return None
    return (f"the derived Gram integrates each of the {pieces.sequences:,} windows past its end: an edge share of "
            f"{share:.1%} (windows / (β_min·Σ T), above {DERIVED_EDGE_LIMIT:.0%}) biases it (at 18% on 2,000 taxi "
            "shifts the noiseless fit moved by 13%); the Gram released beside the values has no such bias")


def release_scale(config) -> float:
    """The scale ρ the Gram is released over: ``exp_gram_scale``, or ∞ (:data:`~dphawkes_core.estimators.exp.release.
    DERIVED`: not released) when the Gram is derived from the values."""
    return DERIVED if config.exp_gram == GRAM_DERIVED else float(config.exp_gram_scale)


def release_totals_weight(config, dim: int, count_cap: int) -> float:
    """The weight the totals are released with: a derived Gram's
    (:func:`~dphawkes_core.estimators.exp.totals.totals_weight`), else 1 (and 1 without a cap: nothing is released)."""
    if config.exp_gram != GRAM_DERIVED or count_cap is None:
        return 1.0
    return totals_weight(dim, config.decays, config.bin_size, count_cap, config.exp_basis)


def basis_ridge(noise: float, A_hat: np.ndarray) -> float:
    """The differences basis' default ridge ``λ = ā·(r/2)³`` (ā the mean diagonal of Â's kernel block, ``r = noise/ā``):
    none while the noise is well below the signal, ā where it is twice it (post-processing of the release)."""
    diagonal = max(float(np.mean(np.diag(A_hat)[:-1])), 1e-12)
    return float(diagonal * (noise / diagonal / BASIS_RIDGE_SCALE) ** 3)


def exp_ridge(noise: float, A_hat: np.ndarray) -> float:
    """Public default ridge ``λ = RIDGE_FACTOR·√r·noise``, ``r = noise / (mean diagonal of Â's kernel block)``
    (post-processing of the release); 0 without noise."""
    diagonal = max(float(np.mean(np.diag(A_hat)[:-1])), 1e-12)
    return float(RIDGE_FACTOR * math.sqrt(noise / diagonal) * noise)


class Exp(SingleRelease):
    """Least squares with exponential kernels on public decays, on exact event times: one Gaussian release of
    the exponentially weighted statistics of events kept under a public C per (dimension, w-bin), then least
    squares as free post-processing. With σ² = 0 (no ridge, no constraint) it is the exact non-private fit."""

    note = NOTE
    noiseless_without_cap = True  # the non-private fit (σ² = 0) of its own uncapped statistics
    name = "exp"
    label = "exponential kernels (least squares on exact times)"
    summary = ("least squares with kernels made of exponential decays at public rates, on the exact event times: few "
                "parameters; one noisy release, formal from public bounds. Better where the kernels are smooth and "
                "decrease from t = 0: on a 5-d network of exponential kernels at ε = 1 its kernel error was 0.221 at "
                "10⁵ events against ctls's 0.332 and DP-SSP's 0.456, and 0.057 against 0.259 and 0.366 at 10⁶ (at "
                "10⁴ all three are poor: 0.738, 0.856, 0.760). Worse where an effect is delayed or flat (a box "
                "kernel): no sum of exponentials fits it, so its error stays near 0.7 however many events (0.713 at "
                "10⁵, where ctls reaches 0.110); use ctls there")
    settings = SETTINGS
    options_type = ExpOptions
    privacy = PrivacyTags(calibrations=("formal",), units=("event", "sequence"), auto_count_cap=True)
    inputs = InputTags(statistics=Statistics.EVENTS)
    audit_hints = AuditHints(
        noiseless_limit="exponential least squares", noiseless_options=dict(exp_ridge=0.0, exp_nonnegative=False),
        sensitivity_fraction=0.95,  # the adversarial events reach 0.99+ of the bound on the contract suite's grid
    )
    #: 3: the differences basis' swap with the Gram by its insertions, the pair counts by their oscillation (issue 42,
    #: round 5); 2: the swap bounded as its own case (issue 40); 1: insertions only, short by up to √(5/4)
    bound_version = 3

    def bound_correction(self, version, unit, result):
        """How far an older version's bound was short for a release at its settings: version 1 in the decays basis
        (insertions only: :func:`~dphawkes_core.estimators.exp.recost.short_bound_correction`), versions 1–2 in the
        differences basis with the Gram released (the Gram's swap at the window's end:
        :func:`~dphawkes_core.estimators.exp.recost.gram_end_correction`)."""
        info = (result or {}).get("info") or {}
        if version <= SHORT_BOUND_VERSION and info.get("basis", DECAYS_BASIS) == DECAYS_BASIS:
            return short_bound_correction(unit, result)
        return gram_end_correction(unit, result) if version <= GRAM_END_VERSION else None

    def check(self, config) -> None:
        super().check(config)
        check_auto_clip(config)
        if config.exp_basis != DECAYS_BASIS:
            basis_matrix(config.decays, config.exp_basis)  # distinct decays
            if config.unit.name == "sequence":
                raise ConfigError(f"the {config.exp_basis} basis is for the event unit: the sequence unit's bound "
                                  "(G from M) is derived for the decays basis; use --exp-basis decays")
        if config.exp_gram == GRAM_DERIVED and config.unit.name == "sequence":
            raise ConfigError("a derived Gram is for the event unit: the sequence unit clips each sequence's Gram and "
                              "values together; use --exp-gram released")
        if config.unit.name == "sequence" and not baseline_bins_of(config).constant:
            raise ConfigError(f"{self.label}: a baseline that follows the clock is for the event unit (the sequence "
                              "unit's clipped vectors have no parts); drop --baseline-bins")

    def prepare_stats(self, events, config):
        """:class:`~dphawkes_core.estimators.exp.statistics.ExpStats` of the events kept under C (``"auto"``: C
        chosen first, as ctls and DP-SSP choose it, from the w-bin counts); the data info counts the kept events as
        ``binned_events`` and those the cap removed as ``clipped_events``. The sequence unit:
        :func:`~dphawkes_core.estimators.exp.sequence.prepare_exp_sequence_stats`."""
        if config.unit.name == "sequence":
            return prepare_exp_sequence_stats(events, config)
        cap, auto = chosen_count_cap(events, config)
        pieces, counts = exp_pieces(events, config.decays, config.bin_size, cap)
        info = DataInfo(
            n_bins=sum(bins_in_window(s.end_time, config.bin_size) for s in events.sequences),
            n_events=events.n_events, binned_events=counts["kept"], dropped_events=0,
            clipped_events=counts["clipped"], skipped_sequences=0, window_stated=bool(events.window_stated),
            **domain_info(events), count_cap=cap, auto_count_cap=auto.to_dict() if auto is not None else None)
        stats = stats_from_pieces(pieces, config.bin_size, config.lags)
        bins = baseline_bins_of(config)
        if not bins.constant:
            stats = replace(stats, periodic=periodic_pieces(events, config.decays, config.bin_size, cap, bins))
        if config.exp_likelihood:
            stats = replace(stats, likelihood_design=event_features(events, config.decays, config.bin_size, cap),
                            likelihood_parts=None if bins.constant else
                            tuple(event_parts(events, config.bin_size, cap, bins)))
        return stats, info

    def prepare_partitioned(self, paths, config, window, executor=None):
        """The statistics of :meth:`prepare_stats` reduced over Parquet partitions in ``window`` (map steps over
        ``executor``): :func:`~dphawkes_core.estimators.exp.partitioned.prepare_exp_partitioned`."""
        from dphawkes_core.estimators.exp.partitioned import prepare_exp_partitioned

        if not baseline_bins_of(config).constant:
            raise ConfigError(f"{self.label}: a baseline that follows the clock is not available on a partitioned "
                              "store (its parts' statistics need each window's events in one place); fit one file")
        return prepare_exp_partitioned(paths, config, window, executor)

    def _stats(self, stats, config) -> ExpStats:
        if not isinstance(stats, ExpStats) or stats.exp_pieces is None:
            raise ConfigError(f"{self.label} fits its own statistics of exact event times: compute them with its "
                              "prepare_stats")
        if stats.exp_pieces.decays != tuple(config.decays):
            raise ConfigError(f"these statistics are for the decays {stats.exp_pieces.decays}, the config asks for "
                              f"{tuple(config.decays)}")
        bins = baseline_bins_of(config)
        if (stats.periodic is None) != bins.constant or stats.periodic is not None and stats.periodic.bins != bins:
            raise ConfigError(f"{self.label}: these statistics were computed for another baseline (its period and "
                              "parts): compute them with prepare_stats on this config")
        return stats

    def sensitivity(self, stats: ExpStats, config):
        """:func:`~dphawkes_core.estimators.exp.release.exp_sensitivity` for the statistics' d and C and the
        config's decays, w and ρ; in another basis
        :func:`~dphawkes_core.estimators.exp.basis.basis_sensitivity`."""
        scale, weight = release_scale(config), release_totals_weight(config, stats.dim, stats.event_cap)
        if config.exp_basis != DECAYS_BASIS:
            return basis_sensitivity(stats.dim, config.decays, config.bin_size, stats.event_cap, scale,
                                     config.exp_basis, weight)
        return exp_sensitivity(stats.dim, config.decays, config.bin_size, stats.event_cap, scale, weight)

    def release_stats(self, stats, config) -> ExpStats:
        """This family's statistics for the config's decays; maximum likelihood (non-private only) refused before
        any noise is drawn unless σ² = 0."""
        stats = self._stats(stats, config)
        if config.exp_likelihood and config.sigma2 != 0:  # refused before any noise is drawn
            raise ConfigError(f"{self.label}: maximum likelihood reads the events themselves, so it is non-private "
                              "only: give σ² = 0")
        return stats

    def release_cap(self, stats):
        if isinstance(stats, ExpSequenceStats):
            raise ConfigError(f"{self.label}: these statistics are clipped sums of the sequence unit; the event unit's "
                              "sensitivity does not hold for them")
        return stats.event_cap

    def release_sensitivity(self, stats, config) -> float:
        """:meth:`sensitivity`'s total in the units of A (over ``N = Σ T``); with a baseline that follows the clock,
        its parts' bound added in quadrature (:meth:`_periodic_sensitivity`: the two parts of the vector are bounded
        over every neighbour, so their squares add)."""
        return math.hypot(self.sensitivity(stats, config).total, self._periodic_sensitivity(stats, config)) \
            / stats.exp_pieces.duration

    def sequence_report(self, stats, config):
        """One Gaussian release of the clipped sums: sensitivity √2·G/N (N = Σ T, public), composed with the private
        choice of G (:func:`~dphawkes_core.estimators.sequence_unit.calibrate_sequence_release`)."""
        clip, auto = expected_sequence_clip(stats, config) if isinstance(stats, ExpSequenceStats) else (None, None)
        if (not isinstance(stats, ExpSequenceStats) or stats.sequence_clip != clip
                or stats.event_cap != config.count_cap or stats.rho != float(config.exp_gram_scale)
                or config.sequence_clip == AUTO and (auto is None or auto.share != config.sequence_clip_share)):
            raise ConfigError("the sequence unit needs statistics clipped per sequence at the config's G and C, for "
                              "its release: compute them with prepare_stats on the sequence-unit config")
        return calibrate_sequence_release(stats, config, clip, auto, SEQUENCE_NOTE,
                                          normaliser=stats.exp_pieces.duration)

    def _periodic_sensitivity(self, stats: ExpStats, config) -> float:
        """The bound of the baseline parts' numbers the release appends (0 for a constant baseline):
        :func:`~dphawkes_core.estimators.exp.baseline.periodic_sensitivity`."""
        if stats.periodic is None:
            return 0.0
        return periodic_sensitivity(config.decays, config.bin_size, float(config.exp_gram_scale))

    def _clean(self, stats: ExpStats, config) -> np.ndarray:
        """The release vector without noise, in the pieces' units: the family's numbers in the config's basis
        (:func:`~dphawkes_core.estimators.exp.basis.to_basis`; without the Gram when it is derived), then a
        periodic baseline's (:func:`~dphawkes_core.estimators.exp.baseline.periodic_vector`, its Gram parts over ρ
        either way)."""
        rho, weight = release_scale(config), release_totals_weight(config, stats.dim, stats.event_cap)
        clean = raw_release(to_basis(stats.exp_pieces, config.exp_basis), rho, weight)
        if stats.periodic is None:
            return clean
        return np.concatenate([clean, periodic_vector(stats.periodic, float(config.exp_gram_scale))])

    def query_vector(self, stats, config) -> np.ndarray:
        """The released numbers without noise, in the units of A (divided by ``N = Σ T``); with a baseline that
        follows the clock, its parts' numbers after the family's."""
        stats = self._stats(stats, config)
        return self._clean(stats, config) / stats.exp_pieces.duration

    def _noisy(self, stats: ExpStats, config, sigma: float, rng) -> np.ndarray:
        clean = self._clean(stats, config)
        if sigma <= 0:
            return clean
        return clean + sigma * stats.exp_pieces.duration * rng.standard_normal(clean.size)

    def noisy_output(self, stats, config, report, rng, state=None):
        """The noisy release vector, in the units of A (as :meth:`run` draws it)."""
        if state is not None:
            raise ConfigError(f"{self.label} has no state to release at")
        stats = self._stats(stats, config)
        return self._noisy(stats, config, math.sqrt(report.sigma2), rng) / stats.exp_pieces.duration

    def worst_case_events(self, config, dim: int):
        """Of the neighbours of :func:`~dphawkes_core.estimators.exp.release.worst_case_events` at the largest
        insertion corner and at the swap (for ``config``'s decays, w, C and ρ), the pair whose release moves most:
        the tests' and the audit's worst case (the neighbour search, ``check_family``, does not use it); in another
        basis :func:`~dphawkes_core.estimators.exp.basis.worst_case_basis_events`."""
        weight = release_totals_weight(config, dim, config.count_cap)
        if config.exp_basis != DECAYS_BASIS:
            return worst_case_basis_events(dim, config.decays, config.bin_size, config.count_cap,
                                           release_scale(config), config.exp_basis, weight)
        corners = [((end, after), corner_bounds(dim, config.decays, config.bin_size, config.count_cap, end, after,
                                                weight)) for end in (0, 1) for after in (True, False)]
        rho = release_scale(config)
        insertion = max(corners, key=lambda c: c[1]["gram"] / rho**2 + c[1]["rest"])[0]
        return self.largest_move([worst_case_events(dim, config.decays, config.bin_size, config.count_cap, corner)
                                  for corner in (insertion, SWAP)], config)

    def run(self, stats, config, report, rng, transcript=None):
        stats = self._stats(stats, config)
        if config.exp_likelihood:
            return self._likelihood_fit(stats, config)
        sigma = math.sqrt(report.sigma2) if report is not None else 0.0
        rho, derived = release_scale(config), config.exp_gram == GRAM_DERIVED
        weight = release_totals_weight(config, stats.dim, stats.event_cap)
        if sigma > 0:
            template = to_basis(stats.exp_pieces, config.exp_basis)
            vector = self._noisy(stats, config, sigma, rng)
            size = raw_release(template, rho).size
            noisy = from_basis(pieces_from_release(vector[:size], template, rho, weight), config.exp_basis)
            periodic = None if stats.periodic is None else periodic_from_release(vector[size:], stats.periodic,
                                                                                 float(config.exp_gram_scale))
            stats = replace(stats_from_pieces(gram_from_values(noisy) if derived else noisy, stats.width, stats.lags),
                            periodic=periodic)
        noise = (DERIVED_RIDGE_NOISE if derived else rho) * sigma * math.sqrt(stats.n_params)
        rule = exp_ridge if config.exp_basis == DECAYS_BASIS else basis_ridge
        lam = (rule(noise, stats.A) if noise > 0 else 0.0) if config.exp_ridge is None else float(config.exp_ridge)
        share = config.baseline_floor if config.exp_nonnegative else 0.0
        theta, info, extra = self._solve(stats, config, lam, share)
        decays = tuple(config.decays)
        if derived:
            info["totals_weight"] = weight
        if derived and sigma > 0:
            info["edge_share"] = derived_edge_share(stats.exp_pieces)
            if note := derived_edge_note(stats.exp_pieces):
                info["gram_note"] = note
        info.update({"ridge": lam, "nonnegative": config.exp_nonnegative, "gram_scale": None if derived else rho,
                     "gram": config.exp_gram, "decays": list(decays), "basis": config.exp_basis,
                     "baseline_floor_share": share,
                     "adjacency": adjacency(theta, len(decays)).tolist(), "baseline": theta[:, -1].tolist(),
                     "statistics": "exact event times (exponential kernels)", **extra})
        return grid_kernels(theta, decays, config.bin_size, stats.lags), [paper_loss(theta, stats)], info

    def _solve(self, stats: ExpStats, config, lam: float, share: float) -> tuple[np.ndarray, dict, dict]:
        """The least squares of (released) statistics: ridge λ, non-negative (each baseline at least its floor) unless
        allowed. Returns θ (``(d, dU+1)``, the baseline's mean last), the solver's info and the baseline's (its floor;
        with parts, the profile)."""
        if stats.periodic is None:
            A, b, duration = stats.A, stats.b, stats.exp_pieces.duration
            lower = baseline_floor(b, A, duration, share)
        else:
            A, b = periodic_normal_equations(stats.exp_pieces.gram, stats.exp_pieces.pairs, stats.periodic,
                                             stats.exp_pieces.duration)
            lower = np.zeros_like(b)
            lower[:, stats.exp_pieces.gram.shape[0]:] = part_floor(stats.periodic, share)[:, None]
        A_tilde = stabilise(A, lam, "ridge")
        if config.exp_nonnegative:
            theta, info = solve_nonnegative(A_tilde, b, lower), {"solver": "nnls"}
        else:
            theta, info = solve_cls(replace(stats, A=A_tilde, b=b))
        if stats.periodic is None:
            return theta, info, {"baseline_floor": lower[:, -1].tolist()}
        return self._with_mean(theta, stats.periodic), info, self._profile_info(theta, stats.periodic, lower)

    @staticmethod
    def _with_mean(theta: np.ndarray, periodic) -> np.ndarray:
        """θ with the kernels and the parts (``(d, q+K)``) as ``(d, q+1)``, the baseline's mean over the windows
        last."""
        q = theta.shape[1] - periodic.exposure.size
        return np.column_stack([theta[:, :q], mean_baseline(theta[:, q:], periodic)])

    @staticmethod
    def _profile_info(theta: np.ndarray, periodic, lower: np.ndarray) -> dict:
        """The baseline's parts for the result's info (what the score and the app's plot read)."""
        q = theta.shape[1] - periodic.exposure.size
        return {**periodic.bins.to_dict(), "baseline_profile": theta[:, q:].tolist(),
                "baseline_floor": lower[:, q].tolist(),
                "baseline_note": "the baseline of each part; 'baseline' is their mean over the windows"}

    def _likelihood_fit(self, stats: ExpStats, config):
        """The non-private maximum-likelihood fit: projected Newton on each target dimension
        (:func:`~dphawkes_core.estimators.solvers.newton_dimension`) from the non-negative least-squares fit, its
        zeros lifted to a small share so that every intensity at an event is positive."""
        if stats.likelihood_design is None:
            raise ConfigError(f"{self.label}: these statistics have no likelihood design: compute them with "
                              "prepare_stats on a config with exp_likelihood")
        features, integral, duration = stats.likelihood_design
        theta, _, extra = self._solve(stats, config, 0.0, config.baseline_floor)  # the least squares: the start
        theta = self._likelihood_start(theta, stats) if stats.periodic is None else theta
        periodic, q = stats.periodic, integral.size
        if periodic is None:
            lower = baseline_floor(stats.b, stats.A, duration, config.baseline_floor)
            exposure, starts = np.append(integral, duration), theta
        else:
            K = periodic.exposure.size
            floor = part_floor(periodic, config.baseline_floor)
            lower = np.column_stack([np.zeros((theta.shape[0], q)), np.tile(floor[:, None], (1, K)),
                                     np.zeros(theta.shape[0])])
            exposure = np.concatenate([integral, periodic.exposure, [0.0]])  # the intercept held at 0
            parts = np.array(extra["baseline_profile"])
            starts = self._likelihood_start(np.column_stack([theta[:, :q], parts, np.zeros(theta.shape[0])]), stats)
            starts[:, -1] = 0.0
        iterations, converged = 0, True
        for i, X in enumerate(features):
            design = X if periodic is None else with_baseline_columns(X, stats.likelihood_parts[i],
                                                                     periodic.exposure.size)
            starts[i], count, _, done = newton_dimension(design, exposure, starts[i], LIKELIHOOD_TOL,
                                                         LIKELIHOOD_MAX_ITER, lower[i])
            iterations, converged = max(iterations, count), converged and done
        if periodic is None:
            theta, extra = starts, {"baseline_floor": lower[:, -1].tolist()}
        else:
            parts = starts[:, q:-1]  # a part no window reaches has no likelihood: the floor
            starts[:, q:-1] = np.where(periodic.exposure[None, :] > 0, parts, lower[:, q:-1])
            theta = self._with_mean(starts[:, :-1], periodic)
            extra = self._profile_info(starts[:, :-1], periodic, lower[:, :-1])
        decays = tuple(config.decays)
        info = {"solver": "projected Newton (maximum likelihood)", "iterations": iterations,
                "converged": bool(converged), "tolerance": LIKELIHOOD_TOL, "decays": list(decays),
                "baseline_floor_share": config.baseline_floor, **extra,
                "adjacency": adjacency(theta, len(decays)).tolist(), "baseline": theta[:, -1].tolist(),
                "statistics": "exact event times (exponential kernels)"}
        return grid_kernels(theta, decays, config.bin_size, stats.lags), [paper_loss(theta, stats)], info

    @staticmethod
    def _likelihood_start(theta: np.ndarray, stats: ExpStats) -> np.ndarray:
        """The least-squares θ lifted so that every intensity at an event is positive: kernels at least a small share
        of the largest, baselines (the last column, or every part) at least a small share of the mean rate."""
        theta = np.array(theta, dtype=float)
        q = stats.exp_pieces.gram.shape[0]
        theta[:, :q] = np.maximum(theta[:, :q], LIKELIHOOD_START_FLOOR * max(float(theta[:, :q].max()), 1.0))
        rate = stats.exp_pieces.totals / stats.exp_pieces.duration
        theta[:, q:] = np.maximum(theta[:, q:], LIKELIHOOD_START_FLOOR * rate[:, None])
        return theta
