"""ctls's width and support chosen inside one release (:mod:`dphawkes_core.estimators.grid_free.width_selection`)
against the fixed default and the best on the truth (``docs/accuracy.md``, "Width and support inside the release").

On the held-out suite's processes (:mod:`benchmarks.heldout_suite`), at ε = 1 (δ = 1e-5), a public C, seeded noise
draws (experiments, not releases):

* **chosen in the release**: one release of the training block (the first 70 % of the window) and the validation
  block (the rest) at w0 = 0.0625, s_max = 10; every (w, s) of the grid fitted on the training block and scored by
  the least-squares contrast on the validation block, the best fitted on both blocks — all post-processing;
* **the chosen (w, s) fitted directly**: a direct formal ctls fit at the chosen (w, s), the whole ε, all the data
  (what the choice would give if it cost nothing: it separates the choice from the fine release's noise);
* **default**: w = 0.5, s = 5, a direct formal ctls fit at the whole ε on all the data;
  the direct fits' C is the release's public C = 3 per w-bin (which clips more at a wide w), or with
  ``--direct-cap auto`` chosen privately with 5 % of ε as ``bench_time_scale`` does;
* **best on the truth**: the grid's (w, s) with the smallest mean error of the direct fits — known only because
  the truth is.

Grid: w ∈ {0.0625, 0.125, 0.25, 0.5, 1}, s ∈ {2.5, 5, 10} (the grid of ``bench_time_scale``). Error: the grid-free
kernel error over [0, 5] (1 for the all-zero estimate).

Usage::

    nice .venv/bin/python -m benchmarks.bench_width_selection --sizes 10000 --seeds 2
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

from benchmarks.heldout_suite import PROCESSES, SEEDS
from dphawkes_core.data.simulate import simulate
from dphawkes_core.estimators import FitConfig, fit
from dphawkes_core.estimators.grid_free.width_selection import choose_width, release_split
from dphawkes_core.evaluation.lag_average import average_lags, fit_steps
from dphawkes_core.evaluation.metrics import kernel_function_error
from dphawkes_core.privacy.accounting import gaussian_multiplier
from dphawkes_core.statistics.binning import lags_from_support
from dphawkes_core.threads import set_blas_threads

EPSILON, DELTA = 1.0, 1e-5
FINE_WIDTH, MAX_SUPPORT = 0.0625, 10.0
WIDTHS = (0.0625, 0.125, 0.25, 0.5, 1.0)
SUPPORTS = (2.5, 5.0, 10.0)
DEFAULT = (0.5, 5.0)
EVAL_SUPPORT = 5.0
CAP = 3
VALIDATION_FRACTION = 0.7
DRAWS = 2


def config(width: float, support: float, seed: int, cap=CAP) -> FitConfig:
    return FitConfig(method="ctls", bin_size=width, lags=lags_from_support(support, width), epsilon=EPSILON,
                     dp_delta=DELTA, calibration="formal", count_cap=cap, seed=seed)


def grid() -> list[tuple[int, int]]:
    fine = lags_from_support(MAX_SUPPORT, FINE_WIDTH)
    return [(round(w / FINE_WIDTH), lags_from_support(s, w)) for w in WIDTHS for s in SUPPORTS
            if lags_from_support(s, w) * round(w / FINE_WIDTH) <= fine]


def chosen_error(events, scenario, draw: int) -> tuple[float, tuple[float, float]]:
    fine = config(FINE_WIDTH, MAX_SUPPORT, draw)
    release = release_split(events, VALIDATION_FRACTION * events.end_time, FINE_WIDTH, fine.lags, CAP,
                            gaussian_multiplier(EPSILON, DELTA), fine.ctls_gram_scale, np.random.default_rng(draw))
    choice = choose_width(release, fine, grid())
    best = choice.chosen
    d = events.dim
    theta = choice.U / best.width
    kernels = theta[:, :-1].reshape(d, best.lags, d).transpose(0, 2, 1)
    steps = average_lags(kernels, theta[:, -1], best.width, 1)
    return kernel_function_error(steps, scenario, EVAL_SUPPORT), (best.width, best.support)


def direct_errors(events, scenario, cap) -> dict:
    return {(w, s): float(np.mean([kernel_function_error(fit_steps(fit(events, config(w, s, d, cap))[0]), scenario,
                                                         EVAL_SUPPORT) for d in range(DRAWS)]))
            for w in WIDTHS for s in SUPPORTS}


def run(sizes, names, seeds, direct_cap=CAP) -> list[str]:
    lines = ["| process | events | chosen (w, s) | chosen in the release | the chosen (w, s) fitted directly | "
             "default (0.5, 5) | best on truth (w, s) | chosen ÷ best | default ÷ best |",
             "|---|---|---|---|---|---|---|---|---|"]
    for name in names:
        scenario = PROCESSES[name]()
        for n in sizes:
            start = time.perf_counter()
            rows = []
            for seed in seeds:
                events = simulate(scenario, n_events=n, seed=seed)
                picked = [chosen_error(events, scenario, draw) for draw in range(DRAWS)]
                direct = direct_errors(events, scenario, direct_cap)
                best = min(direct, key=direct.get)
                grid_of = {(w, s): (w, lags_from_support(s, w) * w) for w, s in direct}
                on_grid = {support: key for key, support in grid_of.items()}
                refit = np.mean([direct[on_grid[c]] for _, c in picked])
                rows.append((np.mean([e for e, _ in picked]), refit, direct[DEFAULT], direct[best],
                             [c for _, c in picked], best))
            mean = np.mean([r[:4] for r in rows], axis=0)
            chosen = sorted({c for r in rows for c in r[4]})
            bests = sorted({r[5] for r in rows})
            lines.append(f"| {name} | {n:,} | {_pairs(chosen)} | {mean[0]:.3f} | {mean[1]:.3f} | {mean[2]:.3f} | "
                         f"{mean[3]:.3f} {_pairs(bests)} | {mean[0] / mean[3]:.2f} | {mean[2] / mean[3]:.2f} |")
            print(lines[-1], f"({time.perf_counter() - start:.0f} s)", file=sys.stderr, flush=True)
    return lines


def _pairs(pairs) -> str:
    return ", ".join(f"({w:g}, {s:g})" for w, s in pairs)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000])
    parser.add_argument("--processes", nargs="+", choices=list(PROCESSES), default=["near-critical-2d", "sparse-5d"])
    parser.add_argument("--seeds", type=int, default=2, help="how many of the suite's seeds (default 2)")
    parser.add_argument("--direct-cap", default=str(CAP),
                        help=f"the direct fits' C: a number (default {CAP}, the release's) or 'auto' (5 %% of ε)")
    args = parser.parse_args(argv)
    set_blas_threads()
    cap = args.direct_cap if args.direct_cap == "auto" else int(args.direct_cap)
    print("\n".join(run(args.sizes, args.processes, SEEDS[:args.seeds], cap)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
