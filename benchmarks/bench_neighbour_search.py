"""The family-blind neighbour search (``dphawkes_core/estimators/neighbour_search.py``) as a long sweep: many more
configs, climbs and moves than the contract suite's check (``make test``: 3 configs, 2 climbs of 25 moves), on
every registered private family, event unit and sequence unit.

Usage (minutes; the machine's load slows it, not the numbers)::

    nice .venv/bin/python -m benchmarks.bench_neighbour_search [--configs 16] [--families exp ctls] [--seed 0]

``make bench`` (``rows()``) runs the default sweep (16 configs, 3 climbs of 60 moves, two rounds of polish, the
sequence unit's 6 configs): one row per family with the worst ratio ``‖v(D') − v(D)‖ / S`` found over every pair it
built, by kind of neighbour (insertion, swap, beyond the cap, a sequence replaced) and through partitioned stores;
the target is ``≤ 1`` (no pair over the stated sensitivity). The ratios are how much of each bound a family-blind
adversary reaches: a low one says the bound is loose there or the search weak (docs/privacy.md, "One adversary for
every family").
"""

from __future__ import annotations

import argparse
import time

from dphawkes_core.estimators import get_family, method_names
from dphawkes_core.estimators.neighbour_search import Budget, search_neighbours, search_sequence_neighbours

SWEEP = Budget(configs=16, starts=3, steps=60, polish=2, sequence_configs=6, sequence_steps=40)
SLACK = 1e-9


def sweep(name: str, budget: Budget = SWEEP) -> dict:
    """The event unit's and (where the family has it) the sequence unit's search on one family: the worst ratio by
    kind, the worst through partitions, the pairs measured and the CPU seconds."""
    family = get_family(name)
    start = time.process_time()
    reports = [search_neighbours(family, budget)]
    if "sequence" in family.privacy.units:
        reports.append(search_sequence_neighbours(family, budget))
    by_kind: dict = {}
    for report in reports:
        for kind, finding in report.worst_by_kind().items():
            by_kind[kind] = max(by_kind.get(kind, 0.0), finding.ratio)
    partitions = [f.ratio for f in reports[0].findings if f.where.startswith("partitions")]
    worst = max(f.ratio for r in reports for f in r.findings)
    return {"family": name, "worst": worst, "by_kind": by_kind, "partitions": max(partitions, default=None),
            "evaluations": sum(r.evaluations for r in reports), "cpu_s": time.process_time() - start,
            "skipped": sum(len(r.skipped) for r in reports)}


def private_families() -> list[str]:
    return [name for name in method_names() if get_family(name).privacy.private]


def describe(result: dict) -> str:
    kinds = ", ".join(f"{kind} {ratio:.3f}" for kind, ratio in sorted(result["by_kind"].items()))
    through = "" if result["partitions"] is None else f"; partitions {result['partitions']:.3f}"
    return (f"{result['family']}: worst {result['worst']:.4f} × S ({kinds}{through}); {result['evaluations']} pairs, "
            f"{result['cpu_s']:.0f} s CPU, {result['skipped']} configs refused")


def rows() -> list[dict]:
    """One row per private family: the worst ratio of the default sweep, target ≤ 1."""
    out = []
    for name in private_families():
        result = sweep(name)
        out.append({"benchmark": f"neighbour search, {name}: worst ||dv||/S ({result['evaluations']} pairs)",
                    "measured": f"{result['worst']:.4f} ({result['cpu_s']:.0f} s CPU)", "target": "<= 1",
                    "met": result["worst"] <= 1 + SLACK})
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--configs", type=int, default=SWEEP.configs)
    parser.add_argument("--families", nargs="*", default=None)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    budget = Budget(**{**SWEEP.__dict__, "configs": args.configs, "seed": args.seed})
    for name in args.families or private_families():
        print(describe(sweep(name, budget)), flush=True)


if __name__ == "__main__":
    main()
