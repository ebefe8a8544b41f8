"""``dphawkes select``: the width, the support and (exp) the decays chosen by held-out likelihood on a validation
block inside the training window, without privacy (:mod:`dphawkes_experiments.heldout_choice`). With ``--holdout-start
X`` the test block from X on is cut off first and never read."""

from __future__ import annotations

import sys

from dphawkes_core.estimators import FitConfig, get_family, method_names

from .inputs import (
    UsageError,
    add_family_options,
    add_window_options,
    given_options,
    load_events_file,
    positive_float,
    time_point,
    write_json,
)
from .ledger import add_look_option, record_look


def _numbers(text: str) -> tuple[float, ...]:
    """``0.1,0.2,0.5``: positive numbers."""
    return tuple(positive_float(part) for part in text.split(",") if part.strip())


def _decay_sets(text: str) -> tuple[tuple[float, ...], ...]:
    """``1;0.5,2``: sets of decays separated by ``;``."""
    return tuple(_numbers(part) for part in text.split(";") if part.strip())


def add_select_parser(sub) -> None:
    """Register ``dphawkes select``."""
    sel = sub.add_parser("select", help="choose w, s (and exp's decays) by held-out likelihood, NOT private (JSON)")
    sel.add_argument("events_csv", help="CSV or .parquet with columns time,dimension (one sequence)")
    sel.add_argument("--method", choices=[n for n in method_names() if not get_family(n).privacy.private or n == "exp"],
                     default="cls", help="the non-private fit to tune (exp: σ² = 0)")
    sel.add_argument("--widths", type=_numbers, required=True, help="grid of widths w = Δ, e.g. 0.1,0.25,0.5")
    sel.add_argument("--supports", type=_numbers, required=True, help="grid of supports s, e.g. 2,5,10")
    sel.add_argument("--decays-grid", type=_decay_sets, help="exp: sets of decays separated by ';', e.g. '1;0.5,2'")
    sel.add_argument("--validation-start", type=time_point, required=True, metavar="V",
                     help="fit on the events before V, score the candidates on those from V on (inside the "
                          "training window)")
    sel.add_argument("--holdout-start", type=time_point, metavar="X",
                     help="the test block starts at X: cut off before anything is read, V < X")
    add_window_options(sel)
    add_family_options(sel, [get_family("exp")])
    sel.add_argument("--json", default="-", help="output JSON file (default: stdout)")
    add_look_option(sel, "this selection")
    sel.set_defaults(func=cmd_select)


def cmd_select(args) -> int:
    """Run the selection; write the report (every candidate's validation score and the winner)."""
    from dphawkes_experiments.heldout_choice import select_by_heldout
    from dphawkes_experiments.prediction import heldout_split, relative_time

    events = load_events_file(args.events_csv, end_time=args.end_time, start_time=args.start_time,
                              time_unit=args.time_unit, dimensions=args.dimensions, sequences=args.sequences)
    if events.n_sequences != 1:
        raise UsageError("select cuts one sequence at --validation-start")
    source = events
    validation = relative_time(events, args.validation_start)
    if args.holdout_start is not None:
        test_start = relative_time(events, args.holdout_start)
        if not validation < test_start:
            raise UsageError("--validation-start must come before --holdout-start (inside the training window)")
        events = heldout_split(events, test_start).train
    private = get_family(args.method).privacy.private
    options = {k: v for k, v in given_options(args, [get_family("exp")]).items() if v is not None}
    base = FitConfig(method=args.method, bin_size=args.widths[0], lags=1, **(
        {"sigma2": 0.0, "calibration": "formal"} if private else {}), **options)
    report = select_by_heldout(events, base, args.widths, args.supports, validation, args.decays_grid)
    best = report.best
    if best is not None:
        print(f"select: w = {best.bin_size:g}, s = {best.support:g}"
              + (f", decays {','.join(f'{b:g}' for b in best.decays)}" if best.decays else "")
              + f": validation gain {best.gain:+.4g} nats per event over {len(report.candidates)} candidates; "
              "not a private choice", file=sys.stderr)
    record_look(args, source, f"dphawkes select ({args.method}: Δ and s"
                + (" and the decays" if args.decays_grid else "") + " chosen by held-out likelihood)")
    write_json(report.to_dict(), args.json)
    return 0



