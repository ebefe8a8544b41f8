"""Sequence-level DP-SSP against event-level DP-SSP, non-private CLS and the zero estimate.

Usage: ``nice python -m benchmarks.sequence_privacy_table [--seeds 5] [--sequences 10000] [--only taxi sim]``

Two multi-sequence data sets, each split by sequence (the first 70 % train, the rest are predicted, as
:func:`~dphawkes_experiments.prediction.split_events`):

* ``nyc_taxi`` (2,000 taxi shifts, 10 dimensions) on the public window [0, 24 h] per shift, Δ = 0.5 h,
  p = 4; no truth, so the plain error ``||Ĥ − H_ref||_F / ||H_ref||_F`` is against the non-private CLS
  fit on the same training sequences (the zero estimate scores 1);
* ``paper-2d``: ``--sequences`` independent simulations on [0, 50] each, Δ = 0.5, p = 8 (support 4); the
  plain error is against the true kernels and baseline.

Rows: CLS (non-private); event-level DP-SSP at ε = 1 with the automatic count cap (5 % of ε: the
formal event-level default); sequence-level DP-SSP at ε = 1 with public C = 3 and a public cap M on events
per sequence, for each release (``full``, ``lagged``) at the G that M guarantees never clips (``G_M``, its
own for each release) and at G_M/4 and G_M/16 (which clip), and the lagged release with G chosen privately
(``sequence_clip="auto"``: 5 % of ε on a noisy histogram of the norms, redrawn per seed); the zero estimate. Columns:
median plain error over noise seeds, mean next-event RMSE on the held-out
sequences (:mod:`dphawkes_experiments.prediction`, Poisson reference alongside), and the ε per person who owns
a whole sequence of k = M events (event unit: group privacy, exact in GDP; sequence unit: the fit's ε).
The noise of every run is seeded (a measurement, not a release). Picking the best G from this table would
be tuning on private data: G must be chosen from public knowledge.
"""

from __future__ import annotations

import argparse
import time
from dataclasses import replace

import numpy as np

from dphawkes_core.data.datasets import DATA_DIR_ENV, default_data_dir
from dphawkes_core.data.io import Events, load_csv
from dphawkes_core.data.kernels import get_scenario
from dphawkes_core.data.simulate import simulate
from dphawkes_core.estimators import FitConfig, fit_stats, prepare_stats
from dphawkes_core.evaluation.metrics import compare
from dphawkes_core.privacy.sequence import max_events_clip
from dphawkes_core.privacy.unit_conversion import unit_conversion
from dphawkes_experiments.prediction import evaluate_prediction, split_events

EPSILON, DELTA, CAP = 1.0, 1e-5, 3
SEQUENCE_RELEASES = ("full", "lagged")


def taxi() -> tuple[Events, float, int, int, np.ndarray | None]:
    """Taxi shifts on the public window [0, 24 h]; Δ, p, M; no truth. The data are found as the app finds them
    (``$DPHAWKES_DATA_DIR``, else ``<repo>/../shared/data``)."""
    path = default_data_dir() / "nyc_taxi" / "events.csv"
    if not path.is_file():
        raise SystemExit(f"real data set {path} not present: set {DATA_DIR_ENV} to the real-data directory, "
                         "or run with --only sim")
    return load_csv(path, end_time=24.0), 0.5, 4, 40, None


def simulated(sequences: int, horizon: float = 50.0) -> tuple[Events, float, int, int, np.ndarray]:
    """``sequences`` independent paper-2d simulations on [0, horizon]; Δ, p, M and the true H."""
    scenario = get_scenario("paper-2d")
    runs = [simulate(scenario, end_time=horizon, seed=1000 + s) for s in range(sequences)]
    events = replace(runs[0], sequences=tuple(r.sequences[0] for r in runs))
    bin_size, lags = 0.5, 8
    return events, bin_size, lags, 60, scenario.true_H(bin_size, lags)


