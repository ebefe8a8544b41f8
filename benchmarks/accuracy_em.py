"""CLS against tick's HawkesEM on a grid-free kernel error (the table of ``docs/accuracy.md``).

Usage::

    nice .venv/bin/python -m benchmarks.accuracy_em [--sizes 10000 100000 1000000]
        [--bin-sizes 0.5 0.2 0.1 0.05 0.02 0.01] [--cache /tmp/dphawkes_accuracy]

Metric (the same for every estimator, independent of any lag grid): the relative L2 error of the kernel
*functions* over the support ``[0, s]``, s = 5,

    err(ĥ) = sqrt( Σ_ij ∫_0^s (ĥ_ij(t) − h_ij(t))² dt ) / sqrt( Σ_ij ∫_0^s h_ij(t)² dt ),

with both integrals taken by the midpoint rule on a grid of step 10⁻³ (5000 points; finer grids change
the figures in the fourth digit). ``h`` is the true kernel function. EM's estimate is its histogram
function (``get_kernel_values``). A binned estimate ``H_k`` (k = 1..p, our kernels at lag kΔ) is turned
into a function in three ways, reported side by side:

* ``step``    — ĥ(t) = H_k on ((k−1)Δ, kΔ]: the binned step estimate as the bins lie;
* ``centred`` — ĥ(t) = H_k on ((k−½)Δ, (k+½)Δ]: the step centred on the lag kΔ it estimates;
* ``linear``  — ĥ linear between the points (kΔ, H_k) (constant H_1 below Δ).

Simulations (paper-2d, seed 1) and EM fits are cached under ``--cache`` as ``.npz`` files, so a
re-run only repeats the CLS fits. EM: ``HawkesEM(kernel_support=5, kernel_size=50, max_iter=50,
tol=1e-6)`` with the bins of width 0.1 (the lag grid of Δ = 0.1, aligned with the box kernels' jumps).
Timings are single-process wall clock on the machine stated in the output, BLAS at one thread.
"""

from __future__ import annotations

import argparse
import os
import platform
import time
from pathlib import Path

import numpy as np

from dphawkes_core.binning import lags_from_support
from dphawkes_core.estimators import FitConfig, fit
from dphawkes_core.events import Events, from_arrays
from dphawkes_core.kernels import Scenario, get_scenario
from dphawkes_core.simulate import simulate
from dphawkes_core.threads import blas_settings, blas_threads

SUPPORT = 5.0
GRID_STEP = 1e-3
EM_KERNEL_SIZE = 50
EM_MAX_ITER = 50
PLACEMENTS = ("step", "centred", "linear")


def fine_grid(support: float = SUPPORT, step: float = GRID_STEP) -> np.ndarray:
    """Midpoints of a grid of ``step`` over ``[0, support]``."""
    return (np.arange(round(support / step)) + 0.5) * step


def l2_relative_error(estimate: np.ndarray, truth: np.ndarray) -> float:
    """``sqrt(Σ ∫(ĥ−h)²) / sqrt(Σ ∫h²)`` for kernel values ``(d, d, m)`` on the same uniform grid."""
    return float(np.sqrt(np.sum((estimate - truth) ** 2) / np.sum(truth**2)))


def binned_kernel_function(kernels: np.ndarray, bin_size: float, t: np.ndarray, placement: str) -> np.ndarray:
    """A binned estimate ``kernels[i, j, k]`` (lag (k+1)Δ) as a function on ``t``, shape ``(d, d, len(t))``."""
    p = kernels.shape[2]
    lag_times = bin_size * np.arange(1, p + 1)
    if placement == "linear":
        return np.array([[np.interp(t, lag_times, kij, right=0.0) for kij in row] for row in kernels])
    offset = 0.0 if placement == "step" else 0.5
    k = np.ceil(t / bin_size - offset - 1e-12).astype(int)  # t in ((k−1+offset)Δ, (k+offset)Δ] → lag k
    inside = (k >= 1) & (k <= p)
    values = np.zeros(kernels.shape[:2] + t.shape)
    values[:, :, inside] = kernels[:, :, k[inside] - 1]
    if placement == "centred":  # (0, Δ/2] is nearest to lag 1
        values[:, :, k < 1] = kernels[:, :, :1]
    return values


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


