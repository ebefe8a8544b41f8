"""CLS against tick's HawkesEM on a grid-free kernel error (the table of ``docs/accuracy.md``).

Usage::

    nice .venv/bin/python -m benchmarks.accuracy_em [--sizes 10000 100000 1000000]
        [--bin-sizes 0.5 0.2 0.1 0.05 0.02 0.01] [--cache /tmp/dphawkes_accuracy] [--private DRAWS]

Metric (the same for every estimator, independent of any lag grid; ``dphawkes_core.evaluation.metrics``, which the
CLI and the app report too): the relative L2 error of the kernel *functions* over the support ``[0, s]``, s = 5,

    err(ĥ) = sqrt( Σ_ij ∫_0^s (ĥ_ij(t) − h_ij(t))² dt ) / sqrt( Σ_ij ∫_0^s h_ij(t)² dt ),

with both integrals taken by the midpoint rule on a grid of step 10⁻³ (5000 points; finer grids change
the figures in the fourth digit). ``h`` is the true kernel function. EM's estimate is its histogram
function (``get_kernel_values``). A binned estimate ``H_k`` (k = 1..p, our kernels at lag kΔ) is turned
into a function in three ways, reported side by side:

* ``step``    — ĥ(t) = H_k on ((k−1)Δ, kΔ]: the binned step estimate as the bins lie;
* ``centred`` — ĥ(t) = H_k on ((k−½)Δ, (k+½)Δ] (and H_1 on (0, Δ/2]): the step centred on the lag kΔ;
* ``linear``  — ĥ linear between the points (kΔ, H_k) (constant H_1 below Δ).

Besides the raw estimates, two analyses of the gap:

* ``aggregated`` — CLS fitted at a fine Δ (0.01) and averaged over blocks of m lags into a histogram of
  width w = mΔ on ((k−1)w, kw], the same form as EM's histogram (w = 0.1 ↔ K = 50, w = 0.2 ↔ K = 25),
  by :func:`dphawkes_core.evaluation.lag_average.average_fit` (what ``dphawkes fit --average-width`` and the app offer);
* the INAR limit — what CLS converges to for a fixed Δ as the data grow (Kirchner's approximation):
  α_k/Δ → ∫ h(kΔ + u)(1 − |u|/Δ)/Δ du, the truth averaged with a triangle of half-width Δ around kΔ.
  Its error is the discretisation bias no amount of data removes; the best step function of width Δ
  (bin averages of the truth) is the floor of the representation itself.

With ``--private DRAWS``, the same question for a private fit: formal DP-SSP (ε = 1, C chosen privately)
per lag at Δ = w against Δ = 0.01 averaged to w, over DRAWS seeded noise draws.

Simulations (paper-2d, seed 1) and EM fits are cached under ``--cache`` as ``.npz`` files, so a
re-run only repeats the CLS fits. EM: ``HawkesEM(kernel_support=5, kernel_size=K, max_iter=50,
tol=1e-6)``, K = 50 and 25 (histogram bins of width 0.1 and 0.2, aligned with the box kernels' jumps at
1, 2, 3, 4). Timings are single-process wall clock on the machine stated in the output, BLAS and tick at
one thread.
"""

from __future__ import annotations

import argparse
import os
import platform
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

from dphawkes_core.data.io import Events, from_arrays
from dphawkes_core.data.kernels import Scenario, get_scenario
from dphawkes_core.data.simulate import simulate
from dphawkes_core.estimators import FitConfig, fit
from dphawkes_core.evaluation.lag_average import average_fit, average_lags, fit_steps
from dphawkes_core.evaluation.metrics import FUNCTION_GRID_STEP, function_relative_error, midpoint_grid
from dphawkes_core.statistics.binning import lags_from_support
from dphawkes_core.threads import blas_settings, blas_threads

SUPPORT = 5.0
EM_KERNEL_SIZES = (50, 25)
EM_MAX_ITER = 50
PLACEMENTS = ("step", "centred", "linear")
FINE_BIN_SIZE = 0.01
AGGREGATE_WIDTHS = (0.1, 0.2)
PRIVATE_EPSILON = 1.0


def binned_kernel_function(kernels: np.ndarray, bin_size: float, t: np.ndarray, placement: str) -> np.ndarray:
    """A binned estimate ``kernels[i, j, k]`` (lag (k+1)Δ) as a function on ``t``, shape ``(d, d, len(t))``."""
    p = kernels.shape[2]
    if placement == "linear":
        lag_times = bin_size * np.arange(1, p + 1)
        return np.array([[np.interp(t, lag_times, kij, right=0.0) for kij in row] for row in kernels])
    steps = average_lags(kernels, np.zeros(kernels.shape[0]), bin_size, 1)  # H_k on ((k−1)Δ, kΔ]
    if placement == "centred":  # H_k on ((k−½)Δ, (k+½)Δ], and H_1 down to 0
        steps = replace(steps, edges=np.append(0.0, bin_size * (np.arange(1, p + 1) + 0.5)))
    return steps.values_at(t)


