"""Exponential kernels on public decays (``--method exp``) against tick's ``HawkesSumExpKern`` with the
same decays, and its formal fit against ``ctls`` and DP-SSP, on the grid-free kernel error of
``docs/accuracy.md``.

Usage (the tables of ``docs/accuracy.md``, "Exponential kernels"; minutes)::

    nice .venv/bin/python -m benchmarks.bench_exp [--sizes 10000 100000] [--sims 3] [--draws 3]
        [--cache /tmp/dphawkes_exp]

``make bench`` (``rows()``) runs one simulation of 10⁴, 10⁵ and 10⁶ events of the held-out process (non-private
against tick; formal, one noise draw, against ``ctls`` and DP-SSP: exp below ``ctls`` is the target at 10⁵ and
10⁶, 10⁴ is reported) and one of box-2d at 10⁵ (formal, reported: the model mismatch): 13 s with the
simulations cached in ``/tmp/dphawkes_exp`` (2.4 s for the non-private rows alone), about 5 s more to simulate.

The process, **exp-5d**, is a sparse 5-d network of exponential kernels (each node excites itself and the next
one, the last the first) whose decays are not the fitted ones (0.8 – 2.5 against 0.7, 1.5, 3); it was written
for this benchmark after the family's defaults (ρ = 3, the ridge rule, w = 1 and C = 5 below) were chosen on
``bench_grid_free``'s exp-2d, and nothing was tuned on it. **box-2d** (box kernels, which no sum of exponentials
fits) measures the model mismatch.

What is measured per process, number of events and simulation (seeds 1 … S, cached as ``.npz``):

* **tick**: ``HawkesSumExpKern(decays, penalty='none')`` (its window ends at the last event; kernels >= 0);
* **exp, non-private**: ``sigma2 = 0``, no cap, kernels >= 0, on the same window;
* **exp, formal**: ε = 1, δ = 1e-5, a public C = 5 per dimension and w-bin of width 1, defaults otherwise,
  ``draws`` seeded noise draws (an experiment, not a release);
* **ctls, formal** (w = 0.5, s = 5, C chosen privately with 5 % of ε) and **DP-SSP, formal** per lag (Δ = 0.5,
  p = 10, the same automatic C): ``bench_grid_free``'s formal configurations.

Errors are the relative L2 error of the kernel *functions* over ``[0, 5]`` (the exponential fits' own
functions; the step fits' steps), the median over simulations and draws.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

from benchmarks.bench_grid_free import cached_events
from dphawkes_core.data.io import Events, from_arrays
from dphawkes_core.data.kernels import BoxKernel, ExponentialKernel, Scenario, ZeroKernel
from dphawkes_core.estimators import FitConfig, fit
from dphawkes_core.evaluation.lag_average import fit_steps
from dphawkes_core.evaluation.metrics import function_relative_error, kernel_function_error, midpoint_grid
from dphawkes_core.threads import blas_threads

SUPPORT = 5.0
DECAYS = (0.7, 1.5, 3.0)
EPSILON, DP_DELTA = 1.0, 1e-5
EXP_WIDTH, EXP_CAP = 1.0, 5  # the formal exp fit's public w and C (chosen on exp-2d)
STEP_WIDTH = 0.5  # ctls's and DP-SSP's w = Δ
CACHE = Path("/tmp/dphawkes_exp")
RATIO_TARGET, ERROR_TARGET = 1.5, 0.05


def exp_5d() -> Scenario:
    """Sparse 5-d exponential network: node i excites itself and node i + 1 (mod 5); decays off the fitted set."""
    self_excitation = [ExponentialKernel(0.3, 1.2), ExponentialKernel(0.25, 2.0), ExponentialKernel(0.3, 0.8),
                       ExponentialKernel(0.2, 2.5), ExponentialKernel(0.3, 1.0)]
    onward = [ExponentialKernel(0.25, 2.0), ExponentialKernel(0.2, 0.8), ExponentialKernel(0.25, 2.5),
              ExponentialKernel(0.2, 1.0), ExponentialKernel(0.15, 1.5)]
    kernels = [[ZeroKernel() for _ in range(5)] for _ in range(5)]
    for j in range(5):
        kernels[j][j] = self_excitation[j]
        kernels[(j + 1) % 5][j] = onward[j]  # kernels[i][j]: the effect of j on i
    return Scenario(name="exp-5d", baseline=(0.1,) * 5, kernels=tuple(tuple(row) for row in kernels))


def box_2d() -> Scenario:
    """Box kernels (a delayed, flat effect): the model mismatch of a sum of exponentials."""
    return Scenario(name="box-2d", baseline=(0.2, 0.15), kernels=(
        (BoxKernel(0.15, 0.0, 2.0), BoxKernel(0.1, 1.0, 3.0)),
        (BoxKernel(0.2, 0.5, 1.5), ZeroKernel()),
    ))


PROCESSES = {"exp-5d": exp_5d, "box-2d": box_2d}


def function_error(adjacency: np.ndarray, scenario: Scenario) -> float:
    """Grid-free error over ``[0, s]`` of the kernels ``Σ_u a[i, j, u] β_u e^{−β_u t}``."""
    t = midpoint_grid(SUPPORT)
    beta = np.asarray(DECAYS)
    values = np.einsum("iju,ut->ijt", adjacency, beta[:, None] * np.exp(-np.outer(beta, t)))
    return function_relative_error(values, scenario.kernel_values(t))


def tick_fit(events: Events, scenario: Scenario) -> tuple[float, float]:
    """tick's HawkesSumExpKern (no penalty, the same decays): error and fit time."""
    from tick.hawkes import HawkesSumExpKern

    learner = HawkesSumExpKern(list(DECAYS), penalty="none", max_iter=1000, tol=1e-10)
    start = time.perf_counter()
    learner.fit([np.ascontiguousarray(t, dtype=float) for t in events.sequences[0].times])
    return function_error(np.asarray(learner.adjacency), scenario), time.perf_counter() - start


