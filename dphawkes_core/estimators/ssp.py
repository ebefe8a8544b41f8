"""DP-SSP: one Gaussian release of sufficient statistics, then least squares as post-processing.

Two releases (``FitConfig.ssp_release``):

* ``lagged`` (default) — the pieces :class:`~dphawkes_core.stats.MomentPieces` are made of: the lagged
  cross-products ``C[τ]`` (τ = 0..p, ``C[0]`` by its upper triangle), the totals and every sequence's
  first and last p rows. One event changes one row and one column of each ``C[τ]``, so the release's
  sensitivity is about √p below the ``full`` one (:func:`~dphawkes_core.privacy.ssp_lagged_sensitivity`).
  ``A`` and ``b`` are rebuilt with :func:`~dphawkes_core.stats.assemble_stats`.
* ``full`` — the upper triangle of ``A`` and the whole of ``b`` (:func:`release_statistics`).

For the sequence unit both releases add noise to sums of per-sequence vectors clipped at G; its ``lagged``
vector holds the edges as Gram matrices and row sums summed over sequences
(:func:`~dphawkes_core.sequence_privacy.pieces_vector`), rebuilt with
:func:`~dphawkes_core.stats.assemble_summed`.

Everything after the release uses only the released numbers and public ones (σ, C, d, p, n, λ), so it
costs no privacy: the edge rows are shrunk toward the released mean count, ``Â`` is stabilised (ridge or
PSD floor, optional roughness penalty across lags) and the least-squares problem is solved with
kernels and baselines constrained to be ``>= 0`` (:func:`solve_nonnegative`).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..errors import ConfigError
from ..sequence_privacy import release_pieces_vector
from ..stats import MomentPieces, SufficientStats, assemble_stats, assemble_summed
from .least_squares import solve_cls

SSP_RIDGE_FACTOR = {"lagged": 4.0, "full": 8.0}


def ssp_ridge(sigma: float, n_params: int, release: str = "full") -> float:
    """Public default ridge ``λ = c·σ√q`` (q = dp+1), ``c = SSP_RIDGE_FACTOR[release]``.

    ``2σ√q`` is the operator norm of the symmetric noise matrix of the ``full`` release; c was chosen
    among 0…16 by the plain error on paper-2d and paper-4d (``docs/privacy.md``). It uses only public
    numbers (σ, q)."""
    return float(SSP_RIDGE_FACTOR[release] * sigma * np.sqrt(n_params))


def release_statistics(stats: SufficientStats, sigma: float, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """``full`` release: the upper triangle of ``A`` and ``b`` with noise std σ per entry.

    The lower triangle mirrors the upper one (``Â`` is symmetric); ``A[-1,-1] = 1`` is public and left
    exact. The ``A`` noise is drawn first, then the ``b`` noise (reproducible by seed).
    """
    q = stats.n_params
    if sigma <= 0:
        return stats.A.copy(), stats.b.copy()
    noise = _symmetric_noise(q, sigma, rng)
    noise[-1, -1] = 0.0
    return stats.A + noise, stats.b + sigma * rng.standard_normal(stats.b.shape)


def _symmetric_noise(size: int, sigma: float, rng: np.random.Generator) -> np.ndarray:
    upper = np.triu(sigma * rng.standard_normal((size, size)))
    return upper + np.triu(upper, 1).T


def release_pieces(pieces: MomentPieces, raw_sigma: float, rng: np.random.Generator) -> MomentPieces:
    """``lagged`` release: Gaussian noise of std ``raw_sigma`` on every released number of ``pieces``.

    ``C[0]`` is symmetric: its upper triangle is released and mirrored. ``n_bins`` is public (the window
    and Δ fix it) and stays exact. Draw order: ``C[0]``, ``C[1..p]``, totals, heads, tails.
    """
    if raw_sigma <= 0:
        return pieces
    d = pieces.dim
    lagged = pieces.lagged.copy()
    lagged[0] += _symmetric_noise(d, raw_sigma, rng)
    lagged[1:] += raw_sigma * rng.standard_normal(lagged[1:].shape)
    return replace(
        pieces,
        lagged=lagged,
        totals=pieces.totals + raw_sigma * rng.standard_normal(d),
        heads=pieces.heads + raw_sigma * rng.standard_normal(pieces.heads.shape),
        tails=pieces.tails + raw_sigma * rng.standard_normal(pieces.tails.shape),
    )


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


def roughness_matrix(dim: int, lags: int) -> np.ndarray:
    """``DᵀD`` for the second differences across lags of every kernel ``h_ij`` (θ's column ``kd + j``
    is lag k+1 of source j; the intercept column is not penalised)."""
    q = dim * lags + 1
    rows = []
    for k in range(1, lags - 1):
        for j in range(dim):
            row = np.zeros(q)
            row[[(k - 1) * dim + j, k * dim + j, (k + 1) * dim + j]] = (1.0, -2.0, 1.0)
            rows.append(row)
    D = np.array(rows).reshape(-1, q)
    return D.T @ D


def stabilise(A_hat: np.ndarray, lam: float, stabiliser: str) -> np.ndarray:
    """``ridge``: ``Â + λI``; ``psd``: ``Â`` with its eigenvalues floored at λ."""
    if stabiliser == "psd":
        values, vectors = np.linalg.eigh(A_hat)
        return (vectors * np.maximum(values, lam)) @ vectors.T
    return A_hat + lam * np.eye(A_hat.shape[0]) if lam > 0 else A_hat


NNLS_ITERATIONS_PER_PARAMETER = 20  # Lawson–Hanson's iteration limit per unknown (it adds one per outer step)


def solve_nonnegative(A_tilde: np.ndarray, b_hat: np.ndarray) -> np.ndarray:
    """Each row ``θ_i = argmin_{θ >= 0} ½ θ Ã θᵀ − b̂_i θᵀ``: kernels and baseline non-negative.

    With ``Ã = LLᵀ`` this is the non-negative least-squares problem ``min ||Lᵀθᵀ − L⁻¹b̂_iᵀ||``, solved
    exactly by scipy's Lawson–Hanson ``nnls`` (at ``dp+1 = 1001`` about 0.5 s against 25–190 s for the
    BVLS it replaced, same solution to 1e-14); BVLS when ``nnls`` reaches its iteration limit. ``Ã`` is
    made positive definite first if needed (eigenvalues floored at a tiny multiple of its scale).
    """
    from scipy.linalg import solve_triangular  # here: scipy.linalg is a slow import, private fits only
    from scipy.optimize import lsq_linear, nnls

    try:
        L = np.linalg.cholesky(A_tilde)
    except np.linalg.LinAlgError:
        values, vectors = np.linalg.eigh(A_tilde)
        floor = 1e-9 * max(float(np.max(np.abs(values))), 1e-300)
        L = np.linalg.cholesky((vectors * np.maximum(values, floor)) @ vectors.T)
    targets = solve_triangular(L, b_hat.T, lower=True)  # (q, d): L⁻¹ b̂ᵀ
    theta = np.empty_like(b_hat)
    for i in range(b_hat.shape[0]):
        try:
            theta[i] = nnls(L.T, targets[:, i], maxiter=NNLS_ITERATIONS_PER_PARAMETER * L.shape[0])[0]
        except RuntimeError:  # iteration limit: the bounded-variable solver, slower but without one
            theta[i] = lsq_linear(L.T, targets[:, i], bounds=(0.0, np.inf), method="bvls").x
    return theta


def released_stats(stats: SufficientStats, sigma: float, release: str,
                   rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """``(Â, b̂)`` of one release with noise std σ in the units of ``A`` (raw pieces get ``σN``)."""
    if release == "full":
        return release_statistics(stats, sigma, rng)
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
            rng: np.random.Generator, release: str = "lagged", nonnegative: bool = True,
            smoothing: float = 0.0) -> tuple[np.ndarray, dict]:
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
    rng : numpy.random.Generator
    release : {"lagged", "full"}
    nonnegative : bool
        Constrain kernels and baselines to be ``>= 0`` (:func:`solve_nonnegative`); otherwise solve
        ``θ Ã = b̂``.
    smoothing : float
        Weight s of the roughness penalty ``λ·s·θ DᵀD θᵀ`` across lags (0: none).

    With σ = 0, λ = 0, no smoothing and ``nonnegative=False`` this is exactly :func:`solve_cls`.
    """
    sigma = float(np.sqrt(sigma2))
    lam = ssp_ridge(sigma, stats.n_params, release) if ridge is None else float(ridge)
    A_hat, b_hat = released_stats(stats, sigma, release, rng)
    A_tilde = stabilise(A_hat, lam, stabiliser)
    if smoothing > 0:
        A_tilde = A_tilde + lam * smoothing * roughness_matrix(stats.dim, stats.lags)
    if nonnegative:
        theta, info = solve_nonnegative(A_tilde, b_hat), {"solver": "nnls"}
    else:
        theta, info = solve_cls(replace(stats, A=A_tilde, b=b_hat))
    info.update({"ridge": lam, "stabiliser": stabiliser, "ssp_release": release, "nonnegative": nonnegative,
                 "smoothing": smoothing})
    return theta, info