def cached_em(events: Events, n_events: int, t: np.ndarray, cache: Path) -> tuple[np.ndarray, float, int]:
    """EM's kernel function on ``t``, its fit time (s) and the tick threads used, cached as ``.npz``."""
    path = cache / f"em_{n_events}_k{EM_KERNEL_SIZE}_it{EM_MAX_ITER}.npz"
    if path.exists():
        data = np.load(path)
        return data["values"], float(data["seconds"]), int(data["threads"])
    from tick.hawkes import HawkesEM

    threads = 1
    em = HawkesEM(kernel_support=SUPPORT, kernel_size=EM_KERNEL_SIZE, n_threads=threads, max_iter=EM_MAX_ITER,
                  tol=1e-6, verbose=False)
    start = time.perf_counter()
    em.fit([np.ascontiguousarray(x, dtype=float) for x in events.sequences[0].times])
    seconds = time.perf_counter() - start
    d = events.dim
    values = np.array([[em.get_kernel_values(i, j, t) for j in range(d)] for i in range(d)])
    np.savez(path, values=values, seconds=seconds, threads=threads)
    return values, seconds, threads


def cls_rows(events: Events, truth: np.ndarray, t: np.ndarray, bin_sizes) -> list[dict]:
    """One row per Δ: CLS fit time (binning + statistics + solve) and the error under each placement."""
    rows = []
    for delta in bin_sizes:
        config = FitConfig(bin_size=delta, lags=lags_from_support(SUPPORT, delta))
        start = time.perf_counter()
        try:
            result, _ = fit(events, config)
        except Exception as exc:  # noqa: BLE001 - a size limit is a finding to report, not a crash
            rows.append({"delta": delta, "p": config.lags, "seconds": float("nan"), "note": str(exc)[:80]})
            continue
        seconds = time.perf_counter() - start
        row = {"delta": delta, "p": config.lags, "seconds": seconds, "note": ""}
        for placement in PLACEMENTS:
            row[placement] = l2_relative_error(binned_kernel_function(result.kernels, delta, t, placement), truth)
        rows.append(row)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    parser.add_argument("--bin-sizes", type=float, nargs="+", default=[0.5, 0.2, 0.1, 0.05, 0.02, 0.01])
    parser.add_argument("--cache", type=Path, default=Path("/tmp/dphawkes_accuracy"))
    parser.add_argument("--no-em", action="store_true", help="skip EM (its cached results are still shown)")
    args = parser.parse_args()
    args.cache.mkdir(parents=True, exist_ok=True)
    scenario = get_scenario("paper-2d")
    t = fine_grid()
    truth = scenario.kernel_values(t)
    print(f"# {platform.node()}: {os.cpu_count()} CPUs, Python {platform.python_version()}, "
          f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")
    with blas_threads():
        print(f"# BLAS: {blas_settings()}; metric: relative L2 of kernel functions on [0, {SUPPORT:g}], "
              f"midpoint grid step {GRID_STEP:g}")
        for n in args.sizes:
            events = cached_events(scenario, n, args.cache)
            print(f"\n## {events.n_events} events (T = {events.end_time:.0f})", flush=True)
            em_path = args.cache / f"em_{n}_k{EM_KERNEL_SIZE}_it{EM_MAX_ITER}.npz"
            if not args.no_em or em_path.exists():
                em_values, em_s, threads = cached_em(events, n, t, args.cache)
                print(f"| HawkesEM (K={EM_KERNEL_SIZE}, {EM_MAX_ITER} iterations, {threads} thread) | "
                      f"{l2_relative_error(em_values, truth):.4f} | {em_s:.2f} s |", flush=True)
            print("| CLS Δ | p | step | centred | linear | time |\n|---|---|---|---|---|---|")
            for row in cls_rows(events, truth, t, args.bin_sizes):
                if row["note"]:
                    print(f"| {row['delta']:g} | {row['p']} | – | – | – | {row['note']} |", flush=True)
                    continue
                print(f"| {row['delta']:g} | {row['p']} | {row['step']:.4f} | {row['centred']:.4f} | "
                      f"{row['linear']:.4f} | {row['seconds']:.3f} s |", flush=True)


if __name__ == "__main__":
    main()