def cached_events(scenario: Scenario, n_events: int, cache: Path) -> Events:
    """paper-2d simulated with seed 1, cached as ``.npz`` (tick's simulation of 10⁶ events takes minutes)."""
    path = cache / f"{scenario.name}_{n_events}_seed1.npz"
    if path.exists():
        data = np.load(path)
        times = [data[f"t{j}"] for j in range(scenario.dim)]
        return from_arrays(times, end_time=float(data["end_time"]))
    events = simulate(scenario, n_events=n_events, seed=1)
    seq = events.sequences[0]
    np.savez(path, end_time=seq.end_time, **{f"t{j}": t for j, t in enumerate(seq.times)})
    return events


def inar_limit(scenario: Scenario, bin_size: float, lags: int, nodes: int = 801) -> np.ndarray:
    """``(d, d, p)``: the truth averaged with a triangle of half-width Δ around each lag kΔ (CLS's limit)."""
    u = np.linspace(-bin_size, bin_size, nodes)[1:-1]
    weight = 1.0 - np.abs(u) / bin_size
    weight /= weight.sum()
    lag_times = bin_size * np.arange(1, lags + 1)
    values = scenario.kernel_values((lag_times[:, None] + u[None, :]).ravel())
    return values.reshape(scenario.dim, scenario.dim, lags, u.size) @ weight


def bin_average(scenario: Scenario, bin_size: float, lags: int, nodes: int = 800) -> np.ndarray:
    """``(d, d, p)``: the truth's mean over each bin ((k−1)Δ, kΔ] (the best step function of width Δ)."""
    u = (np.arange(nodes) + 0.5) / nodes * bin_size
    starts = bin_size * np.arange(lags)
    values = scenario.kernel_values((starts[:, None] + u[None, :]).ravel())
    return values.reshape(scenario.dim, scenario.dim, lags, nodes).mean(axis=3)


def cached_em(events: Events, n_events: int, kernel_size: int, t: np.ndarray,
              cache: Path) -> tuple[np.ndarray, float, int]:
    """EM's kernel function on ``t``, its fit time (s) and the tick threads used, cached as ``.npz``."""
    path = cache / f"em_{n_events}_k{kernel_size}_it{EM_MAX_ITER}.npz"
    if path.exists():
        data = np.load(path)
        return data["values"], float(data["seconds"]), int(data["threads"])
    from tick.hawkes import HawkesEM

    threads = 1
    em = HawkesEM(kernel_support=SUPPORT, kernel_size=kernel_size, n_threads=threads, max_iter=EM_MAX_ITER,
                  tol=1e-6, verbose=False)
    start = time.perf_counter()
    em.fit([np.ascontiguousarray(x, dtype=float) for x in events.sequences[0].times])
    seconds = time.perf_counter() - start
    d = events.dim
    values = np.array([[em.get_kernel_values(i, j, t) for j in range(d)] for i in range(d)])
    np.savez(path, values=values, seconds=seconds, threads=threads)
    return values, seconds, threads


def timed_cls(events: Events, bin_size: float):
    """CLS at Δ with support s: the result and its wall time (binning + statistics + solve)."""
    config = FitConfig(bin_size=bin_size, lags=lags_from_support(SUPPORT, bin_size))
    start = time.perf_counter()
    result, _ = fit(events, config)
    return result, time.perf_counter() - start


def print_cls_table(events: Events, scenario: Scenario, truth: np.ndarray, t: np.ndarray, bin_sizes) -> None:
    """One row per Δ: the error under each placement, the distance to the INAR limit, the time."""
    print("| CLS Δ | p | step | centred | linear | ‖Ĥ − INAR limit‖/‖limit‖ | time |\n|---|---|---|---|---|---|---|")
    for delta in bin_sizes:
        result, seconds = timed_cls(events, delta)
        errors = [function_relative_error(binned_kernel_function(result.kernels, delta, t, placement), truth)
                  for placement in PLACEMENTS]
        limit = inar_limit(scenario, delta, result.lags)
        to_limit = np.linalg.norm(result.kernels - limit) / np.linalg.norm(limit)
        print(f"| {delta:g} | {result.lags} | " + " | ".join(f"{e:.4f}" for e in errors)
              + f" | {to_limit:.4f} | {seconds:.2f} s |", flush=True)


def print_aggregated_table(events: Events, truth: np.ndarray, t: np.ndarray) -> None:
    """CLS at ``FINE_BIN_SIZE`` averaged into histograms of each width in ``AGGREGATE_WIDTHS``."""
    result, seconds = timed_cls(events, FINE_BIN_SIZE)
    print(f"| CLS Δ = {FINE_BIN_SIZE:g} aggregated to width w | error (step) | time (fit; averaging is free) |"
          "\n|---|---|---|")
    for width in AGGREGATE_WIDTHS:
        error = function_relative_error(average_fit(result, width).values_at(t), truth)
        print(f"| w = {width:g} | {error:.4f} | {seconds:.2f} s |", flush=True)


