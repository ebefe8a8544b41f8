"""The command line's inputs: argument types that exit in one line, the window options and event-file loading.

Both commands that read data (``fit`` in :mod:`.main`, ``sweep`` in :mod:`.sweep`) use them, so they live
below both.
"""

from __future__ import annotations

import argparse
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from dphawkes_core.errors import DPHawkesError

if TYPE_CHECKING:  # the CSV loader (pandas) loads where a command uses it: `dphawkes fit --help` starts fast
    from dphawkes_core.data.io import Events


class UsageError(DPHawkesError):
    """Wrong command-line usage."""


class OneLineParser(argparse.ArgumentParser):
    """Argument parser that reports errors in one line (exit status 2)."""

    def error(self, message):  # noqa: D401 - argparse API
        raise UsageError(f"{self.prog}: {message}")


def parse_number(text: str, cast, acceptable, requirement: str):
    """argparse type: ``cast(text)`` that must be finite and satisfy ``acceptable``."""
    try:
        value = cast(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a {'whole number' if cast is int else 'number'}") from None
    if not (np.isfinite(value) and acceptable(value)):
        raise argparse.ArgumentTypeError(f"{text!r} must be {requirement}")
    return value


def positive_float(text: str) -> float:
    return parse_number(text, float, lambda v: v > 0, "a positive number")


def positive_int(text: str) -> int:
    return parse_number(text, int, lambda v: v >= 1, "at least 1")


def cap_or_auto(text: str) -> int | str:
    """``--count-cap``: a positive whole number or ``auto``."""
    return "auto" if text.strip().lower() == "auto" else positive_int(text)


def width_or_auto(text: str) -> float | str:
    """``--bin-size``: a positive number or ``auto``."""
    return "auto" if text.strip().lower() == "auto" else positive_float(text)


def clip_or_auto(text: str) -> float | str:
    """``--sequence-clip``: a positive number or ``auto``."""
    return "auto" if text.strip().lower() == "auto" else positive_float(text)


def open_unit_fraction(text: str) -> float:
    return parse_number(text, float, lambda v: 0 < v < 1, "strictly between 0 and 1")


def nonnegative_float(text: str) -> float:
    return parse_number(text, float, lambda v: v >= 0, "a number >= 0")


def time_point(text: str) -> str:
    """argparse type: a window bound, a number or an ISO-8601 datetime (kept as text: exact decimals)."""
    text = text.strip()
    try:
        if np.isfinite(float(text)):
            return text
    except ValueError:
        try:
            datetime.fromisoformat(text.replace("Z", "+00:00"))
            return text
        except ValueError:
            pass
    raise argparse.ArgumentTypeError(f"{text!r} is not a number or an ISO-8601 datetime")


def add_window_options(parser) -> None:
    """``--start-time``, ``--end-time`` and ``--time-unit`` of every command that loads an event file."""
    parser.add_argument("--start-time", type=time_point,
                        help="observation window start, on the time column's axis: a number or an ISO-8601 "
                             "datetime (default: 0 for numbers, else the first event, read from the data)")
    parser.add_argument("--end-time", type=time_point,
                        help="observation window end T, a number or a datetime; events outside the window are "
                             "dropped and counted (default: last event, read from the data; required by the "
                             "formal calibration)")
    parser.add_argument("--time-unit", choices=("s", "min", "h", "d"),
                        help="unit of the fitted time axis: numbers are then read as seconds (e.g. Unix time) "
                             "and datetimes as seconds since the window start (default: numbers as they are, "
                             "datetimes in seconds)")
    parser.add_argument("--dimensions", metavar="N|NAMES",
                        help="the declared dimensions: a count N (names 0…N-1) or names login,purchase,…; rows of "
                             "other dimensions are dropped and counted (default: a labels.csv beside the data, "
                             "else read from the data — then not a formal release)")
    parser.add_argument("--sequences", metavar="N|KEYFILE",
                        help="the declared sequence keys: a number N (keys 0…N-1) or a file of keys (one a line, or "
                             "a CSV with a sequence column and optional start,end: each key's public window); rows "
                             "of other keys are dropped and counted (default: read from the data — then not a "
                             "formal release, when the data have a sequence column)")


def load_events_file(path: str, end_time: str | float | None = None, *, start_time: str | float | None = None,
                     time_unit: str | None = None, dimensions: str | None = None,
                     sequences: str | None = None) -> Events:
    """Load an event CSV or Parquet file (by suffix) over its declared domain: the dimensions of
    ``--dimensions`` or of a ``labels.csv`` beside it, the sequence keys of ``--sequences``."""
    from dphawkes_core.data.domain import Domain, parse_dimensions, read_sequences
    from dphawkes_core.data.io import load_csv, load_labels, load_parquet

    declared = parse_dimensions(dimensions) if dimensions else load_labels(Path(path).with_name("labels.csv"))
    keys, windows = read_sequences(sequences) if sequences else (None, None)
    load = load_parquet if Path(path).suffix.lower() in (".parquet", ".pq") else load_csv
    return load(path, end_time=end_time, start_time=start_time, time_unit=time_unit,
                domain=Domain(dimensions=declared, sequences=keys, windows=windows))


def write_json(payload: dict, target: str | None) -> None:
    """Strict JSON of ``payload`` to stdout (``-`` or None) or to the file ``target``."""
    from dphawkes_core.release.export import to_json

    text = to_json(payload)
    if target in (None, "-"):
        print(text)
    else:
        Path(target).write_text(text + "\n")


def setting_type(setting):
    """argparse type of a number option (or a comma-separated list of numbers, kind ``floats``) declared by a
    family's :class:`~dphawkes_core.estimators.Setting`: the setting's own check, one line on failure."""
    cast = int if setting.kind == "int" else float

    def parse(text: str):
        value = setting.normalise(text) if setting.kind == "floats" else parse_number(text, cast, lambda v: True,
                                                                                       "a number")
        try:
            setting.check(value, "")
        except DPHawkesError:
            raise argparse.ArgumentTypeError(f"{text!r} must be {setting.requirement()}") from None
        return value

    parse.__name__ = setting.name  # argparse names the type in its messages
    return parse


def add_family_options(parser, families, auto=None) -> None:
    """One flag per option of the registered families, built from their settings metadata (an option several
    families read, such as K, once); unset flags stay out of the namespace, so a family's defaults apply and an
    option given to a family that does not read it is refused by the config, in one line. ``auto``: ``{option:
    help}`` of the options that also take the word ``auto`` (a choice made by the command, said in ``help``)."""
    auto = auto or {}
    readers: dict[str, list] = {}
    for family in families:
        for setting in family.settings:
            readers.setdefault(setting.name, []).append((family, setting))
    group = parser.add_argument_group("method options (each read by the methods named)")
    for name, pairs in readers.items():
        setting = pairs[0][1]
        who = ", ".join(family.name for family, _ in pairs)
        defaults = {f"{s.default}" for _, s in pairs}
        default = (f"default {defaults.pop()}" if len(defaults) == 1 else
                   "default " + ", ".join(f"{s.default} ({f.name})" for f, s in pairs))
        if setting.default is None and not setting.optional:
            default = "required"
        help_text = f"turn off: {setting.label} ({setting.help})" if setting.cli_negates else setting.help
        also = f"; or 'auto': {auto[name]}" if name in auto else ""
        text = f"{help_text} [{who}; {setting.none_means or default}{also}]".replace("%", "%%")
        if setting.kind == "bool":
            parser_kwargs = dict(action="store_const", const=not setting.default if setting.cli_negates else True)
        elif setting.kind == "choice":
            parser_kwargs = dict(choices=setting.choices)
        else:
            parser_kwargs = dict(type=setting_type(setting) if name not in auto else _or_auto(setting_type(setting)))
        group.add_argument(setting.flag, dest=name, default=argparse.SUPPRESS, help=text, **parser_kwargs)


def _or_auto(parse):
    """argparse type: the word ``auto`` (any case), or what ``parse`` reads."""
    def parse_or_auto(text: str):
        return "auto" if text.strip().lower() == "auto" else parse(text)

    parse_or_auto.__name__ = parse.__name__
    return parse_or_auto


def given_options(args, families) -> dict:
    """The family options given on the command line (the flags of :func:`add_family_options`). An option the
    chosen family does not read stays in, so :class:`~dphawkes_core.estimators.FitConfig` refuses it in one line."""
    names = {s.name for family in families for s in family.settings}
    return {name: getattr(args, name) for name in sorted(names) if hasattr(args, name)}