def last_event_window(events: Events) -> Events:
    """The events on tick's window ``[0, last event]``."""
    times = events.sequences[0].times
    return from_arrays(list(times), end_time=max(float(t[-1]) for t in times if t.size))


def exp_config(private: bool, seed: int | None = None) -> FitConfig:
    """The exp fit: non-private (σ² = 0, no cap, kernels >= 0) or formal (ε = 1, public C = 5 at w = 1)."""
    lags = int(round(SUPPORT / EXP_WIDTH))
    if not private:
        return FitConfig(method="exp", bin_size=EXP_WIDTH, lags=lags, calibration="formal", sigma2=0.0,
                         decays=DECAYS)
    return FitConfig(method="exp", bin_size=EXP_WIDTH, lags=lags, calibration="formal", epsilon=EPSILON,
                     dp_delta=DP_DELTA, count_cap=EXP_CAP, seed=seed, decays=DECAYS)


def exp_nonprivate(events: Events, scenario: Scenario) -> tuple[float, float]:
    """Error and time (statistics + fit) of the non-private exp fit on tick's window."""
    with blas_threads(1):
        start = time.perf_counter()
        result, _ = fit(last_event_window(events), exp_config(private=False))
        seconds = time.perf_counter() - start
    return function_error(np.array(result.info["adjacency"]), scenario), seconds


def step_config(method: str, seed: int) -> FitConfig:
    """ctls or DP-SSP per lag, formal: ε = 1, w = Δ = 0.5, s = 5, automatic C."""
    return FitConfig(method=method, bin_size=STEP_WIDTH, lags=int(round(SUPPORT / STEP_WIDTH)), calibration="formal",
                     epsilon=EPSILON, dp_delta=DP_DELTA, count_cap="auto", seed=seed)


def private_errors(events: Events, scenario: Scenario, draws: int) -> dict:
    """Errors of ``draws`` seeded formal fits of exp, ctls and DP-SSP."""
    out = {"exp": [], "ctls": [], "ssp": []}
    for seed in range(1, draws + 1):
        with blas_threads(1):
            result, _ = fit(events, exp_config(private=True, seed=seed))
            out["exp"].append(function_error(np.array(result.info["adjacency"]), scenario))
            for method in ("ctls", "ssp"):
                result, _ = fit(events, step_config(method, seed))
                out[method].append(kernel_function_error(fit_steps(result), scenario, SUPPORT))
    return out