def print_private_table(events: Events, truth: np.ndarray, t: np.ndarray, repeats: int) -> None:
    """Formal DP-SSP (ε = 1, C chosen privately, the CLI's defaults otherwise) at Δ = 0.1 and 0.2 per lag, and
    at ``FINE_BIN_SIZE`` per lag and averaged into each width of ``AGGREGATE_WIDTHS``: mean error (min–max)
    over ``repeats`` seeded noise draws (experiments, not private releases)."""
    print(f"| DP-SSP, ε = 1, auto C ({repeats} noise draws) | error mean (min–max) | C | time per fit |"
          "\n|---|---|---|---|")
    for delta in (*AGGREGATE_WIDTHS, FINE_BIN_SIZE):  # per lag at Δ = w, then the fine fit averaged to w
        widths = AGGREGATE_WIDTHS if delta == FINE_BIN_SIZE else ()
        errors, caps, seconds = np.zeros((repeats, 1 + len(widths))), set(), 0.0
        for seed in range(repeats):
            config = FitConfig(method="ssp", calibration="formal", epsilon=PRIVATE_EPSILON, count_cap="auto",
                               bin_size=delta, lags=lags_from_support(SUPPORT, delta), seed=seed)
            start = time.perf_counter()
            result, info = fit(events, config)
            seconds += time.perf_counter() - start
            caps.add(info["count_cap"])
            errors[seed] = [function_relative_error(steps.values_at(t), truth)
                            for steps in (fit_steps(result), *(average_fit(result, w) for w in widths))]
        labels = [f"Δ = {delta:g}, per lag"] + [f"Δ = {delta:g} averaged to w = {w:g}" for w in widths]
        for label, column in zip(labels, errors.T):
            print(f"| {label} | {column.mean():.4f} ({column.min():.4f}–{column.max():.4f}) | "
                  f"{', '.join(map(str, sorted(caps)))} | {seconds / repeats:.1f} s |", flush=True)


def print_bias_table(scenario: Scenario, truth: np.ndarray, t: np.ndarray, bin_sizes) -> None:
    """The error of the INAR limit (no data noise) and of the best step function, per Δ."""
    print("| Δ | INAR limit as step | as linear | best step of width Δ (bin averages) |\n|---|---|---|---|")
    for delta in bin_sizes:
        lags = lags_from_support(SUPPORT, delta)
        limit = inar_limit(scenario, delta, lags)
        floor = bin_average(scenario, delta, lags)
        print(f"| {delta:g} | {function_relative_error(binned_kernel_function(limit, delta, t, 'step'), truth):.4f} | "
              f"{function_relative_error(binned_kernel_function(limit, delta, t, 'linear'), truth):.4f} | "
              f"{function_relative_error(binned_kernel_function(floor, delta, t, 'step'), truth):.4f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    parser.add_argument("--bin-sizes", type=float, nargs="+", default=[0.5, 0.2, 0.1, 0.05, 0.02, 0.01])
    parser.add_argument("--cache", type=Path, default=Path("/tmp/dphawkes_accuracy"))
    parser.add_argument("--no-em", action="store_true", help="skip EM (its cached results are still shown)")
    parser.add_argument("--private", type=int, metavar="DRAWS", default=0,
                        help="also DP-SSP (ε = 1) per lag and averaged, over DRAWS seeded noise draws (slow: the "
                             "non-negative solve at Δ = 0.01 takes about a minute per fit)")
    args = parser.parse_args()
    args.cache.mkdir(parents=True, exist_ok=True)
    scenario = get_scenario("paper-2d")
    t = midpoint_grid(SUPPORT)
    truth = scenario.kernel_values(t)
    print(f"# {platform.node()}: {os.cpu_count()} CPUs, Python {platform.python_version()}, "
          f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")
    with blas_threads():
        print(f"# BLAS: {blas_settings()}; metric: relative L2 of kernel functions on [0, {SUPPORT:g}], "
              f"midpoint grid step {FUNCTION_GRID_STEP:g}")
        for n in args.sizes:
            events = cached_events(scenario, n, args.cache)
            print(f"\n### {events.n_events:,} events (T = {events.end_time:.0f})\n", flush=True)
            print("| HawkesEM | error | time |\n|---|---|---|")
            for size in EM_KERNEL_SIZES:
                if args.no_em and not (args.cache / f"em_{n}_k{size}_it{EM_MAX_ITER}.npz").exists():
                    continue
                em_values, em_s, threads = cached_em(events, n, size, t, args.cache)
                print(f"| K = {size} (width {SUPPORT / size:g}), {EM_MAX_ITER} iterations, {threads} thread | "
                      f"{function_relative_error(em_values, truth):.4f} | {em_s:.1f} s |", flush=True)
            print()
            print_cls_table(events, scenario, truth, t, args.bin_sizes)
            print()
            print_aggregated_table(events, truth, t)
            if args.private:
                print()
                print_private_table(events, truth, t, args.private)
        print("\n### Discretisation bias (no data noise)\n")
        print_bias_table(scenario, truth, t, args.bin_sizes)


if __name__ == "__main__":
    main()
