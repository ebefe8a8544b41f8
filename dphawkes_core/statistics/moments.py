"""Sufficient statistics of the INAR(p) least-squares problem without materialising Z.

For one count series ``X`` (rows ``X[0..n-1]``, 0-based) and ``p`` lags the paper's design has one
column per target bin ``t = p..n-1``: ``z_t = [X[t-1], X[t-2], …, X[t-p], 1]`` and ``y_t = X[t]``.
We return

* ``A = Σ_t z_t z_tᵀ / N``   (``ZZᵀ/(n-p)``, shape ``(dp+1, dp+1)``),
* ``b = Σ_t y_t z_tᵀ / N``   (``YZᵀ/(n-p)``, shape ``(d, dp+1)``),

with ``N = Σ_s (n_s - p)`` summed over independent sequences (each binned on its own window).

How: every block of ``ZZᵀ`` is a lagged cross-product ``Σ_m X[m] X[m-τ]ᵀ`` over a window that differs
from the full range only by at most ``p`` terms at each end. We compute the full-range products
``C[τ]`` for ``τ = 0..p`` once — by enumerating the pairs of non-empty bins at most ``p`` apart when
counts are sparse (memory ``O(events)``, whatever ``T/Δ``), by FFT or per-lag products when the series
is dense and short enough to lay out (all exact: counts are integers and FFT results are rounded) —
and subtract the edge terms with cumulative sums, ``O(p² d²)`` work per sequence
(:class:`MomentPieces`, :func:`assemble_stats`).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from dphawkes_core.errors import ConfigError
from dphawkes_core.statistics.binning import BinnedCounts, SparseCounts

MAX_DESIGN_ROWS = 6001  # dp+1: A alone is then 288 MB of float64
_DIRECT_LAGGED_CELLS = 100_000  # n(p+1) up to which lagged products are plain per-lag matrix products
MAX_FFT_CELLS = 8_000_000  # n·d up to which a series may be laid out densely for the FFT (~0.4 GB of work arrays)
_PAIR_CHUNK = 1 << 21  # entries whose later partners are enumerated at once (bounds the temporaries)
TOEPLITZ_PRODUCT_OVERHEAD = 3e5  # flops-equivalent of the ~20 array operations of one structured product


def stats_fields(cls) -> tuple[str, ...]:
    """The init fields of a statistics dataclass (not its class attributes such as ``kind``): what rebuilding
    one as another (sub)class copies."""
    return tuple(f.name for f in dataclasses.fields(cls))


@dataclass(frozen=True)
class SufficientStats:
    """``A = ZZᵀ/N``, ``b = YZᵀ/N`` and what is needed to evaluate the least-squares losses.

    Attributes
    ----------
    A : numpy.ndarray
        ``(dp+1, dp+1)`` second moment of the lagged design (last row/column: intercept).
    b : numpy.ndarray
        ``(d, dp+1)`` cross moment of targets and design.
    yy : float
        ``Σ_t ||y_t||² / N`` (for the per-bin loss ``Σ_t ||y_t - U z_t||² / (2N)``).
    n_rows : int
        ``N = Σ_s (n_s - p)``, the number of columns of Z.
    dim : int
        d.
    lags : int
        p.
    skipped_sequences : int
        Sequences with ``n_s <= p`` bins, which contribute no rows.
    count_cap : int or None
        The public cap C the counts were clipped at before the statistics were computed.
    kind : str
        What they are statistics of (class attribute): ``"binned"`` counts here; a family fits only its own kind
        (:attr:`~dphawkes_core.estimators.family.InputTags.statistics`).
    """

    kind: ClassVar[str] = "binned"
    A: np.ndarray
    b: np.ndarray
    yy: float
    n_rows: int
    dim: int
    lags: int
    skipped_sequences: int = 0
    count_cap: int | None = None

    @property
    def n_params(self) -> int:
        """Number of columns of θ: ``dp + 1``."""
        return self.dim * self.lags + 1


def check_design_size(dim: int, lags: int) -> None:
    """Refuse a design with more than ``MAX_DESIGN_ROWS`` columns (``dp+1``) before allocating."""
    if lags < 1:
        raise ConfigError(f"the number of lags p must be at least 1, got {lags}")
    if dim * lags + 1 > MAX_DESIGN_ROWS:
        raise ConfigError(
            f"d·p+1 = {dim * lags + 1:,} parameters per dimension is over the {MAX_DESIGN_ROWS:,} limit "
            f"(A would need {(dim * lags + 1) ** 2 * 8 / 2**30:.1f} GiB); use a larger bin size or a shorter support"
        )


class _LaggedShape:
    """p and d of pieces that hold ``lagged`` (``(p+1, d, d)``) and ``totals`` (``(d,)``)."""

    @property
    def lags(self) -> int:
        """p."""
        return int(self.lagged.shape[0] - 1)

    @property
    def dim(self) -> int:
        """d."""
        return int(self.totals.shape[0])


@dataclass(frozen=True)
class MomentPieces(_LaggedShape):
    """Everything ``A``, ``b`` and ``yy`` are made of.

    ``Z Zᵀ`` and ``Y Zᵀ`` are linear in the full-range lagged products ``C[τ] = Σ_m X[m] X[m-τ]ᵀ``
    (``τ = 0..p``), the total counts ``Σ_m X[m]`` and, per sequence, products of its first ``p`` and
    last ``p`` rows (the edges where the design's window differs from the full range). Releasing
    these instead of ``A`` is what the tighter DP-SSP does; :func:`assemble_stats` rebuilds the
    statistics from them exactly.

    Attributes
    ----------
    lagged : numpy.ndarray
        ``(p+1, d, d)`` ``Σ_s C_s[τ]``.
    totals : numpy.ndarray
        ``(d,)`` ``Σ_s Σ_m X_s[m]``.
    heads : numpy.ndarray
        ``(S, p, d)`` rows ``X_s[0..p-1]`` of each of the S sequences with more than p bins.
    tails : numpy.ndarray
        ``(S, p, d)`` rows ``X_s[n_s-p..n_s-1]``.
    n_bins : numpy.ndarray
        ``(S,)`` ``n_s`` (public: the window and Δ fix it).
    skipped_sequences : int
        Sequences with ``n_s <= p`` bins (no rows).
    count_cap : int or None
        The cap C the counts were clipped at.
    """

    lagged: np.ndarray
    totals: np.ndarray
    heads: np.ndarray
    tails: np.ndarray
    n_bins: np.ndarray
    skipped_sequences: int = 0
    count_cap: int | None = None

    @property
    def n_rows(self) -> int:
        """``N = Σ_s (n_s - p)``."""
        return int(np.sum(self.n_bins) - self.lags * self.n_bins.size)


def moment_pieces(binned: BinnedCounts | SparseCounts, lags: int) -> MomentPieces:
    """Lagged products, totals and edge rows of every sequence of ``binned`` (see :class:`MomentPieces`).

    Parameters
    ----------
    binned : SparseCounts or BinnedCounts
        Count series, sparse (the data path) or dense (small data).
    lags : int
        p >= 1.

    Raises
    ------
    ConfigError
        When no sequence has more than p bins, or the design would be too large.
    """
    counts = binned if isinstance(binned, SparseCounts) else SparseCounts.from_binned(binned)
    d = counts.dim
    check_design_size(d, lags)
    lagged = np.zeros((lags + 1, d, d))
    totals = np.zeros(d)
    heads, tails, n_bins = [], [], []
    for n, bins, dims, values in zip(counts.lengths, counts.bins, counts.dims, counts.values):
        if n <= lags:
            continue
        lagged += lagged_products(bins, dims, values, n, d, lags)
        totals += np.bincount(dims, weights=values, minlength=d)
        heads.append(rows_between(bins, dims, values, 0, lags, d))
        tails.append(rows_between(bins, dims, values, n - lags, n, d))
        n_bins.append(n)
    if not n_bins:
        raise ConfigError(
            f"no sequence is longer than p = {lags} bins: use a smaller support or bin size"
        )
    return MomentPieces(lagged, totals, np.array(heads, dtype=float), np.array(tails, dtype=float),
                        np.array(n_bins, dtype=np.int64), len(counts.lengths) - len(n_bins), counts.count_cap)


def rows_between(bins: np.ndarray, dims: np.ndarray, values: np.ndarray, first: int, stop: int, dim: int) -> np.ndarray:
    """Dense rows ``X[first..stop-1]`` (shape ``(stop-first, d)``) of one series' sorted entries."""
    lo, hi = np.searchsorted(bins, [first, stop])
    rows = np.zeros((stop - first, dim))
    rows[bins[lo:hi] - first, dims[lo:hi]] = values[lo:hi]
    return rows


def sufficient_stats(binned: BinnedCounts | SparseCounts, lags: int) -> SufficientStats:
    """Compute ``A``, ``b`` (and ``yy``) summed over sequences.

    Parameters
    ----------
    binned : SparseCounts or BinnedCounts
        Count series.
    lags : int
        p >= 1.

    Returns
    -------
    SufficientStats
        Equal to the dense definition up to floating-point rounding of the final division.

    Raises
    ------
    ConfigError
        When no sequence has more than p bins, or the design would be too large.
    """
    return assemble_stats(moment_pieces(binned, lags))


@dataclass(frozen=True)
class SummedPieces(_LaggedShape):
    """:class:`MomentPieces` with the edges summed over sequences: exactly what :func:`assemble_summed` needs.

    ``A``, ``b`` and ``yy`` use a sequence's first and last p rows only through sums over sequences of their
    products and of the rows themselves, so these sums carry the same information as the per-sequence
    edge rows (the sequence unit's lagged release adds noise to them: :mod:`~dphawkes_core.privacy.sequence`).

    Attributes
    ----------
    lagged : numpy.ndarray
        ``(p+1, d, d)`` ``Σ_s C_s[τ]``.
    totals : numpy.ndarray
        ``(d,)`` ``Σ_s Σ_m X_s[m]``.
    head_gram, tail_gram : numpy.ndarray
        ``(p, d, p, d)`` ``Σ_s X_s[m] X_s[m']ᵀ`` over the first (last) p rows: ``[m, :, m', :]``.
    head_sum, tail_sum : numpy.ndarray
        ``(p, d)`` ``Σ_s X_s[m]`` over the first (last) p rows.
    n_rows : int
        ``N = Σ_s (n_s - p)`` (public).
    skipped_sequences : int
    count_cap : int or None
    """

    lagged: np.ndarray
    totals: np.ndarray
    head_gram: np.ndarray
    tail_gram: np.ndarray
    head_sum: np.ndarray
    tail_sum: np.ndarray
    n_rows: int
    skipped_sequences: int = 0
    count_cap: int | None = None


def summed_pieces(pieces: MomentPieces) -> SummedPieces:
    """The edge rows of ``pieces`` as their sums and Gram matrices over sequences (:class:`SummedPieces`)."""
    return SummedPieces(pieces.lagged, pieces.totals, _edge_gram(pieces.heads), _edge_gram(pieces.tails),
                        pieces.heads.sum(axis=0), pieces.tails.sum(axis=0), pieces.n_rows,
                        pieces.skipped_sequences, pieces.count_cap)


def assemble_stats(pieces: MomentPieces) -> SufficientStats:
    """``A = ZZᵀ/N``, ``b = YZᵀ/N``, ``yy`` from :class:`MomentPieces` (exact for exact pieces).

    Block ``(k, k+τ)`` of ``ZZᵀ`` sums ``X[m] X[m-τ]ᵀ`` over ``m = p-1-k .. n-2-k`` of every sequence:
    ``Σ C[τ]`` minus the head rows ``m = τ .. p-2-k`` and the tail rows ``m = n-1-k .. n-1``. The
    intercept column is the totals minus edge sums; ``YZᵀ`` blocks are ``C[l+1]`` minus head terms.
    ``O(S p² d²)`` work for S sequences. Noisy pieces give the correspondingly noisy statistics (DP-SSP).
    """
    return assemble_summed(summed_pieces(pieces))


def assemble_summed(summed: SummedPieces) -> SufficientStats:
    """``A``, ``b``, ``yy`` from :class:`SummedPieces` (as :func:`assemble_stats`, whose edge terms are these
    sums): exact for exact sums, correspondingly noisy for noisy ones."""
    p, d = summed.lags, summed.dim
    head_gram, tail_gram = summed.head_gram, summed.tail_gram  # [m, :, m', :] = Σ_s X_s[m] X_s[m']ᵀ
    q = d * p + 1
    zz = np.zeros((q, q))
    yz = np.zeros((d, q))
    blocks = zz[: d * p, : d * p].reshape(p, d, p, d)
    zero = np.zeros((1, d, d))
    for tau in range(p):
        ks = np.arange(p - tau)
        # head: Σ_{m=τ}^{p-2-k}, as prefix sums over m = τ..p-2
        head_terms = head_gram[np.arange(tau, p - 1), :, np.arange(0, p - 1 - tau), :]
        head_part = np.concatenate([zero, np.cumsum(head_terms, axis=0)])[p - 1 - ks - tau]
        # tail: Σ_{m=n-1-k}^{n-1}, as suffix sums over m = n-p+τ..n-1 (tail rows τ..p-1)
        tail_terms = tail_gram[np.arange(tau, p), :, np.arange(0, p - tau), :]
        tail_part = np.concatenate([np.cumsum(tail_terms[::-1], axis=0)[::-1], zero])[p - 1 - ks - tau]
        block = summed.lagged[tau][None] - head_part - tail_part
        blocks[ks, :, ks + tau, :] = block
        if tau:
            blocks[ks + tau, :, ks, :] = block.transpose(0, 2, 1)
    intercept, target_total = _edge_totals(summed.totals, summed.head_sum, summed.tail_sum)
    zz[: d * p, -1] = intercept.ravel()
    zz[-1, : d * p] = intercept.ravel()
    rows = summed.n_rows
    zz[-1, -1] = rows
    for lag in range(p):
        tau = lag + 1
        head = head_gram[np.arange(tau, p), :, np.arange(0, p - tau), :].sum(axis=0) if tau < p else 0.0
        yz[:, lag * d:(lag + 1) * d] = summed.lagged[tau] - head
    yz[:, -1] = target_total
    head_trace = np.trace(head_gram.reshape(p * d, p * d))  # Σ_s ||heads_s||²
    yy = float(np.trace(summed.lagged[0]) - head_trace)
    return SufficientStats(zz / rows, yz / rows, yy / rows, rows, d, p, summed.skipped_sequences, summed.count_cap)


def _row_totals(pieces: MomentPieces) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_edge_totals` of ``pieces``."""
    return _edge_totals(pieces.totals, pieces.heads.sum(axis=0), pieces.tails.sum(axis=0))


def _edge_totals(totals: np.ndarray, head_sum: np.ndarray, tail_sum: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(p, d)`` intercept column of ``ZZᵀ`` (lag k sums ``X[m]`` over ``m = p-1-k .. n-2-k``) and the ``(d,)``
    target total ``Σ_t y_t`` (``m = p .. n-1``): the totals minus head prefix and tail suffix sums."""
    p, d = head_sum.shape
    head_prefix = np.concatenate([np.zeros((1, d)), np.cumsum(head_sum, axis=0)])  # Σ_{m<r}, r = 0..p
    tail_suffix = np.cumsum(tail_sum[::-1], axis=0)  # [r-1]: Σ of the last r rows
    ks = np.arange(p)
    return totals - head_prefix[p - 1 - ks] - tail_suffix[ks], totals - head_prefix[p]


def _edge_gram(rows: np.ndarray) -> np.ndarray:
    """``(p, d, p, d)`` sums over sequences of ``X_s[m] X_s[m']ᵀ`` for edge rows ``(S, p, d)``: one product."""
    S, p, d = rows.shape
    flat = rows.reshape(S, p * d)
    return (flat.T @ flat).reshape(p, d, p, d)


class ToeplitzMomentOperator:
    """``v ↦ A v`` for ``A = ZZᵀ/N`` of :func:`assemble_stats`, from the :class:`MomentPieces` without forming A.

    With every series zero-padded, the design rows ``z̃_t`` for all ``t`` have the block-Toeplitz Gram matrix
    ``T[k, k'] = C[k'-k]`` (``C[τ]ᵀ`` below the diagonal). The design keeps ``t = p .. n-1`` of each
    sequence, so the lagged block of ``ZZᵀ`` is ``T`` minus, per sequence, the Gram matrices of the rows
    ``t = 1 .. p-1`` (lags reaching before bin 0: zero-padded head rows) and ``t = n .. n+p-1`` (past the
    last bin: zero-padded tail rows). ``T v`` is a convolution and each edge Gram matrix times ``v`` a
    truncated convolution followed by a correlation, all done with real FFTs of one length ``L >= 2p - 1``
    (no wrap-around reaches the kept outputs); the intercept row and column come from the totals and edges.

    One product costs ``O((d + S) d c L log L)`` for a ``(dp+1) × c`` block and S sequences
    (:func:`toeplitz_product_cost`), against ``(dp+1)² c`` for a dense A. Everything is float64; the FFT's
    rounding is of the order of ``1e-16 · log₂ L`` of the product's magnitude, like a dense product's.
    It is the A of exactly the pieces given (of clipped counts, if they were clipped): a caller must pass
    the pieces its statistics were assembled from.
    """

    def __init__(self, pieces: MomentPieces):
        p, d, rows = pieces.lags, pieces.dim, pieces.n_rows
        self.lags, self.dim = p, d
        self.length = L = _fft_length(p)
        kernel = np.zeros((d, d, L))  # c(k - k') at index (k - k') mod L
        kernel[:, :, 0] = pieces.lagged[0]
        kernel[:, :, 1:p] = pieces.lagged[1:p].transpose(2, 1, 0)  # below the diagonal: C[τ]ᵀ
        kernel[:, :, L - p + 1:] = pieces.lagged[1:p][::-1].transpose(1, 2, 0)  # above: c(-τ) = C[τ]
        # edge rows as (S, d, F) spectra: heads X[0..p-2] (X[p-1] is in no missing row), tails reversed
        # (X̂[m] = X[n-1-m])
        heads = np.fft.rfft(pieces.heads[:, : p - 1].transpose(0, 2, 1), n=L)
        tails = np.fft.rfft(pieces.tails[:, ::-1].transpose(0, 2, 1), n=L)
        # what multiplies the spectrum of v: T/N (d rows), then the edges' first step (convolution, correlation)
        self._first = np.concatenate([np.fft.rfft(kernel) / rows, heads, tails.conj()])
        self._kept = np.concatenate([np.arange(L) < p - 1] * len(heads)
                                    + [np.arange(L) < p] * len(tails)).reshape(-1, 1, L)
        # the second step (correlation, convolution), summed over sequences: (d, 2S, F)
        self._second = np.ascontiguousarray(np.concatenate([heads.conj(), tails]).transpose(1, 0, 2)) / rows
        self._intercept = _row_totals(pieces)[0].ravel() / rows  # (dp,); the corner A[-1, -1] is 1

    def __matmul__(self, v: np.ndarray) -> np.ndarray:
        """``A v`` for a ``(dp+1, c)`` block ``v`` (float64)."""
        p, d, L = self.lags, self.dim, self.length
        v = np.asarray(v, dtype=np.float64)
        lagged, constant = v[:-1], v[-1]
        spectrum = np.fft.rfft(np.ascontiguousarray(lagged.reshape(p, d, -1).transpose(1, 2, 0)), n=L)  # (d, c, F)
        mixed = _mix(self._first, spectrum)
        # missing rows w_t = z̃_tᵀ v: heads t = 1..p-1, w_t = Σ_m X[m]ᵀ v_{t-1-m} (kept for t-1 < p-1);
        # tails t = n+a, a = 0..p-1, w_a = Σ_k X̂[k-a]ᵀ v_k (kept for a < p)
        missing = np.fft.irfft(mixed[d:], n=L) * self._kept
        # T v minus Σ_t z̃_t w_t: Σ_t X[t-1-k] w_t (a correlation) and Σ_a X̂[k-a] w_a (a convolution)
        out = mixed[:d] - _mix(self._second, np.fft.rfft(missing))
        result = np.empty_like(v)
        result[:-1] = np.fft.irfft(out, n=L)[:, :, :p].transpose(2, 0, 1).reshape(d * p, -1)
        result[:-1] += self._intercept[:, None] * constant
        result[-1] = self._intercept @ lagged + constant
        return result


def toeplitz_product_cost(dim: int, lags: int, sequences: int, columns: int) -> float:
    """Rough floating-point work of one :class:`ToeplitzMomentOperator` product with a ``(dp+1) × columns``
    block and S ``sequences``: real FFTs of length L (about ``2.5 L log₂ L`` each), the complex products of
    the spectra and a fixed :data:`TOEPLITZ_PRODUCT_OVERHEAD`. Measured with one BLAS thread, a dense
    product of ``2(dp+1)²c`` flops runs 2-4× faster per flop than this count; near the break-even the
    choice is within that factor either way (and the dense path also pays ``(dp+1)³`` once to form A²)."""
    length = _fft_length(lags)
    ffts = 2 * dim * columns + 4 * sequences * columns
    spectra = (length // 2 + 1) * 8 * (dim * dim * columns + 2 * sequences * dim * columns)
    return ffts * 2.5 * length * np.log2(max(length, 2)) + spectra + TOEPLITZ_PRODUCT_OVERHEAD


def _fft_length(lags: int) -> int:
    """Smallest power of two ``>= 2p - 1``: circular convolutions of length L then equal the linear ones on
    the outputs kept."""
    return 1 << max(int(np.ceil(np.log2(2 * lags - 1))), 0)


def _mix(rows: np.ndarray, spectra: np.ndarray) -> np.ndarray:
    """``Σ_j rows[i, j, f] spectra[j, c, f]`` (``(I, c, F)``): frequency-wise products of spectra, one
    broadcast product per index ``j`` (a dimension, or an edge of a sequence)."""
    out = rows[:, 0, None, :] * spectra[0, None]
    for j in range(1, rows.shape[1]):
        out += rows[:, j, None, :] * spectra[j, None]
    return out


def design_matrix(x: np.ndarray, lags: int) -> tuple[np.ndarray, np.ndarray]:
    """Dense ``Zᵀ`` (shape ``(n-p, dp+1)``) and ``Yᵀ`` (``(n-p, d)``) of one count series."""
    n, d = x.shape
    x = np.asarray(x, dtype=float)
    zt = np.empty((n - lags, d * lags + 1))
    for k in range(lags):
        zt[:, k * d:(k + 1) * d] = x[lags - 1 - k:n - 1 - k]
    zt[:, -1] = 1.0
    return zt, x[lags:]


def lagged_products(bins: np.ndarray, dims: np.ndarray, values: np.ndarray, n_bins: int, dim: int,
                    max_lag: int) -> np.ndarray:
    """Full-range lagged products ``C[τ] = Σ_{m=τ}^{n-1} X[m] X[m-τ]ᵀ`` for ``τ = 0..max_lag`` of one series.

    Exact for integer counts. Enumerates the pairs of non-empty bins at most ``max_lag`` apart, or lays
    the series out densely for per-lag products or the FFT when that is cheaper and the series is short
    enough (``n·d`` up to ``MAX_FFT_CELLS``).

    Parameters
    ----------
    bins, dims, values : numpy.ndarray
        The series' non-zero entries ``X[bins[i], dims[i]] = values[i]``, sorted by bin then dimension.
    n_bins : int
        n.
    dim : int
        d.
    max_lag : int
        p.

    Returns
    -------
    numpy.ndarray
        Shape ``(max_lag+1, d, d)``; ``C[τ][i, j] = Σ_m X[m, i] X[m-τ, j]``.
    """
    n, d = int(n_bins), int(dim)
    if n * (max_lag + 1) <= _DIRECT_LAGGED_CELLS:
        return dense_lagged_products(rows_between(bins, dims, values, 0, n, d), max_lag)
    nonzero_bins = np.count_nonzero(np.diff(bins)) + 1 if bins.size else 0
    expected_pairs = values.size * (1.0 + nonzero_bins * (max_lag + 1) / max(n, 1)) * d
    fft_cost = 4.0 * d * d * n * np.log2(max(n, 2)) + d * n * np.log2(max(n, 2))
    if expected_pairs * 8 < fft_cost or n * d > MAX_FFT_CELLS:
        return _lagged_products_sparse(bins, dims, values, d, max_lag)
    return _lagged_products_fft(rows_between(bins, dims, values, 0, n, d), max_lag)


def dense_lagged_products(x: np.ndarray, max_lag: int) -> np.ndarray:
    """``C[τ]`` of a dense ``(n, d)`` series by one small product ``X[τ:]ᵀ X[:n-τ]`` per lag: fastest for
    short series (many-sequence data, the boundary windows of a partitioned fit)."""
    n, d = x.shape
    xf = x.astype(float)
    out = np.zeros((max_lag + 1, d, d))
    for tau in range(min(max_lag, n - 1) + 1):
        out[tau] = xf[tau:].T @ xf[: n - tau]
    return out


def _lagged_products_sparse(bins: np.ndarray, dims: np.ndarray, values: np.ndarray, d: int,
                            max_lag: int) -> np.ndarray:
    """Every pair of entries at most ``max_lag`` bins apart, found by walking forward one offset at a time
    (entries sorted by bin): work and memory follow the number of pairs, not the number of bins.

    A pair (later entry at bin ``b'`` and dimension ``i``, earlier at ``b``, ``j``) adds to the flat cell
    ``(b'−b)d² + id + j = late[later] − early[earlier]`` with ``late = b d² + i d`` and ``early = b d² − j``;
    the cell is below ``(max_lag+1)d²`` exactly when the lag is at most ``max_lag``.
    """
    vals = np.asarray(values, dtype=float)
    size = (max_lag + 1) * d * d
    acc = np.bincount(dims * d + dims, weights=vals * vals, minlength=size)  # each entry with itself
    late = bins * (d * d) + dims * d
    early = bins * (d * d) - dims
    total = bins.size
    for start in range(0, total - 1, _PAIR_CHUNK):
        active = np.arange(start, min(start + _PAIR_CHUNK, total - 1))
        offset = 1
        while active.size:
            cell = late[active + offset] - early[active]
            ok = cell < size  # bins are sorted: once too far, every later offset is too
            active, cell = active[ok], cell[ok]
            if not active.size:
                break
            w = vals[active + offset] * vals[active]
            acc += np.bincount(cell, weights=w, minlength=size)
            same = cell < d * d  # two dimensions in one bin: the symmetric term too
            if same.any():
                acc += np.bincount((cell[same] % d) * d + cell[same] // d, weights=w[same], minlength=size)
            offset += 1
            if active[-1] + offset >= total:
                active = active[active + offset < total]
    return acc.reshape(max_lag + 1, d, d)


def _lagged_products_fft(x: np.ndarray, max_lag: int) -> np.ndarray:
    n, d = x.shape
    length = 1 << int(np.ceil(np.log2(n + max_lag + 1)))
    spectra = np.fft.rfft(x.astype(float), n=length, axis=0)  # (length//2+1, d)
    out = np.empty((max_lag + 1, d, d))
    for i in range(d):
        # Σ_m X[m,i] X[m-τ,j] is the cross-correlation: irfft(F_i · conj(F_j))[τ]
        corr = np.fft.irfft(spectra[:, i:i + 1] * np.conj(spectra), n=length, axis=0)
        out[:, i, :] = np.rint(corr[: max_lag + 1])
    return out
