"""Validated multivariate event sequences and their CSV format.

The CSV format is ``time,dimension`` with an optional ``sequence`` column for several
independent sequences (each observed on its own window ``[0, T_s]``). ``dimension`` is either an
integer ``0..d-1`` or a label; labels are mapped to indices in sorted order.
"""

from __future__ import annotations

import io
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO, Sequence

import numpy as np
import pandas as pd

from .errors import DataError

MAX_DIMENSIONS = 50
MAX_FILE_BYTES = 200 * 1024 * 1024
REQUIRED_COLUMNS = ("time", "dimension")
OPTIONAL_COLUMNS = ("sequence",)


@dataclass(frozen=True)
class EventSequence:
    """One realisation of a d-variate point process on the window ``[0, end_time]``.

    Attributes
    ----------
    times : tuple of numpy.ndarray
        ``times[j]`` holds the sorted event times of dimension ``j``.
    end_time : float
        End ``T`` of the observation window.
    """

    times: tuple[np.ndarray, ...]
    end_time: float

    @property
    def n_events(self) -> int:
        """Total number of events over all dimensions."""
        return int(sum(len(t) for t in self.times))


@dataclass(frozen=True)
class Events:
    """A validated multivariate event data set: one or more independent sequences.

    Attributes
    ----------
    sequences : tuple of EventSequence
        Independent sequences, all with the same number of dimensions.
    names : tuple of str
        One name per dimension.
    warnings : tuple of str
        Non-fatal findings of validation (e.g. a dimension without events).
    """

    sequences: tuple[EventSequence, ...]
    names: tuple[str, ...]
    warnings: tuple[str, ...] = field(default=())

    @property
    def dim(self) -> int:
        """Number of dimensions d."""
        return len(self.names)

    @property
    def n_events(self) -> int:
        """Total number of events over all sequences."""
        return int(sum(s.n_events for s in self.sequences))

    @property
    def n_sequences(self) -> int:
        """Number of independent sequences."""
        return len(self.sequences)

    @property
    def end_time(self) -> float:
        """Total observed time (sum of the sequences' windows)."""
        return float(sum(s.end_time for s in self.sequences))

    def counts_per_dimension(self) -> np.ndarray:
        """Number of events in each dimension, summed over sequences."""
        return np.array(
            [sum(len(s.times[j]) for s in self.sequences) for j in range(self.dim)], dtype=np.int64
        )

    def to_frame(self) -> pd.DataFrame:
        """Tidy table with columns ``sequence, time, dimension`` sorted by sequence and time."""
        frames = []
        for s_idx, seq in enumerate(self.sequences):
            for j, t in enumerate(seq.times):
                frames.append(pd.DataFrame({"sequence": s_idx, "time": t, "dimension": j}))
        if not frames:
            return pd.DataFrame(columns=["sequence", "time", "dimension"])
        frame = pd.concat(frames, ignore_index=True)
        return frame.sort_values(["sequence", "time", "dimension"], kind="stable").reset_index(drop=True)


def from_arrays(
    times: Sequence[Sequence[float]],
    end_time: float | None = None,
    names: Sequence[str] | None = None,
) -> Events:
    """Build a one-sequence :class:`Events` from per-dimension time arrays.

    Parameters
    ----------
    times : sequence of array-like
        ``times[j]`` are the event times of dimension ``j`` (any order).
    end_time : float, optional
        Window end T; defaults to the last event time.
    names : sequence of str, optional
        Dimension names; defaults to ``"0" .. "d-1"``.

    Returns
    -------
    Events
        The validated data set.
    """
    arrays = [np.sort(np.asarray(t, dtype=float).ravel()) for t in times]
    names = tuple(str(n) for n in names) if names is not None else tuple(str(j) for j in range(len(arrays)))
    if len(names) != len(arrays):
        raise DataError(f"{len(names)} names given for {len(arrays)} dimensions")
    return _validated([arrays], [end_time], names)


