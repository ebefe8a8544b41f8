"""Grid-free (``ctls``) and DP-SSP statistics of a 10⁸-event partitioned Parquet store on a 2-worker Dask
LocalCluster — a measurement, not run in CI or by the tests (``docs/scale.md``, "Grid-free statistics on
partitions").

Usage (minutes; the store is built once and kept)::

    nice .venv/bin/python -m benchmarks.scale_grid_free_dask [--events 100000000] [--sequence-time 1.468e6]
        [--chunks 4] [--check-sequences 10] [--memory-limit 3.5GB] [--store /tmp/dphawkes-grid-free-store]

The store: ``S = events / 10⁶`` independent simulations of paper-2d (tick, seeds 1 … S, each on ``[0, T]`` with
``T = sequence_time``: about 10⁶ events each, the process's stationary rate being 0.68 per unit time), each its own
sequence, each cut into ``chunks`` time partitions (Parquet ``time, dimension, sequence``) at cuts placed inside
w-bins, so that every sequence has pairs and w-bins across partition boundaries. Simulated on two processes.

Measured, each on a fresh 2-worker LocalCluster (worker processes, one thread each, ``memory_limit`` per worker):
the window pre-pass, the statistics (an automatic C: the tail counts' pass, then the pieces' pass) and the fit of
``ctls`` and of DP-SSP (``ssp``), both formal, ε = 1, δ = 1e-5, seeded, w = Δ = 0.1, s = 5 (B = p = 50); the peak
RSS of each worker (``ru_maxrss``) and of the client. Then the equality check: the first ``check_sequences``
sequences' partitions fitted on the cluster against the same events loaded from one Parquet file and fitted in
this process (``prepare_stats`` + ``fit_stats``): the largest relative difference of A, b and the estimate.
Prints one JSON document.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

WIDTH, LAGS = 0.1, 50
RATE = 0.6814  # paper-2d's stationary events per unit time (both dimensions)


def _simulate_sequence(args) -> int:
    """Simulate sequence ``seq`` on [0, T] and write its ``chunks`` time partitions; returns its events."""
    seq, end, chunks, root = args
    import pyarrow as pa
    import pyarrow.parquet as pq

    from dphawkes_core.data.kernels import get_scenario
    from dphawkes_core.data.simulate import simulate

    events = simulate(get_scenario("paper-2d"), end_time=end, seed=seq + 1).sequences[0]
    times = np.concatenate(events.times)
    dims = np.concatenate([np.full(t.size, j, dtype=np.int64) for j, t in enumerate(events.times)])
    order = np.argsort(times, kind="stable")
    times, dims = times[order], dims[order]
    cuts = [-np.inf, *(round(end * k / chunks / WIDTH) * WIDTH + 0.37 * WIDTH for k in range(1, chunks)), np.inf]
    for k in range(chunks):
        part = (times >= cuts[k]) & (times < cuts[k + 1])
        table = pa.table({"time": times[part], "dimension": dims[part],
                          "sequence": np.full(int(part.sum()), seq, dtype=np.int64)})
        pq.write_table(table, Path(root) / f"seq{seq:04d}-part{k}.parquet")
    return int(times.size)


def build_store(root: Path, sequences: int, end: float, chunks: int) -> dict:
    """The store (cached: rebuilt when its ``store.json`` does not match)."""
    meta_path = root / "store.json"
    wanted = {"sequences": sequences, "end_time": end, "chunks": chunks, "scenario": "paper-2d"}
    if meta_path.exists():
        meta = json.loads(meta_path.read_text())
        if {k: meta.get(k) for k in wanted} == wanted:
            return meta
    root.mkdir(parents=True, exist_ok=True)
    for old in root.glob("*.parquet"):
        old.unlink()
    start = time.perf_counter()
    with ProcessPoolExecutor(max_workers=2) as pool:
        counts = list(pool.map(_simulate_sequence, [(s, end, chunks, str(root)) for s in range(sequences)]))
    meta = {**wanted, "events": int(sum(counts)), "events_per_sequence": counts,
            "build_s": round(time.perf_counter() - start, 1),
            "bytes": int(sum(p.stat().st_size for p in root.glob("*.parquet")))}
    meta_path.write_text(json.dumps(meta))
    return meta


def _peak_rss_gb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6  # KiB on Linux


def _config(method: str):
    from dphawkes_core.estimators import FitConfig

    return FitConfig(method=method, bin_size=WIDTH, lags=LAGS, calibration="formal", epsilon=1.0, count_cap="auto",
                     seed=1)


def _cluster(memory_limit: str):
    from distributed import Client, LocalCluster

    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                           memory_limit=memory_limit, dashboard_address=":0", scheduler_kwargs={"dashboard": False})
    return cluster, Client(cluster)


def measure(method: str, paths: list[str], end: float, memory_limit: str, check_paths: list[str]) -> dict:
    """Time and memory of one partitioned fit of ``method``, and the partitioned fit of ``check_paths``."""
    from dphawkes_core.estimators import fit_stats, prepare_partitioned
    from dphawkes_core.statistics.partitioned import partitioned_window

    config = _config(method)
    cluster, client = _cluster(memory_limit)
    try:
        executor = client.get_executor(pure=False)
        started = time.perf_counter()
        window = partitioned_window(paths, executor, end_time=end)
        windowed = time.perf_counter()
        stats, info = prepare_partitioned(paths, config, window, executor)
        counted = time.perf_counter()
        result = fit_stats(stats, config)
        done = time.perf_counter()
        workers = client.run(_peak_rss_gb)
        check_window = partitioned_window(check_paths, executor, end_time=end)
        check_stats, _ = prepare_partitioned(check_paths, config, check_window, executor)
        check_result = fit_stats(check_stats, config)
    finally:
        client.close()
        cluster.close()
    return {"method": method, "partitions": len(paths), "n_events": info["n_events"],
            "kept_events": info["binned_events"], "clipped_events": info["clipped_events"],
            "count_cap": info["count_cap"], "window_s": round(windowed - started, 1),
            "statistics_s": round(counted - windowed, 1), "fit_s": round(done - counted, 2),
            "total_s": round(done - started, 1),
            "worker_peak_rss_gb": sorted(round(v, 3) for v in workers.values()), "memory_limit": memory_limit,
            "client_peak_rss_gb": round(_peak_rss_gb(), 3), "epsilon": result.privacy.epsilon,
            "_check": (check_stats, check_result)}


def in_process_check(method: str, check_paths: list[str], end: float, partitioned, tmp: Path) -> dict:
    """The same events as one Parquet file, loaded and fitted in this process, against the partitioned fit."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from dphawkes_core.data.io import load_parquet
    from dphawkes_core.estimators import fit_stats, prepare_stats

    whole = tmp.parent / f"check-{tmp.name}-{len(check_paths)}.parquet"  # outside the store: not a partition
    if not whole.exists():
        pq.write_table(pa.concat_tables([pq.read_table(p) for p in check_paths]), whole)
    config = _config(method)
    started = time.perf_counter()
    events = load_parquet(whole, end_time=end, max_bytes=1 << 40)
    stats, info = prepare_stats(events, config)
    result = fit_stats(stats, config)
    elapsed = time.perf_counter() - started
    dist_stats, dist_result = partitioned

    def rel(a, b):
        return float(np.max(np.abs(np.asarray(a) - np.asarray(b))) / max(np.max(np.abs(np.asarray(b))), 1e-300))

    diffs = {"A": rel(dist_stats.A, stats.A), "b": rel(dist_stats.b, stats.b), "H": rel(dist_result.H, result.H)}
    return {"check_events": int(info["n_events"]), "check_partitions": len(check_paths),
            "in_process_s": round(elapsed, 1), "max_relative_difference": diffs,
            "equal_to_1e-9": all(v <= 1e-9 for v in diffs.values())}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=100_000_000)
    parser.add_argument("--sequence-time", type=float, default=1.468e6, help="T of each sequence (~10⁶ events)")
    parser.add_argument("--chunks", type=int, default=4, help="time partitions per sequence")
    parser.add_argument("--check-sequences", type=int, default=10, help="sequences of the in-process check")
    parser.add_argument("--memory-limit", default="3.5GB", help="per Dask worker")
    parser.add_argument("--store", type=Path, default=Path("/tmp/dphawkes-grid-free-store"))
    parser.add_argument("--methods", nargs="+", default=["ctls", "ssp"])
    args = parser.parse_args(argv)
    os.environ.setdefault("OMP_NUM_THREADS", "1")  # one BLAS thread per worker process (inherited)
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    sequences = max(1, round(args.events / (RATE * args.sequence_time)))
    root = args.store / f"paper2d-{sequences}x{args.sequence_time:g}-c{args.chunks}"
    meta = build_store(root, sequences, args.sequence_time, args.chunks)
    paths = sorted(str(p) for p in root.glob("*.parquet"))
    check_paths = [p for p in paths if int(Path(p).name[3:7]) < args.check_sequences]
    report = {"store": {k: v for k, v in meta.items() if k != "events_per_sequence"}, "bin_size": WIDTH,
              "lags": LAGS, "machine_cpus": os.cpu_count(), "runs": []}
    for method in args.methods:  # all partitioned runs first: the client's peak RSS is of those alone
        run = measure(method, paths, args.sequence_time, args.memory_limit, check_paths)
        report["runs"].append(run)
        print(json.dumps({k: v for k, v in run.items() if k != "_check"}), flush=True)
    for run in report["runs"]:
        run.update(in_process_check(run["method"], check_paths, args.sequence_time, run.pop("_check"), root))
        print(json.dumps(run), flush=True)
    print(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
