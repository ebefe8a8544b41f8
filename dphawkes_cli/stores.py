"""Partitioned event stores on the command line: telling one from a file, and the window and domain the options
declare for it (shared by ``fit`` and ``ledger``)."""

from __future__ import annotations

from pathlib import Path

from .inputs import UsageError


def is_partitioned(path: str) -> bool:
    """A glob pattern or a directory names Parquet partitions (a map-reduce fit)."""
    return any(ch in path for ch in "*?[") or Path(path).is_dir()


def partition_window(args, paths, executor=None) -> tuple:
    """The declared dimension names (``--dimensions`` or a ``labels.csv`` beside the partitions, else ``None``) and
    the :class:`~dphawkes_core.statistics.partitioned.Window` of a partitioned store as the window and domain options
    declare it."""
    from dphawkes_core.data.domain import parse_dimensions, read_sequences
    from dphawkes_core.data.io import load_labels
    from dphawkes_core.statistics.partitioned import partitioned_window

    start, end = (None if v is None else window_number(v) for v in (args.start_time, args.end_time))
    declared = parse_dimensions(args.dimensions) if args.dimensions else load_labels(
        Path(paths[0]).with_name("labels.csv"))
    keys = read_sequences(args.sequences)[0] if args.sequences else None
    return declared, partitioned_window(paths, executor, start, end, declared, keys)


def window_number(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise UsageError(f"a partitioned fit reads numeric times: the window bound {text!r} must be a number") \
            from None
