"""Per-bin design rows for estimators whose update is a sum over bins (clipped-gradient DP-PGD).

The conditional least-squares loss ``Σ_t ||y_t − U z_t||² / (2N)`` is a sum over the ``N = n − p``
target bins of a series, with ``z_t = [X[t-1], …, X[t-p], 1]`` and ``y_t = X[t]``. For sparse event
data most bins have no event in ``t−p … t``: their row is ``z_t = e_intercept``, ``y_t = 0``, and all
their per-bin terms are identical. We therefore keep only the *informative* rows (a non-zero lagged
entry or a non-zero target), as a sparse matrix, plus the number of all-zero rows; a per-bin update
then costs ``O(nnz(X)·p·d)`` instead of ``O(n·(dp+1)·d)``. When the informative rows fit densely in
memory, identical rows (same lagged counts and target) are merged too and carry a multiplicity.

The counts themselves are kept as :class:`~dphawkes_core.statistics.binning.SparseCounts` (the non-empty bins
only), which is small enough to travel with the sufficient statistics.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from dphawkes_core.errors import ConfigError
from dphawkes_core.statistics.binning import SparseCounts

if TYPE_CHECKING:  # scipy.sparse loads when a sparse design is built
    import scipy.sparse

MAX_DESIGN_ENTRIES = 60_000_000  # stored lagged entries of the informative rows (~1 GB as CSR + transpose)
MAX_DEDUP_CELLS = 30_000_000  # merge identical informative rows when they fit densely in this many cells
MAX_DENSE_CELLS = 20_000_000  # keep the merged rows as a dense array (faster products) up to this size


@dataclass(frozen=True)
class BinDesign:
    """Informative per-bin rows of the least-squares design, plus the count of all-zero rows.

    Attributes
    ----------
    z_lagged : scipy.sparse.csr_matrix or numpy.ndarray
        ``(m, dp)`` lagged part of the informative rows ``z_t`` (the intercept 1 is implicit); dense
        when small (``m·dp <= MAX_DENSE_CELLS``).
    z_lagged_t : scipy.sparse.csr_matrix or numpy.ndarray
        Its transpose, for fast ``Zᵀ W`` products.
    y : numpy.ndarray
        ``(m, d)`` targets ``y_t`` of the informative rows.
    z_sq_norm : numpy.ndarray
        ``(m,)`` squared norms ``||z_t||²`` including the intercept.
    weight : numpy.ndarray
        ``(m,)`` multiplicity of each distinct informative row.
    zero_rows : int
        Rows with ``z_t = e_intercept`` and ``y_t = 0`` (identical per-bin terms).
    n_rows : int
        ``N``, all rows (informative + all-zero), the divisor of the loss.
    dim, lags : int
        d and p.
    """

    z_lagged: scipy.sparse.csr_matrix | np.ndarray
    z_lagged_t: scipy.sparse.csr_matrix | np.ndarray
    y: np.ndarray
    z_sq_norm: np.ndarray
    weight: np.ndarray
    zero_rows: int
    n_rows: int
    dim: int
    lags: int

    @property
    def informative_rows(self) -> int:
        """Number of informative bins (before merging identical rows)."""
        return int(self.weight.sum())

    @property
    def distinct_rows(self) -> int:
        """Number of rows kept explicitly (after merging identical rows)."""
        return int(self.y.shape[0])


def bin_design(counts: SparseCounts, lags: int) -> BinDesign:
    """Build the informative rows of every sequence with more than ``p`` bins.

    Parameters
    ----------
    counts : SparseCounts
        Non-zero bins of the count series.
    lags : int
        p.

    Returns
    -------
    BinDesign

    Raises
    ------
    ConfigError
        When no sequence has more than p bins, or the sparse design would be too large.
    """
    import scipy.sparse  # here: only pgd-clip builds the design (keeps scipy.sparse off the CLS path)

    d, p = counts.dim, int(lags)
    entries = counts.n_nonzero * p
    if entries > MAX_DESIGN_ENTRIES:
        raise ConfigError(f"the per-bin design would hold {entries:,} lagged entries (over {MAX_DESIGN_ENTRIES:,}); "
                          "use a larger bin size or a shorter support")
    rows_i, cols_i, vals_i, ys, offset, zero_rows, n_rows = [], [], [], [], 0, 0, 0
    for n, m, j_idx, v in zip(counts.lengths, counts.bins, counts.dims, counts.values):
        if n <= p:
            continue
        targets = (m[:, None] + np.arange(p + 1)).ravel()
        informative = np.unique(targets[(targets >= p) & (targets < n)])
        # lagged entries: X[m, j] sits in row t = m + k at column (k-1)d + j, for k = 1..p
        v = v.astype(float)
        k = np.arange(1, p + 1)
        t = (m[:, None] + k).ravel()
        col = ((k - 1) * d + j_idx[:, None]).ravel()
        val = np.repeat(v, p)
        keep = (t >= p) & (t < n)
        rows_i.append(offset + np.searchsorted(informative, t[keep]))
        cols_i.append(col[keep])
        vals_i.append(val[keep])
        y = np.zeros((informative.size, d))
        has_target = m >= p
        y[np.searchsorted(informative, m[has_target]), j_idx[has_target]] = v[has_target]
        ys.append(y)
        offset += informative.size
        zero_rows += (n - p) - informative.size
        n_rows += n - p
    if n_rows == 0:
        raise ConfigError(f"no sequence is longer than p = {p} bins: use a smaller support or bin size")
    z = scipy.sparse.csr_matrix(
        (np.concatenate(vals_i), (np.concatenate(rows_i), np.concatenate(cols_i))), shape=(offset, d * p))
    z.sum_duplicates()
    y = np.concatenate(ys)
    weight = np.ones(offset)
    if offset * (d * p + d) <= MAX_DEDUP_CELLS:
        rows, weight = np.unique(np.hstack([z.toarray(), y]), axis=0, return_counts=True)
        y, weight = rows[:, d * p:], weight.astype(float)
        if rows.shape[0] * d * p <= MAX_DENSE_CELLS:
            z = np.ascontiguousarray(rows[:, : d * p])
            z_sq = np.sum(z * z, axis=1) + 1.0
            return BinDesign(z, np.ascontiguousarray(z.T), y, z_sq, weight, int(zero_rows), int(n_rows), d, p)
        z = scipy.sparse.csr_matrix(rows[:, : d * p])
    z_sq = np.asarray(z.multiply(z).sum(axis=1)).ravel() + 1.0
    return BinDesign(z, z.T.tocsr(), y, z_sq, weight, int(zero_rows), int(n_rows), d, p)
