"""The held-out accuracy suite of ``docs/accuracy.md``: data that no setting was tuned on.

Fixed before anything was measured on it, and never to be used for tuning: new seeds (:data:`SEEDS`; the tuning
used simulations 1–2 and the tables seed 1) of the repository's processes and two processes not in the repository
before (:func:`near_critical_2d`, spectral radius 0.9; :func:`sparse_5d`, a sparse network of exponential kernels).
Every estimate is measured by the grid-free kernel error over [0, s] (:func:`~dphawkes_core.evaluation.metrics.
kernel_function_error`, 1 for the all-zero estimate) against the process's kernel functions. The anchor is tick's
``HawkesEM`` run to convergence (100 iterations, tol 1e-10, steps of the same width w). Formal fits: δ = 1e-5, C
chosen privately with 5 % of ε, 2 seeded noise draws (experiments, not releases).

Usage::

    nice .venv/bin/python -m benchmarks.heldout_suite                  # 10^4 and 10^5 events
    nice .venv/bin/python -m benchmarks.heldout_suite --sizes 10000 --processes near-critical-2d sparse-5d
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

from dphawkes_core.data.kernels import ExponentialKernel, Scenario, ZeroKernel, get_scenario
from dphawkes_core.data.simulate import simulate
from dphawkes_core.estimators import FitConfig, fit
from dphawkes_core.evaluation.lag_average import fit_steps
from dphawkes_core.evaluation.metrics import kernel_function_error
from dphawkes_core.evaluation.step_kernels import StepKernels
from dphawkes_core.threads import set_blas_threads

SEEDS = (1001, 1002, 1003)
SIZES = (10_000, 100_000)
SUPPORT, WIDTH = 5.0, 0.25
EPSILONS = (1.0, 8.0)
DRAWS = 2
EM_LABEL = "tick HawkesEM (100 it., tol 1e-10)"


def near_critical_2d() -> Scenario:
    """Two mutually exciting exponential kernels (β = 1), branching matrix [[0.6, 0.3], [0.3, 0.6]]: ρ = 0.9."""
    norms = ((0.6, 0.3), (0.3, 0.6))
    return Scenario(name="near-critical-2d", baseline=(0.1, 0.1),
                    kernels=tuple(tuple(ExponentialKernel(a, 1.0) for a in row) for row in norms))


def sparse_5d() -> Scenario:
    """Five dimensions on a ring (each excites the next, norm 0.5, β = 2) with self-excitation 0.3 on two of them;
    17 of the 25 kernels are zero."""
    norms = np.zeros((5, 5))
    for j in range(5):
        norms[(j + 1) % 5, j] = 0.5
    norms[0, 0] = norms[3, 3] = 0.3
    return Scenario(name="sparse-5d", baseline=(0.1,) * 5,
                    kernels=tuple(tuple(ExponentialKernel(a, 2.0) if a else ZeroKernel() for a in row)
                                  for row in norms))


PROCESSES = {"paper-2d": lambda: get_scenario("paper-2d"), "paper-4d": lambda: get_scenario("paper-4d"),
             "near-critical-2d": near_critical_2d, "sparse-5d": sparse_5d}


def em_error(events, scenario: Scenario) -> float:
    """tick's HawkesEM to convergence, its histogram read as step kernels, against the kernel functions."""
    from tick.hawkes import HawkesEM

    size = int(round(SUPPORT / WIDTH))
    em = HawkesEM(kernel_support=SUPPORT, kernel_size=size, max_iter=100, tol=1e-10, n_threads=1)
    em.fit([np.ascontiguousarray(t) for t in events.sequences[0].times], end_times=events.sequences[0].end_time)
    steps = StepKernels(np.asarray(em.kernel), np.linspace(0.0, SUPPORT, size + 1), np.asarray(em.baseline), WIDTH, 1)
    return kernel_function_error(steps, scenario)


def configs():
    """``(label, [FitConfig per draw])`` of every fit but EM."""
    lags = int(round(SUPPORT / WIDTH))
    yield "cls (non-private)", [FitConfig(method="cls", bin_size=WIDTH, lags=lags)]
    yield "mle (non-private)", [FitConfig(method="mle", bin_size=WIDTH, lags=lags)]
    yield "ctls, σ² = 0", [FitConfig(method="ctls", bin_size=WIDTH, lags=lags, sigma2=0.0, calibration="formal")]
    for method in ("ssp", "ctls"):
        for epsilon in EPSILONS:
            yield f"{method}, ε = {epsilon:g}", [
                FitConfig(method=method, bin_size=WIDTH, lags=lags, epsilon=epsilon, calibration="formal",
                          count_cap="auto", seed=draw) for draw in range(DRAWS)]


def measure(sizes, names, methods=None):
    """``(scenario, events, label, [error per seed], EM's mean error, seconds)`` per process, size and method
    (those of ``methods`` when given, by label; EM always): each seed's error is the mean over the noise draws."""
    for name in names:
        scenario = PROCESSES[name]()
        for n in sizes:
            data = [simulate(scenario, n_events=n, seed=seed) for seed in SEEDS]
            start = time.perf_counter()
            anchor = [em_error(events, scenario) for events in data]
            yield scenario, n, EM_LABEL, anchor, float(np.mean(anchor)), time.perf_counter() - start
            for label, draws in configs():
                if methods is not None and label not in methods:
                    continue
                start = time.perf_counter()
                errors = [np.mean([kernel_function_error(fit_steps(fit(events, config)[0]), scenario)
                                   for config in draws]) for events in data]
                yield scenario, n, label, errors, float(np.mean(anchor)), time.perf_counter() - start


def run(sizes, names) -> list[str]:
    """Markdown rows: one per process, size and method; errors per seed (mean over the noise draws)."""
    lines = ["| process (ρ) | events | method | error per seed (1001, 1002, 1003) | mean | ÷ EM's mean |",
             "|---|---|---|---|---|---|"]
    for record in measure(sizes, names):
        lines.append(_row(*record))
        print(lines[-1], file=sys.stderr, flush=True)
    return lines


def _row(scenario, n, label, errors, anchor, seconds) -> str:
    per_seed = ", ".join(f"{e:.3f}" for e in errors)
    return (f"| {scenario.name} ({scenario.spectral_radius():.2f}) | {n:,} | {label} | {per_seed} | "
            f"{np.mean(errors):.3f} | {np.mean(errors) / anchor:.2f} |")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=list(SIZES))
    parser.add_argument("--processes", nargs="+", choices=list(PROCESSES), default=list(PROCESSES))
    args = parser.parse_args(argv)
    set_blas_threads()
    print("\n".join(run(args.sizes, args.processes)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
