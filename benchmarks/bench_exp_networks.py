"""Formal fits of exponential kernels on public decays, on 5-d exponential networks drawn by a fixed generator
(``docs/accuracy.md``, "A formal fit for exponential kernels"): the release in the decays basis (exp's default) and
in the differences basis (``--exp-basis differences``), against the non-private least squares and maximum likelihood
on the same events.

The generator (:func:`exp_network`) and the split of its seeds were declared in ``docs/accuracy.md`` before anything
was measured on the test networks: every design choice of the differences basis (the basis, its mass, ρ, the ridge
factor, w and C) was made on :data:`TUNING_SEEDS`; :data:`TEST_SEEDS` are measured once, with the code as shipped.

Usage (the tables of ``docs/accuracy.md``; minutes at 10⁵, about an hour at 10⁶ on 2 shared CPUs)::

    nice .venv/bin/python -m benchmarks.bench_exp_networks --sizes 10000 100000 [--seeds 101 … 110] [--draws 3]
    nice .venv/bin/python -m benchmarks.bench_exp_networks --sizes 1000000 --draws 3

``make bench`` (:func:`rows`): two test networks at 10⁵ and one at 10⁶, one noise draw each, against the issue's
targets (≤ 0.10 at 10⁵: missed in the tables, reported as missed; ≤ 0.04 at 10⁶: met in the tables since the automatic
cap's target-count rule, 0.031 over the ten test networks) and the differences basis below the decays basis at 10⁵ (the
target it meets; at 10⁶ reported). Simulations are cached in ``/tmp/dphawkes_exp_networks``.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

from benchmarks.bench_grid_free import cached_events as simulation_cache
from dphawkes_core.data.io import Events
from dphawkes_core.data.kernels import ExponentialKernel, Scenario, ZeroKernel
from dphawkes_core.estimators import FitConfig, fit
from dphawkes_core.evaluation.metrics import function_relative_error, midpoint_grid
from dphawkes_core.threads import blas_threads

DIM = 5
DECAYS = (0.7, 1.5, 3.0)  # the public decays: the generator draws every kernel's decay from them, the fits use them
TUNING_SEEDS = (1, 2, 3)  # every design choice of the differences basis was made on these networks
TEST_SEEDS = tuple(range(101, 111))  # never used for tuning: measured once, with the code as shipped
SUPPORT = 5.0  # the error's interval [0, s]
EPSILON, DP_DELTA = 1.0, 1e-5
WIDTH = 0.5  # the judged configuration's w (the cap's bins); C chosen privately
DRAWS = 3
CACHE = Path("/tmp/dphawkes_exp_networks")
TARGETS = {100_000: 0.10, 1_000_000: 0.04}  # the targets for the best formal fit


def exp_network(seed: int) -> Scenario:
    """A 5-d network of exponential kernels on the public decays (the generator declared in ``docs/accuracy.md``).

    Each node excites itself with probability 0.6 and is excited by one or two other nodes (chosen uniformly), with
    norms uniform on [0.5, 1]; each kernel's decay is drawn uniformly from :data:`DECAYS`; the norm matrix is scaled
    to a spectral radius uniform on [0.5, 0.8]; the baselines are uniform on [0.05, 0.2]. All from
    ``numpy.random.default_rng(seed)``.
    """
    rng = np.random.default_rng(seed)
    norms = np.zeros((DIM, DIM))
    for i in range(DIM):
        if rng.random() < 0.6:
            norms[i, i] = rng.uniform(0.5, 1.0)
        others = [k for k in range(DIM) if k != i]
        for j in rng.choice(others, size=rng.integers(1, 3), replace=False):
            norms[i, j] = rng.uniform(0.5, 1.0)
    decays = rng.choice(DECAYS, size=(DIM, DIM))
    norms *= rng.uniform(0.5, 0.8) / np.max(np.abs(np.linalg.eigvals(norms)))
    baseline = rng.uniform(0.05, 0.2, size=DIM)
    kernels = tuple(tuple(ExponentialKernel(float(norms[i, j]), float(decays[i, j])) if norms[i, j] > 0
                          else ZeroKernel() for j in range(DIM)) for i in range(DIM))
    return Scenario(name=f"exp-network-{seed}", baseline=tuple(float(b) for b in baseline), kernels=kernels)


def cached_events(scenario: Scenario, n_events: int, seed: int, cache: Path = CACHE) -> Events:
    """One simulation (tick, ``seed``) of ``n_events`` events, cached as ``.npz`` in this benchmark's folder
    (:func:`benchmarks.bench_grid_free.cached_events`)."""
    return simulation_cache(scenario, n_events, seed, cache)


def function_error(adjacency, scenario: Scenario) -> float:
    """Grid-free error over ``[0, s]`` of the kernels ``Σ_u a[i, j, u] β_u e^{−β_u t}`` (1 for the all-zero one)."""
    t = midpoint_grid(SUPPORT)
    beta = np.asarray(DECAYS)
    values = np.einsum("iju,ut->ijt", np.asarray(adjacency), beta[:, None] * np.exp(-np.outer(beta, t)))
    return function_relative_error(values, scenario.kernel_values(t))


FORMAL_KINDS = ("decays", "differences", "derived")


def config(kind: str, seed: int | None = None, epsilon: float = EPSILON) -> FitConfig:
    """The fits measured: ``ls`` and ``mle`` (non-private, every event), ``decays`` and ``differences`` (formal,
    the judged configuration: ε = 1, δ = 1e-5, w = 0.5, C chosen privately with 5 % of ε; the basis as named) and
    ``derived`` (the differences basis with the Gram derived from the values: ``--exp-gram derived``, round 3)."""
    shared = dict(method="exp", bin_size=WIDTH, lags=int(round(SUPPORT / WIDTH)), calibration="formal",
                  decays=DECAYS)
    if kind in ("ls", "mle"):
        return FitConfig(**shared, sigma2=0.0, exp_likelihood=kind == "mle")
    basis, gram = ("differences", "derived") if kind == "derived" else (kind, "released")
    return FitConfig(**shared, epsilon=epsilon, dp_delta=DP_DELTA, count_cap="auto", seed=seed, exp_basis=basis,
                     exp_gram=gram)


def measure(seed: int, n_events: int, draws: int, cache: Path = CACHE, epsilon: float = EPSILON,
            kinds: tuple = ("ls", "mle", *FORMAL_KINDS)) -> dict:
    """The fits of :func:`config` named in ``kinds`` (all by default) on one simulation of network ``seed``
    (simulation seed = network seed)."""
    scenario = exp_network(seed)
    events = cached_events(scenario, n_events, seed, cache)
    row = {"network": seed, "events": n_events, "epsilon": epsilon, "radius": round(scenario.spectral_radius(), 3)}
    with blas_threads(1):
        for kind in [k for k in ("ls", "mle") if k in kinds]:
            start = time.perf_counter()
            result, _ = fit(events, config(kind))
            row[kind] = function_error(result.info["adjacency"], scenario)
            row[f"{kind}_seconds"] = time.perf_counter() - start
        for kind in [k for k in FORMAL_KINDS if k in kinds]:
            errors, caps = [], []
            for draw in range(1, draws + 1):
                result, info = fit(events, config(kind, seed=draw, epsilon=epsilon))
                errors.append(function_error(result.info["adjacency"], scenario))
                caps.append(int(info["count_cap"]))
            row[kind], row[f"{kind}_caps"] = errors, caps
    return row


def measure_suite(name: str, n_events: int, seed: int, draws: int, epsilon: float = EPSILON) -> dict:
    """exp's formal fit in both bases on a process of the held-out suite (:mod:`benchmarks.heldout_suite`, its seeds
    and simulations), at the family's default decays (0.7, 1.5, 3: not the processes' own) and the judged settings:
    the grid-free error over [0, 5] of the fitted functions, beside the suite's step-kernel rows."""
    from benchmarks.heldout_suite import PROCESSES as SUITE
    from dphawkes_core.data.simulate import simulate

    scenario = SUITE[name]()
    events = simulate(scenario, n_events=n_events, seed=seed)
    row = {"process": name, "events": n_events, "seed": seed, "epsilon": epsilon}
    with blas_threads(1):
        for kind in ("decays", "differences"):
            row[kind] = [function_error(fit(events, config(kind, seed=draw, epsilon=epsilon))[0].info["adjacency"],
                                        scenario) for draw in range(1, draws + 1)]
    return row