def load_csv(
    source: str | os.PathLike | bytes | BinaryIO,
    end_time: float | None = None,
    names: Sequence[str] | None = None,
    max_bytes: int = MAX_FILE_BYTES,
) -> Events:
    """Read and validate an event CSV (``time,dimension[,sequence]``).

    Parameters
    ----------
    source : path, bytes or binary file
        The CSV file or its content.
    end_time : float, optional
        Window end T applied to every sequence; defaults to each sequence's last event time.
    names : sequence of str, optional
        Dimension names for integer dimensions (e.g. from a ``labels.csv``).
    max_bytes : int
        Files larger than this are refused before parsing.

    Returns
    -------
    Events
        The validated data set.

    Raises
    ------
    DataError
        With a one-line message naming the row and column at fault.
    """
    raw = _read_bytes(source, max_bytes)
    if not raw.strip():
        raise DataError("the file is empty: expected a header 'time,dimension[,sequence]' and rows")
    try:
        frame = pd.read_csv(io.BytesIO(raw), dtype=str, skipinitialspace=True, keep_default_na=False)
    except (pd.errors.ParserError, UnicodeDecodeError, ValueError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise DataError(f"not a readable CSV file: {first}") from None
    frame.columns = [str(c).strip().lower() for c in frame.columns]
    _check_columns(frame.columns)
    if frame.empty:
        raise DataError("the file has a header but no event rows")
    times = _parse_times(frame["time"])
    dims, dim_names = _parse_dimensions(frame["dimension"], names)
    if "sequence" in frame.columns:
        seq_labels = frame["sequence"].str.strip()
        bad = seq_labels == ""
        if bad.any():
            row = int(np.flatnonzero(bad.to_numpy())[0])
            raise DataError(f"row {row + 2}, column 'sequence': empty value")
        seq_codes, seq_uniques = pd.factorize(seq_labels, sort=False)
    else:
        seq_codes = np.zeros(len(frame), dtype=np.int64)
        seq_uniques = [0]
    per_sequence = []
    for s in range(len(seq_uniques)):
        mask = seq_codes == s
        per_sequence.append([np.sort(times[mask & (dims == j)]) for j in range(len(dim_names))])
    return _validated(per_sequence, [end_time] * len(per_sequence), dim_names)


def save_csv(events: Events, path: str | os.PathLike | io.TextIOBase) -> None:
    """Write events as ``time,dimension`` (plus ``sequence`` when there are several sequences).

    Dimension labels are written as integers; names round-trip through ``labels.csv`` style
    metadata only, so pass them again to :func:`load_csv`.
    """
    frame = events.to_frame()
    columns = ["sequence", "time", "dimension"] if events.n_sequences > 1 else ["time", "dimension"]
    frame[columns].to_csv(path, index=False, float_format="%.10g")


def load_labels(path: str | os.PathLike) -> tuple[str, ...] | None:
    """Read a ``labels.csv`` (``dimension,label``) next to a data set, if there is one."""
    path = Path(path)
    if not path.is_file():
        return None
    frame = pd.read_csv(path)
    if {"dimension", "label"} - set(frame.columns):
        return None
    frame = frame.sort_values("dimension")
    return tuple(str(x) for x in frame["label"])


def _read_bytes(source, max_bytes: int) -> bytes:
    if isinstance(source, (bytes, bytearray)):
        raw = bytes(source)
    elif hasattr(source, "read"):
        raw = source.read(max_bytes + 1)
        if isinstance(raw, str):
            raw = raw.encode()
    else:
        path = Path(source)
        if not path.is_file():
            raise DataError(f"no such file: {path}")
        size = path.stat().st_size
        if size > max_bytes:
            raise DataError(f"file is {size / 2**20:.1f} MiB, over the {max_bytes / 2**20:.0f} MiB limit")
        raw = path.read_bytes()
    if len(raw) > max_bytes:
        raise DataError(f"file is over the {max_bytes / 2**20:.0f} MiB limit")
    return raw


def _check_columns(columns: Sequence[str]) -> None:
    allowed = set(REQUIRED_COLUMNS) | set(OPTIONAL_COLUMNS)
    missing = [c for c in REQUIRED_COLUMNS if c not in columns]
    extra = [c for c in columns if c not in allowed]
    expected = "expected columns time,dimension[,sequence]"
    if missing:
        raise DataError(f"missing column {', '.join(repr(c) for c in missing)}; {expected}")
    if extra:
        raise DataError(f"unexpected column {', '.join(repr(c) for c in extra)}; {expected}")
    if len(set(columns)) != len(columns):
        raise DataError(f"duplicate column names; {expected}")


def _parse_times(column: pd.Series) -> np.ndarray:
    values = pd.to_numeric(column.str.strip(), errors="coerce").to_numpy(dtype=float)
    bad = ~np.isfinite(values)
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        raise DataError(
            f"row {row + 2}, column 'time': {column.iloc[row]!r} is not a finite number"
        )
    negative = values < 0
    if negative.any():
        row = int(np.flatnonzero(negative)[0])
        raise DataError(f"row {row + 2}, column 'time': negative time {values[row]:g} (times start at 0)")
    return values


def _parse_dimensions(column: pd.Series, names: Sequence[str] | None) -> tuple[np.ndarray, tuple[str, ...]]:
    labels = column.str.strip()
    empty = labels == ""
    if empty.any():
        row = int(np.flatnonzero(empty.to_numpy())[0])
        raise DataError(f"row {row + 2}, column 'dimension': empty value")
    as_number = pd.to_numeric(labels, errors="coerce").to_numpy(dtype=float)
    if np.isfinite(as_number).all():
        not_int = (as_number != np.round(as_number)) | (as_number < 0)
        if not_int.any():
            row = int(np.flatnonzero(not_int)[0])
            raise DataError(
                f"row {row + 2}, column 'dimension': {labels.iloc[row]!r} is not a non-negative integer"
            )
        dims = as_number.astype(np.int64)
        d = int(dims.max()) + 1
        _check_dim_count(d)
        if names is not None and len(names) >= d:
            _check_dim_count(len(names))
            return dims, tuple(str(n) for n in names)
        return dims, tuple(str(j) for j in range(d))
    uniques = sorted(labels.unique())
    _check_dim_count(len(uniques))
    lookup = {label: j for j, label in enumerate(uniques)}
    return labels.map(lookup).to_numpy(dtype=np.int64), tuple(uniques)


def _check_dim_count(d: int) -> None:
    if d > MAX_DIMENSIONS:
        raise DataError(f"{d} dimensions found; at most {MAX_DIMENSIONS} are supported")


def _validated(per_sequence, end_times, names) -> Events:
    d = len(names)
    _check_dim_count(d)
    if d == 0:
        raise DataError("no dimensions given")
    sequences = []
    for arrays, requested_end in zip(per_sequence, end_times):
        for t in arrays:
            if t.size and (not np.isfinite(t).all()):
                raise DataError("event times must be finite numbers")
            if t.size and t[0] < 0:
                raise DataError(f"negative event time {t[0]:g} (times start at 0)")
        last = max((float(t[-1]) for t in arrays if t.size), default=0.0)
        if requested_end is None:
            end = last
        else:
            end = float(requested_end)
            if not np.isfinite(end) or end <= 0:
                raise DataError(f"end time must be a positive number, got {requested_end!r}")
            if last > end:
                raise DataError(f"an event at time {last:g} lies after the end time {end:g}")
        sequences.append(EventSequence(times=tuple(arrays), end_time=end))
    total = sum(s.n_events for s in sequences)
    if total == 0:
        raise DataError("the data contain no events")
    warnings = []
    for j in range(d):
        if sum(len(s.times[j]) for s in sequences) == 0:
            warnings.append(f"dimension {names[j]!r} has no events")
    return Events(sequences=tuple(sequences), names=tuple(names), warnings=tuple(warnings))
