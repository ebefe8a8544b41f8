"""Lag averaging (fine Δ averaged into bins of width w = mΔ) and the grid-free kernel error, against
independent facts: block-constant kernels, the least-squares projection onto block-constant kernels,
closed-form integrals, and the CLI's ``--average-width``."""

import json
import math

import numpy as np
import pytest

from dphawkes_cli.main import main
from dphawkes_core.data.kernels import BoxKernel, ExponentialKernel, Scenario, get_scenario
from dphawkes_core.data.simulate import simulate
from dphawkes_core.errors import ConfigError
from dphawkes_core.estimators import FitConfig, fit
from dphawkes_core.evaluation.lag_average import average_fit, average_lags, block_for_width, fit_steps
from dphawkes_core.evaluation.metrics import function_relative_error, kernel_function_error, midpoint_grid
from dphawkes_core.evaluation.step_kernels import StepKernels
from dphawkes_core.privacy.report import NOT_RELEASED


@pytest.fixture(scope="module")
def cls_fit():
    events = simulate(get_scenario("paper-2d"), n_events=2000, seed=3)
    result, _ = fit(events, FitConfig(bin_size=0.1, lags=50))
    return result


@pytest.mark.parametrize("p, block", [(12, 3), (14, 4), (5, 5), (7, 1)])
def test_block_constant_kernels_average_to_their_constants(p, block):
    rng = np.random.default_rng(p)
    n = math.ceil(p / block)
    constants = rng.normal(size=(2, 2, n))
    kernels = np.repeat(constants, block, axis=2)[:, :, :p]  # the last block shorter when m does not divide p
    steps = average_lags(kernels, np.array([0.3, 0.1]), 0.25, block)
    np.testing.assert_allclose(steps.values, constants, rtol=1e-12)
    np.testing.assert_allclose(steps.edges, 0.25 * np.minimum(np.arange(n + 1) * block, p))
    np.testing.assert_array_equal(steps.baseline, [0.3, 0.1])
    assert steps.width == pytest.approx(0.25 * block) and steps.support == pytest.approx(0.25 * p)


