"""``dphawkes sweep``: the privacy–utility sweep engine from the command line.

Example (the paper's Figure 2)::

    dphawkes sweep --scenario paper-2d --events 1000 --bin-size 0.01 0.03 0.5 \\
        --sigma2 0 0.01 0.1 1 10 --method pgd --bound 0.2 --runs 10 --out sweep.csv

``--dask local`` runs on a local Dask cluster, ``--dask tcp://HOST:PORT`` on an existing one.
Progress goes to stderr; Ctrl-C writes the finished cells and exits with status 130.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

from dphawkes_core.data.kernels import SCENARIOS, get_scenario
from dphawkes_core.errors import ConfigError
from dphawkes_core.estimators import method_names
from dphawkes_core.privacy.calibration import CALIBRATIONS

from .inputs import (
    add_window_options,
    load_events_file,
    nonnegative_float,
    open_unit_fraction,
    positive_float,
    positive_int,
    time_point,
)

if TYPE_CHECKING:  # the sweep engine loads when a sweep runs
    from dphawkes_experiments.sweep import DataSource, SweepSpec


def add_sweep_parser(sub) -> None:
    """Register the ``sweep`` subcommand on the ``dphawkes`` sub-parsers."""

    sw = sub.add_parser("sweep", help="privacy-utility sweep over privacy level, bin size, method and seeds")
    data = sw.add_argument_group("data (a scenario simulated afresh per run, or fixed data)")
    data.add_argument("--scenario", choices=sorted(SCENARIOS),
                      help="simulate this scenario (or, with --data, use it as the data's ground truth)")
    size = data.add_mutually_exclusive_group()
    size.add_argument("--events", type=positive_int, help="events per simulation")
    size.add_argument("--horizon", type=positive_float, help="horizon of each simulation")
    data.add_argument("--data", help="fixed event CSV or .parquet; without --scenario the metric is held-out "
                                     "prediction RMSE")
    add_window_options(data)
    data.add_argument("--train-fraction", type=open_unit_fraction, default=0.7,
                      help="training part for the prediction metrics: the share of sequences (the first ones) "
                           "that train, or of the window of one sequence without --holdout-start")
    data.add_argument("--holdout-start", type=time_point, metavar="X",
                      help="one sequence: train on the events before X, score those from X on (on the data's time "
                           "axis, like --end-time)")
    grid = sw.add_argument_group("grid")
    grid.add_argument("--bin-size", type=positive_float, nargs="+", required=True, help="bin sizes Δ")
    level = grid.add_mutually_exclusive_group(required=True)
    level.add_argument("--sigma2", type=nonnegative_float, nargs="+", help="noise variances σ²")
    level.add_argument("--epsilon", type=positive_float, nargs="+", help="target ε values")
    grid.add_argument("--method", choices=method_names(), nargs="+", default=["pgd"])
    grid.add_argument("--runs", type=positive_int, default=10, help="independent repetitions (seeds)")
    grid.add_argument("--seed", type=int, default=0, help="first seed")
    est = sw.add_argument_group("estimators")
    est.add_argument("--support", type=positive_float, default=4.0, help="kernel support s, p = ⌈s/Δ⌉")
    est.add_argument("--bound", type=positive_float, help="PGD bound B (default: the truth's ||H||_F)")
    est.add_argument("--radius", type=positive_float, help="CG radius r (default: the truth's ||ΔH||_*)")
    est.add_argument("--iters", type=positive_int, default=1000, help="iterations K")
    est.add_argument("--calibration", choices=CALIBRATIONS, default="paper")
    est.add_argument("--dp-delta", "--delta", dest="delta", type=float, default=1e-5, help="δ (as in fit)")
    est.add_argument("--count-cap", type=positive_int, help="public count cap C (formal calibration)")
    est.add_argument("--clip", type=positive_float, help="clip norm G of pgd-clip")
    est.add_argument(
        "--privacy-unit",
        choices=("event", "sequence"),
        default="event",
        help="event (the paper's) or sequence (one sequence replaced; ssp and ctls, with --sequence-clip and/or "
        "--max-events, as in fit)",
    )
    est.add_argument("--sequence-clip", type=positive_float, help="public G per sequence (--privacy-unit sequence)")
    est.add_argument("--max-events", type=positive_int,
                     help="public M events kept per sequence (first M by time; either unit, as in fit)")
    run = sw.add_argument_group("execution")
    run.add_argument("--workers", type=positive_int, help="processes of the local pool (default: all cores)")
    run.add_argument("--dask", metavar="ADDRESS", help="'local' or tcp://HOST:PORT of a Dask scheduler")
    run.add_argument("--out", required=True, help="output table (.csv or .parquet)")
    sw.set_defaults(func=cmd_sweep)


def _source(args) -> DataSource:
    from dphawkes_experiments.sweep import DataSource

    scenario = get_scenario(args.scenario) if args.scenario else None
    if args.data:
        events = load_events_file(args.data, end_time=args.end_time, start_time=args.start_time,
                                  time_unit=args.time_unit, dimensions=args.dimensions,
                                  sequences=args.sequences)
        if scenario is not None and scenario.dim != events.dim:
            raise ConfigError(f"scenario {args.scenario} has {scenario.dim} dimensions, the data {events.dim}")
        return DataSource(scenario=scenario, events=events, label=Path(args.data).name,
                          train_fraction=args.train_fraction, holdout_start=_holdout_start(args, events))
    if scenario is None:
        raise ConfigError("give --scenario to simulate, or --data")
    return DataSource(scenario=scenario, n_events=args.events, end_time=args.horizon, label=args.scenario)


def _holdout_start(args, events) -> float | None:
    """``--holdout-start`` relative to the window start (one sequence, inside its window: checked here, before any
    cell runs)."""
    from dphawkes_experiments.prediction import heldout_split, relative_time

    if args.holdout_start is None:
        return None
    if events.n_sequences > 1:
        raise ConfigError("--holdout-start cuts one sequence in time; several sequences are split by --train-fraction")
    start = relative_time(events, args.holdout_start)
    heldout_split(events, start)
    return start


def _spec(args) -> SweepSpec:
    from dphawkes_experiments.sweep import SweepSpec  # here (pandas): `dphawkes --help` starts fast

    if not str(args.out).lower().endswith((".csv", ".parquet")):
        raise ConfigError("--out must end in .csv or .parquet")
    return SweepSpec(
        _source(args), methods=tuple(args.method), bin_sizes=tuple(args.bin_size),
        privacy="sigma2" if args.sigma2 is not None else "epsilon",
        levels=tuple(args.sigma2 if args.sigma2 is not None else args.epsilon), runs=args.runs, seed=args.seed,
        support=args.support, bound=args.bound, radius=args.radius, iters=args.iters,
        calibration=args.calibration, dp_delta=args.delta, count_cap=args.count_cap,
        options=tuple((name, value) for name, value in (
            ("clip", args.clip), ("privacy_unit", args.privacy_unit if args.privacy_unit != "event" else None),
            ("sequence_clip", args.sequence_clip), ("max_events", args.max_events)) if value is not None),
    )


def cmd_sweep(args) -> int:
    """Run the sweep and write the table; exit 130 (with the finished cells written) on Ctrl-C."""
    from dphawkes_experiments.sweep import dask_executor, default_executor, run_sweep, save_table, sidecar_path

    spec = _spec(args)
    executor = dask_executor(args.dask) if args.dask else default_executor(args.workers)
    print(f"sweep: {spec.n_cells} cells", file=sys.stderr)

    def progress(done, total, rows):
        print(f"\r{done}/{total} cells", end="", file=sys.stderr, flush=True)

    with executor as ex:  # both the process pool and the Dask helper are context managers
        frame = run_sweep(spec, ex, progress=progress)
    print("", file=sys.stderr)
    path = save_table(frame, args.out, spec.to_dict())
    complete = frame.attrs.get("complete", False)
    where = f"{path} (parameters in {sidecar_path(path)})" if path.suffix.lower() == ".csv" else str(path)
    print(f"wrote {len(frame)} cells to {where}" + ("" if complete else " (interrupted: partial)"), file=sys.stderr)
    return 0 if complete else 130
