"""Seeded simulation of Hawkes processes with tick's ``SimuHawkes``."""

from __future__ import annotations

import numpy as np

from dphawkes_core.data.io import Events, from_arrays
from dphawkes_core.data.kernels import (
    BoxKernel,
    ExponentialKernel,
    Kernel,
    PowerLawKernel,
    Scenario,
    SumKernel,
    ZeroKernel,
)
from dphawkes_core.errors import ConfigError

MAX_SIMULATED_EVENTS = 2_000_000
SUM_GRID_POINTS = 20_000


def to_tick_kernel(kernel: Kernel):
    """Translate a kernel spec into the equivalent tick kernel object."""
    from tick.base import TimeFunction
    from tick.hawkes import HawkesKernel0, HawkesKernelExp, HawkesKernelPowerLaw, HawkesKernelTimeFunc

    if isinstance(kernel, ZeroKernel) or kernel.l1_norm() == 0:
        return HawkesKernel0()
    if isinstance(kernel, ExponentialKernel):
        return HawkesKernelExp(kernel.alpha, kernel.beta)
    if isinstance(kernel, PowerLawKernel):
        return HawkesKernelPowerLaw(kernel.multiplier, kernel.cutoff, kernel.exponent, support=kernel.support())
    if isinstance(kernel, BoxKernel):
        t = np.array([0.0, kernel.start, kernel.stop]) if kernel.start > 0 else np.array([0.0, kernel.stop])
        y = np.array([0.0, kernel.height, 0.0]) if kernel.start > 0 else np.array([kernel.height, 0.0])
        return HawkesKernelTimeFunc(TimeFunction((t, y), inter_mode=TimeFunction.InterConstRight))
    if isinstance(kernel, SumKernel):
        # A general sum has no tick class: tabulate it finely (piecewise-constant on the grid).
        grid = np.linspace(0.0, kernel.support(), SUM_GRID_POINTS + 1)
        values = kernel.value(grid)
        values[-1] = 0.0
        return HawkesKernelTimeFunc(TimeFunction((grid, values), inter_mode=TimeFunction.InterConstRight))
    raise ConfigError(f"unsupported kernel {kernel!r}")


def simulate(
    scenario: Scenario,
    n_events: int | None = None,
    end_time: float | None = None,
    seed: int = 0,
) -> Events:
    """Simulate one realisation of the scenario, stopping at ``n_events`` or at ``end_time``.

    Parameters
    ----------
    scenario : Scenario
        A stationary Hawkes process (explosive ones are refused).
    n_events : int, optional
        Stop after this many events in total; the window end is the last event's time.
    end_time : float, optional
        Simulate on ``[0, end_time]`` instead.
    seed : int
        Seed of tick's generator: the same seed gives the same events.

    Returns
    -------
    Events
        One sequence with dimension names ``"1" .. "d"``, its window ``[0, horizon]`` stated
        (``window_stated``): the simulation fixes it, no data are read to find it.
    """
    from tick.hawkes import SimuHawkes

    scenario.check_stationary()
    if (n_events is None) == (end_time is None):
        raise ConfigError("give exactly one of the number of events or the horizon")
    if n_events is not None:
        if not 1 <= int(n_events) <= MAX_SIMULATED_EVENTS:
            raise ConfigError(f"number of events must be between 1 and {MAX_SIMULATED_EVENTS:,}")
    else:
        expected = float(np.sum(scenario.stationary_rate())) * float(end_time)
        if not end_time > 0:
            raise ConfigError("the horizon must be positive")
        if expected > MAX_SIMULATED_EVENTS:
            raise ConfigError(
                f"a horizon of {end_time:g} would give about {expected:,.0f} events, "
                f"over the {MAX_SIMULATED_EVENTS:,} limit"
            )
    seed = int(seed) % (2**31 - 1)
    kernels = [[to_tick_kernel(k) for k in row] for row in scenario.kernels]
    sim = SimuHawkes(
        baseline=list(map(float, scenario.baseline)),
        kernels=kernels,
        seed=seed,
        verbose=False,
        **({"max_jumps": int(n_events)} if n_events is not None else {"end_time": float(end_time)}),
    )
    sim.simulate()
    horizon = float(sim.simulation_time) if n_events is not None else float(end_time)
    names = tuple(str(i + 1) for i in range(scenario.dim))
    return from_arrays([np.asarray(t, dtype=float) for t in sim.timestamps], end_time=horizon, names=names)
