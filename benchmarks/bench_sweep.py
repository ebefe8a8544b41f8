"""Figure 2 sweep: 3 Δ × 5 σ² × 10 runs = 150 DP-PGD fits (K = 1000) with their simulations, on 2 cores."""

from __future__ import annotations

import time

from dphawkes_experiments.reproduce import figure_sweep_spec
from dphawkes_experiments.sweep import default_executor, run_sweep

TARGET_S = 60.0


def rows() -> list[dict]:
    """Time the whole Figure 2 sweep (pool start-up included) on a 2-process pool."""
    spec = figure_sweep_spec("2", runs=10)
    spec = type(spec)(**{**vars(spec), "methods": ("pgd",)})  # the 150 private fits only
    start = time.perf_counter()
    with default_executor(2) as pool:
        frame = run_sweep(spec, pool)
    elapsed = time.perf_counter() - start
    fits = int((frame["method"] == "pgd").sum())
    return [{
        "benchmark": f"Figure 2 sweep: {fits} PGD fits + simulations, 2 processes",
        "measured": f"{elapsed:.1f} s",
        "target": f"< {TARGET_S:.0f} s",
        "met": bool(fits == 150 and elapsed < TARGET_S),
    }]
