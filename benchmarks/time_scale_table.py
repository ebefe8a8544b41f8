"""The width and support chosen privately (``--bin-size auto``) against a fixed default and the best on the truth
(``docs/accuracy.md``, "Choosing Δ and s").

On the held-out suite's processes (:mod:`benchmarks.heldout_suite`: near-critical-2d, sparse-5d; its new seeds),
formal fits at ε = 1 (δ = 1e-5, C chosen privately with 5 % of ε), seeded draws (experiments, not releases):

* **auto**: Δ and s from a noisy count bought with 5 % of ε, inside the session's release
  (:meth:`~dphawkes_core.release.session.PrivacySession.release_scaled`); the fit gets the ε left;
* **auto, share free**: the same Δ and s fitted at the whole ε — the difference is the share's cost in accuracy;
* **default**: a width fixed in advance, w = s/10 at s = 5;
* **held-out (not private)**: the grid's setting with the best validation score of the same private fit
  (:func:`~dphawkes_experiments.heldout_choice.select_by_heldout`: fitted on the first 70 %, scored on the rest), then
  fitted on all the data;
* **best on the truth**: the grid's setting with the smallest mean error — known only because the truth is.

Every estimate is measured by the grid-free kernel error over [0, 5] (1 for the all-zero estimate).

Usage::

    nice .venv/bin/python -m benchmarks.time_scale_table --sizes 10000 100000
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from benchmarks.heldout_suite import PROCESSES, SEEDS
from dphawkes_core.data.simulate import simulate
from dphawkes_core.estimators import FitConfig, fit
from dphawkes_core.evaluation.lag_average import fit_steps
from dphawkes_core.evaluation.metrics import kernel_function_error
from dphawkes_core.release.ledger_file import LedgerBook
from dphawkes_core.release.session import PrivacySession
from dphawkes_core.statistics.binning import lags_from_support
from dphawkes_core.threads import set_blas_threads
from dphawkes_experiments.heldout_choice import select_by_heldout

EPSILON, SHARE = 1.0, 0.05
EVAL_SUPPORT = 5.0
DEFAULT_SUPPORT = 5.0
DEFAULT_WIDTH = DEFAULT_SUPPORT / 10
WIDTHS = (0.0625, 0.125, 0.25, 0.5, 1.0)
SUPPORTS = (2.5, 5.0, 10.0)
DRAWS = 2
VALIDATION_FRACTION = 0.7


def base_config(method: str, seed: int, width: float = 1.0, support: float = 1.0,
                epsilon: float = EPSILON) -> FitConfig:
    return FitConfig(method=method, bin_size=width, lags=lags_from_support(support, width), epsilon=epsilon,
                     calibration="formal", count_cap="auto", seed=seed)


def error(events, config: FitConfig, scenario) -> float:
    result, _ = fit(events, config)
    return kernel_function_error(fit_steps(result), scenario, EVAL_SUPPORT)


def auto_errors(events, method: str, scenario) -> tuple[list, list, list]:
    """Errors of the session's auto-scaled fits and of the same Δ, s at the whole ε; the chosen (Δ, s)."""
    declared = dataclasses.replace(events, window_stated=True)
    auto, free, chosen = [], [], []
    for draw in range(DRAWS):
        with tempfile.TemporaryDirectory() as tmp:
            session = PrivacySession.for_events(declared, LedgerBook(Path(tmp) / "l.json"), "bench")
            answer = session.release_scaled(base_config(method, draw), SHARE)
        scale = answer.time_scale
        auto.append(kernel_function_error(fit_steps(answer.result), scenario, EVAL_SUPPORT))
        free.append(error(events, base_config(method, draw, scale.bin_size, scale.support), scenario))
        chosen.append((scale.bin_size, scale.support))
    return auto, free, chosen


def grid_errors(events, method: str, scenario) -> dict:
    """Mean error over the draws of every (w, s) of the grid at the whole ε."""
    return {(w, s): float(np.mean([error(events, base_config(method, d, w, s), scenario) for d in range(DRAWS)]))
            for w in WIDTHS for s in SUPPORTS}


def heldout_choice(events, method: str) -> tuple[float, float]:
    """The grid's (w, s) with the best validation gain of the private fit (draw 0)."""
    report = select_by_heldout(events, base_config(method, 0), WIDTHS, SUPPORTS,
                               VALIDATION_FRACTION * events.end_time)
    return (report.best.bin_size, report.best.support) if report.best else (DEFAULT_WIDTH, DEFAULT_SUPPORT)


def run(sizes, names, methods, seeds=SEEDS[:2]) -> list[str]:
    lines = ["| process | events | method | auto (Δ, s) | auto | auto, share free | default w = s/10 | held-out "
             "(not private) | best on truth (w, s) | auto ÷ best | default ÷ best | held-out ÷ best |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for name in names:
        scenario = PROCESSES[name]()
        for n in sizes:
            for method in methods:
                start = time.perf_counter()
                rows = []
                for seed in seeds:
                    events = simulate(scenario, n_events=n, seed=seed)
                    auto, free, chosen = auto_errors(events, method, scenario)
                    grid = grid_errors(events, method, scenario)
                    picked = heldout_choice(events, method)
                    best = min(grid, key=grid.get)
                    rows.append((np.mean(auto), np.mean(free), grid[(DEFAULT_WIDTH, DEFAULT_SUPPORT)], grid[picked],
                                 grid[best], chosen, best, picked))
                mean = np.mean([r[:5] for r in rows], axis=0)
                chosen = sorted({c for r in rows for c in r[5]})
                bests = sorted({r[6] for r in rows})
                lines.append(f"| {name} | {n:,} | {method} | {_pairs(chosen)} | {mean[0]:.3f} | {mean[1]:.3f} | "
                             f"{mean[2]:.3f} | {mean[3]:.3f} | {mean[4]:.3f} {_pairs(bests)} | "
                             f"{mean[0] / mean[4]:.2f} | {mean[2] / mean[4]:.2f} | {mean[3] / mean[4]:.2f} |")
                print(lines[-1], f"({time.perf_counter() - start:.0f} s; held-out picked "
                      f"{_pairs(sorted({r[7] for r in rows}))})", file=sys.stderr, flush=True)
    return lines


def _pairs(pairs) -> str:
    return ", ".join(f"({w:g}, {s:g})" for w, s in pairs)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--processes", nargs="+", choices=list(PROCESSES), default=["near-critical-2d", "sparse-5d"])
    parser.add_argument("--methods", nargs="+", default=["ssp", "ctls"])
    parser.add_argument("--seeds", type=int, default=2, help="how many of the suite's seeds (default 2)")
    args = parser.parse_args(argv)
    set_blas_threads()
    print("\n".join(run(args.sizes, args.processes, args.methods, SEEDS[:args.seeds])))
    return 0


if __name__ == "__main__":
    sys.exit(main())
