"""Validated multivariate event sequences and how they are read (CSV and Parquet).

Columns: ``time,dimension`` with an optional ``sequence`` (several independent sequences) and optional
per-sequence window columns ``start``/``end``. ``time`` holds numbers or ISO-8601 datetimes (one kind per
file). ``dimension`` holds integers ``0..d-1`` when every value is an integer; otherwise every value is a
label and labels are mapped to indices in sorted order.

A numeric file is read into typed NumPy columns (pyarrow) without importing pandas, which only
datetime and text columns (labels, window columns, diagnostics of bad rows) and :meth:`Events.to_frame`
need.

Times inside :class:`Events` are relative to each sequence's window start (0 = start), so binning and
statistics never see epoch offsets. The window is *stated* when the user gives its end (and its start,
unless the times are plain numbers starting at 0); otherwise it is read from the data (start 0 or the
first event, end = last event) and ``window_stated`` is False. Events outside a stated window are dropped
and counted in ``outside_window``.
"""

from __future__ import annotations

import csv
import io
import os
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO, Sequence

import numpy as np

from . import timeaxis
from .domain import Domain, codes_in, dimension_codes
from .errors import DataError

if TYPE_CHECKING:
    import pandas as pd

MAX_DIMENSIONS = 50
MAX_FILE_BYTES = 200 * 1024 * 1024
REQUIRED_COLUMNS = ("time", "dimension")
OPTIONAL_COLUMNS = ("sequence", "start", "end")
EXPECTED = "expected columns time,dimension[,sequence][,start,end]"
HEAD_BYTES = 65536  # the header and the text check read this much