@pytest.mark.parametrize("block", [5, 7, 50])
def test_average_of_a_cls_fit_is_the_least_squares_block_constant_fit_of_its_coefficients(cls_fit, block):
    """The mean over each block is the restricted least-squares fit (constant per block) of the per-lag
    coefficients: (BᵀB)⁻¹BᵀH with B the lag-to-block indicator matrix, solved here by numpy's lstsq."""
    p = cls_fit.lags
    indicator = (np.arange(p)[:, None] // block == np.arange(math.ceil(p / block))[None, :]).astype(float)
    coefficients = cls_fit.kernels.reshape(-1, p).T  # one column per pair (i, j)
    restricted = np.linalg.lstsq(indicator, coefficients, rcond=None)[0].T.reshape(2, 2, -1)
    steps = average_fit(cls_fit, block * cls_fit.bin_size)
    np.testing.assert_allclose(steps.values, restricted, rtol=1e-10, atol=1e-12)
    np.testing.assert_array_equal(steps.baseline, cls_fit.baseline)


def test_step_values_are_left_open_right_closed_and_zero_outside():
    steps = StepKernels(values=np.array([[[1.0, 2.0, 3.0]]]), edges=np.array([0.0, 0.5, 1.5, 2.0]),
                        baseline=np.array([0.1]), bin_size=0.5, block=1)
    t = np.array([-1.0, 0.0, 0.2, 0.5, 0.51, 1.5, 1.9, 2.0, 2.01])
    np.testing.assert_array_equal(steps.values_at(t)[0, 0], [0, 0, 1, 1, 2, 2, 3, 3, 0])


def test_the_plain_fit_as_steps_reads_each_coefficient_on_its_own_bin(cls_fit):
    steps = fit_steps(cls_fit)
    k = np.array([1, 10, 50])
    t = cls_fit.bin_size * (k - 0.5)  # inside the bins ((k−1)Δ, kΔ]
    np.testing.assert_array_equal(steps.values_at(t), cls_fit.kernels[:, :, k - 1])


@pytest.mark.parametrize("width, bin_size, lags, block", [(0.3, 0.1, 50, 3), (0.1, 0.01, 500, 10), (5.0, 0.1, 50, 50)])
def test_a_multiple_of_the_bin_size_within_float_tolerance_gives_the_block(width, bin_size, lags, block):
    assert block_for_width(width, bin_size, lags) == block


@pytest.mark.parametrize("width, words", [(0.15, "multiple"), (0.05, "multiple"), (5.1, "wider"), (0.0, "positive"),
                                          (-0.2, "positive"), (float("nan"), "positive")])
def test_a_bad_width_is_refused_with_the_reason(width, words):
    with pytest.raises(ConfigError, match=words):
        block_for_width(width, 0.1, 50)


def _one_kernel(kernel) -> Scenario:
    return Scenario(name="custom", baseline=(0.1,), kernels=((kernel,),))


def test_grid_free_error_of_a_step_against_a_box_is_the_closed_form():
    steps = StepKernels(values=np.array([[[0.2, 0.6]]]), edges=np.array([0.0, 2.0, 5.0]),
                        baseline=np.array([0.1]), bin_size=1.0, block=1)
    box = _one_kernel(BoxKernel(0.5, 1.0, 3.0))
    # ∫_0^5 (ĥ − h)²: 0.2² on (0,1), 0.3² on (1,2), 0.1² on (2,3), 0.6² on (3,5); ∫h² = 0.5² · 2
    expected = math.sqrt((0.04 + 0.09 + 0.01 + 2 * 0.36) / 0.5)
    assert kernel_function_error(steps, box) == pytest.approx(expected, rel=1e-9)


def test_grid_free_error_of_a_step_against_an_exponential_is_the_closed_form():
    alpha, beta = 0.5, 2.0
    steps = StepKernels(values=np.array([[[0.3, 0.05]]]), edges=np.array([0.0, 1.0, 4.0]),
                        baseline=np.array([0.1]), bin_size=1.0, block=1)

    def squared(c, a, b):  # ∫_a^b (c − αβe^{−βt})² dt
        return (c * c * (b - a) - 2 * c * alpha * (math.exp(-beta * a) - math.exp(-beta * b))
                + alpha**2 * beta / 2 * (math.exp(-2 * beta * a) - math.exp(-2 * beta * b)))

    expected = math.sqrt((squared(0.3, 0, 1) + squared(0.05, 1, 4)) / squared(0.0, 0, 4))
    assert kernel_function_error(steps, _one_kernel(ExponentialKernel(alpha, beta))) == pytest.approx(
        expected, rel=1e-6
    )


def test_the_all_zero_estimate_has_grid_free_error_one_on_any_bins():
    scenario = get_scenario("paper-2d")
    for edges in (np.linspace(0, 5, 51), np.array([0.0, 0.7, 5.0])):
        zero = StepKernels(values=np.zeros((2, 2, edges.size - 1)), edges=edges, baseline=np.zeros(2), bin_size=0.1,
                           block=1)
        assert kernel_function_error(zero, scenario) == 1.0


def test_midpoint_grid_covers_the_support_in_equal_cells_and_caps_its_size():
    t = midpoint_grid(5.0)
    assert t.size == 5000 and t[0] == pytest.approx(5e-4) and t[-1] == pytest.approx(5 - 5e-4)
    big = midpoint_grid(1e4, max_points=1000)
    assert big.size == 1000 and np.allclose(np.diff(big), 10.0)
    assert function_relative_error(np.ones((1, 1, 3)), np.ones((1, 1, 3))) == 0.0


def test_averaging_a_fine_fit_comes_closer_to_the_truth_than_the_fine_fit(cls_fit):
    """At 2000 events the per-lag coefficients at Δ = 0.1 are noisy: the average over 0.5-wide bins,
    which the box kernels' jumps at 1, 2, 3, 4 line up with, has less error on the grid-free metric."""
    scenario = get_scenario("paper-2d")
    assert kernel_function_error(average_fit(cls_fit, 0.5), scenario) < kernel_function_error(
        fit_steps(cls_fit), scenario
    )


@pytest.fixture(scope="module")
def events_csv(tmp_path_factory):
    path = tmp_path_factory.mktemp("lag_average") / "events.csv"
    assert main(["simulate", "--scenario", "paper-2d", "--events", "1000", "--seed", "1", "--out", str(path)]) == 0
    return path


def _fit_json(events_csv, tmp_path, *extra) -> dict:
    out = tmp_path / "fit.json"
    assert main(["fit", str(events_csv), "--bin-size", "0.1", "--support", "5", "--json", str(out), *extra]) == 0
    return json.loads(out.read_text())


def test_cli_exports_the_averaged_kernels_and_both_grid_free_errors(events_csv, tmp_path):
    payload = _fit_json(events_csv, tmp_path, "--scenario", "paper-2d", "--average-width", "0.5")
    kernels = np.asarray(payload["kernels"])
    averaged = payload["lag_average"]
    assert averaged["block"] == 5 and averaged["width"] == pytest.approx(0.5)
    np.testing.assert_allclose(averaged["kernels"], kernels.reshape(2, 2, 10, 5).mean(axis=3), rtol=1e-12)
    np.testing.assert_allclose(averaged["edges"], 0.5 * np.arange(11))
    np.testing.assert_allclose(averaged["baseline"], payload["baseline"])
    t = (np.arange(5000) + 0.5) * 1e-3  # independent grid-free error of the plain fit: H_k on ((k−1)Δ, kΔ]
    truth = get_scenario("paper-2d").kernel_values(t)
    plain = kernels[:, :, np.ceil(t / 0.1).astype(int) - 1]
    assert payload["kernel_function_error"] == pytest.approx(
        np.sqrt(np.sum((plain - truth) ** 2) / np.sum(truth**2)), rel=1e-9)
    assert 0 < payload["averaged_kernel_function_error"] < 1.5
    assert payload["zero_estimate_kernel_function_error"] == 1.0
    assert payload["metrics"]["averaged_kernel_function_error"] == payload["averaged_kernel_function_error"]


def test_cli_without_the_truth_exports_the_average_only_and_without_the_flag_nothing(events_csv, tmp_path):
    payload = _fit_json(events_csv, tmp_path, "--average-width", "0.3")
    assert payload["lag_average"]["block"] == 3 and np.asarray(payload["lag_average"]["kernels"]).shape == (2, 2, 17)
    assert "kernel_function_error" not in payload
    assert "lag_average" not in _fit_json(events_csv, tmp_path, "--scenario", "paper-2d")


def test_cli_private_fit_lists_its_average_among_the_private_fields(events_csv, tmp_path):
    end = str(math.ceil(float(np.loadtxt(events_csv, delimiter=",", skiprows=1, usecols=0).max())))
    payload = _fit_json(events_csv, tmp_path, "--method", "ssp", "--calibration", "formal", "--epsilon", "1",
                        "--count-cap", "3", "--end-time", end, "--dimensions", "2", "--average-width", "1")
    assert "lag_average" in payload["private_fields"] and payload["formal_settings"] is True  # no --ledger: not
    assert payload["formal_reasons"] == [NOT_RELEASED]  # itself a session's release, its settings formal
    assert "no privacy cost" in payload["lag_average"]["note"]


@pytest.mark.parametrize("width, words", [("0.15", "whole multiple"), ("6", "wider than the support"),
                                          ("-1", "positive number"), ("abc", "not a number")])
def test_cli_bad_width_is_one_line_and_exit_2(events_csv, capsys, width, words):
    code = main(["fit", str(events_csv), "--bin-size", "0.1", "--support", "5", "--average-width", width])
    err = capsys.readouterr().err
    assert code == 2 and words in err and len(err.strip().splitlines()) == 1
