"""Utility of the formally private estimators at equal (ε, δ): SSP vs pgd-clip vs DP-PGD vs DP-CG.

Usage: ``python -m benchmarks.compare_formal [--events 10000 100000 1000000] [--seeds 3] [--scenarios paper-4d]``

For each scenario (paper-2d with Δ = 0.5, paper-4d with Δ = 0.25, support 4) and data size it simulates
one data set, fits the non-private CLS reference and each private method under the **formal**
calibration at ε = 1, δ = 1e−5, and prints the median plain relative error ``||Ĥ − H||_F / ||H||_F``
over noise seeds (the all-zero estimate scores 1). Choices, the same for every method: count cap C =
the data's largest bin count (a data-dependent choice made for this comparison only; a real release
fixes C in advance), B = ``||H_true||_F``, r = ``||ΔH_true||_*`` (oracle constraint sizes, as the paper's
experiments), K = 1000 (PGD, pgd-clip, theorem step) and 100 (CG, paper step), G = 1, SSP ridge λ = 8σ√q.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from dphawkes_core.binning import bin_events, lags_from_support
from dphawkes_core.estimators import FitConfig, fit_stats, prepare_stats
from dphawkes_core.kernels import get_scenario
from dphawkes_core.metrics import compare, constraint_scale
from dphawkes_core.simulate import simulate

SETTINGS = (("paper-2d", 0.5), ("paper-4d", 0.25))
SUPPORT = 4.0
EPSILON, DELTA = 1.0, 1e-5


def method_configs(truth: np.ndarray, bin_size: float, lags: int, cap: int) -> dict:
    """The private configurations compared (formal calibration, equal ε and δ)."""
    common = dict(bin_size=bin_size, lags=lags, count_cap=cap, calibration="formal", epsilon=EPSILON,
                  dp_delta=DELTA)
    bound, radius = constraint_scale(truth, bin_size)
    return {
        "ssp": FitConfig(method="ssp", **common),
        "pgd-clip": FitConfig(method="pgd-clip", bound=bound, clip=1.0, iters=1000, **common),
        "pgd": FitConfig(method="pgd", bound=bound, iters=1000, **common),
        "cg": FitConfig(method="cg", radius=radius, iters=100, **common),
    }


def compare_rows(events_list=(10_000, 100_000), seeds: int = 3, scenarios=None) -> list[dict]:
    """One row per (scenario, events): median plain relative error of every method, plus timings."""
    rows = []
    for name, bin_size in SETTINGS:
        if scenarios and name not in scenarios:
            continue
        scenario = get_scenario(name)
        lags = lags_from_support(SUPPORT, bin_size)
        truth = scenario.true_H(bin_size, lags)
        for n_events in events_list:
            start = time.perf_counter()
            events = simulate(scenario, n_events=n_events, seed=1)
            sim_s = time.perf_counter() - start
            cap = max(int(x.max()) for x in bin_events(events, bin_size).counts)
            stats, _ = prepare_stats(events, FitConfig(bin_size=bin_size, lags=lags, count_cap=cap))
            cls = compare(fit_stats(stats, FitConfig(bin_size=bin_size, lags=lags, count_cap=cap)).H, truth)
            row = {"scenario": name, "events": n_events, "bin_size": bin_size, "lags": lags, "count_cap": cap,
                   "cls": cls.relative_error, "simulate_s": sim_s}
            for method, config in method_configs(truth, bin_size, lags, cap).items():
                errors, t0 = [], time.perf_counter()
                for seed in range(seeds):
                    errors.append(compare(fit_stats(stats, FitConfig(**{**vars(config), "seed": seed})).H,
                                          truth).relative_error)
                row[method] = float(np.median(errors))
                row[f"{method}_s"] = (time.perf_counter() - t0) / seeds
            rows.append(row)
            print(_line(row), flush=True)
    return rows


def _line(row: dict) -> str:
    methods = ("ssp", "pgd-clip", "pgd", "cg")
    best = min(methods, key=lambda m: row[m])
    cells = " | ".join(f"**{row[m]:.3f}**" if m == best else f"{row[m]:.3f}" for m in methods)
    return (f"| {row['scenario']} | {row['events']:,} | {row['bin_size']:g} / {row['lags']} | {row['count_cap']} | "
            f"{row['cls']:.3f} | {cells} | {row['simulate_s']:.0f} s |")


HEADER = ("| scenario | events | Δ / p | C | CLS (non-private) | SSP | pgd-clip | DP-PGD | DP-CG | simulation |\n"
          "|---|---|---|---|---|---|---|---|---|---|")


def main() -> None:
    """Print the markdown table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--scenarios", nargs="+", choices=[s for s, _ in SETTINGS])
    args = parser.parse_args()
    print(HEADER, flush=True)
    compare_rows(args.events, args.seeds, args.scenarios)


if __name__ == "__main__":
    main()