def run_table(processes, sizes, sims: int, draws: int, cache: Path) -> list[dict]:
    """Every measurement of the module docstring, printed as it comes, returned as rows."""
    rows = []
    for name in processes:
        scenario = PROCESSES[name]()
        for n in sizes:
            for seed in range(1, sims + 1):
                events = cached_events(scenario, n, seed, cache)
                row = {"process": name, "events": n, "seed": seed}
                row["tick_error"], row["tick_seconds"] = tick_fit(events, scenario)
                row["exp_error"], row["exp_seconds"] = exp_nonprivate(events, scenario)
                if draws:
                    row.update({f"{k}_private": v for k, v in private_errors(events, scenario, draws).items()})
                rows.append(row)
                print(json.dumps(row), flush=True)
    return rows


def rows() -> list[dict]:
    """``make bench``: one simulation of exp-5d at 10⁴, 10⁵ and 10⁶ events against tick (non-private) and, one
    noise draw each, exp's formal fit against ``ctls`` and DP-SSP there and on box-2d at 10⁵ (the model mismatch).
    """
    out = []
    for row in run_table(["exp-5d"], [10_000, 100_000, 1_000_000], sims=1, draws=1, cache=CACHE):
        n, ratio = row["events"], row["exp_error"] / row["tick_error"]
        out.append({"benchmark": f"exp non-private / tick HawkesSumExpKern, exp-5d {n:.0e}",
                    "measured": f"{row['exp_error']:.3f} / {row['tick_error']:.3f} = {ratio:.2f}",
                    "target": f"<= {RATIO_TARGET}", "met": ratio <= RATIO_TARGET})
        if n == 100_000:
            out.append({"benchmark": "exp non-private grid-free error, exp-5d 1e+05",
                        "measured": f"{row['exp_error']:.3f}", "target": f"<= {ERROR_TARGET}",
                        "met": row["exp_error"] <= ERROR_TARGET})
        out.append(formal_row(row, "exp-5d", is_target=n >= 100_000))
    (box,) = run_table(["box-2d"], [100_000], sims=1, draws=1, cache=CACHE)
    out.append(formal_row(box, "box-2d", is_target=False))
    return out


def formal_row(row: dict, process: str, is_target: bool) -> dict:
    """One formal comparison (ε = 1, one draw): exp against ``ctls`` and DP-SSP on the same events.

    ``is_target`` makes it a target (exp's error below ``ctls``'s, as ``docs/accuracy.md`` measured at 10⁵ and
    10⁶); otherwise the row is reported only: at 10⁴ the three are close (0.74, 0.86, 0.76 there) and one draw
    decides nothing, and on box kernels no sum of exponentials fits, so ``ctls`` is expected to be better.
    """
    exp_error, ctls_error, ssp_error = (row[f"{k}_private"][0] for k in ("exp", "ctls", "ssp"))
    row_out = {"benchmark": f"exp / ctls / DP-SSP formal ε = 1, {process} {row['events']:.0e}",
               "measured": f"{exp_error:.3f} / {ctls_error:.3f} / {ssp_error:.3f}"}
    if is_target:
        return {**row_out, "target": "exp < ctls", "met": exp_error < ctls_error}
    return {**row_out, "target": "reported", "met": True}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--processes", nargs="+", default=list(PROCESSES), choices=list(PROCESSES))
    parser.add_argument("--sizes", nargs="+", type=int, default=[10_000, 100_000])
    parser.add_argument("--sims", type=int, default=3)
    parser.add_argument("--draws", type=int, default=3)
    parser.add_argument("--cache", type=Path, default=CACHE)
    args = parser.parse_args()
    rows_ = run_table(args.processes, args.sizes, args.sims, args.draws, args.cache)
    for name in args.processes:
        for n in args.sizes:
            sel = [r for r in rows_ if r["process"] == name and r["events"] == n]
            summary = {key: float(np.median([v for r in sel for v in np.atleast_1d(r[key])]))
                       for key in sel[0] if key.endswith(("_error", "_private"))}
            print(f"{name} {n}: " + ", ".join(f"{k} {v:.3f}" for k, v in summary.items()), flush=True)


if __name__ == "__main__":
    main()