@dataclass(frozen=True)
class EventSequence:
    """One realisation of a d-variate point process on its window ``[0, end_time]`` (relative times).

    Attributes
    ----------
    times : tuple of numpy.ndarray
        ``times[j]`` holds the sorted event times of dimension ``j``, relative to the window start.
    end_time : float
        Length ``T`` of the observation window.
    start_time : float
        The window start on the input's own time axis (after unit conversion), for display and export.
    """

    times: tuple[np.ndarray, ...]
    end_time: float
    start_time: float = 0.0

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
        Non-fatal findings of validation (e.g. a dimension without events, dropped events).
    window_stated : bool
        True only when the user stated every observation window (a public window).
    outside_window : int
        Events dropped because they lie outside a stated window.
    time_unit : str
        Unit of the time axis (``"s"``, ``"min"``, ``"h"``, ``"d"``), ``""`` when unknown.
    time_kind : str
        ``"number"`` or ``"datetime"``: what the input's time column held.
    dimensions_declared : bool
        True when d and the names come from a declared domain (:mod:`~dphawkes_core.domain`), not the data.
    sequences_declared : bool
        True when the set of sequences is declared (or the input has no sequence column: one sequence).
    outside_domain : int
        Rows dropped because their dimension or sequence key is outside the declared domain.
    """

    sequences: tuple[EventSequence, ...]
    names: tuple[str, ...]
    warnings: tuple[str, ...] = field(default=())
    window_stated: bool = False
    outside_window: int = 0
    time_unit: str = ""
    time_kind: str = "number"
    dimensions_declared: bool = False
    sequences_declared: bool = True
    outside_domain: int = 0

    @property
    def domain_declared(self) -> bool:
        """The dimensions, the sequences and the window are all public (stated, not read from the data)."""
        return self.dimensions_declared and self.sequences_declared and self.window_stated

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
        """Total observed time (sum of the sequences' window lengths)."""
        return float(sum(s.end_time for s in self.sequences))

    def counts_per_dimension(self) -> np.ndarray:
        """Number of events in each dimension, summed over sequences."""
        return np.array(
            [sum(len(s.times[j]) for s in self.sequences) for j in range(self.dim)], dtype=np.int64
        )

    def window_text(self) -> str:
        """The observation window in words, e.g. ``[0, 3652 d] (stated)``."""
        unit = f" {self.time_unit}" if self.time_unit else ""
        how = "stated" if self.window_stated else "read from the data — not a formal guarantee"
        if self.n_sequences > 1:
            return f"{self.n_sequences:,} windows, {self.end_time:.6g}{unit} long in all ({how})"
        seq = self.sequences[0]
        start = timeaxis.format_instant(seq.start_time, self.time_kind, self.time_unit)
        end = timeaxis.format_instant(seq.start_time + seq.end_time, self.time_kind, self.time_unit)
        return f"[{start}, {end}], length {seq.end_time:.6g}{unit} ({how})"

    def describe(self) -> str:
        """What was read, in one line: dimensions, events, sequences, window and dropped events."""
        parts = [f"{self.dim} dimension{'s' if self.dim != 1 else ''}: {', '.join(self.names)}",
                 f"{self.n_events:,} event{'s' if self.n_events != 1 else ''}"]
        if self.n_sequences > 1:
            parts.append(f"{self.n_sequences:,} sequences")
        parts.append(("" if self.n_sequences > 1 else "window ") + self.window_text())
        if self.outside_window:
            parts.append(f"{self.outside_window:,} outside the window dropped")
        return "; ".join(parts)

    def to_frame(self) -> pd.DataFrame:
        """Tidy table with columns ``sequence, time, dimension`` sorted by sequence and time."""
        import pandas as pd

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
    """Build a one-sequence :class:`Events` from per-dimension relative time arrays (window ``[0, T]``).

    Parameters
    ----------
    times : sequence of array-like
        ``times[j]`` are the event times of dimension ``j`` (any order, from 0).
    end_time : float, optional
        Window end T, which states the window (events after it are dropped and counted);
        defaults to the last event time (window read from the data).
    names : sequence of str, optional
        Dimension names; defaults to ``"0" .. "d-1"``.

    Returns
    -------
    Events
        The validated data set.
    """
    arrays = [np.asarray(t, dtype=float).ravel() for t in times]
    names = tuple(str(n) for n in names) if names is not None else tuple(str(j) for j in range(len(arrays)))
    if len(names) != len(arrays):
        raise DataError(f"{len(names)} names given for {len(arrays)} dimensions")
    _check_dim_count(len(names))
    if not arrays:
        raise DataError("no dimensions given")
    values = np.concatenate(arrays)
    dims = np.repeat(np.arange(len(arrays)), [a.size for a in arrays])
    columns = {"time": values, "dimension": dims}
    events = _events_from_columns(columns, first_row=1, names=names, end_time=end_time, relative_numbers=True)
    return replace(events, dimensions_declared=True)  # the caller gave one array per dimension


def load_csv(
    source: str | os.PathLike | bytes | BinaryIO,
    end_time: float | str | None = None,
    names: Sequence[str] | None = None,
    max_bytes: int = MAX_FILE_BYTES,
    *,
    start_time: float | str | None = None,
    time_unit: str | None = None,
    domain: Domain | None = None,
) -> Events:
    """Read and validate an event CSV (``time,dimension[,sequence][,start,end]``).

    Parameters
    ----------
    source : path, bytes or binary file
        The CSV file or its content (UTF-8 text).
    end_time, start_time : float or str, optional
        The observation window applied to every sequence, on the time column's axis (numbers, or
        ISO-8601 datetimes when the column holds datetimes). Events outside are dropped and counted.
        Without them the window comes from ``start``/``end`` columns or from the data.
    names : sequence of str, optional
        Dimension names for integer dimensions (e.g. from a ``labels.csv``).
    max_bytes : int
        Files larger than this are refused before parsing.
    time_unit : {"s", "min", "h", "d"}, optional
        Unit of the fitted time axis: numbers are then read as seconds (e.g. Unix time) and datetimes
        as seconds since the window start, both divided by the unit.
    domain : Domain, optional
        The declared dimensions and sequence keys (and their windows): rows outside are dropped and counted,
        and d and the sequences are the declared ones (:mod:`~dphawkes_core.domain`).

    Returns
    -------
    Events
        The validated data set, times relative to each window start.

    Raises
    ------
    DataError
        With a one-line message naming the row and column at fault.
    """
    source = _csv_input(source, max_bytes)
    header = _csv_header(source[:HEAD_BYTES] if isinstance(source, bytes) else _file_head(source))
    columns = _csv_columns(source, header)
    return _events_from_columns(columns, first_row=2, names=names, end_time=end_time, start_time=start_time,
                                time_unit=time_unit, domain=domain)


def load_parquet(
    source: str | os.PathLike | bytes | BinaryIO,
    end_time: float | str | None = None,
    names: Sequence[str] | None = None,
    max_bytes: int = MAX_FILE_BYTES,
    *,
    start_time: float | str | None = None,
    time_unit: str | None = None,
    domain: Domain | None = None,
) -> Events:
    """Read and validate an event Parquet file with the columns and keywords of :func:`load_csv`.

    The file is read one row group at a time. ``time`` may be a number, a timestamp or ISO-8601 text
    column.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    if isinstance(source, (str, os.PathLike)):
        _check_size(Path(source), max_bytes)
        handle = source
    else:
        handle = pa.BufferReader(_read_bytes(source, max_bytes))
    try:
        parquet = pq.ParquetFile(handle)
        header = [str(c).strip().lower() for c in parquet.schema_arrow.names]
        _check_columns(header)
        groups = [_columns_of(parquet.read_row_group(i).rename_columns(header))
                  for i in range(parquet.num_row_groups)]
    except (pa.ArrowException, OSError) as exc:
        raise DataError(f"not a readable Parquet file: {_first_line(exc)}") from None
    if sum(len(g["time"]) for g in groups) == 0:
        raise DataError("the file has no event rows")
    columns = {name: _concatenated([g[name] for g in groups]) for name in header}
    return _events_from_columns(columns, first_row=1, names=names, end_time=end_time, start_time=start_time,
                                time_unit=time_unit, domain=domain)


def save_csv(events: Events, path: str | os.PathLike | io.TextIOBase) -> None:
    """Write events as ``time,dimension`` (plus ``sequence`` when there are several sequences).

    Times are written relative to the window start. Dimension labels are written as integers; names
    round-trip through ``labels.csv`` style metadata only, so pass them again to :func:`load_csv`.
    """
    frame = events.to_frame()
    columns = ["sequence", "time", "dimension"] if events.n_sequences > 1 else ["time", "dimension"]
    frame[columns].to_csv(path, index=False, float_format="%.10g")


def load_labels(path: str | os.PathLike) -> tuple[str, ...] | None:
    """Read a ``labels.csv`` (``dimension,label``) next to a data set, if there is one."""
    path = Path(path)
    if not path.is_file():
        return None
    import pandas as pd

    frame = pd.read_csv(path)
    if {"dimension", "label"} - set(frame.columns):
        return None
    frame = frame.sort_values("dimension")
    return tuple(str(x) for x in frame["label"])


# --- reading ---------------------------------------------------------------------------------------


def _read_bytes(source, max_bytes: int) -> bytes:
    if isinstance(source, (bytes, bytearray)):
        raw = bytes(source)
    elif hasattr(source, "read"):
        raw = source.read(max_bytes + 1)
        if isinstance(raw, str):
            raw = raw.encode()
    else:
        path = Path(source)
        _check_size(path, max_bytes)
        raw = path.read_bytes()
    if len(raw) > max_bytes:
        raise DataError(f"file is over the {max_bytes / 2**20:.0f} MiB limit")
    return raw


def _csv_input(source, max_bytes: int) -> bytes | Path:
    """A CSV's bytes, or its path (size checked) so that the parser reads the file itself."""
    if isinstance(source, (str, os.PathLike)):
        path = Path(source)
        _check_size(path, max_bytes)
        return path
    return _read_bytes(source, max_bytes)


def _file_head(path: Path) -> bytes:
    with path.open("rb") as fh:
        return fh.read(HEAD_BYTES)


def _check_size(path: Path, max_bytes: int) -> None:
    if not path.is_file():
        raise DataError(f"no such file: {path}")
    size = path.stat().st_size
    if size > max_bytes:
        raise DataError(f"file is {size / 2**20:.1f} MiB, over the {max_bytes / 2**20:.0f} MiB limit")


def _csv_header(head: bytes) -> list[str]:
    """The normalised column names from the file's first bytes; refuses empty and non-UTF-8 files."""
    if not head.strip():
        raise DataError("the file is empty: expected a header 'time,dimension[,sequence]' and rows")
    try:
        text_head = head.decode("utf-8")
    except UnicodeDecodeError as exc:
        if len(head) < HEAD_BYTES or exc.start < HEAD_BYTES - 4:  # not just a character cut at the end
            raise _not_text(exc) from None
        text_head = head[:exc.start].decode("utf-8")
    if "\x00" in text_head:
        raise DataError("not a text CSV file: it contains NUL bytes (a binary file?)")
    first_line = text_head.lstrip("\ufeff").splitlines()[0] if text_head.strip() else ""
    header = [c.strip().lower() for c in next(csv.reader([first_line]), [])]
    _check_columns(header)
    return header


def _not_text(exc: UnicodeDecodeError) -> DataError:
    return DataError(f"not a text CSV file: byte 0x{exc.object[exc.start]:02x} at position {exc.start} is not "
                     "UTF-8 text")


def _csv_columns(source: bytes | Path, header: list[str]) -> dict:
    """Typed columns of a CSV (pyarrow), or its text columns when the typed read fails."""
    import pyarrow as pa
    import pyarrow.csv as pacsv

    text_types = {c: pa.string() for c in ("start", "end") if c in header}

    try:
        table = pacsv.read_csv(
            io.BytesIO(source) if isinstance(source, bytes) else str(source),
            read_options=pacsv.ReadOptions(column_names=header, skip_rows=1),
            convert_options=pacsv.ConvertOptions(column_types=text_types, null_values=[], strings_can_be_null=False,
                                                 quoted_strings_can_be_null=False),
        )
        if table.num_rows == 0:
            raise DataError("the file has a header but no event rows")
        return _columns_of(table)
    except pa.ArrowInvalid:  # e.g. ragged rows or bytes that are not UTF-8: find out which, row by row
        return _csv_text_columns(source if isinstance(source, bytes) else source.read_bytes(), header)


def _csv_text_columns(raw: bytes, header: list[str]) -> dict:
    """Slow diagnostic read (every cell as text) for files the typed reader refused."""
    import pandas as pd

    try:
        frame = pd.read_csv(io.BytesIO(raw), dtype=str, skipinitialspace=True, keep_default_na=False,
                            encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        raise _not_text(exc) from None
    except (pd.errors.ParserError, ValueError) as exc:
        raise DataError(f"not a readable CSV file: {_first_line(exc)}") from None
    if frame.empty:
        raise DataError("the file has a header but no event rows")
    frame.columns = header
    return {name: frame[name].astype(str) for name in header}


def _columns_of(table) -> dict:
    """Every column of an Arrow table as text or typed NumPy values (see :func:`_arrow_values`)."""
    return {name: _arrow_values(table.column(name)) for name in table.column_names}


def _concatenated(parts: list):
    """One column from its row-group parts (text Series or NumPy arrays)."""
    if len(parts) == 1:
        return parts[0]
    if _is_text(parts[0]):
        import pandas as pd

        return pd.concat(parts, ignore_index=True)
    return np.concatenate(parts)


def _arrow_values(column):
    """An Arrow column as text (``pandas.Series`` of str) or typed NumPy values (numbers, datetime64)."""
    import pyarrow as pa

    kind = column.type
    if pa.types.is_integer(kind) or pa.types.is_floating(kind):
        return _numbers(column)
    if pa.types.is_timestamp(kind) or pa.types.is_date(kind):
        return column.cast(pa.timestamp("ns", tz=getattr(kind, "tz", None))).to_numpy().astype("datetime64[ns]")
    return _text(column.cast(pa.string()))


def _numbers(column) -> np.ndarray:
    """A numeric Arrow column as NumPy values, missing values (Parquet only) as NaN.

    Without missing values the column goes through DLPack: ``to_numpy`` would import pandas (pyarrow
    converts through its pandas layer), which a numeric CSV otherwise never needs (start-up time).
    """
    if column.null_count:
        return column.to_numpy()
    return np.from_dlpack(column.combine_chunks())


def _text(column) -> pd.Series:
    """An Arrow text column as strings; missing values become empty strings (reported as empty)."""
    import pandas as pd
    import pyarrow.compute as pc

    return pd.Series(pc.fill_null(column, "").to_numpy(zero_copy_only=False), dtype=object).astype(str)


def _is_text(column) -> bool:
    """Whether a column holds text cells (``pandas.Series``) rather than typed NumPy values."""
    return not isinstance(column, np.ndarray)


def _cell(column, row: int):
    """One cell of a text or typed column, by position."""
    return column.iloc[row] if _is_text(column) else column[row]


def _first_line(exc: Exception) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _columns_phrase(names: Sequence[str]) -> str:
    """``column 'a'``, ``columns 'a' and 'b'``, ``columns 'a', 'b' and 'c'``."""
    quoted = [repr(n) for n in names]
    listed = quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " and " + quoted[-1]
    return f"column{'s' if len(quoted) > 1 else ''} {listed}"


def _check_columns(columns: Sequence[str]) -> None:
    allowed = set(REQUIRED_COLUMNS) | set(OPTIONAL_COLUMNS)
    missing = [c for c in REQUIRED_COLUMNS if c not in columns]
    extra = [c for c in columns if c not in allowed]
    if missing:
        raise DataError(f"missing {_columns_phrase(missing)}; {EXPECTED}")
    if extra:
        raise DataError(f"unexpected {_columns_phrase(extra)}; {EXPECTED}")
    if len(set(columns)) != len(columns):
        raise DataError(f"duplicate column names; {EXPECTED}")


# --- validation and assembly -----------------------------------------------------------------------


def _events_from_columns(columns: dict, *, first_row: int, names=None, end_time=None, start_time=None,
                         time_unit=None, relative_numbers: bool = False, domain: Domain | None = None) -> Events:
    """Validate typed or text columns and assemble :class:`Events` (windows, relative times, groups).

    ``relative_numbers`` turns off the timestamp detection for numbers; ``domain`` restricts the rows to the
    declared dimensions and sequences (:func:`_restricted`).
    """
    domain = domain or Domain()
    columns, outside_domain, domain_notes = _restricted(columns, domain)
    n_rows = len(columns["time"])
    if n_rows == 0:
        raise DataError("the data contain no events" + (" inside the declared domain" if outside_domain else ""))
    seconds = timeaxis.unit_seconds(time_unit)
    times = _time_values(columns["time"], "time", first_row)
    dims, dim_names, notes = _parse_dimensions(columns["dimension"], domain.dimensions or names, first_row)
    if domain.sequences is not None:
        seq_codes, n_seq = np.asarray(columns.get("sequence", np.zeros(n_rows)), dtype=np.int64), len(domain.sequences)
    else:
        seq_codes, n_seq = _sequence_codes(columns.get("sequence"), n_rows, first_row)
    notes = domain_notes + notes
    if domain.windows is not None:
        starts, ends = [w[0] for w in domain.windows], [w[1] for w in domain.windows]
        if start_time is not None or end_time is not None:
            raise DataError("the key file declares each sequence's window: give no --start-time/--end-time")
    else:
        starts = _bounds(start_time, columns.get("start"), "start", seq_codes, n_seq, times.kind, first_row)
        ends = _bounds(end_time, columns.get("end"), "end", seq_codes, n_seq, times.kind, first_row)
    first_time = float(times.values.min())
    epoch_like = (times.kind == "number" and not relative_numbers and all(s is None for s in starts)
                  and first_time >= timeaxis.EPOCH_LIKE)
    from_data_start = times.kind == "datetime" or epoch_like
    if not from_data_start and all(s is None for s in starts):
        _refuse_negative(times.values, first_row)
    if times.kind == "number" and (from_data_start or any(s is not None for s in starts)):
        times = _exact_numbers(times, [b for b in (*starts, *ends) if b is not None])
    start_ticks, end_ticks = _bound_ticks(starts, times, "start time"), _bound_ticks(ends, times, "end time")
    _check_order(start_ticks, end_ticks, natural_zero=not from_data_start)
    t = times.values
    window_starts = _window_starts(start_ticks, t, seq_codes, n_seq, natural_zero=not from_data_start)
    start_row = window_starts[seq_codes] if n_seq > 1 else np.broadcast_to(window_starts[0], t.shape)
    keep = _inside_window(t, start_row, end_ticks, seq_codes, check_start=any(s is not None for s in starts))
    outside = 0 if keep is None else int(n_rows - np.count_nonzero(keep))
    if keep is not None:
        t, start_row, dims, seq_codes = t[keep], start_row[keep], dims[keep], seq_codes[keep]
    rel = timeaxis.relative(t, start_row, times.ticks_per_unit, seconds)
    sequences = _assemble(rel, dims, seq_codes, n_seq, len(dim_names), window_starts, end_ticks, times, seconds)
    stated = all(e is not None for e in end_ticks) and (not from_data_start or all(s is not None for s in starts))
    warnings = notes + _window_notes(first_time if epoch_like else None, outside)
    return _validated(sequences, dim_names, warnings, window_stated=stated, outside_window=outside,
                      time_unit=timeaxis.unit_label(times.kind, time_unit), time_kind=times.kind,
                      dimensions_declared=domain.dimensions is not None,
                      sequences_declared=domain.sequences is not None or "sequence" not in columns,
                      outside_domain=outside_domain)


def _restricted(columns: dict, domain: Domain) -> tuple[dict, int, list[str]]:
    """The rows inside the declared domain, with the dimension and sequence columns as declared indices; the
    number of rows dropped; a note on them. Rows outside are dropped, never refused: a refusal would tell
    neighbouring data sets apart. With declared sequences the file's own ``start``/``end`` columns are not
    read (the windows are declared, or given by the window options)."""
    if domain.dimensions is None and domain.sequences is None:
        return columns, 0, []
    n_rows = len(columns["time"])
    keep = np.ones(n_rows, dtype=bool)
    coded = {}
    if domain.dimensions is not None:
        coded["dimension"], inside = dimension_codes(_plain(columns["dimension"]), domain.dimensions)
        keep &= inside
    if domain.sequences is not None:
        if "sequence" not in columns:
            if len(domain.sequences) != 1:
                raise DataError(f"{len(domain.sequences)} sequences are declared but the data have no 'sequence' "
                                "column")
            coded["sequence"] = np.zeros(n_rows, dtype=np.int64)
        else:
            coded["sequence"], inside = codes_in(_plain(columns["sequence"]), domain.sequences)
            keep &= inside
    kept = {name: _rows(column, keep) for name, column in columns.items()
            if not (domain.sequences is not None and name in ("start", "end"))}
    kept.update({name: codes[keep] for name, codes in coded.items()})
    dropped = int(n_rows - np.count_nonzero(keep))
    note = [f"{dropped:,} row{'s' if dropped != 1 else ''} outside the declared domain (unknown dimension or "
            f"sequence) {'were' if dropped != 1 else 'was'} dropped"] if dropped else []
    return kept, dropped, note


def _plain(column) -> np.ndarray:
    """A column as a NumPy array (text as str)."""
    return column.to_numpy() if hasattr(column, "to_numpy") else np.asarray(column)


def _rows(column, keep: np.ndarray):
    """The kept rows of a NumPy or pandas column (a pandas one re-indexed from 0)."""
    if hasattr(column, "iloc"):
        return column[keep].reset_index(drop=True)
    return np.asarray(column)[keep]


def _refuse_negative(t: np.ndarray, first_row: int) -> None:
    negative = t < 0
    if negative.any():
        row = int(np.flatnonzero(negative)[0])
        raise DataError(f"row {row + first_row}, column 'time': negative time {t[row]:g} (times start at 0; "
                        "give a start time for another origin)")


def _window_notes(epoch_first: float | None, outside: int) -> list[str]:
    """Warnings about the window: numbers read as timestamps, events dropped outside it."""
    notes = []
    if epoch_first is not None:
        notes.append(f"the times look like timestamps (first {epoch_first:.13g}): each window starts at its "
                     "first event, read from the data; give a start time to state it")
    if outside:
        notes.append(f"{outside:,} event{'s' if outside != 1 else ''} outside the stated window "
                     f"{'were' if outside != 1 else 'was'} dropped")
    return notes


def _time_values(values, column: str, first_row: int) -> timeaxis.TimeValues:
    if _is_text(values):
        return timeaxis.parse_column(values, None, column, first_row)
    return timeaxis.parse_column(None, values, column, first_row)


def _exact_numbers(times: timeaxis.TimeValues, bounds) -> timeaxis.TimeValues:
    """Numeric times as exact decimal ticks when a start is subtracted (floats if not representable)."""
    parsed = timeaxis.decimal_ticks(times.values, tuple(bounds))
    if parsed is None:
        return times
    ticks, per_unit = parsed
    return timeaxis.TimeValues("number", ticks, per_unit)


def _bounds(argument, column, what: str, seq_codes, n_seq: int, kind: str, first_row: int) -> list:
    """One window bound per sequence: the argument, the file's per-sequence column, or None."""
    if argument is not None and column is not None:
        raise DataError(f"the file has a '{what}' column and a {what} time was given too: use one of them")
    if argument is not None:
        return [argument] * n_seq
    if column is None:
        return [None] * n_seq
    parsed = _time_values(column, what, first_row)
    if parsed.kind != kind:
        raise DataError(f"column '{what}' holds {parsed.kind}s but column 'time' holds {kind}s")
    first = np.full(n_seq, -1)
    first[seq_codes[::-1]] = np.arange(len(seq_codes))[::-1]
    differs = parsed.values != parsed.values[first[seq_codes]]
    if differs.any():
        row = int(np.flatnonzero(differs)[0])
        raise DataError(f"row {row + first_row}, column '{what}': {_cell(column, row)!r} differs from the "
                        f"sequence's first row ({_cell(column, first[seq_codes[row]])!r}); a window is one "
                        "value per sequence")
    cells = [_cell(column, i) for i in first]
    return [c.strip() if isinstance(c, str) else c for c in cells]


def _bound_ticks(bounds: list, times: timeaxis.TimeValues, what: str) -> list:
    """The bounds on the times' tick (or float) scale, each distinct bound parsed once."""
    cache = {}
    out = []
    for b in bounds:
        if b is None:
            out.append(None)
            continue
        key = str(b)
        if key not in cache:
            cache[key] = timeaxis.scalar_ticks(b, times.kind, times.ticks_per_unit, what)
        out.append(cache[key])
    return out


def _check_order(start_ticks: list, end_ticks: list, natural_zero: bool) -> None:
    """Refuse a stated window whose end does not come after its start (0 for plain numbers)."""
    for start, end in zip(start_ticks, end_ticks):
        if start is None and natural_zero:
            start = 0
        if start is not None and end is not None and not end > start:
            raise DataError("the window end must come after its start")


def _inside_window(t, start_row, end_ticks: list, seq_codes, check_start: bool) -> np.ndarray | None:
    """Rows inside their sequence's stated window (None: no bound stated, every row is inside)."""
    known_end = np.array([e is not None for e in end_ticks])
    if not (check_start or known_end.any()):
        return None
    keep = t >= start_row if check_start else np.ones(t.shape, dtype=bool)
    if known_end.all() and len(end_ticks) == 1:
        keep &= t <= end_ticks[0]
    elif known_end.any():
        end_row = np.array([e if e is not None else 0 for e in end_ticks], dtype=t.dtype)[seq_codes]
        keep &= ~known_end[seq_codes] | (t <= end_row)
    return keep


def _window_starts(start_ticks: list, t: np.ndarray, seq_codes: np.ndarray, n_seq: int,
                   natural_zero: bool) -> np.ndarray:
    """Each sequence's window start: stated, 0 (plain numbers) or the sequence's first event."""
    if natural_zero:
        natural = np.zeros(n_seq, dtype=t.dtype)
    elif n_seq == 1:
        natural = np.array([t.min()], dtype=t.dtype)
    else:
        natural = np.full(n_seq, np.iinfo(t.dtype).max if t.dtype.kind == "i" else np.inf, dtype=t.dtype)
        np.minimum.at(natural, seq_codes, t)
    return np.array([s if s is not None else natural[i] for i, s in enumerate(start_ticks)], dtype=t.dtype)


def _assemble(rel, dims, seqs, n_seq: int, d: int, starts, end_ticks, times, seconds):
    """Group relative times into sorted per-(sequence, dimension) arrays with each sequence's window."""
    groups = _sorted_groups(rel, seqs * d + dims if n_seq > 1 else dims, n_seq * d)
    sequences = []
    for s in range(n_seq):
        arrays = tuple(groups[s * d:(s + 1) * d])
        if end_ticks[s] is not None:
            length = float(timeaxis.relative(np.array([end_ticks[s]]), starts[s], times.ticks_per_unit, seconds)[0])
            if not length > 0:
                raise DataError("the window end must come after its start")
        else:
            length = max((float(a[-1]) for a in arrays if a.size), default=0.0)
        start = float(starts[s]) / (times.ticks_per_unit or 1) / seconds
        sequences.append(EventSequence(times=arrays, end_time=length, start_time=start))
    return sequences


def _sorted_groups(values: np.ndarray, key: np.ndarray, n_groups: int) -> list[np.ndarray]:
    """``values`` split by ``key`` (0..n_groups-1), each group sorted."""
    if n_groups == 1:
        return [_sorted(values)]
    small = key.astype(np.uint8 if n_groups <= 2**8 else np.uint16) if n_groups <= 2**16 else key
    order = np.argsort(small, kind="stable")  # radix sort for 8- and 16-bit keys
    edges = np.concatenate([[0], np.cumsum(np.bincount(key, minlength=n_groups))])
    grouped = values[order]
    return [_sorted(grouped[edges[g]:edges[g + 1]]) for g in range(n_groups)]


def _sorted(values: np.ndarray) -> np.ndarray:
    """``values`` in increasing order (event files are usually sorted already: then no sort)."""
    return values if np.all(values[1:] >= values[:-1]) else np.sort(values)


def _sequence_codes(column, n_rows: int, first_row: int) -> tuple[np.ndarray, int]:
    """Sequence codes ``0..n-1`` in order of first appearance, and n."""
    if column is None:
        return np.zeros(n_rows, dtype=np.int64), 1
    if not _is_text(column):
        return _numeric_sequence_codes(column, first_row)
    import pandas as pd

    labels = column.str.strip()
    empty = (labels == "").to_numpy()
    if empty.any():
        raise DataError(f"row {int(np.flatnonzero(empty)[0]) + first_row}, column 'sequence': empty value")
    codes, uniques = pd.factorize(labels, sort=False)
    return codes.astype(np.int64), len(uniques)


def _numeric_sequence_codes(values: np.ndarray, first_row: int) -> tuple[np.ndarray, int]:
    """Codes of numeric sequence ids in order of first appearance (NaN, e.g. a Parquet gap, refused)."""
    missing = np.isnan(values) if values.dtype.kind == "f" else np.zeros(values.shape, dtype=bool)
    if missing.any():
        raise DataError(f"row {int(np.flatnonzero(missing)[0]) + first_row}, column 'sequence': empty or NaN value")
    uniques, first, inverse = np.unique(values, return_index=True, return_inverse=True)
    rank = np.empty(len(uniques), dtype=np.int64)
    rank[np.argsort(first)] = np.arange(len(uniques))
    return rank[inverse.ravel()], len(uniques)


def _parse_dimensions(column, names, first_row: int) -> tuple[np.ndarray, tuple[str, ...], list[str]]:
    """Integer dimensions ``0..d-1`` when every value is an integer; otherwise labels (sorted)."""
    if not _is_text(column):
        return _integer_dimensions(column, None, names, first_row), _integer_names(column, names), []
    import pandas as pd

    labels = column.str.strip()
    empty = (labels == "").to_numpy()
    if empty.any():
        raise DataError(f"row {int(np.flatnonzero(empty)[0]) + first_row}, column 'dimension': empty value")
    numbers = pd.to_numeric(labels, errors="coerce").to_numpy(dtype=float)
    numeric = np.isfinite(numbers)
    if numeric.all():
        return _integer_dimensions(numbers, labels, names, first_row), _integer_names(numbers, names), []
    uniques = sorted(labels.unique())
    _check_dim_count(len(uniques))
    lookup = {label: j for j, label in enumerate(uniques)}
    notes = []
    integer = labels.str.fullmatch(r"\d+").to_numpy()
    if integer.any():
        odd = ~integer if integer.sum() * 2 >= len(integer) else integer
        row = int(np.flatnonzero(odd)[0])
        kind = "an integer among labels" if integer[row] else "not an integer"
        notes.append(f"column 'dimension' mixes integers and labels ({labels.iloc[row]!r} on row {row + first_row} "
                     f"is {kind}), so every value is a label: {len(uniques)} dimensions: {', '.join(uniques)}")
    return labels.map(lookup).to_numpy(dtype=np.int64), tuple(uniques), notes


def _integer_dimensions(values: np.ndarray, labels, names, first_row: int) -> np.ndarray:
    if values.dtype.kind in "iu":
        not_int = values < 0
    else:
        not_int = ~np.isfinite(values) | (values != np.round(values)) | (values < 0)
    if not_int.any():
        row = int(np.flatnonzero(not_int)[0])
        shown = labels.iloc[row] if labels is not None else f"{values[row]:g}"
        raise DataError(f"row {row + first_row}, column 'dimension': {shown!r} is not a non-negative integer")
    _check_dim_count(int(values.max()) + 1)
    return values.astype(np.int64)


def _integer_names(values: np.ndarray, names) -> tuple[str, ...]:
    d = int(values.max()) + 1
    if names is not None and len(names) >= d:
        _check_dim_count(len(names))
        return tuple(str(n) for n in names)
    return tuple(str(j) for j in range(d))


def _check_dim_count(d: int) -> None:
    if d > MAX_DIMENSIONS:
        raise DataError(f"{d} dimensions found; at most {MAX_DIMENSIONS} are supported")


def _validated(sequences, names, warnings, **metadata) -> Events:
    d = len(names)
    if d == 0:
        raise DataError("no dimensions given")
    if sum(s.n_events for s in sequences) == 0:
        raise DataError("the data contain no events" + (" inside the window" if metadata["outside_window"] else ""))
    for j in range(d):
        if sum(len(s.times[j]) for s in sequences) == 0:
            warnings.append(f"dimension {names[j]!r} has no events")
    return Events(sequences=tuple(sequences), names=tuple(names), warnings=tuple(warnings), **metadata)
