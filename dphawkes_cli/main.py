"""Command-line interface: ``dphawkes simulate | fit | sweep | score | audit | ledger`` over the same core the app uses.

This module parses and dispatches; each command lives in its own module (:mod:`.fit`, :mod:`.ledger`,
:mod:`.audit`, :mod:`.score`, :mod:`.sweep`, :mod:`.select`), imported only when that command runs (or for the
list of every command, ``dphawkes --help``): a fit does not pay for the audit's or the sweep's imports
(``tests/cli/test_startup.py``). Bad input exits with status 2 and one line on stderr; results are JSON (or CSV) for
scripts.
"""

from __future__ import annotations

import argparse
import sys

from dphawkes_core.errors import DPHawkesError

from .inputs import OneLineParser, UsageError, positive_float, positive_int

# each command's module and the function that adds its sub-parser, in the order `dphawkes --help` lists them
COMMANDS = {"simulate": ("main", "_add_simulate_parser"), "fit": ("fit", "add_fit_parser"),
            "sweep": ("sweep", "add_sweep_parser"), "score": ("score", "add_score_parser"),
            "select": ("select", "add_select_parser"), "audit": ("audit", "add_audit_parser"),
            "ledger": ("ledger", "add_ledger_parser")}


def _cmd_simulate(args) -> int:
    from dphawkes_core.data.io import save_csv
    from dphawkes_core.data.kernels import get_scenario
    from dphawkes_core.data.simulate import simulate

    scenario = get_scenario(args.scenario)
    events = simulate(scenario, n_events=args.events, end_time=args.horizon, seed=args.seed)
    save_csv(events, args.out)
    print(f"wrote {events.n_events} events on [0, {events.end_time:.6g}] to {args.out}", file=sys.stderr)
    return 0


def _add_simulate_parser(sub) -> None:
    """``dphawkes simulate``: a named scenario to a CSV file."""
    from dphawkes_core.data.kernels import SCENARIOS

    sim = sub.add_parser("simulate", help="simulate a named scenario to a CSV file")
    sim.add_argument("--scenario", required=True, choices=sorted(SCENARIOS))
    size = sim.add_mutually_exclusive_group(required=True)
    size.add_argument("--events", type=positive_int, help="stop after this many events")
    size.add_argument("--horizon", type=positive_float, help="simulate on [0, HORIZON]")
    sim.add_argument("--seed", type=int, default=0)
    sim.add_argument("--out", required=True, help="output CSV (time,dimension)")
    sim.set_defaults(func=_cmd_simulate)


def build_parser(argv: list[str] | None = None) -> argparse.ArgumentParser:
    """The ``dphawkes`` argument parser: one sub-parser per command, each set up by its command's module. Given the
    command line ``argv``, only the sub-parser of the command it names (its first word not an option) is built, and
    only that command's module imported; otherwise (no command, an unknown one: the list of commands or the error
    naming them) every one."""
    parser = OneLineParser(prog="dphawkes", description="Differentially private Hawkes process estimation.")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=OneLineParser)
    named = next((word for word in argv or () if not word.startswith("-")), None)
    for command, (module, adder) in COMMANDS.items():
        if named in COMMANDS and command != named:
            continue
        # __import__, the import statement's own machinery, so that `python -X importtime` reports the module
        # (importlib.import_module's imports are not in that report)
        getattr(__import__(f"{__package__}.{module}", fromlist=[adder]), adder)(sub)
    return parser


def narrow_parser(argv: list[str]) -> argparse.ArgumentParser | None:
    """A parser of the command ``argv`` names holding only what that line can use, when the command's module offers
    one (``add_narrow_parser``: ``fit``, the options of the method it names, so that one family is imported, not
    every one); None otherwise, and for a line that asks for help (which lists everything)."""
    named = next((word for word in argv if not word.startswith("-")), None)
    if named not in COMMANDS or any(word == "--help" or word.startswith("-h") for word in argv):
        return None
    module = __import__(f"{__package__}.{COMMANDS[named][0]}", fromlist=["add_narrow_parser"])
    if not hasattr(module, "add_narrow_parser"):
        return None
    parser = OneLineParser(prog="dphawkes", description="Differentially private Hawkes process estimation.",
                           allow_abbrev=False)
    sub = parser.add_subparsers(dest="command", required=True, parser_class=OneLineParser)
    return parser if module.add_narrow_parser(sub, argv) else None


def parse_arguments(argv: list[str]) -> argparse.Namespace:
    """The command line parsed as the full parser (:func:`build_parser`) parses it. A line the narrow parser
    (:func:`narrow_parser`) reads exactly — every option one it knows by its whole name, nothing left over, no error
    — is parsed the same by both (the full one only adds options the line does not use), so its result is taken;
    any other line, and every message, is the full parser's."""
    narrow = narrow_parser(argv)
    if narrow is not None:
        try:
            args, left_over = narrow.parse_known_args(argv)
        except UsageError:
            left_over = True
        if not left_over:
            return args
    return build_parser(argv).parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``dphawkes`` console script; returns the exit status."""
    argv = sys.argv[1:] if argv is None else argv
    try:
        args = parse_arguments(argv)
        return args.func(args)
    except DPHawkesError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except (OSError, MemoryError) as exc:
        print(f"error: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
