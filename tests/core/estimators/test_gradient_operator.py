"""The structured ``A v`` (block-Toeplitz lagged products minus per-sequence edge corrections, by FFT) against
a dense A built independently from raw counts, and DP-PGD / DP-CG through it against the dense ``A²`` path."""

from dataclasses import fields, replace

import numpy as np
import pytest

from dphawkes_core.data.io import Events, EventSequence
from dphawkes_core.estimators import FitConfig, binned_stats, fit_cost, fit_stats, prepare_stats
from dphawkes_core.estimators.cost import estimate_fit_cost
from dphawkes_core.estimators.gradient import GradientOperator, hessian_product
from dphawkes_core.statistics.binning import BinnedCounts
from dphawkes_core.statistics.moments import SufficientStats, ToeplitzMomentOperator


def loop_design_moments(series, p, cap=None):
    """``ZZᵀ/N`` and ``YZᵀ/N`` of the paper's dense Z (column t: ``X[t-1], …, X[t-p], 1``, t = p..n-1 of every
    sequence longer than p), built with plain loops from the raw counts clipped at ``cap``."""
    d = series[0].shape[1]
    columns, targets = [], []
    for raw in series:
        x = raw if cap is None else np.minimum(raw, cap)
        for t in range(p, len(x)):
            columns.append(np.concatenate([x[t - 1 - k] for k in range(p)] + [np.ones(1)]))
            targets.append(x[t])
    Z, Y = np.array(columns, dtype=float).T, np.array(targets, dtype=float).reshape(-1, d).T
    return Z @ Z.T / Z.shape[1], Y @ Z.T / Z.shape[1]


def events_from_counts(series, bin_size=1.0):
    """Events with ``series[s][k, j]`` events of dimension j at the centre of bin k of sequence s (stated window)."""
    sequences = []
    for x in series:
        times = tuple(np.repeat((np.arange(len(x)) + 0.5) * bin_size, x[:, j]) for j in range(x.shape[1]))
        sequences.append(EventSequence(times, end_time=len(x) * bin_size))
    return Events(tuple(sequences), tuple(str(j) for j in range(series[0].shape[1])), window_stated=True)


def fit_input(series, p, cap):
    """The statistics a fit computes from the events of ``series`` (binned, clipped at ``cap``): they carry
    the moment pieces they were assembled from."""
    return prepare_stats(events_from_counts(series), FitConfig(bin_size=1.0, lags=p, count_cap=cap))


def dense_twin(stats) -> SufficientStats:
    """The same statistics without their moment pieces: :class:`GradientOperator` then forms ``A²``."""
    return SufficientStats(**{f.name: getattr(stats, f.name) for f in fields(SufficientStats)})


def relative(a, b):
    return float(np.abs(a - b).max() / np.abs(b).max())


@pytest.mark.parametrize("d, p, lengths, cap", [
    (1, 1, [12], None),
    (1, 5, [40], 2),
    (2, 2, [30, 3], None),  # the second sequence has n <= p: no rows
    (2, 16, [17, 60, 33], 3),  # n = p+1: head and tail rows overlap
    (3, 7, [50, 20, 8], 2),
    (1, 33, [100, 70], None),
    (2, 64, [300], 1),
])
def test_structured_product_equals_a_dense_A_built_from_raw_counts(d, p, lengths, cap):
    rng = np.random.default_rng(d * 100 + p)
    series = [rng.poisson(1.2, (n, d)) for n in lengths]
    A, _ = loop_design_moments(series, p, cap)
    stats, info = fit_input(series, p, cap)
    assert cap is None or info["clipped_events"] > 0  # the cap bites: the operator must use the clipped counts
    operator = ToeplitzMomentOperator(stats.pieces)
    for columns in (1, d, 5):
        v = rng.standard_normal((d * p + 1, columns))
        assert relative(operator @ v, A @ v) < 1e-12


def two_series_stats(d=2, p=500, lengths=(3000, 1800), cap=None, seed=7):
    """Statistics (with their moment pieces) of Poisson counts, clipped at ``cap`` when given."""
    rng = np.random.default_rng(seed)
    series = tuple(rng.poisson(0.4, (n, d)) for n in lengths)
    if cap is not None:
        series = tuple(np.minimum(x, cap) for x in series)
    return binned_stats(BinnedCounts(series, 0.1, 0, 0, cap), p)


