"""ctls's width and support chosen inside one release (:mod:`dphawkes_core.estimators.grid_free.width_choice`)
against the fixed default and the best on the truth (``docs/accuracy.md``, "Width and support inside the release").

On the held-out suite's processes (:mod:`benchmarks.heldout_suite`), at ε = 1 (δ = 1e-5), a public C, seeded noise
draws (experiments, not releases). Every fine grid ``(w0, s_max)`` of ``--fine-width`` and ``--max-support`` (paired
in order; one ``--max-support`` serves every w0) is one variant, B = s_max/w0 fine lags, candidates by the core's
rule (:func:`~dphawkes_core.estimators.grid_free.width_choice.candidate_grid`: k ∈ {1, 2, 4, 8} dividing B,
supports ¼, ½, 1 of s_max). Each variant runs in the modes of ``--mode``:

* **release** (the choice inside one release): the training block (the first 70 % of the window) and the validation
  block (the rest) released together at (w0, s_max) at the whole ε; every candidate fitted on the training block and
  scored by the least-squares contrast on the validation block, the best fitted on both blocks — all
  post-processing. Its error is that last fit's;
* **share** (share then direct), for each q of ``--share``: the same split release at the share q of the budget in
  μ-GDP terms (μ_sel² = q·μ², μ the one Gaussian's μ at (ε, δ)) chooses (w, s); a direct formal ctls fit at the
  chosen (w, s) on all the data with the rest (μ_fit² = (1 − q)·μ², handed to the fit as the ε it has at δ, its C
  as the direct fits'). The two Gaussian releases compose to one of μ² = μ_sel² + μ_fit²: (ε, δ) in all. Its error
  is the direct fit's.

Beside them, on the same events and noise seeds, direct formal ctls fits on all the data at the whole ε, their C the
release's public C = 3 per w-bin (which clips more at a wide w), or with ``--direct-cap auto`` chosen privately with
5 % of ε as ``time_scale_table`` does:

* **the chosen (w, s) fitted directly** (what the choice would give if it cost nothing: it separates the choice from
  the fine release's noise, and in the share mode it is the share's cost);
* **default**: w = 0.5, s = 5;
* **best on the truth**: the (w, s) of the fixed grid w ∈ {0.0625, 0.125, 0.25, 0.5, 1}, s ∈ {2.5, 5, 10} (the same
  for every variant, so that ratios compare) with the smallest mean error — known only because the truth is.

Error: the grid-free kernel error over [0, 5] (1 for the all-zero estimate), the mean over seeds and draws. Time:
the seconds of the row's own choices and fits (the direct grid, shared by the rows of one process and size, apart).
The load average is printed at the start and end.

A script, not a ``bench_*`` module: it has no ``rows()`` and no target, so ``make bench`` (which runs every
``bench_*`` module's ``rows()``) leaves it out.

The table of ``docs/accuracy.md`` (2026-11-26) was made before the candidates followed the core's rule (they were
the direct grid's (w, s) at w ≤ 1 that fit in s_max), by ``--direct-cap auto --sizes 10000 --seeds 2`` and
``--sizes 100000 1000000 --seeds 1``. The measurement of the fine grids and of the share mode (2026-11-27) by::

    # tuning: the suite's seeds 1001, 1002, noise seeds 0-7
    nice -n 10 .venv/bin/python -m benchmarks.width_choice_table --direct-cap auto --sizes 10000 100000 \
        --draws 8 --fine-width 0.0625 0.125 0.25 0.125 0.25 --max-support 10 10 10 5 5 --mode release share \
        --share 0.2 0.4
    # confirmation, untuned: new simulations and new noise seeds, paper-4d not used for tuning
    nice -n 10 .venv/bin/python -m benchmarks.width_choice_table --direct-cap auto --processes paper-4d \
        near-critical-2d sparse-5d --seed-values 2001 2002 --sizes 10000 100000 --draws 8 --first-draw 100 \
        --fine-width 0.0625 0.25 --max-support 10 5 --mode release share --share 0.4
    nice -n 10 .venv/bin/python -m benchmarks.width_choice_table --direct-cap auto --processes sparse-5d \
        near-critical-2d paper-4d --seed-values 2001 2002 --sizes 1000000 --draws 4 --first-draw 100 \
        --fine-width 0.0625 0.25 --max-support 10 5 --mode release share --share 0.4

With the same noise seeds (``--first-draw``) on other simulations the errors barely move (the noise dominates at
ε = 1): a confirmation needs new noise seeds as well as new simulations.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
from dataclasses import dataclass

import numpy as np

from benchmarks.heldout_suite import PROCESSES, SEEDS
from dphawkes_core.data.simulate import simulate
from dphawkes_core.estimators import FitConfig, fit
from dphawkes_core.estimators.grid_free.width_choice import choose_width, release_split
from dphawkes_core.evaluation.lag_average import average_lags, fit_steps
from dphawkes_core.evaluation.metrics import kernel_function_error
from dphawkes_core.privacy.accounting import gaussian_multiplier, multiplier_epsilon
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
SHARES = (0.2, 0.4)


@dataclass(frozen=True)
class Variant:
    """One way of choosing: the fine grid (w0, s_max) and the mode (``release``, or ``share`` at the share q)."""

    fine_width: float
    max_support: float
    share: float | None = None

    @property
    def fine_lags(self) -> int:
        return lags_from_support(self.max_support, self.fine_width)

    @property
    def grid_label(self) -> str:
        return f"({self.fine_width:g}, {self.max_support:g}), {self.fine_lags}"

    @property
    def mode_label(self) -> str:
        return "release" if self.share is None else f"share q = {self.share:g}"


def config(width: float, support: float, seed: int, cap=CAP, epsilon: float = EPSILON) -> FitConfig:
    return FitConfig(method="ctls", bin_size=width, lags=lags_from_support(support, width), epsilon=epsilon,
                     dp_delta=DELTA, calibration="formal", count_cap=cap, seed=seed)


def release_choice(events, variant: Variant, draw: int, multiplier: float):
    """The split release of ``variant``'s fine grid at noise multiplier ``multiplier`` and the choice made from it."""
    fine = config(variant.fine_width, variant.max_support, draw)
    release = release_split(events, VALIDATION_FRACTION * events.end_time, variant.fine_width, fine.lags, CAP,
                            multiplier, fine.ctls_gram_scale, np.random.default_rng(draw))
    return choose_width(release, fine)


