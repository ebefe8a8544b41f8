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
from dphawkes_core.estimators.exp.release import (
    ExpSensitivity,
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
from dphawkes_core.estimators.exp.statistics import ExpStats, event_features, exp_pieces, stats_from_pieces
from dphawkes_core.estimators.family import AuditHints, Family, InputTags, PrivacyTags, Statistics
from dphawkes_core.estimators.sequence_unit import calibrate_sequence_release, check_auto_clip
from dphawkes_core.estimators.settings import Setting, options_class
from dphawkes_core.estimators.solvers import (
    newton_dimension,
    paper_loss,
    solve_cls,
    solve_nonnegative,
    stabilise,
)
from dphawkes_core.privacy.calibration import calibrate_single_sensitivity
from dphawkes_core.privacy.count_cap import AUTO
from dphawkes_core.statistics.binning import bins_in_window
from dphawkes_core.statistics.info import DataInfo

LIKELIHOOD_START_FLOOR = 1e-3  # the likelihood's start lifts each parameter to at least this share of its scale
LIKELIHOOD_TOL, LIKELIHOOD_MAX_ITER = 1e-10, 500  # Newton stops when no parameter moves by 1e-10 of the largest
RIDGE_FACTOR = 5.0  # λ = c·√r·ρσ√q, the grid-free family's rule with c = 5 (chosen on exp-2d: docs/accuracy.md)
GRAM_SCALE = 3.0  # default ρ (3 against 1 and 10 on the tuning process exp-2d: docs/accuracy.md)
DECAYS = (0.7, 1.5, 3.0)
NOTE = ("formal (public C per dimension and w-bin, d, the decays, the windows; one Gaussian release of the "
        "exponentially weighted statistics)")

SETTINGS = (
    Setting("decays", "decays β", "floats", DECAYS,
            "the public decays of the kernels h_ij(t) = Σ_u a_iju β_u exp(−β_u t) (one or more; the sensitivity "
            "depends on them)", minimum=0.0, minimum_exclusive=True, public_bound=True),
    Setting("exp_ridge", "ridge λ", "float", None, "λ added to the noisy A (Â + λI)", minimum=0.0, optional=True,
            none_means="the rule 5·√r·ρσ√(dU+1), r = ρσ√(dU+1) / the mean diagonal of the released A"),
    Setting("exp_nonnegative", "kernels and baselines >= 0", "bool", True,
            "post-processing: constrain the estimate to be non-negative (no privacy cost)",
            cli_flag="--exp-allow-negative", cli_negates=True),
    Setting("exp_likelihood", "maximum likelihood (non-private)", "bool", False,
            "maximise the likelihood (Newton from the least-squares fit) instead of least squares; it reads the "
            "events themselves, so only without noise (σ² = 0)"),
    Setting("exp_gram_scale", "noise of G relative to c", "float", GRAM_SCALE,
            "the Gram and the integrals are released with this many times the noise of the values at the events",
            minimum=0.0, minimum_exclusive=True, step=0.5),
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


def exp_ridge(noise: float, A_hat: np.ndarray) -> float:
    """Public default ridge ``λ = RIDGE_FACTOR·√r·noise``, ``r = noise / (mean diagonal of Â's kernel block)``
    (post-processing of the release); 0 without noise."""
    diagonal = max(float(np.mean(np.diag(A_hat)[:-1])), 1e-12)
    return float(RIDGE_FACTOR * math.sqrt(noise / diagonal) * noise)


class Exp(Family):
    """Least squares with exponential kernels on public decays, on exact event times: one Gaussian release of
    the exponentially weighted statistics of events kept under a public C per (dimension, w-bin), then least
    squares as free post-processing. With σ² = 0 (no ridge, no constraint) it is the exact non-private fit."""

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

    def check(self, config) -> None:
        super().check(config)
        check_auto_clip(config)

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
        if config.exp_likelihood:
            stats = replace(stats, likelihood_design=event_features(events, config.decays, config.bin_size, cap))
        return stats, info

    def prepare_partitioned(self, paths, config, window, executor=None):
        """The statistics of :meth:`prepare_stats` reduced over Parquet partitions in ``window`` (map steps over
        ``executor``): :func:`~dphawkes_core.estimators.exp.partitioned.prepare_exp_partitioned`."""
        from dphawkes_core.estimators.exp.partitioned import prepare_exp_partitioned

        return prepare_exp_partitioned(paths, config, window, executor)

    def _stats(self, stats, config) -> ExpStats:
        if not isinstance(stats, ExpStats) or stats.exp_pieces is None:
            raise ConfigError(f"{self.label} fits its own statistics of exact event times: compute them with its "
                              "prepare_stats")
        if stats.exp_pieces.decays != tuple(config.decays):
            raise ConfigError(f"these statistics are for the decays {stats.exp_pieces.decays}, the config asks for "
                              f"{tuple(config.decays)}")
        return stats

    def sensitivity(self, stats: ExpStats, config) -> ExpSensitivity:
        """:func:`~dphawkes_core.estimators.exp.release.exp_sensitivity` for the statistics' d and C and the
        config's decays, w and ρ."""
        return exp_sensitivity(stats.dim, config.decays, config.bin_size, stats.event_cap, config.exp_gram_scale)

    def privacy_report(self, stats, config):
        stats = self._stats(stats, config)
        if config.exp_likelihood and config.sigma2 != 0:  # refused before any noise is drawn
            raise ConfigError(f"{self.label}: maximum likelihood reads the events themselves, so it is non-private "
                              "only: give σ² = 0")
        if config.unit.name == "sequence":
            return self._sequence_report(stats, config)
        if isinstance(stats, ExpSequenceStats):
            raise ConfigError(f"{self.label}: these statistics are clipped sums of the sequence unit; the event unit's "
                              "sensitivity does not hold for them")
        auto = config.count_cap == AUTO
        if stats.event_cap is None and config.sigma2 == 0:  # the non-private fit: no cap, no noise
            sens = math.inf
        else:
            if config.count_cap is None or stats.event_cap != config.count_cap and not (auto and stats.event_cap):
                raise ConfigError(f"{self.label} needs a public count cap C and events kept under it")
            sens = self.sensitivity(stats, config).total / stats.exp_pieces.duration
        return calibrate_single_sensitivity(NOTE, sens, 1, config.calibration, config.dp_delta,
                                            epsilon=None if config.sigma2 is not None else config.epsilon,
                                            sigma2=config.sigma2,
                                            auto_cap=(config.count_cap_share, stats.event_cap) if auto else None)

    def _sequence_report(self, stats, config):
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

    def query_vector(self, stats, config) -> np.ndarray:
        """The released numbers without noise, in the units of A (divided by ``N = Σ T``)."""
        stats = self._stats(stats, config)
        return raw_release(stats.exp_pieces, config.exp_gram_scale) / stats.exp_pieces.duration

    def _noisy(self, stats: ExpStats, config, sigma: float, rng) -> np.ndarray:
        clean = raw_release(stats.exp_pieces, config.exp_gram_scale)
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
        """The neighbours of :func:`~dphawkes_core.estimators.exp.release.worst_case_events` at the corner where
        the bound for ``config``'s decays, w, C and ρ is largest."""
        corner = exp_sensitivity(dim, config.decays, config.bin_size, config.count_cap,
                                 config.exp_gram_scale).corner
        return worst_case_events(dim, config.decays, config.bin_size, config.count_cap, corner)

    def run(self, stats, config, report, rng, transcript=None):
        stats = self._stats(stats, config)
        if config.exp_likelihood:
            return self._likelihood_fit(stats, config)
        sigma = math.sqrt(report.sigma2) if report is not None else 0.0
        rho = float(config.exp_gram_scale)
        if sigma > 0:
            noisy = pieces_from_release(self._noisy(stats, config, sigma, rng), stats.exp_pieces, rho)
            stats = stats_from_pieces(noisy, stats.width, stats.lags)
        noise = rho * sigma * math.sqrt(stats.n_params)
        lam = (exp_ridge(noise, stats.A) if noise > 0 else 0.0) if config.exp_ridge is None else float(config.exp_ridge)
        A_tilde = stabilise(stats.A, lam, "ridge")
        if config.exp_nonnegative:
            theta, info = solve_nonnegative(A_tilde, stats.b), {"solver": "nnls"}
        else:
            theta, info = solve_cls(replace(stats, A=A_tilde))
        decays = tuple(config.decays)
        info.update({"ridge": lam, "nonnegative": config.exp_nonnegative, "gram_scale": rho, "decays": list(decays),
                     "adjacency": adjacency(theta, len(decays)).tolist(), "baseline": theta[:, -1].tolist(),
                     "statistics": "exact event times (exponential kernels)"})
        return grid_kernels(theta, decays, config.bin_size, stats.lags), [paper_loss(theta, stats)], info

    def _likelihood_fit(self, stats: ExpStats, config):
        """The non-private maximum-likelihood fit: projected Newton on each target dimension
        (:func:`~dphawkes_core.estimators.solvers.newton_dimension`) from the non-negative least-squares fit, its
        zeros lifted to a small share so that every intensity at an event is positive."""
        if stats.likelihood_design is None:
            raise ConfigError(f"{self.label}: these statistics have no likelihood design: compute them with "
                              "prepare_stats on a config with exp_likelihood")
        from scipy.sparse import csr_matrix

        features, integral, duration = stats.likelihood_design
        theta = solve_nonnegative(stats.A, stats.b)
        theta[:, :-1] = np.maximum(theta[:, :-1], LIKELIHOOD_START_FLOOR * max(float(theta[:, :-1].max()), 1.0))
        theta[:, -1] = np.maximum(theta[:, -1], LIKELIHOOD_START_FLOOR * stats.exp_pieces.totals / duration)
        exposure = np.append(integral, duration)
        iterations, converged = 0, True
        for i, X in enumerate(features):
            theta[i], count, _, done = newton_dimension(csr_matrix(X), exposure, theta[i], LIKELIHOOD_TOL,
                                                        LIKELIHOOD_MAX_ITER)
            iterations, converged = max(iterations, count), converged and done
        decays = tuple(config.decays)
        info = {"solver": "projected Newton (maximum likelihood)", "iterations": iterations,
                "converged": bool(converged), "tolerance": LIKELIHOOD_TOL, "decays": list(decays),
                "adjacency": adjacency(theta, len(decays)).tolist(), "baseline": theta[:, -1].tolist(),
                "statistics": "exact event times (exponential kernels)"}
        return grid_kernels(theta, decays, config.bin_size, stats.lags), [paper_loss(theta, stats)], info
