"""Simulation through tick: reproducibility and agreement with the process's closed-form rate."""

import numpy as np
import pytest

from dphawkes_core.data.kernels import BoxKernel, ExponentialKernel, PowerLawKernel, Scenario, SumKernel, get_scenario
from dphawkes_core.data.simulate import simulate, to_tick_kernel
from dphawkes_core.errors import ConfigError


def test_same_seed_same_events_different_seed_different_events():
    sc = get_scenario("paper-2d")
    a, b, c = (simulate(sc, n_events=300, seed=s) for s in (7, 7, 8))
    for j in range(2):
        np.testing.assert_array_equal(a.sequences[0].times[j], b.sequences[0].times[j])
    assert not np.array_equal(a.sequences[0].times[0], c.sequences[0].times[0])
    assert a.n_events == 300


@pytest.mark.parametrize("size", [{"n_events": 200}, {"end_time": 50.0}])
def test_simulated_data_carry_their_stated_window(size):
    events = simulate(get_scenario("paper-2d"), seed=2, **size)
    assert events.window_stated and events.outside_window == 0
    assert events.sequences[0].start_time == 0.0
    last = max(t[-1] for t in events.sequences[0].times)
    assert last <= events.end_time == size.get("end_time", last)


@pytest.mark.parametrize("name", ["paper-2d", "paper-4d"])
def test_empirical_rate_matches_stationary_rate(name):
    sc = get_scenario(name)
    events = simulate(sc, end_time=4000.0 if name == "paper-2d" else 5000.0, seed=3)
    rate = events.counts_per_dimension() / events.end_time
    # loose: paper-4d is near-critical (spectral radius 0.976), so its rate converges slowly
    np.testing.assert_allclose(rate.sum(), sc.stationary_rate().sum(), rtol=0.2)


@pytest.mark.parametrize(
    "kernel",
    [ExponentialKernel(0.3, 2.0), PowerLawKernel(0.2, 1.0, 3.0), BoxKernel(0.1, 1.0, 3.0),
     SumKernel((ExponentialKernel(0.1, 1.0), BoxKernel(0.05, 0.5, 2.0)))],
    ids=lambda k: type(k).__name__,
)
def test_tick_kernel_has_the_same_values_and_norm(kernel):
    tk = to_tick_kernel(kernel)
    t = np.array([0.3, 0.7, 1.5, 2.2, 2.9])
    np.testing.assert_allclose([tk.get_value(x) for x in t], kernel.value(t), rtol=2e-3, atol=1e-4)
    assert tk.get_norm() == pytest.approx(kernel.l1_norm(), rel=2e-3)


def test_explosive_and_absurd_requests_are_refused():
    with pytest.raises(ConfigError, match="explosive"):
        simulate(Scenario("x", (0.1,), ((ExponentialKernel(1.0, 1.0),),)), n_events=10)
    with pytest.raises(ConfigError, match="limit"):
        simulate(get_scenario("paper-2d"), end_time=1e9)
    with pytest.raises(ConfigError, match="exactly one"):
        simulate(get_scenario("paper-2d"))
