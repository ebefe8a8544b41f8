"""Benchmarks beyond the paper: the 2000-trial audit of DP-PGD and the cost of one pgd-clip iteration.

The utility comparison of the formal estimators is ``benchmarks/compare_formal.py`` (minutes, not a
target; its table is in ``docs/beyond_paper.md``).
"""

from __future__ import annotations

import time

import numpy as np

from dphawkes_core.data.kernels import get_scenario
from dphawkes_core.data.simulate import simulate
from dphawkes_core.estimators import FitConfig, fit_stats, per_bin_design, prepare_stats
from dphawkes_core.statistics.binning import lags_from_support
from dphawkes_experiments.audit import AuditConfig, default_count_cap, run_audit


def _audit_row() -> dict:
    scenario = get_scenario("paper-2d")
    events = simulate(scenario, n_events=1000, seed=1)
    lags = lags_from_support(5.0, 0.5)
    config = FitConfig(method="pgd", bin_size=0.5, lags=lags, iters=100, epsilon=1.0, dp_delta=1e-5,
                       calibration="formal", count_cap=default_count_cap(events, 0.5),
                       bound=float(np.linalg.norm(scenario.true_H(0.5, lags))))
    start = time.perf_counter()
    run_audit(events, AuditConfig(config, trials=2000))
    elapsed = time.perf_counter() - start
    return {"benchmark": "audit DP-PGD 2000 trials (K=100, Δ=0.5, paper-2d 1000 ev)",
            "measured": f"{elapsed:.1f} s", "target": "< 60 s", "met": elapsed < 60}


def _pgd_clip_row(n_events: int = 100_000, iters: int = 50) -> list[dict]:
    scenario = get_scenario("paper-2d")
    events = simulate(scenario, n_events=n_events, seed=1)
    lags = lags_from_support(5.0, 0.5)
    stats, _ = prepare_stats(events, FitConfig(bin_size=0.5, lags=lags))
    start = time.perf_counter()
    design = per_bin_design(stats)
    build = time.perf_counter() - start
    config = FitConfig(method="pgd-clip", bin_size=0.5, lags=lags, iters=iters, epsilon=1.0, calibration="formal",
                       bound=1.0, clip=1.0)
    start = time.perf_counter()
    fit_stats(stats, config)
    per_iter = (time.perf_counter() - start) / iters
    return [
        {"benchmark": f"pgd-clip per iteration, 1e5 events (Δ=0.5, p={lags}, {design.distinct_rows} rows)",
         "measured": f"{per_iter * 1000:.2f} ms", "target": "< 50 ms", "met": per_iter < 0.05},
        {"benchmark": "pgd-clip per-bin design build, 1e5 events",
         "measured": f"{build:.2f} s", "target": "< 5 s", "met": build < 5},
    ]


def rows() -> list[dict]:
    """Benchmark rows for ``benchmarks/run_all.py``."""
    return [_audit_row(), *_pgd_clip_row()]


if __name__ == "__main__":
    for row in rows():
        print(row)
