"""The narrow parser (``dphawkes_cli.main.parse_arguments``): a fit that names its method is parsed with that
family's options only, so that it imports one family's module — and every line is read as the full parser reads it.

The equivalence is checked against the full parser itself (``build_parser(argv).parse_args``) on lines that use
shared options, family options, ``--opt=value``, a repeated ``--method`` and the default method; and the lines the
narrow parser must hand over (an abbreviation, another family's option, an unknown option, a bad value, a missing
argument) end exactly as the full parser ends them: the same result, or the same one-line error. A planted narrow
parser that keeps what it cannot read shows the last check can fail.
"""

from __future__ import annotations

import argparse

import pytest

from dphawkes_cli import main as cli_main
from dphawkes_cli.fit import fit_config
from dphawkes_cli.inputs import UsageError
from dphawkes_core.errors import DPHawkesError
from dphawkes_core.estimators import FAMILIES

# every option name below exists in the full parser; the lines are parsed, never run
LINES = [
    ["fit", "e.csv", "--method", "mle", "--bin-size", "0.25", "--support", "5", "--json", "o.json"],
    ["fit", "e.csv", "--bin-size", "0.5", "--lags", "4"],  # the default method, cls
    ["fit", "--method=mle", "e.csv", "--bin-size=0.25", "--support", "5", "--mle-tol", "1e-10"],
    ["fit", "e.csv", "--method", "ssp", "--method", "ctls", "--bin-size", "0.5", "--lags", "4", "--sigma2", "0",
     "--end-time", "100", "--dimensions", "2"],
    ["fit", "e.csv", "--method", "exp", "--bin-size", "0.5", "--lags", "4", "--epsilon", "1", "--decays", "1,2",
     "--calibration", "formal", "--count-cap", "3"],
    ["fit", "e.csv", "--method", "pgd", "--bin-size", "0.5", "--lags", "4", "--epsilon", "1", "--bound", "2",
     "--iters", "5", "--seed", "3", "--ledger", "l.json", "--plan"],
]
# lines the narrow parser cannot read as they are: the full parser decides
HANDED_OVER = [
    ["fit", "e.csv", "--method", "mle", "--bin", "0.25", "--support", "5"],  # an abbreviation
    ["fit", "e.csv", "--method", "mle", "--bin-size", "0.25", "--support", "5", "--ridge", "1"],  # ssp's option
    ["fit", "e.csv", "--method", "mle", "--bin-size", "0.25", "--support", "5", "--no-such-option"],
    ["fit", "e.csv", "--method", "mle", "--bin-size", "-1", "--support", "5"],  # a bad value
    ["fit", "--method", "mle", "--bin-size", "0.25"],  # no events file
    ["fit", "e.csv", "--method", "nonesuch", "--bin-size", "0.25", "--lags", "2"],
    ["fit", "e.csv", "--bin-size", "0.5", "--lags", "4", "--method"],
]


def full_parse(argv):
    """The full parser's result, or its error message."""
    try:
        return cli_main.build_parser(argv).parse_args(argv)
    except UsageError as error:
        return str(error)


def narrow_parse(argv):
    try:
        return cli_main.parse_arguments(argv)
    except UsageError as error:
        return str(error)


def comparable(args):
    """The namespace without the names of the families whose options the parser offered (all, or the one named)."""
    if isinstance(args, str):
        return args
    return {key: value for key, value in vars(args).items() if key not in ("option_families", "func")}


def config_or_error(args):
    if isinstance(args, str):
        return args
    try:
        return fit_config(args)
    except DPHawkesError as error:
        return str(error)


@pytest.mark.parametrize("argv", LINES + HANDED_OVER, ids=lambda argv: " ".join(argv[2:]))
def test_every_line_is_read_as_the_full_parser_reads_it(argv):
    narrow, full = narrow_parse(argv), full_parse(argv)
    assert comparable(narrow) == comparable(full)
    assert config_or_error(narrow) == config_or_error(full)


@pytest.mark.parametrize("argv", LINES, ids=lambda argv: " ".join(argv[2:]))
def test_a_line_that_names_its_method_is_read_by_the_narrow_parser(argv):
    parser = cli_main.narrow_parser(argv)
    assert parser is not None
    args, left_over = parser.parse_known_args(argv)
    assert not left_over
    assert args.option_families == (args.method,)  # one family's options: one family's module


def test_the_mle_option_refused_for_another_method_says_so_in_one_line():
    argv = LINES[0][:-2] + ["--method", "cls", "--mle-tol", "1e-9"]
    message = config_or_error(narrow_parse(argv))
    assert isinstance(message, str) and "mle_tol" in message and "--mle-tol" in message


@pytest.mark.parametrize("argv", [["fit", "--help"], ["fit", "-h"], ["--help"], ["score", "e.csv"]])
def test_help_and_other_commands_get_no_narrow_parser(argv):
    assert cli_main.narrow_parser(argv) is None


def test_a_narrow_parser_keeping_what_it_cannot_read_is_caught(monkeypatch):
    """Planted: accept the narrow parser's result even with words left over. An abbreviation is then read by the
    narrow parser (no abbreviations: left over, its --support missing), not as the full parser reads it."""
    def keeps_left_overs(argv):
        return cli_main.narrow_parser(argv).parse_known_args(argv)[0]

    monkeypatch.setattr(cli_main, "parse_arguments", keeps_left_overs)
    argv = HANDED_OVER[0]
    assert comparable(narrow_parse(argv)) != comparable(full_parse(argv))


def test_the_full_parser_offers_every_family_and_the_config_reads_only_the_named_ones():
    argv = LINES[0]
    args = cli_main.build_parser(argv).parse_args(argv)
    assert args.option_families == tuple(FAMILIES)
    assert fit_config(args) == fit_config(cli_main.parse_arguments(argv))
    assert fit_config(argparse.Namespace(**{**vars(args), "option_families": ("mle",)})) == fit_config(args)