def test_gradient_operator_takes_the_structured_path_and_matches_the_dense_one():
    stats = two_series_stats()
    structured, dense = GradientOperator(stats), GradientOperator(dense_twin(stats))
    assert (structured.product, dense.product) == ("structured", "float64")
    rng = np.random.default_rng(1)
    for scale in (1e-3, 1.0):
        Ut = scale * rng.standard_normal(stats.b.T.shape)
        (g_s, loss_s), (g_d, loss_d) = structured(Ut), dense(Ut)
        assert relative(g_s, g_d) < 1e-12
        assert loss_s == pytest.approx(loss_d, rel=1e-10)


def test_many_sequences_and_statistics_without_pieces_use_the_dense_product():
    one = two_series_stats(lengths=(3000,))
    many = two_series_stats(lengths=(700,) * 40)
    assert hessian_product(one, exact=True) == "structured"
    assert hessian_product(many, exact=True) == "float64"  # 40 sequences' edge corrections cost more than A²
    assert hessian_product(dense_twin(one), exact=True) == "float64"


def test_pieces_that_do_not_make_the_statistics_are_refused():
    """E.g. a private A beside the true pieces: the gradient must be the one of the A given."""
    stats = two_series_stats(lengths=(3000,))
    noisy = replace(stats, A=stats.A + 1e-3 * np.eye(stats.n_params))
    with pytest.raises(ValueError, match="do not reproduce"):
        GradientOperator(noisy)


@pytest.mark.parametrize("config", [
    FitConfig(method="pgd", bin_size=0.1, lags=500, bound=2.0, iters=60, sigma2=1e-4, seed=3),
    FitConfig(method="cg", bin_size=0.1, lags=500, radius=1.0, iters=40, sigma2=1e-4, seed=3),
    FitConfig(method="pgd", bin_size=0.1, lags=500, bound=2.0, iters=30, sigma2=1e-4, count_cap=3,
              calibration="formal", seed=4),  # the formal path (exact arithmetic), noise small enough to matter
])
def test_seeded_dp_fits_agree_with_the_dense_path(config):
    stats = two_series_stats(cap=config.count_cap)  # the formal calibration needs counts clipped at its cap
    structured, dense = fit_stats(stats, config), fit_stats(dense_twin(stats), config)
    assert structured.info["hessian_product"] == "structured" and dense.info["hessian_product"] == "dense"
    assert structured.info["hessian_precision"] == dense.info["hessian_precision"] == "float64"
    assert structured.loss_history[-1] < structured.loss_history[0]  # the gradient steered the fit
    assert relative(structured.H, dense.H) < 1e-9
    np.testing.assert_allclose(structured.loss_history, dense.loss_history, rtol=1e-9)


def test_cost_model_follows_the_operators_choice():
    """paper-4d at Δ = 0.01 (d = 4, p = 500), K = 1000: the structured steps for one sequence, no A² to form;
    many sequences (or S unknown) are costed as the dense product they run."""
    one = estimate_fit_cost(27_519, 4, 500, "gradient", 1000, n_events=4000, sequences=1)
    unknown = estimate_fit_cost(27_519, 4, 500, "gradient", 1000, n_events=4000)
    many = estimate_fit_cost(27_519, 4, 500, "gradient", 1000, n_events=4000, sequences=2000)
    assert one.seconds < 5 < unknown.seconds == many.seconds


def test_fit_cost_gives_the_cost_model_the_sequences_the_fit_will_see():
    """The app's cost guard (:func:`fit_cost`) predicts DP-PGD's structured steps for a whole process and
    the dense ones for many sequences — as the gradient operator then runs them."""
    config = FitConfig(method="pgd", bin_size=0.01, lags=500, bound=1.0, iters=1000, sigma2=1.0)
    whole = Events((EventSequence((np.array([0.5, 40.0]), np.array([3.0]), np.array([]), np.array([9.0])), 60.0),),
                   tuple("abcd"), window_stated=True)
    many = Events(whole.sequences * 2000, whole.names, window_stated=True)
    assert fit_cost(whole, config) == estimate_fit_cost(6000, 4, 500, "gradient", 1000, n_events=4, sequences=1)
    assert fit_cost(many, config) == estimate_fit_cost(2000 * 6000, 4, 500, "gradient", 1000, n_events=8000,
                                                       sequences=2000)
    assert fit_cost(whole, config).seconds < 5 < fit_cost(many, config).seconds