def summary(rows: list[dict], n_events: int) -> dict:
    """Means over networks (each the mean of its draws), the spread of the network means, and the ratio."""
    chosen = [r for r in rows if r["events"] == n_events]
    out = {"events": n_events, "networks": len(chosen)}
    for kind in ("ls", "mle", *FORMAL_KINDS):
        means = [float(np.mean(r[kind])) for r in chosen if kind in r]
        if len(means) < len(chosen):
            continue
        out[kind] = float(np.mean(means))
        out[f"{kind}_range"] = (float(np.min(means)), float(np.max(means)))
    if "decays" in out and "differences" in out:
        out["differences / decays"] = out["differences"] / out["decays"]
    if "derived" in out and "differences" in out:
        out["derived / differences"] = out["derived"] / out["differences"]
        out["networks derived below"] = sum(float(np.mean(r["derived"])) < float(np.mean(r["differences"]))
                                            for r in chosen)
    return out


def rows() -> list[dict]:
    """``make bench``: two test networks at 10⁵ and one at 10⁶ events, one noise draw each: the differences basis
    below the decays basis at 10⁵ (met in the tables), the derived Gram beside it (reported: 0.78× in the tables, but
    one draw of two networks decides nothing), and the issue's targets for the recommended fit, the derived Gram
    (in the tables missed at 10⁵, 0.130; met at 10⁶, 0.023: ``docs/accuracy.md``)."""
    out = []
    for n_events, seeds in ((100_000, TEST_SEEDS[:2]), (1_000_000, TEST_SEEDS[:1])):
        measured = [measure(seed, n_events, draws=1, kinds=FORMAL_KINDS) for seed in seeds]
        stats = summary(measured, n_events)
        label = f"exp formal ε = 1, 5-d test networks {tuple(seeds)}, {n_events:.0e}"
        compared = {"benchmark": f"{label}: differences / decays basis",
                    "measured": f"{stats['differences']:.3f} / {stats['decays']:.3f}"}
        if n_events == 100_000:  # at 10⁶ reported (the first round's 1 % cap rule made its bias most of both)
            out.append({**compared, "target": "differences < decays", "met": stats["differences"] < stats["decays"]})
        else:
            out.append({**compared, "target": "reported", "met": True})
        out.append({"benchmark": f"{label}: derived Gram / released (differences basis)",
                    "measured": f"{stats['derived']:.3f} / {stats['differences']:.3f}", "target": "reported",
                    "met": True})
        out.append({"benchmark": f"{label}: derived Gram error (the recommended formal fit)",
                    "measured": f"{stats['derived']:.3f}", "target": f"<= {TARGETS[n_events]}",
                    "met": stats["derived"] <= TARGETS[n_events]})
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", nargs="+", type=int, default=[10_000, 100_000])
    parser.add_argument("--seeds", nargs="+", type=int, default=list(TEST_SEEDS))
    parser.add_argument("--draws", type=int, default=DRAWS)
    parser.add_argument("--cache", type=Path, default=CACHE)
    parser.add_argument("--epsilon", type=float, default=EPSILON, help="the formal fits' ε (the judged one: 1)")
    parser.add_argument("--kinds", nargs="+", default=["ls", "mle", *FORMAL_KINDS],
                        choices=["ls", "mle", *FORMAL_KINDS], help="the fits to run (default: all)")
    parser.add_argument("--suite", nargs="+", metavar="PROCESS",
                        help="instead: these processes of the held-out suite at its seeds 1001–1003")
    args = parser.parse_args()
    if args.suite:
        for name in args.suite:
            for n_events in args.sizes:
                for seed in (1001, 1002, 1003):
                    print(json.dumps(measure_suite(name, n_events, seed, args.draws, args.epsilon)), flush=True)
        return
    measured = []
    for n_events in args.sizes:
        for seed in args.seeds:
            row = measure(seed, n_events, args.draws, args.cache, args.epsilon, tuple(args.kinds))
            measured.append(row)
            print(json.dumps(row), flush=True)
        print("SUMMARY " + json.dumps(summary(measured, n_events)), flush=True)


if __name__ == "__main__":
    main()
