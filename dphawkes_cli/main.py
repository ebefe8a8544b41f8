"""Command-line interface: ``dphawkes simulate | fit | sweep | score | audit | ledger`` over the same core the app uses.

This module parses and dispatches; each command lives in its own module (:mod:`.fit`, :mod:`.ledger`,
:mod:`.audit`, :mod:`.score`, :mod:`.sweep`). Bad input exits with status 2 and one line on stderr; results are
JSON (or CSV) for scripts.
"""

from __future__ import annotations

import argparse
import sys

from dphawkes_core.data.kernels import SCENARIOS, get_scenario
from dphawkes_core.errors import DPHawkesError

from .audit import add_audit_parser
from .fit import add_fit_parser
from .inputs import OneLineParser, positive_float, positive_int
from .ledger import add_ledger_parser
from .score import add_score_parser
from .select import add_select_parser
from .sweep import add_sweep_parser


def _cmd_simulate(args) -> int:
    from dphawkes_core.data.io import save_csv
    from dphawkes_core.data.simulate import simulate

    scenario = get_scenario(args.scenario)
    events = simulate(scenario, n_events=args.events, end_time=args.horizon, seed=args.seed)
    save_csv(events, args.out)
    print(f"wrote {events.n_events} events on [0, {events.end_time:.6g}] to {args.out}", file=sys.stderr)
    return 0


def _add_simulate_parser(sub) -> None:
    """``dphawkes simulate``: a named scenario to a CSV file."""
    sim = sub.add_parser("simulate", help="simulate a named scenario to a CSV file")
    sim.add_argument("--scenario", required=True, choices=sorted(SCENARIOS))
    size = sim.add_mutually_exclusive_group(required=True)
    size.add_argument("--events", type=positive_int, help="stop after this many events")
    size.add_argument("--horizon", type=positive_float, help="simulate on [0, HORIZON]")
    sim.add_argument("--seed", type=int, default=0)
    sim.add_argument("--out", required=True, help="output CSV (time,dimension)")
    sim.set_defaults(func=_cmd_simulate)


def build_parser() -> argparse.ArgumentParser:
    """The ``dphawkes`` argument parser: one sub-parser per command, each set up by its command's module."""
    parser = OneLineParser(prog="dphawkes", description="Differentially private Hawkes process estimation.")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=OneLineParser)
    _add_simulate_parser(sub)
    add_fit_parser(sub)
    add_sweep_parser(sub)
    add_score_parser(sub)
    add_select_parser(sub)
    add_audit_parser(sub)
    add_ledger_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``dphawkes`` console script; returns the exit status."""
    try:
        args = build_parser().parse_args(argv)
        return args.func(args)
    except DPHawkesError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except (OSError, MemoryError) as exc:
        print(f"error: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
