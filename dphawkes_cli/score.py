"""``dphawkes score FIT.json EVENTS`` and ``fit --holdout-start``: the held-out log-likelihood of a fit against
the constant-rate Poisson model (:func:`dphawkes_experiments.prediction.score_heldout`).

One way to state the split, here and in ``sweep``: a time for one sequence (``--holdout-start``, on the data's
own time axis like ``--end-time``), a share of sequences for several (``--train-fraction``, the first ones
train). The score reads the test events: on private data it is a diagnostic for the analyst, never private.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from dphawkes_core.errors import DataError, DPHawkesError

from .inputs import UsageError, add_window_options, load_events_file, open_unit_fraction, time_point, write_json
from .ledger import add_look_option, record_look

if TYPE_CHECKING:
    from dphawkes_core.data.baseline_bins import BaselineProfile
    from dphawkes_core.data.io import Events
    from dphawkes_core.evaluation.exp_kernels import ExponentialKernels
    from dphawkes_core.evaluation.step_kernels import StepKernels
    from dphawkes_experiments.prediction import TrainTestSplit

SCORE_NOTE = ("computed from the test events: a diagnostic for the analyst, not private (on private data do "
              "not publish it)")


def add_holdout_options(parser, required_note: str = "") -> None:
    """``--holdout-start`` (one sequence) and ``--train-fraction`` (several sequences)."""
    parser.add_argument("--holdout-start", type=time_point, metavar="X",
                        help="one sequence: train on the events before X, score those from X on (a number or a "
                             "datetime on the data's time axis, like --end-time)" + required_note)
    parser.add_argument("--train-fraction", type=open_unit_fraction,
                        help="several sequences: the share of sequences (the first ones) that train; the others "
                             "are scored (default 0.7)")


def add_score_parser(sub) -> None:
    """Register ``dphawkes score``."""
    sc = sub.add_parser("score", help="held-out log-likelihood of a fit against the Poisson model (JSON)")
    sc.add_argument("fit_json", help="a fit's JSON (dphawkes fit --json, or the app's download)")
    sc.add_argument("events_csv", help="the events (CSV or .parquet), training and test parts")
    add_holdout_options(sc, "; required for one sequence")
    add_window_options(sc)
    sc.add_argument("--json", default="-", help="output JSON file (default: stdout)")
    add_look_option(sc, "this score")
    sc.set_defaults(func=cmd_score)


def cmd_score(args) -> int:
    """Score the fit of ``args.fit_json`` on the test part of ``args.events_csv``; write JSON (``--json``) and the
    verdict on stderr."""
    kernels, baseline = _fit_kernels(args.fit_json)
    events = load_events_file(args.events_csv, end_time=args.end_time, start_time=args.start_time,
                              time_unit=args.time_unit, dimensions=args.dimensions, sequences=args.sequences)
    if kernels.baseline.size != events.dim:
        raise UsageError(f"the fit has {kernels.baseline.size} dimensions, the data {events.dim}")
    if events.n_sequences == 1 and args.holdout_start is None:
        raise UsageError("give --holdout-start X: the test part of one sequence starts at a time")
    split = holdout_split(args, events)
    report = heldout_report(kernels, baseline, split, args)
    record_look(args, events, "dphawkes score (a fit's held-out log-likelihood on the test part)")
    write_json(report, args.json)
    _note_heldout(report)
    return 0


def _fit_kernels(path: str) -> tuple[StepKernels | ExponentialKernels, BaselineProfile]:
    """The kernels of a fit's JSON as ``fit --holdout-start`` scores them — the exponential sums of a fit that
    reports its decays and their coefficients (``solver_info``), else its step functions (``kernels`` on
    ``lag_grid``, ``baseline``) — and its baseline (the parts of a baseline that follows the clock, when
    ``solver_info`` has them)."""
    from dphawkes_core.evaluation.exp_kernels import ExponentialKernels, fit_baseline
    from dphawkes_core.evaluation.lag_average import average_lags

    try:
        payload = json.loads(Path(path).read_text())
        kernels = np.asarray(payload["kernels"], dtype=float)
        baseline = np.asarray(payload["baseline"], dtype=float)
        grid = np.asarray(payload["lag_grid"], dtype=float)
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise DataError(f"{path} is not a fit's JSON with kernels, baseline and lag_grid "
                        f"({type(exc).__name__}: {exc})") from None
    d = baseline.size
    if kernels.shape != (d, d, grid.size) or grid.size == 0 or not (np.all(np.isfinite(kernels))
                                                                    and np.all(np.isfinite(baseline))):
        raise DataError(f"{path}: kernels of shape {kernels.shape} do not match {d} dimensions and "
                        f"{grid.size} lags, or the estimate is not finite")
    info = payload.get("solver_info") or {}
    try:
        profile = fit_baseline(baseline, info)
    except (ValueError, TypeError, KeyError, DPHawkesError) as exc:
        raise DataError(f"{path}: the baseline's parts (baseline_profile, baseline_bins, baseline_period) are not "
                        f"a valid profile ({type(exc).__name__}: {exc})") from None
    if profile.values.shape[0] != d or not np.all(np.isfinite(profile.values)):
        raise DataError(f"{path}: the baseline's parts do not match {d} dimensions, or are not finite")
    if "decays" not in info or "adjacency" not in info:
        return average_lags(kernels, baseline, float(grid[0]), 1), profile
    try:
        adjacency, decays = np.asarray(info["adjacency"], dtype=float), np.asarray(info["decays"], dtype=float)
    except (ValueError, TypeError) as exc:
        raise DataError(f"{path}: the exponential kernels' decays and adjacency are not arrays of numbers "
                        f"({type(exc).__name__}: {exc})") from None
    if adjacency.shape != (d, d, decays.size) or not (np.all(decays > 0) and np.all(np.isfinite(adjacency))):
        raise DataError(f"{path}: the exponential kernels' adjacency of shape {adjacency.shape} does not match "
                        f"{d} dimensions and {decays.size} decays, or is not finite")
    return ExponentialKernels(adjacency=adjacency, decays=decays, baseline=baseline, window=float(grid[-1])), profile


def holdout_split(args, events: Events) -> TrainTestSplit:
    """The split of ``--holdout-start`` / ``--train-fraction``."""
    from dphawkes_experiments.prediction import heldout_split, relative_time

    if args.holdout_start is not None and events.n_sequences > 1:
        raise UsageError("--holdout-start cuts one sequence in time; several sequences are split by "
                         "--train-fraction")
    if args.train_fraction is not None and events.n_sequences == 1:
        raise UsageError("--train-fraction splits several sequences; one sequence is cut at --holdout-start")
    start = None if args.holdout_start is None else relative_time(events, args.holdout_start)
    return heldout_split(events, start, args.train_fraction if args.train_fraction is not None else 0.7)


def wants_holdout(args) -> bool:
    """``fit`` was asked to hold out a test part."""
    return args.holdout_start is not None or args.train_fraction is not None


def heldout_report(kernels: StepKernels | ExponentialKernels, baseline: BaselineProfile, split: TrainTestSplit,
                   args) -> dict:
    """The score as a JSON-ready dict (with its ``verdict`` and ``verdict_text``), with how the data were split and
    the note that it is not private."""
    from dphawkes_experiments.prediction import score_heldout

    score = score_heldout(kernels, baseline, split)
    where = ({"holdout_start": args.holdout_start} if split.mode == "timeline"
             else {"train_fraction": split.train_fraction, "test_sequences": len(split.test)})
    return {**score.to_dict(), **where, "n_train_events": split.train.n_events, "note": SCORE_NOTE}


def add_heldout(payload: dict, result, split: TrainTestSplit | None, args) -> None:
    """``fit --holdout-start``: the fit's score on the test part as ``payload["heldout"]``, and a line on stderr."""
    from dphawkes_core.evaluation.exp_kernels import fit_baseline, fit_functions

    if split is None:
        return
    payload["heldout"] = heldout_report(fit_functions(result), fit_baseline(result.baseline, result.info), split,
                                        args)
    _note_heldout(payload["heldout"])


def _note_heldout(report: dict) -> None:
    """One line on stderr: the verdict in words, on how many test events, and that the score is not private."""
    print(f"held-out verdict: {report['verdict_text']} (on {report['n_test_events']:,} test events); {SCORE_NOTE}",
          file=sys.stderr)
