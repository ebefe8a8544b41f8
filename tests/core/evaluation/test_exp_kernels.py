"""The exponential family's kernels as smooth functions: values and primitives against the closed form and quadrature,
the held-out score against tick's sum-of-exponentials likelihood, and the exported table of an ``exp`` fit."""

import json

import numpy as np
import pytest
from scipy.integrate import quad

from dphawkes_cli.main import main
from dphawkes_core.data.io import from_arrays
from dphawkes_core.data.kernels import ExponentialKernel
from dphawkes_core.evaluation.exp_kernels import ExponentialKernels
from dphawkes_experiments.prediction import heldout_split, score_heldout

DECAYS = np.array([0.7, 1.5, 3.0])


def _kernels(window: float = 4.0) -> ExponentialKernels:
    rng = np.random.default_rng(0)
    return ExponentialKernels(rng.uniform(0.0, 0.15, (2, 2, DECAYS.size)), DECAYS, np.array([0.3, 0.2]), window)


def test_values_are_the_sum_of_the_decays_exponential_kernels():
    kernels = _kernels()
    t = np.linspace(-1.0, 10.0, 57)
    for i in range(2):
        for j in range(2):
            expected = sum(ExponentialKernel(a, b).value(t) for a, b in zip(kernels.adjacency[i, j], DECAYS))
            expected = np.where(t > 0, expected, 0.0)
            np.testing.assert_allclose(kernels.values_at(t)[i, j], expected, rtol=1e-13, atol=0)


def test_primitive_is_the_integral_of_the_values():
    kernels = _kernels()
    for upper in (0.0, 0.37, 2.5, 12.0):
        numeric = [[quad(lambda x, i=i, j=j: kernels.values_at(np.array([x]))[i, j, 0], 0.0, upper, epsabs=0,
                         epsrel=1e-12)[0] for j in range(2)] for i in range(2)]
        np.testing.assert_allclose(kernels.primitive_at(np.array([upper]))[:, :, 0], numeric, rtol=1e-10, atol=1e-15)
    assert kernels.support >= np.log(1e12) / DECAYS.min()  # the tail beyond is below 1e-12 of each kernel's mass
    far = kernels.primitive_at(np.array([kernels.support]))[:, :, 0]
    np.testing.assert_allclose(far, kernels.adjacency.sum(axis=2), rtol=1e-11)


def test_table_covers_the_window_at_a_step_of_at_most_a_thousandth():
    kernels = _kernels(window=4.0)
    table = kernels.function_table()
    t = table["t"]
    assert table["kind"] == "smooth" and t[0] == 0.0 and t[-1] == pytest.approx(4.0)
    assert np.max(np.diff(t)) <= 4.0 / 1000 * (1 + 1e-12)
    np.testing.assert_allclose(table["values"][:, :, 1:], kernels.values_at(t[1:]), rtol=1e-15)
    np.testing.assert_allclose(table["values"][:, :, 0], kernels.adjacency @ DECAYS, rtol=1e-13)  # t → 0⁺


def _tick_loglik(times, end, kernels: ExponentialKernels) -> float:
    """The log-likelihood over [0, end] of tick's ModelHawkesSumExpKernLogLik: its loss is −(ℓ + d·T) / events (as
    HawkesEM.score, the sum starts at T per dimension), undone here."""
    from tick.hawkes import ModelHawkesSumExpKernLogLik

    model = ModelHawkesSumExpKernLogLik(kernels.decays)
    model.fit([np.ascontiguousarray(t) for t in times], end_times=end)
    coeffs = np.concatenate([kernels.baseline, kernels.adjacency.ravel()])
    return -model.loss(coeffs) * sum(len(t) for t in times) - len(times) * end


def test_heldout_score_equals_ticks_likelihood_of_the_test_part():
    from tick.hawkes import SimuHawkesSumExpKernels

    kernels = _kernels()
    sim = SimuHawkesSumExpKernels(adjacency=kernels.adjacency, decays=kernels.decays, baseline=kernels.baseline,
                                  end_time=3000.0, seed=5, verbose=False)
    sim.simulate()
    times = [np.asarray(t, float) for t in sim.timestamps]
    end, cut = 3000.0, 2100.0
    score = score_heldout(kernels, kernels.baseline, heldout_split(from_arrays(times, end_time=end), cut))
    full = _tick_loglik(times, end, kernels)
    train = _tick_loglik([t[t < cut] for t in times], cut, kernels)
    assert score.n_test_events == sum(np.count_nonzero(t >= cut) for t in times) > 300
    assert score.loglik_per_event == pytest.approx((full - train) / score.n_test_events, rel=1e-9)
    assert score.gain_over_poisson > 0  # the true model predicts better than Poisson


def test_an_exp_fit_exports_its_exponential_sums(tmp_path):
    events = tmp_path / "events.csv"
    assert main(["simulate", "--scenario", "paper-2d", "--events", "3000", "--seed", "3", "--out", str(events)]) == 0
    out = tmp_path / "fit.json"
    assert main(["fit", str(events), "--bin-size", "0.5", "--support", "4", "--method", "exp", "--sigma2", "0",
                 "--decays", "0.7,1.5,3", "--json", str(out)]) == 0
    payload = json.loads(out.read_text())
    table, info = payload["kernel_functions"], payload["solver_info"]
    t, values = np.asarray(table["t"]), np.asarray(table["values"])
    assert table["kind"] == "smooth" and t[-1] == pytest.approx(payload["support"])
    assert np.max(np.diff(t)) <= payload["support"] / 1000 * (1 + 1e-12)
    a, beta = np.asarray(info["adjacency"]), np.asarray(info["decays"])
    expected = np.einsum("iju,un->ijn", a, beta[:, None] * np.exp(-np.outer(beta, t[1:])))
    np.testing.assert_allclose(values[:, :, 1:], expected, rtol=1e-12, atol=1e-300)
    # The estimate on the lag grid is the mean of these functions over each step (trapezoid on the fine table).
    delta, kernels = payload["bin_size"], np.asarray(payload["kernels"])
    per_step = len(t) // kernels.shape[2]
    means = np.stack([np.trapezoid(values[:, :, k * per_step:(k + 1) * per_step + 1], t[k * per_step:(k + 1) * per_step
                                                                                        + 1], axis=2) / delta
                      for k in range(kernels.shape[2])], axis=2)
    np.testing.assert_allclose(means, kernels, rtol=1e-4, atol=1e-8 * np.max(np.abs(kernels)))
    assert "kernel_functions" in payload["private_fields"]
