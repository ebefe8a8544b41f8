"""Error metrics against closed forms."""

import numpy as np
import pytest

from dphawkes_core.evaluation.metrics import compare


def test_closed_forms():
    truth = np.array([[3.0, 0.0, 4.0], [0.0, 0.0, 0.0]])  # ||H|| = 5, d(dp+1) = 6
    est = np.array([[3.0, 0.0, 1.0], [0.0, 4.0, 0.0]])  # diff norm = sqrt(9 + 16) = 5
    r = compare(est, truth)
    assert r.relative_error == pytest.approx(1.0)
    assert r.relative_error_paper == pytest.approx(1.0 / 6)
    assert r.kernel_relative_error == pytest.approx(4.0 / 3.0)  # kernel part: [[3,0],[0,0]] vs [[3,0],[0,4]]
    assert r.baseline_relative_error == pytest.approx(3.0 / 4.0)  # baseline [4,0] vs [1,0]
    assert r.zero_estimate_relative_error == 1.0
    assert r.zero_estimate_relative_error_paper == pytest.approx(1.0 / 6)


def test_zero_estimate_scores_exactly_its_reference_and_perfect_scores_zero():
    truth = np.random.default_rng(0).random((3, 16))
    zero = compare(np.zeros_like(truth), truth)
    assert zero.relative_error == pytest.approx(zero.zero_estimate_relative_error)
    assert zero.relative_error_paper == pytest.approx(zero.zero_estimate_relative_error_paper)
    assert compare(truth, truth).relative_error == 0.0


def test_papers_metric_shrinks_with_p_for_the_same_plain_error():
    small = compare(np.zeros((2, 11)), np.ones((2, 11)))
    large = compare(np.zeros((2, 101)), np.ones((2, 101)))
    assert small.relative_error == large.relative_error == 1.0
    assert large.relative_error_paper < small.relative_error_paper / 9


def test_shape_mismatch_is_an_error():
    with pytest.raises(ValueError, match="shape"):
        compare(np.zeros((2, 3)), np.zeros((2, 5)))


def test_constraint_ratio_closed_forms():
    from dphawkes_core.estimators import get_family
    from dphawkes_core.evaluation.metrics import constraint_ratio

    H = np.array([[3.0, 0.0], [0.0, 4.0]])  # ||H||_F = 5, ||H||_* = 7
    assert constraint_ratio(get_family("pgd").privacy.constraint, H, 0.1, 2.5) == pytest.approx(0.5)
    assert constraint_ratio(get_family("cg").privacy.constraint, H, 0.1, 0.35) == pytest.approx(0.5)  # ||ΔH||_* = 0.7
    assert constraint_ratio(get_family("cls").privacy.constraint, H, 0.1, 2.5) is None
    assert constraint_ratio("bound", H, 0.1, None) is None
