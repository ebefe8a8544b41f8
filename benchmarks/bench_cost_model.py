"""Benchmark of the cost model: the predicted compute time within 2× of the measured one, for clipped DP-PGD,
for the grid-free family (statistics of event pairs, no FFT shortcut; at a fine grid, B = 160, too) and for the maximum
likelihood on exact times (dense rows and BLAS below the size where the compiled passes pay, the compiled ones above).

The app asks for a confirmation before a fit predicted to take more than ``WARN_SECONDS``; a user saw
a 36 s clipped DP-PGD fit predicted at 1.2 s, so the confirmation never came. Each case times what the
Estimate page runs (statistics, then the fit, which builds the per-bin rows) in CPU seconds of this
process, so that other work on the machine does not count; ``run_all`` runs it with one BLAS thread, as
the app does. The cases cover the dense layout of the rows (merged identical rows) and the sparse one, and
ctls on data dense enough that the binned families would take the FFT (where a binned cost model would
predict ctls far too fast).
"""

from __future__ import annotations

import time

from dphawkes_core.data.kernels import get_scenario
from dphawkes_core.data.simulate import simulate
from dphawkes_core.estimators import FitConfig, fit_stats, get_family, prepare_stats
from dphawkes_core.estimators.cost import estimate_fit_cost
from dphawkes_core.statistics import pair_passes
from dphawkes_core.statistics.binning import lags_from_support, n_bins_for

CASES = (  # method, scenario, events, Δ, support s, K
    ("pgd-clip", "paper-2d", 1000, 0.1, 5.0, 1000),  # the app's default data and settings
    ("pgd-clip", "paper-4d", 4000, 0.1, 5.0, 1000),
    ("pgd-clip", "paper-4d", 20_000, 0.02, 2.0, 20),  # too many rows to lay out densely: the sparse layout
    ("pgd-clip", "paper-2d", 1000, 0.05, 4.0, 1000),  # Figure 1's data and Δ: the largest cost per cell measured
    ("pgd-clip", "paper-2d", 50_000, 0.5, 4.0, 200),  # the default data: short rows, the per-row work dominates
    ("ctls", "paper-2d", 200_000, 0.5, 20.0, 1),  # ~30 pairs per event within s: the pair walk dominates
    ("ctls", "paper-4d", 100_000, 1.0, 30.0, 1),
    ("ctls", "paper-4d", 50_000, 0.0625, 10.0, 1),  # a fine grid (B = 160, q = 641): the edge pieces and the solves
    ("mle", "paper-2d", 200_000, 0.5, 20.0, 1),  # dense rows, 200,000 of them: the BLAS curvature dominates
    ("mle", "paper-2d", 200_000, 0.1, 20.0, 1),  # 8·10^7 cells, too many to lay out densely: the compiled sparse rows
    ("mle", "paper-4d", 20_000, 0.1, 5.0, 1),  # ~70 cells per row, dense rows: the BLAS curvature dominates
    ("mle", "paper-2d", 10_000, 0.25, 5.0, 1),  # a small fit: dense rows, no compiled pass
    ("mle", "paper-4d", 50_000, 0.25, 5.0, 1),  # the largest dense layout of the cases
)
TOLERANCE = 2.0


def _case_row(method: str, scenario: str, n_events: int, bin_size: float, support: float, iters: int) -> dict:
    events = simulate(get_scenario(scenario), n_events=n_events, seed=1)
    lags = lags_from_support(support, bin_size)
    family = get_family(method)  # each family given the public settings it reads
    config = FitConfig(method=method, bin_size=bin_size, lags=lags, epsilon=1.0, calibration="formal", count_cap=5,
                       **family.own_options({"iters": iters, "bound": 0.5, "clip": 1.0}))
    predicted = estimate_fit_cost(n_bins_for(events, bin_size), events.dim, lags, config.family.cost.kind, iters,
                                  n_events=events.n_events).seconds
    start = time.process_time()
    stats, _ = prepare_stats(events, config)
    fit_stats(stats, config)
    measured = time.process_time() - start
    ratio = predicted / measured
    what = f"K={iters}" if config.family.cost.iterative else "one solve"
    return {
        "benchmark": f"cost model, {config.family.label}: {scenario} {n_events:,} ev, Δ={bin_size:g}, p={lags}, {what}",
        "measured": f"predicted {predicted:.2f} s / measured {measured:.2f} s CPU = ×{ratio:.2f}",
        "target": f"×{1 / TOLERANCE:g} … ×{TOLERANCE:g}",
        "met": 1 / TOLERANCE <= ratio <= TOLERANCE,
    }


def _warm_up(method: str) -> None:
    """One small fit of ``method`` first, and again on the compiled passes (made to pay for it):
    start-up (imports; the compiled passes loaded from numba's cache or compiled on a fresh checkout) is not the fit's
    cost, and is measured apart (``bench_startup``, ``bench_vs_em``)."""
    events = simulate(get_scenario("paper-2d"), n_events=300, seed=2)
    family = get_family(method)
    config = FitConfig(method=method, bin_size=0.5, lags=4, epsilon=1.0, calibration="formal", count_cap=5,
                       **family.own_options({"iters": 2, "bound": 0.5, "clip": 1.0}))
    thresholds = pair_passes.COMPILED_MIN_PAIRS, pair_passes.SECONDS_TO_LOAD_COMPILED
    for compiled in (False, True):
        if compiled:
            pair_passes.COMPILED_MIN_PAIRS, pair_passes.SECONDS_TO_LOAD_COMPILED = 0, -1e9
        try:
            fit_stats(prepare_stats(events, config)[0], config)
        finally:
            pair_passes.COMPILED_MIN_PAIRS, pair_passes.SECONDS_TO_LOAD_COMPILED = thresholds


def rows() -> list[dict]:
    """Benchmark rows for ``benchmarks/run_all.py``."""
    for method in dict.fromkeys(case[0] for case in CASES):
        _warm_up(method)
    return [_case_row(*case) for case in CASES]


if __name__ == "__main__":
    for row in rows():
        print(row)
