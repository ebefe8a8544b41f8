"""Grid-free estimation: continuous-time least squares (``--method ctls``) against tick's
HawkesEM and DP-SSP, on the grid-free kernel error of ``docs/accuracy.md``.

Usage (the table of ``docs/accuracy.md``, "Grid-free estimation"; minutes to hours)::

    nice .venv/bin/python -m benchmarks.bench_grid_free [--processes paper-2d paper-4d exp-2d power-2d]
        [--sizes 10000 100000 1000000] [--sims 5] [--draws 3] [--widths 0.1 0.2] [--private-widths …]
        [--no-em] [--refit-em] [--scale] [--cache /tmp/dphawkes_grid_free]

``make bench`` (``rows()``, found by ``benchmarks/run_all.py`` from its ``bench_`` name) runs a small version:
paper-2d, one simulation of 10⁵ and of 10⁶ events, EM and the non-private fit side by side at w = 0.1, one formal
fit, and the 10⁷-event statistics in a fresh process (about a minute once the simulations are cached).

What is measured, per process and number of events (simulations with seeds 1 … S, cached as ``.npz``):

* **HawkesEM** (``kernel_support = 5``, ``kernel_size = 5/w``, 50 iterations, tol 1e-6, one thread): its
  histogram, fit time;
* **ctls, non-private** (``sigma2 = 0``, no cap, kernels ≥ 0): statistics + fit time (``fit``, one BLAS thread);
  timed right after EM on the same events (side by side);
* **ctls, formal** (ε = 1, δ = 1e-5, C chosen privately with 5 % of ε, default post-processing), ``draws``
  seeded noise draws (an experiment, not a release), at every private width;
* **DP-SSP, formal** (the same ε, δ and automatic C, default post-processing) per lag at Δ = the same widths,
  and fitted at Δ = 0.01 (one fit per draw) averaged into those widths (``lag_average``): its best is the
  reference of the issue's target.

Errors are ``kernel_function_error`` over ``[0, 5]`` (``dphawkes_core/evaluation/metrics.py``); the tables report the
median over simulations (and noise draws). ``--scale`` measures the 10⁷-event statistics and fit (paper-2d, the
``bench_scale`` cache, five simulations laid end to end) in a fresh process: time of each phase and peak RSS.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from dphawkes_core.data.io import Events, from_arrays
from dphawkes_core.data.kernels import ExponentialKernel, PowerLawKernel, Scenario, ZeroKernel, get_scenario
from dphawkes_core.estimators import FitConfig, fit, fit_stats, prepare_stats
from dphawkes_core.evaluation.lag_average import average_fit, fit_steps
from dphawkes_core.evaluation.metrics import function_relative_error, kernel_function_error, midpoint_grid
from dphawkes_core.threads import blas_settings, blas_threads

SUPPORT = 5.0
EM_MAX_ITER = 50
EPSILON, DP_DELTA = 1.0, 1e-5
CACHE = Path("/tmp/dphawkes_grid_free")
SCALE_MARKER = "GRID-FREE-SCALE:"
SCALE_TARGET_S, SCALE_TARGET_GB = 20.0, 3.0
FINE_BIN_SIZE = 0.01


def exp_2d() -> Scenario:
    """Exponential kernels whose decay rates do not line up with any grid (the "misaligned" process)."""
    return Scenario(name="exp-2d", baseline=(0.2, 0.15), kernels=(
        (ExponentialKernel(0.3, 1.3), ExponentialKernel(0.2, 0.7)),
        (ExponentialKernel(0.25, 2.3), ZeroKernel()),
    ))


def power_2d() -> Scenario:
    """Power-law kernels ``m (c + t)^−e`` (sharp at 0, norms 0.1–0.31; tick's ``HawkesKernelPowerLaw``). Exponents
    4–5: tick simulates them up to 10⁻⁶ of their mass, 20–50 time units (exponents near 2 reach 10⁵ and make
    10⁶ events take hours)."""
    return Scenario(name="power-2d", baseline=(0.2, 0.15), kernels=(
        (PowerLawKernel(0.075, 0.5, 4.0), PowerLawKernel(0.0108, 0.3, 4.0)),
        (PowerLawKernel(0.3, 0.7, 5.0), PowerLawKernel(0.0192, 0.4, 4.0)),
    ))


PROCESSES = {"paper-2d": lambda: get_scenario("paper-2d"), "paper-4d": lambda: get_scenario("paper-4d"),
             "exp-2d": exp_2d, "power-2d": power_2d}


def cached_events(scenario: Scenario, n_events: int, seed: int, cache: Path = CACHE) -> Events:
    """One simulation (tick, ``seed``) cached as ``.npz``."""
    from dphawkes_core.data.simulate import simulate

    cache.mkdir(parents=True, exist_ok=True)
    path = cache / f"{scenario.name}_{n_events}_seed{seed}.npz"
    if path.exists():
        data = np.load(path)
        return from_arrays([data[f"t{j}"] for j in range(scenario.dim)], end_time=float(data["end_time"]))
    events = simulate(scenario, n_events=n_events, seed=seed)
    seq = events.sequences[0]
    np.savez(path, end_time=seq.end_time, **{f"t{j}": t for j, t in enumerate(seq.times)})
    return events


def em_fit(events: Events, scenario: Scenario, width: float, cache: Path, key: str,
           refit: bool = False) -> tuple[float, float]:
    """HawkesEM's grid-free error and fit time (cached by ``key``; ``refit``: fit and time it again)."""
    path = cache / f"em_{key}_w{width:g}.json"
    if path.exists() and not refit:
        saved = json.loads(path.read_text())
        return saved["error"], saved["seconds"]
    from tick.hawkes import HawkesEM

    em = HawkesEM(kernel_support=SUPPORT, kernel_size=int(round(SUPPORT / width)), n_threads=1,
                  max_iter=EM_MAX_ITER, tol=1e-6, verbose=False)
    start = time.perf_counter()
    em.fit([np.ascontiguousarray(x, dtype=float) for x in events.sequences[0].times])
    seconds = time.perf_counter() - start
    t = midpoint_grid(SUPPORT)
    d = events.dim
    values = np.array([[em.get_kernel_values(i, j, t) for j in range(d)] for i in range(d)])
    error = function_relative_error(values, scenario.kernel_values(t))
    path.write_text(json.dumps({"error": error, "seconds": seconds}))
    return error, seconds


def ctls_config(width: float, private: bool, seed: int | None = None, **options) -> FitConfig:
    """The grid-free fit: non-private (σ² = 0, no cap, kernels ≥ 0) or formal (ε = 1, automatic C)."""
    lags = int(round(SUPPORT / width))
    if not private:
        return FitConfig(method="ctls", bin_size=width, lags=lags, calibration="formal", sigma2=0.0, **options)
    return FitConfig(method="ctls", bin_size=width, lags=lags, calibration="formal", epsilon=EPSILON,
                     dp_delta=DP_DELTA, count_cap="auto", seed=seed, **options)


def ctls_nonprivate(events: Events, scenario: Scenario, width: float) -> tuple[float, float]:
    """Error and time (statistics + fit) of the non-private grid-free fit."""
    with blas_threads(1):
        start = time.perf_counter()
        result, _ = fit(events, ctls_config(width, private=False))
        seconds = time.perf_counter() - start
    return kernel_function_error(fit_steps(result), scenario), seconds


def ssp_config(width: float, seed: int) -> FitConfig:
    """DP-SSP per lag at Δ = w: formal, ε = 1, automatic C (drawn with the seed too)."""
    return FitConfig(method="ssp", bin_size=width, lags=int(round(SUPPORT / width)), calibration="formal",
                     epsilon=EPSILON, dp_delta=DP_DELTA, count_cap="auto", seed=seed)


def private_errors(events: Events, scenario: Scenario, config_of, width: float, draws: int) -> list[float]:
    """Errors of ``draws`` seeded formal fits ``config_of(width, seed)`` (ε = 1, automatic C drawn with each seed
    too): ``ctls`` (:func:`ctls_config` with ``private=True``) or DP-SSP per lag (:func:`ssp_config`)."""
    errors = []
    for seed in range(1, draws + 1):
        with blas_threads(1):
            result, _ = fit(events, config_of(width, seed))
        errors.append(kernel_function_error(fit_steps(result), scenario, SUPPORT))
    return errors


def private_ctls_config(width: float, seed: int) -> FitConfig:
    """The formal grid-free fit of :func:`ctls_config`."""
    return ctls_config(width, private=True, seed=seed)


def averaged_ssp_errors(events: Events, scenario: Scenario, widths, draws: int) -> dict:
    """DP-SSP fitted at Δ = 0.01 (formal, ε = 1, automatic C; ``draws`` seeds) and averaged over lags into each
    width w (``lag_average``, free post-processing): ``{w: [errors]}``."""
    out = {w: [] for w in widths}
    for seed in range(1, draws + 1):
        config = FitConfig(method="ssp", bin_size=FINE_BIN_SIZE, lags=int(round(SUPPORT / FINE_BIN_SIZE)),
                           calibration="formal", epsilon=EPSILON, dp_delta=DP_DELTA, count_cap="auto", seed=seed)
        with blas_threads(1):
            result, _ = fit(events, config)
        for w in widths:
            out[w].append(kernel_function_error(average_fit(result, w), scenario, SUPPORT))
    return out


def run_table(processes, sizes, sims: int, draws: int, widths, private_widths, em: bool, cache: Path,
              refit_em: bool = False) -> list[dict]:
    """Every measurement of the module docstring, printed as it comes, returned as rows."""
    rows = []
    for name in processes:
        scenario = PROCESSES[name]()
        for n in sizes:
            for seed in range(1, sims + 1):
                events = cached_events(scenario, n, seed, cache)
                key = f"{name}_{n}_seed{seed}"
                for width in widths:
                    row = {"process": name, "events": n, "seed": seed, "width": width}
                    if em and n <= 1_000_000:
                        row["em_error"], row["em_seconds"] = em_fit(events, scenario, width, cache, key, refit_em)
                    row["ctls_error"], row["ctls_seconds"] = ctls_nonprivate(events, scenario, width)
                    rows.append(row)
                    print(json.dumps(row), flush=True)
                averaged = averaged_ssp_errors(events, scenario, private_widths, draws) if draws else {}
                for width in private_widths:
                    row = {"process": name, "events": n, "seed": seed, "width": width, "private": True,
                           "ctls_private": private_errors(events, scenario, private_ctls_config, width, draws),
                           "ssp_per_lag": private_errors(events, scenario, ssp_config, width, draws),
                           "ssp_averaged": averaged.get(width, [])}
                    rows.append(row)
                    print(json.dumps(row), flush=True)
    return rows


def summarise(rows: list[dict]) -> None:
    """Markdown tables of the medians (non-private against EM; formal against DP-SSP)."""
    print("\n| process | events | w | sims | EM error | ctls error (non-private) | ratio | EM time | ctls time "
          "(stats + fit) | speed-up |\n|---|---|---|---|---|---|---|---|---|---|")
    keys = sorted({(r["process"], r["events"], r["width"]) for r in rows if not r.get("private")},
                  key=lambda k: (list(PROCESSES).index(k[0]), k[1], k[2]))
    for process, n, width in keys:
        group = [r for r in rows
                 if not r.get("private") and (r["process"], r["events"], r["width"]) == (process, n, width)]
        ctls = np.median([r["ctls_error"] for r in group])
        ctls_s = np.median([r["ctls_seconds"] for r in group])
        if "em_error" in group[0]:
            em = np.median([r["em_error"] for r in group])
            em_s = np.median([r["em_seconds"] for r in group])
            print(f"| {process} | {n:,} | {width:g} | {len(group)} | {em:.4f} | {ctls:.4f} | {ctls / em:.2f} | "
                  f"{em_s:.1f} s | {ctls_s:.2f} s | {em_s / ctls_s:.0f}× |")
        else:
            print(f"| {process} | {n:,} | {width:g} | {len(group)} | – | {ctls:.4f} | – | – | {ctls_s:.2f} s | – |")
    private = [r for r in rows if r.get("private")]
    if not private:
        return
    print("\n| process | events | w | ctls formal | DP-SSP per lag (Δ = w) | DP-SSP Δ = 0.01 averaged to w |"
          "\n|---|---|---|---|---|---|")
    keys = sorted({(r["process"], r["events"], r["width"]) for r in private},
                  key=lambda k: (list(PROCESSES).index(k[0]), k[1], k[2]))
    for process, n, width in keys:
        group = [r for r in private if (r["process"], r["events"], r["width"]) == (process, n, width)]

        def med(field, group=group):  # bind this iteration's group (B023)
            values = [v for r in group for v in r.get(field, [])]
            return f"{np.median(values):.4f}" if values else "–"

        print(f"| {process} | {n:,} | {width:g} | {med('ctls_private')} | {med('ssp_per_lag')} | "
              f"{med('ssp_averaged')} |")
    print("\n| process | events | ctls formal, best w | DP-SSP best (per lag or averaged, w) | ratio | EM (same w) | "
          "ctls / EM |\n|---|---|---|---|---|---|---|")
    for process, n in sorted({k[:2] for k in keys}, key=lambda k: (list(PROCESSES).index(k[0]), k[1])):
        cells = {}
        for r in private:
            if (r["process"], r["events"]) == (process, n):
                for field in ("ctls_private", "ssp_per_lag", "ssp_averaged"):
                    cells.setdefault((field, r["width"]), []).extend(r.get(field, []))
        medians = {key: float(np.median(v)) for key, v in cells.items() if v}
        ctls_w = min((w for f, w in medians if f == "ctls_private"), key=lambda w: medians[("ctls_private", w)])
        ctls = medians[("ctls_private", ctls_w)]
        ssp_key = min((k for k in medians if k[0] != "ctls_private"), key=medians.get)
        em = [r["em_error"] for r in rows if not r.get("private") and "em_error" in r
              and (r["process"], r["events"], r["width"]) == (process, n, ctls_w)]
        em_text = f"{np.median(em):.4f}" if em else "–"
        ratio_em = f"{ctls / np.median(em):.2f}" if em else "–"
        print(f"| {process} | {n:,} | {ctls:.4f} (w = {ctls_w:g}) | {medians[ssp_key]:.4f} "
              f"({ssp_key[0].replace('ssp_', '').replace('_', ' ')}, w = {ssp_key[1]:g}) | "
              f"{ctls / medians[ssp_key]:.2f} | {em_text} | {ratio_em} |")


# --- 10⁷ events ----------------------------------------------------------------------------------------------

def scale_child(path: str, width: float) -> dict:
    """Child mode: load the cached 10⁷ event times, statistics and the non-private fit; phase times, peak RSS."""
    import resource

    from dphawkes_core.threads import set_blas_threads

    set_blas_threads()
    start = time.perf_counter()
    data = np.load(path)
    events = from_arrays([data["times_0"], data["times_1"]], end_time=float(data["end_time"]))
    loaded = time.perf_counter()
    config = ctls_config(width, private=False)
    stats, info = prepare_stats(events, config)
    computed = time.perf_counter()
    result = fit_stats(stats, config)
    done = time.perf_counter()
    private = ctls_config(width, private=True, seed=1)
    private_stats, private_info = prepare_stats(events, private)
    fit_stats(private_stats, private)
    private_done = time.perf_counter()
    rss_gb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
    return {"events": events.n_events, "load_s": loaded - start, "stats_s": computed - loaded,
            "fit_s": done - computed, "pairs": float(stats.grid_pieces.pairs.sum()), "private_s": private_done - done,
            "private_cap": private_info["count_cap"], "rss_gb": rss_gb,
            "error": kernel_function_error(fit_steps(result), get_scenario("paper-2d"))}


def measure_scale(width: float = 0.1) -> dict:
    """The 10⁷-event measurement in a fresh process (interpreter start and imports included in ``total_s``)."""
    from benchmarks.bench_scale import cached_events as scale_events

    path = scale_events()
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "benchmarks.bench_grid_free", "--scale-child", str(path),
                           "--widths", str(width)], capture_output=True, text=True, cwd=Path(__file__).parent.parent)
    total = time.perf_counter() - start
    lines = [line for line in proc.stdout.splitlines() if line.startswith(SCALE_MARKER)]
    if proc.returncode != 0 or not lines:
        raise RuntimeError(f"scale child failed: {proc.stderr[-2000:]}")
    return {**json.loads(lines[-1][len(SCALE_MARKER):]), "total_s": total}


