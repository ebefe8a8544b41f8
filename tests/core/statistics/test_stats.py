"""Sufficient statistics equal the paper's dense definition of Z and Y."""

import numpy as np
import pytest

from dphawkes_core.errors import ConfigError
from dphawkes_core.statistics import moments as st
from dphawkes_core.statistics.binning import BinnedCounts


def paper_dense(x, p):
    """Z and Y exactly as printed in the paper (1-based t = p+1..n), built with plain loops."""
    n, d = x.shape
    X = {k + 1: x[k].astype(float) for k in range(n)}  # X_1 .. X_n
    cols = []
    for t in range(p + 1, n + 1):
        cols.append(np.concatenate([X[t - lag] for lag in range(1, p + 1)] + [np.ones(1)]))
    Z = np.array(cols).T  # (dp+1, n-p)
    Y = np.array([X[t] for t in range(p + 1, n + 1)]).T  # (d, n-p)
    return Z, Y


def binned(*series):
    return BinnedCounts(tuple(np.asarray(s, dtype=np.int64) for s in series), 0.1, 0, 0, None)


def count_series(kind, n, d, rng):
    if kind == "sparse":
        return rng.binomial(1, 0.03, (n, d))
    if kind == "dense":
        return rng.poisson(3.0, (n, d))
    bursty = np.zeros((n, d), dtype=np.int64)  # empty stretches and bursts at both edges
    bursty[:7] = rng.poisson(5.0, (7, d))
    bursty[-5:] = rng.poisson(4.0, (5, d))
    bursty[n // 2:n // 2 + 9] = rng.poisson(6.0, (9, d))
    return bursty


@pytest.mark.parametrize("kind", ["sparse", "dense", "bursty"])
@pytest.mark.parametrize("n, d, p", [(60, 1, 5), (200, 3, 17), (400, 2, 40), (41, 2, 20), (21, 2, 20),
                                     (30, 1, 20), (19, 3, 12), (25, 2, 20)])
def test_assembled_pieces_equal_dense_definition(kind, n, d, p):
    """Every sequence length from p+1 up (edges overlapping or not) against the paper's dense Z."""
    x = count_series(kind, n, d, np.random.default_rng(n * p + d))
    Z, Y = paper_dense(x, p)
    s = st.assemble_stats(st.moment_pieces(binned(x), p))
    N = n - p
    scale = max(1.0, np.abs(Z @ Z.T).max()) / N
    np.testing.assert_allclose(s.A, Z @ Z.T / N, rtol=0, atol=1e-9 * scale)
    np.testing.assert_allclose(s.b, Y @ Z.T / N, rtol=0, atol=1e-9 * scale)
    assert s.yy == pytest.approx(np.sum(Y * Y) / N, rel=1e-12)


def entries(x):
    bins, dims = np.nonzero(x)
    return bins, dims, x[bins, dims]


@pytest.mark.parametrize("path", [lambda x, p: st._lagged_products_sparse(*entries(x), x.shape[1], p),
                                  st._lagged_products_fft, st.dense_lagged_products,
                                  lambda x, p: st.lagged_products(*entries(x), *x.shape, p)],
                         ids=["sparse", "fft", "direct", "chosen"])
def test_every_lagged_product_path_is_exact(path):
    rng = np.random.default_rng(5)
    for kind in ("sparse", "dense", "bursty"):
        x = count_series(kind, 300, 3, rng)
        expected = np.array([sum(np.outer(x[m], x[m - tau]) for m in range(tau, 300)) for tau in range(26)])
        np.testing.assert_array_equal(path(x, 25), expected)


def test_public_function_on_a_long_series_equals_the_dense_definition():
    rng = np.random.default_rng(11)
    x = rng.binomial(2, 0.05, (50_000, 2))
    p = 30
    s = st.sufficient_stats(binned(x), p)
    Z, Y = paper_dense(x, p)
    N = x.shape[0] - p
    np.testing.assert_allclose(s.A, Z @ Z.T / N, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(s.b, Y @ Z.T / N, rtol=1e-9, atol=1e-12)
    assert s.n_rows == N


def test_sequences_are_summed_and_short_ones_skipped():
    rng = np.random.default_rng(2)
    a, b, short = rng.poisson(1.0, (80, 2)), rng.poisson(0.5, (50, 2)), rng.poisson(1.0, (4, 2))
    s = st.sufficient_stats(binned(a, b, short), 6)
    Za, Ya = paper_dense(a, 6)
    Zb, Yb = paper_dense(b, 6)
    N = (80 - 6) + (50 - 6)
    np.testing.assert_allclose(s.A, (Za @ Za.T + Zb @ Zb.T) / N, rtol=1e-12)
    np.testing.assert_allclose(s.b, (Ya @ Za.T + Yb @ Zb.T) / N, rtol=1e-12)
    assert s.skipped_sequences == 1 and s.n_rows == N


def test_too_large_or_empty_designs_are_refused():
    with pytest.raises(ConfigError, match="limit"):
        st.check_design_size(10, 1000)
    with pytest.raises(ConfigError, match="no sequence is longer"):
        st.sufficient_stats(binned(np.ones((5, 1))), 10)
