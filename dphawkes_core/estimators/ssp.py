"""DP-SSP: one Gaussian release of sufficient statistics, then least squares as post-processing.

Two releases (``FitConfig.ssp_release``):

* ``lagged`` (default) — the pieces :class:`~dphawkes_core.statistics.moments.MomentPieces` are made of: the lagged
  cross-products ``C[τ]`` (τ = 0..p, ``C[0]`` by its upper triangle), the totals and every sequence's
  first and last p rows. One event changes one row and one column of each ``C[τ]``, so the release's
  sensitivity is about √p below the ``full`` one (:func:`ssp_lagged_sensitivity`).
  ``A`` and ``b`` are rebuilt with :func:`~dphawkes_core.statistics.moments.assemble_stats`.
* ``full`` — the upper triangle of ``A`` and the whole of ``b``
  (:func:`~dphawkes_core.estimators.releases.noisy_statistics`, a release other families may reuse).

For the sequence unit both releases add noise to sums of per-sequence vectors clipped at G; its ``lagged``
vector holds the edges as Gram matrices and row sums summed over sequences
(:func:`~dphawkes_core.privacy.sequence.pieces_vector`), rebuilt with
:func:`~dphawkes_core.statistics.moments.assemble_summed`.

Everything after the release uses only the released numbers and public ones (σ, C, d, p, n, λ), so it
costs no privacy: the edge rows are shrunk toward the released mean count, ``Â`` is stabilised (ridge or
PSD floor, optional roughness penalty across lags) and the least-squares problem is solved with
kernels and baselines constrained to be ``>= 0`` (:func:`~dphawkes_core.estimators.solvers.solve_nonnegative`).
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from dphawkes_core.errors import ConfigError
from dphawkes_core.estimators.family import AuditHints, PrivacyTags
from dphawkes_core.estimators.releases import SingleRelease, noisy_statistics, ssp_sensitivity, symmetric_noise
from dphawkes_core.estimators.sequence_unit import check_auto_clip, prepare_sequence_stats, sequence_privacy_report
from dphawkes_core.estimators.settings import BASELINE_FLOOR, Setting, options_class
from dphawkes_core.estimators.solvers import (
    baseline_floor,
    paper_loss,
    roughness_matrix,
    solve_cls,
    solve_nonnegative,
    stabilise,
)
from dphawkes_core.privacy.calibration import data_R
from dphawkes_core.privacy.count_cap import step_cap_rule
from dphawkes_core.privacy.noise import NoiseSource, uses_discrete
from dphawkes_core.privacy.sequence import pieces_vector, release_pieces_vector
from dphawkes_core.statistics.moments import MomentPieces, SufficientStats, assemble_stats, assemble_summed

SSP_RIDGE_FACTOR = {"lagged": 4.0, "full": 8.0}
SSP_STABILISERS = ("ridge", "psd")
SSP_RELEASES = ("lagged", "full")
NOTE = "formal (public C, d, p, n; one Gaussian release of the statistics)"


def ssp_ridge(sigma: float, n_params: int, release: str = "full") -> float:
    """Public default ridge ``λ = c·σ√q`` (q = dp+1), ``c = SSP_RIDGE_FACTOR[release]``.

    ``2σ√q`` is the operator norm of the symmetric noise matrix of the ``full`` release; c was chosen
    among 0…16 by the plain error on paper-2d and paper-4d (``docs/privacy.md``). It uses only public
    numbers (σ, q)."""
    return float(SSP_RIDGE_FACTOR[release] * sigma * np.sqrt(n_params))


def release_pieces(pieces: MomentPieces, raw_sigma: float, rng: NoiseSource) -> MomentPieces:
    """``lagged`` release: Gaussian noise of std ``raw_sigma`` on every released number of ``pieces``.

    ``C[0]`` is symmetric: its upper triangle is released and mirrored. ``n_bins`` is public (the window
    and Δ fix it) and stays exact. Draw order: ``C[0]``, ``C[1..p]``, totals, heads, tails. Every number is
    an integer (products and sums of clipped counts): a discrete ``rng`` (an unseeded release calibrated for
    it) adds OpenDP's exact discrete Gaussian instead (:func:`_discrete_pieces`).
    """
    if raw_sigma <= 0:
        return pieces
    if uses_discrete(rng):
        return _discrete_pieces(pieces, raw_sigma, rng)
    d = pieces.dim
    lagged = pieces.lagged.copy()
    lagged[0] += symmetric_noise(d, raw_sigma, rng)
    lagged[1:] += raw_sigma * rng.standard_normal(lagged[1:].shape)
    return replace(
        pieces,
        lagged=lagged,
        totals=pieces.totals + raw_sigma * rng.standard_normal(d),
        heads=pieces.heads + raw_sigma * rng.standard_normal(pieces.heads.shape),
        tails=pieces.tails + raw_sigma * rng.standard_normal(pieces.tails.shape),
    )


def _discrete_pieces(pieces: MomentPieces, raw_sigma: float, rng: NoiseSource) -> MomentPieces:
    """The ``lagged`` release with the discrete Gaussian ``N_Z(0, raw_sigma²)``: one integer vector in the order of
    :meth:`SSP.query_vector` (upper triangle of ``C[0]``, ``C[1..p]``, totals, heads, tails), one mechanism."""
    d = pieces.dim
    upper = np.triu_indices(d)
    parts = (pieces.lagged[0][upper], pieces.lagged[1:], pieces.totals, pieces.heads, pieces.tails)
    noisy = rng.discrete_gaussian(np.concatenate([np.ravel(x) for x in parts]), raw_sigma).astype(float)
    out, start = [], 0
    for x in parts:
        out.append(noisy[start:start + np.size(x)].reshape(np.shape(x)))
        start += np.size(x)
    first = np.zeros((d, d))
    first[upper] = out[0]
    first = first + np.triu(first, 1).T
    return replace(pieces, lagged=np.concatenate([first[None], out[1]]), totals=out[2], heads=out[3], tails=out[4])


def shrink_edges(noisy: MomentPieces, raw_sigma: float) -> MomentPieces:
    """Post-process released edge rows: shrink each toward the released mean count and clip to ``[0, C]``.

    With mean ``μ̂ = totals/Σn`` and variance ``v̂ = diag C[0]/Σn − μ̂²`` (both from released numbers),
    an edge entry becomes ``μ̂ + v̂/(v̂ + σ²)·(h̃ − μ̂)`` — the linear estimate that minimises the squared
    error for a count of variance v̂ seen through noise σ. Exact when σ = 0. Only edge rows are touched:
    they enter ``A`` through products, where their noise would otherwise be multiplied by counts.
    """
    if raw_sigma <= 0:
        return noisy
    cap = float(noisy.count_cap) if noisy.count_cap is not None else np.inf
    cells = float(np.sum(noisy.n_bins))
    mean = np.clip(noisy.totals / cells, 0.0, cap)
    var = np.clip(np.diag(noisy.lagged[0]) / cells - mean**2, 0.0, cap**2 / 4)
    weight = var / (var + raw_sigma**2)

    def shrink(rows):
        return np.clip(mean + weight * (rows - mean), 0.0, cap)

    return replace(noisy, heads=shrink(noisy.heads), tails=shrink(noisy.tails))


def released_stats(stats: SufficientStats, sigma: float, release: str,
                   rng: NoiseSource) -> tuple[np.ndarray, np.ndarray]:
    """``(Â, b̂)`` of one release with noise std σ in the units of ``A`` (raw pieces get ``σN``)."""
    if release == "full":
        return noisy_statistics(stats, sigma, rng)
    summed = getattr(stats, "summed_pieces", None)
    if summed is not None:  # the sequence unit: one noisy vector of the per-sequence pieces summed
        rebuilt = assemble_summed(release_pieces_vector(summed, sigma * stats.n_rows, rng))
        return rebuilt.A, rebuilt.b
    pieces = getattr(stats, "pieces", None)
    if pieces is None:
        raise ConfigError("the lagged DP-SSP release needs the moment pieces: compute the statistics with "
                          "prepare_stats")
    raw_sigma = sigma * stats.n_rows
    rebuilt = assemble_stats(shrink_edges(release_pieces(pieces, raw_sigma, rng), raw_sigma))
    return rebuilt.A, rebuilt.b


def run_ssp(stats: SufficientStats, sigma2: float, ridge: float | None, stabiliser: str,
            rng: NoiseSource, release: str = "lagged", nonnegative: bool = True,
            smoothing: float = 0.0, floor: float = 0.0) -> tuple[np.ndarray, dict]:
    """DP-SSP: release once, stabilise ``Â`` and solve the least-squares problem.

    Parameters
    ----------
    stats : SufficientStats
        Statistics of counts clipped at the public C (with ``pieces`` for the ``lagged`` release).
    sigma2 : float
        Noise variance per released entry, in the units of ``A`` (``/N``).
    ridge : float, optional
        λ; ``None``: :func:`ssp_ridge`.
    stabiliser : {"ridge", "psd"}
    rng : NoiseSource or numpy.random.Generator
        :func:`~dphawkes_core.privacy.noise.noise_source` of the fit (a discrete one for an unseeded lagged release).
    release : {"lagged", "full"}
    nonnegative : bool
        Constrain kernels and baselines to be ``>= 0`` (:func:`~dphawkes_core.estimators.solvers.solve_nonnegative`);
        otherwise solve ``θ Ã = b̂``.
    smoothing : float
        Weight s of the roughness penalty ``λ·s·θ DᵀD θᵀ`` across lags (0: none).
    floor : float
        With ``nonnegative``: every baseline at least this share of its dimension's released mean count
        (:func:`~dphawkes_core.estimators.solvers.baseline_floor`; 0: none).

    With σ = 0, λ = 0, no smoothing and ``nonnegative=False`` this is exactly :func:`solve_cls`.
    """
    sigma = float(np.sqrt(sigma2))
    lam = ssp_ridge(sigma, stats.n_params, release) if ridge is None else float(ridge)
    A_hat, b_hat = released_stats(stats, sigma, release, rng)
    A_tilde = stabilise(A_hat, lam, stabiliser)
    if smoothing > 0:
        A_tilde = A_tilde + lam * smoothing * roughness_matrix(stats.dim, stats.lags)
    lower = baseline_floor(b_hat, A_hat, stats.n_rows, floor if nonnegative else 0.0)
    if nonnegative:
        theta, info = solve_nonnegative(A_tilde, b_hat, lower), {"solver": "nnls"}
    else:
        theta, info = solve_cls(replace(stats, A=A_tilde, b=b_hat))
    info.update({"ridge": lam, "stabiliser": stabiliser, "ssp_release": release, "nonnegative": nonnegative,
                 "smoothing": smoothing, "baseline_floor_share": floor if nonnegative else 0.0,
                 "baseline_floor": lower[:, -1].tolist()})  # in the units of θ (Δ × a rate)
    return theta, info


def ssp_lagged_sensitivity(dim: int, lags: int, n_rows: int, count_cap: int) -> float:
    """L2 sensitivity of the ``lagged`` DP-SSP release (:class:`~dphawkes_core.statistics.moments.MomentPieces` / N):
    ``C[τ]`` for τ = 1..p, the upper triangle of ``C[0]``, the totals and every sequence's first and
    last p rows, under one event added or removed, counts clipped at C.

    One count ``X[m, j]`` changes by ±1: for τ >= 1, row j of ``C[τ]`` by ``X[m−τ]`` and column j by
    ``X[m+τ]`` (``2(d+1)C²`` at most in squares, the ``[j, j]`` entry taking both); ``C[0]`` by
    ``X[m]`` in row and column j, whose upper triangle holds ``(d−1)C²`` off the diagonal and
    ``(2C−1)²`` on it; one total by 1. A head (or tail) entry changes by 1 only when ``m`` is among the
    first (last) p bins, and then ``X[m−τ]`` (``X[m+τ]``) is missing for at least one τ, which removes at
    least ``(d+2)C² >= 3`` from the ``C[τ]`` part. So ``N·S = sqrt(2p(d+1)C² + (d−1)C² + (2C−1)² + 1)``,
    attained by a middle bin with every count at C, about √p below :func:`ssp_sensitivity`.
    Derivation: ``docs/privacy.md``.
    """
    if count_cap is None or count_cap < 1:
        raise ConfigError("DP-SSP needs a public count cap C >= 1 (counts are clipped at C)")
    c, p, d = float(count_cap), int(lags), int(dim)
    return math.sqrt(2 * p * (d + 1) * c * c + (d - 1) * c * c + (2 * c - 1) ** 2 + 1.0) / n_rows


SETTINGS = (
    Setting("ridge", "ridge λ", "float", None, "λ added to the noisy A (Â + λI) or floor of its eigenvalues",
            minimum=0.0, optional=True, none_means="the public rule 4σ√(dp+1) (lagged), 8σ√(dp+1) (full)",
            primary=True),
    Setting("stabiliser", "stabiliser of the noisy A", "choice", "ridge",
            "ridge: Â + λI; psd: eigenvalues of Â floored at λ", choices=SSP_STABILISERS, primary=True),
    Setting("ssp_release", "what is released", "choice", "lagged",
            "lagged: the lagged cross-products and edge rows (about √p less noise); "
            "full: the upper triangle of A and b",
            choices=SSP_RELEASES),
    Setting("ssp_nonnegative", "kernels and baselines >= 0", "bool", True,
            "post-processing: constrain the estimate to be non-negative (no privacy cost)",
            cli_flag="--ssp-allow-negative", cli_negates=True),
    Setting("ssp_smoothing", "smoothing across lags", "float", 10.0,
            "weight of the roughness penalty across lags, in units of λ (0: none)", minimum=0.0, step=1.0),
    BASELINE_FLOOR,
)
SSPOptions = options_class("SSPOptions", SETTINGS, "DP-SSP", __name__)


class SSP(SingleRelease):
    """DP-SSP: one Gaussian release of the least-squares statistics of counts clipped at a public C, then
    least squares as free post-processing (ridge, non-negativity, smoothing across lags)."""

    note = NOTE
    name = "ssp"
    label = "DP-SSP"
    summary = "one noisy release of the least-squares statistics, then least squares: formal from public bounds"
    settings = SETTINGS
    options_type = SSPOptions
    privacy = PrivacyTags(calibrations=("formal",), units=("event", "sequence"), auto_count_cap=True)
    audit_hints = AuditHints(noiseless_options=dict(ridge=0.0, ssp_smoothing=0.0, ssp_nonnegative=False),
                             sensitivity_fraction=1.0)

    def cap_rule(self, config):
        """A step-kernel release's scale at (w, s) (:func:`~dphawkes_core.privacy.count_cap.step_cap_rule`)."""
        return step_cap_rule(config.bin_size, config.bin_size * config.lags)

    def check(self, config) -> None:
        super().check(config)
        check_auto_clip(config)

    def prepare_stats(self, events, config):
        if config.unit.name == "sequence":
            return prepare_sequence_stats(events, config)
        return super().prepare_stats(events, config)

    def integer_release(self, config) -> bool:
        """The event unit's ``lagged`` release holds only integers (lagged products, totals and edge rows of clipped
        counts, and the automatic cap's tail counts): an unseeded one draws the exact discrete Gaussian. The
        ``full`` release (2·10⁶ numbers at p = 500, d = 4) and the sequence unit's clipped sums keep continuous
        noise."""
        return config.unit.name == "event" and config.ssp_release == "lagged"

    def release_sensitivity(self, stats, config) -> float:
        """The event unit's L2 sensitivity of the chosen release (:func:`ssp_lagged_sensitivity`,
        :func:`~dphawkes_core.estimators.releases.ssp_sensitivity`) for the statistics' d, p, N and C."""
        bound = ssp_lagged_sensitivity if config.ssp_release == "lagged" else ssp_sensitivity
        return bound(stats.dim, stats.lags, stats.n_rows, stats.count_cap)

    def sequence_report(self, stats, config):
        return sequence_privacy_report(stats, config)

    def missing_cap(self) -> str:
        return "DP-SSP needs a public count cap C and statistics clipped at it"

    def report_R(self, stats) -> float:
        return data_R(stats)

    def query_vector(self, stats, config) -> np.ndarray:
        """The released numbers without noise, in the units of ``A``: the lagged pieces (upper triangle of
        ``C[0]``, ``C[1..p]``, totals, heads, tails) over N, or the upper triangle of ``A`` (without the public
        ``A[-1,-1]``) and ``b``."""
        if config.ssp_release == "full":
            upper = stats.A[np.triu_indices_from(stats.A)][:-1]
            return np.concatenate([upper, stats.b.ravel()])
        summed = getattr(stats, "summed_pieces", None)
        if summed is not None:  # the sequence unit: the per-sequence pieces clipped and summed
            return pieces_vector(summed) / stats.n_rows
        return _pieces_vector(stats.pieces) / stats.n_rows

    def run(self, stats, config, report, rng, transcript=None):
        U, info = run_ssp(stats, report.sigma2, config.ridge, config.stabiliser, rng, config.ssp_release,
                          config.ssp_nonnegative, config.ssp_smoothing, config.baseline_floor)
        info["baseline_floor"] = (np.asarray(info["baseline_floor"]) / config.bin_size).tolist()  # a rate
        return U, [paper_loss(U, stats)], info

    def noisy_output(self, stats, config, report, rng):
        """The release as :func:`run_ssp` draws it: the event unit's lagged release is the noisy pieces, in
        the layout and units of :meth:`query_vector` (noise of one std on every number, before the edge
        shrinkage, which is post-processing); the full release (and the sequence unit's) is ``(Â, b̂)``
        (upper triangle of Â, then b̂)."""
        sigma = math.sqrt(report.sigma2)
        pieces = getattr(stats, "pieces", None)
        if config.ssp_release == "lagged" and getattr(stats, "summed_pieces", None) is None and pieces is not None:
            return _pieces_vector(release_pieces(pieces, sigma * stats.n_rows, rng)) / stats.n_rows
        A_hat, b_hat = released_stats(stats, sigma, config.ssp_release, rng)
        return np.concatenate([A_hat[np.triu_indices_from(A_hat)], b_hat.ravel()])


def _pieces_vector(pieces: MomentPieces) -> np.ndarray:
    """The released numbers of the lagged release in one vector: upper triangle of ``C[0]``, ``C[1..p]``,
    totals, heads, tails."""
    return np.concatenate([pieces.lagged[0][np.triu_indices(pieces.dim)], pieces.lagged[1:].ravel(),
                           pieces.totals, pieces.heads.ravel(), pieces.tails.ravel()])