def released_error(choice, scenario) -> float:
    """The error of the chosen candidate's fit on both blocks of the release."""
    best, d = choice.chosen, choice.U.shape[0]
    theta = choice.U / best.width
    kernels = theta[:, :-1].reshape(d, best.lags, d).transpose(0, 2, 1)
    steps = average_lags(kernels, theta[:, -1], best.width, 1)
    return kernel_function_error(steps, scenario, EVAL_SUPPORT)


def direct_error(events, scenario, width: float, lags: int, draw: int, cap, epsilon: float = EPSILON) -> float:
    """The error of a direct formal ctls fit at (w, B') on all the data."""
    result = fit(events, config(width, lags * width, draw, cap, epsilon))[0]
    return kernel_function_error(fit_steps(result), scenario, EVAL_SUPPORT)


class DirectFits:
    """Direct fits at the whole ε on one simulation, by (w, B'), the mean over draws, each computed once."""

    def __init__(self, events, scenario, cap, draws: range):
        self.events, self.scenario, self.cap, self.draws = events, scenario, cap, draws
        self.errors: dict[tuple[float, int], float] = {}

    def error(self, width: float, lags: int) -> float:
        key = (float(width), int(lags))
        if key not in self.errors:
            self.errors[key] = float(np.mean([direct_error(self.events, self.scenario, width, lags, draw, self.cap)
                                              for draw in self.draws]))
        return self.errors[key]

    def grid(self) -> dict[tuple[float, float], float]:
        """The fixed grid's errors by (w, s)."""
        return {(w, s): self.error(w, lags_from_support(s, w)) for w in WIDTHS for s in SUPPORTS}


def variant_errors(events, scenario, variant: Variant, direct: DirectFits) -> tuple[float, float, list]:
    """(error of the variant's estimate, error of the chosen (w, s) fitted directly at the whole ε, the chosen
    (w, s) per draw), the means over the draws."""
    z = gaussian_multiplier(EPSILON, DELTA)
    own, free, chosen = [], [], []
    for draw in direct.draws:
        if variant.share is None:
            choice = release_choice(events, variant, draw, z)
            own.append(released_error(choice, scenario))
        else:
            choice = release_choice(events, variant, draw, z / math.sqrt(variant.share))
            rest = multiplier_epsilon(z / math.sqrt(1.0 - variant.share), DELTA)
            best = choice.chosen
            own.append(direct_error(events, scenario, best.width, best.lags, draw, direct.cap, rest))
        best = choice.chosen
        free.append(direct.error(best.width, best.lags))
        chosen.append((best.width, best.support))
    return float(np.mean(own)), float(np.mean(free)), chosen


HEADER = ["| process | events | (w0, s_max), B | mode | chosen (w, s) | chosen | the chosen (w, s) fitted directly | "
          "default (0.5, 5) | best on truth (w, s) | chosen ÷ best | default ÷ best | time (s) |",
          "|---|---|---|---|---|---|---|---|---|---|---|---|"]