# --- make bench ------------------------------------------------------------------------------------------------

def _row(name, measured, target, met):
    return {"benchmark": name, "measured": measured, "target": target, "met": bool(met)}


def rows() -> list[dict]:
    """The small version for ``make bench``: paper-2d, one simulation of 10⁵ and 10⁶ events, w = 0.1."""
    scenario = get_scenario("paper-2d")
    out = []
    for n in (100_000, 1_000_000):
        events = cached_events(scenario, n, 1)
        em_error, em_seconds = em_fit(events, scenario, 0.1, CACHE, f"paper-2d_{n}_seed1", refit=True)
        error, seconds = ctls_nonprivate(events, scenario, 0.1)
        out.append(_row(f"grid-free non-private vs EM, paper-2d {n:,} (w = 0.1)",
                        f"{error:.4f} vs {em_error:.4f} ({error / em_error:.2f}×)", "<= 1.05× EM",
                        error <= 1.05 * em_error))
        if n == 1_000_000:
            out.append(_row("grid-free non-private speed vs EM, 10⁶ events", f"{seconds:.2f} s vs {em_seconds:.1f} s "
                            f"({em_seconds / seconds:.0f}×)", ">= 20× faster", em_seconds >= 20 * seconds))
            private = float(np.median(private_errors(events, scenario, private_ctls_config, 0.1, 1)))
            out.append(_row("grid-free formal ε = 1 vs EM, paper-2d 10⁶ (w = 0.1)",
                            f"{private:.4f} vs {em_error:.4f} ({private / em_error:.2f}×)", "<= 1.5× EM",
                            private <= 1.5 * em_error))
    scale = measure_scale()
    out.append(_row("grid-free statistics + fit, 10⁷ events (fresh process)",
                    f"{scale['total_s']:.1f} s, {scale['rss_gb']:.2f} GB",
                    f"< {SCALE_TARGET_S:g} s, < {SCALE_TARGET_GB:g} GB",
                    scale["total_s"] < SCALE_TARGET_S and scale["rss_gb"] < SCALE_TARGET_GB))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--processes", nargs="+", default=list(PROCESSES), choices=list(PROCESSES))
    parser.add_argument("--sizes", nargs="+", type=int, default=[10_000, 100_000, 1_000_000])
    parser.add_argument("--sims", type=int, default=5)
    parser.add_argument("--draws", type=int, default=3)
    parser.add_argument("--widths", nargs="+", type=float, default=[0.1, 0.2])
    parser.add_argument("--private-widths", nargs="*", type=float, default=[0.1, 0.2, 0.25, 0.5])
    parser.add_argument("--no-em", action="store_true")
    parser.add_argument("--refit-em", action="store_true", help="fit and time EM again even when cached")
    parser.add_argument("--scale", action="store_true", help="also the 10⁷-event statistics (fresh process)")
    parser.add_argument("--scale-child", help=argparse.SUPPRESS)
    parser.add_argument("--cache", type=Path, default=CACHE)
    parser.add_argument("--json", type=Path, help="write every row here")
    args = parser.parse_args()
    if args.scale_child:
        print(SCALE_MARKER + json.dumps(scale_child(args.scale_child, args.widths[0])), flush=True)
        return
    print(f"# {platform.node()} {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}; {blas_settings()}; "
          f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}", flush=True)
    rows_ = run_table(args.processes, args.sizes, args.sims, args.draws, args.widths, args.private_widths,
                      not args.no_em, args.cache, args.refit_em)
    if args.json:
        args.json.write_text(json.dumps(rows_))
    summarise(rows_)
    if args.scale:
        print("\n10⁷ events:", json.dumps(measure_scale(args.widths[0])), flush=True)
    print(f"# done, load {os.getloadavg()[0]:.1f}", flush=True)


if __name__ == "__main__":
    main()