def rows_for(name: str, events: Events, bin_size: float, lags: int, max_events: int, truth, seeds: int) -> list[dict]:
    """Every row of the table for one data set."""
    split = split_events(events, 0.7)
    base = dict(bin_size=bin_size, lags=lags)
    stats, _ = prepare_stats(split.train, FitConfig(**base))
    cls = fit_stats(stats, FitConfig(**base))
    reference = truth if truth is not None else cls.H
    prediction = evaluate_prediction(cls.kernels, cls.baseline, bin_size, split)
    rows = [_row(name, "CLS (non-private)", "-", [cls], reference, split, np.nan, {})]
    private = dict(base, method="ssp", calibration="formal", epsilon=EPSILON, dp_delta=DELTA)
    event = FitConfig(**private, count_cap="auto")
    event_stats, _ = prepare_stats(split.train, event)
    fits = [fit_stats(event_stats, replace(event, seed=s)) for s in range(seeds)]
    person = unit_conversion(fits[0].privacy, max_events).person_epsilon
    rows.append(_row(name, "DP-SSP, event unit (C auto)", "event", fits, reference, split, person, {}))
    for release in SEQUENCE_RELEASES:
        g_max = max_events_clip(lags, max_events, CAP, release)
        for label, clip in ((f"G_M = {g_max:.4g}", g_max), ("G_M/4", g_max / 4), ("G_M/16", g_max / 16)):
            config = FitConfig(**private, count_cap=CAP, privacy_unit="sequence", max_events=max_events,
                               sequence_clip=clip, ssp_release=release)
            seq_stats, info = prepare_stats(split.train, config)
            fits = [fit_stats(seq_stats, replace(config, seed=s)) for s in range(seeds)]
            rows.append(_row(name, f"DP-SSP, sequence unit, {release} (M = {max_events}, C = {CAP}, {label})",
                             "sequence", fits, reference, split, EPSILON, info))
    rows.append(_auto_clip_row(name, split, private, max_events, reference, seeds))
    rows.append({"data": name, "estimator": "zero estimate", "unit": "-", "plain_error": 1.0, "rmse": np.nan,
                 "person_epsilon": np.nan, "clipped": "", "poisson_rmse": prediction.poisson_rmse})
    return rows


def _auto_clip_row(name, split, private: dict, max_events: int, reference, seeds: int) -> dict:
    """The lagged release with G chosen privately (``sequence_clip="auto"``, 5 % of ε): the choice is
    redrawn with each seed, so the statistics are prepared once per seed."""
    config = FitConfig(**private, count_cap=CAP, privacy_unit="sequence", max_events=max_events,
                       sequence_clip="auto", ssp_release="lagged")
    fits, infos = [], []
    for s in range(seeds):
        seq_stats, info = prepare_stats(split.train, replace(config, seed=s))
        fits.append(fit_stats(seq_stats, replace(config, seed=s)))
        infos.append(info)
    g_max = infos[0]["auto_sequence_clip"]["grid_top"]
    ratios = sorted({round(g_max / i["sequence_clip"]) for i in infos})
    chosen = ["G_M" if r == 1 else f"G_M/{r}" for r in ratios]
    row = _row(name, f"DP-SSP, sequence unit, lagged (M = {max_events}, C = {CAP}, G auto: {', '.join(chosen)})",
               "sequence", fits, reference, split, EPSILON, infos[0])
    low, high = min(i["clipped_sequences"] for i in infos), max(i["clipped_sequences"] for i in infos)
    span = str(low) if low == high else f"{low}–{high}"
    return {**row, "clipped": f"{span}/{infos[0]['sequences']} clipped, {infos[0]['events_over_cap']} events over M"}


def _row(name, label, unit, fits, reference, split, person_epsilon, info) -> dict:
    errors = [compare(f.H, reference).relative_error for f in fits]
    rmse = [evaluate_prediction(f.kernels, f.baseline, f.bin_size, split) for f in fits]
    clipped = (f"{info['clipped_sequences']}/{info['sequences']} clipped, {info['events_over_cap']} events over M"
               if info else "")
    return {"data": name, "estimator": label, "unit": unit, "plain_error": float(np.median(errors)),
            "rmse": float(np.mean([r.rmse for r in rmse])), "person_epsilon": person_epsilon, "clipped": clipped,
            "poisson_rmse": rmse[0].poisson_rmse}


def markdown(rows: list[dict]) -> str:
    """The table as Markdown."""
    lines = ["| data | estimator | plain error (median) | next-event RMSE | Poisson RMSE | ε per person (k = M) | "
             "clipping (training part) |", "|---|---|---|---|---|---|---|"]
    for r in rows:
        person = "" if np.isnan(r["person_epsilon"]) else f"{r['person_epsilon']:.3g}"
        rmse = "" if np.isnan(r["rmse"]) else f"{r['rmse']:.4g}"
        lines.append(f"| {r['data']} | {r['estimator']} | {r['plain_error']:.3f} | {rmse} | {r['poisson_rmse']:.4g} | "
                     f"{person} | {r['clipped']} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--sequences", type=int, default=10_000)
    parser.add_argument("--only", nargs="+", choices=("taxi", "sim"), default=["taxi", "sim"])
    args = parser.parse_args()
    rows = []
    for which in args.only:
        start = time.process_time()
        name = "nyc_taxi" if which == "taxi" else f"paper-2d × {args.sequences:,}"
        data = taxi() if which == "taxi" else simulated(args.sequences)
        rows += rows_for(name, *data, seeds=args.seeds)
        print(f"{name}: {time.process_time() - start:.0f} s CPU", flush=True)
    print(markdown(rows))


if __name__ == "__main__":
    main()