def run(sizes, names, seeds, variants, direct_cap=CAP, draws=range(DRAWS)) -> list[str]:
    lines = [_load("start"), "", *HEADER]
    for name in names:
        scenario = PROCESSES[name]()
        for n in sizes:
            sims, grid_seconds = [], 0.0
            for seed in seeds:
                events = simulate(scenario, n_events=n, seed=seed)
                direct = DirectFits(events, scenario, direct_cap, draws)
                start = time.perf_counter()
                grid = direct.grid()
                grid_seconds += time.perf_counter() - start
                sims.append((events, direct, grid))
            default = np.mean([grid[DEFAULT] for _, _, grid in sims])
            bests = [min(grid, key=grid.get) for _, _, grid in sims]
            best = np.mean([grid[b] for (_, _, grid), b in zip(sims, bests)])
            print(f"{name} {n:,}: the direct grid in {grid_seconds:.0f} s", file=sys.stderr, flush=True)
            for variant in variants:
                start = time.perf_counter()
                rows = [variant_errors(events, scenario, variant, direct) for events, direct, _ in sims]
                seconds = time.perf_counter() - start
                own, free = np.mean([r[0] for r in rows]), np.mean([r[1] for r in rows])
                chosen = sorted({c for r in rows for c in r[2]})
                lines.append(f"| {name} | {n:,} | {variant.grid_label} | {variant.mode_label} | {_pairs(chosen)} | "
                             f"{own:.3f} | {free:.3f} | "
                             f"{default:.3f} | {best:.3f} {_pairs(sorted(set(bests)))} | {own / best:.2f} | "
                             f"{default / best:.2f} | {seconds:.1f} (grid {grid_seconds:.1f}) |")
                print(lines[-1], file=sys.stderr, flush=True)
    return [*lines, "", _load("end")]


def _load(when: str) -> str:
    return f"load average {os.getloadavg()[0]:.2f} at the {when} ({time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())})"


def _pairs(pairs) -> str:
    return ", ".join(f"({w:g}, {s:g})" for w, s in pairs)


def variants_of(fine_widths, max_supports, modes, shares) -> list[Variant]:
    """The variants of the paired fine grids, each in every mode (the share mode once per q)."""
    if len(max_supports) not in (1, len(fine_widths)):
        raise SystemExit("give one --max-support, or one per --fine-width")
    supports = max_supports * len(fine_widths) if len(max_supports) == 1 else max_supports
    variants = []
    for w0, s_max in zip(fine_widths, supports):
        if "release" in modes:
            variants.append(Variant(w0, s_max))
        if "share" in modes:
            variants += [Variant(w0, s_max, q) for q in shares]
    return variants


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000])
    parser.add_argument("--processes", nargs="+", choices=list(PROCESSES), default=["near-critical-2d", "sparse-5d"])
    parser.add_argument("--seeds", type=int, default=2, help="how many of the suite's seeds (default 2)")
    parser.add_argument("--seed-values", type=int, nargs="+",
                        help="the simulations' seeds themselves, instead of the suite's (e.g. 2001 2002)")
    parser.add_argument("--draws", type=int, default=DRAWS, help=f"seeded noise draws per simulation ({DRAWS})")
    parser.add_argument("--first-draw", type=int, default=0,
                        help="the first noise seed (default 0; the draws are its next --draws seeds)")
    parser.add_argument("--direct-cap", default=str(CAP),
                        help=f"the direct fits' C: a number (default {CAP}, the release's) or 'auto' (5 %% of ε)")
    parser.add_argument("--fine-width", type=float, nargs="+", default=[FINE_WIDTH], help="w0 of each variant")
    parser.add_argument("--max-support", type=float, nargs="+", default=[MAX_SUPPORT],
                        help="s_max of each variant (one for all)")
    parser.add_argument("--mode", nargs="+", choices=("release", "share"), default=["release"])
    parser.add_argument("--share", type=float, nargs="+", default=list(SHARES),
                        help="the selection's shares q of μ² in the share mode")
    args = parser.parse_args(argv)
    if not all(0 < q < 1 for q in args.share):
        raise SystemExit("a share q must be within (0, 1)")
    set_blas_threads()
    cap = args.direct_cap if args.direct_cap == "auto" else int(args.direct_cap)
    seeds = args.seed_values or SEEDS[:args.seeds]
    variants = variants_of(args.fine_width, args.max_support, args.mode, args.share)
    draws = range(args.first_draw, args.first_draw + args.draws)
    print("\n".join(run(args.sizes, args.processes, seeds, variants, cap, draws)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
