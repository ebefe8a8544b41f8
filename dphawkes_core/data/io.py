"""Validated multivariate event sequences and how they are read (CSV and Parquet).

Columns: ``time,dimension`` with an optional ``sequence`` (several independent sequences) and optional
per-sequence window columns ``start``/``end``. ``time`` holds numbers or ISO-8601 datetimes (one kind per
file). ``dimension`` holds integers ``0..d-1`` when every value is an integer; otherwise every value is a
label and labels are mapped to indices in sorted order.

Cells are read one at a time (:mod:`~dphawkes_core.data.cells`): a CSV's cells are read as text, never typed by
inference (:mod:`~dphawkes_core.data.csv_text`), and a Parquet file's as their writer typed them, then each cell is
parsed on its own, so one row never changes how another is read. Under a declared domain a cell that does not parse
against it is dropped and counted with its row. A numeric file is parsed into typed NumPy columns by Arrow's compute
functions without importing pandas, which only datetime and label columns, diagnostics of bad rows and
:meth:`Events.to_frame` need.

Times inside :class:`Events` are relative to each sequence's window start (0 = start), so binning and
statistics never see epoch offsets. The window is *stated* only when it is declared — the user gives its end
(and its start, unless the times are plain numbers starting at 0), or a key file gives each sequence's; otherwise
it is read from the data (start 0 or the first event, end = last event, or the ``start``/``end`` columns, which
are private rows) and ``window_stated`` is False. Events outside the window are dropped and counted in
``outside_window``.
"""

from __future__ import annotations

import csv
import io
import os
from collections.abc import Sequence
from pathlib import Path
from typing import BinaryIO

import numpy as np

from dphawkes_core.data import cells, csv_text
from dphawkes_core.data.columns import MAX_DIMENSIONS, _events_from_columns, columns_key, from_arrays
from dphawkes_core.data.domain import Domain
from dphawkes_core.data.events import Events, EventSequence
from dphawkes_core.errors import DataError

__all__ = [
    "MAX_DIMENSIONS",
    "EventSequence",
    "Events",
    "from_arrays",
    "load_csv",
    "load_parquet",
    "load_labels",
    "save_csv",
    "sequence_keys",
    "source_key",
]

#: The size guard of an exploration load (no declared domain): a file larger than this is refused before parsing.
#: Under a declared domain — the only loads a formal release is made from — no size guard applies: a file's size is a
#: function of its rows, and one row can take it over any limit, so a refusal would tell one-row neighbours apart
#: (ε = ∞); a cut at a byte offset would keep rows by file position, and one long row could push any number out.
MAX_FILE_BYTES = 200 * 1024 * 1024
REQUIRED_COLUMNS = ("time", "dimension")
OPTIONAL_COLUMNS = ("sequence", "start", "end")
EXPECTED = "expected columns time,dimension[,sequence][,start,end]"
HEAD_BYTES = 65536  # the header and the text check read this much


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
        Files larger than this are refused before parsing — without a declared domain only: under one, no size
        is refused (:data:`MAX_FILE_BYTES`).
    time_unit : {"s", "min", "h", "d"}, optional
        Unit of the fitted time axis: numbers are then read as seconds (e.g. Unix time) and datetimes
        as seconds since the window start, both divided by the unit.
    domain : Domain, optional
        The declared dimensions and sequence keys (and their windows): rows outside are dropped and counted,
        and d and the sequences are the declared ones (:mod:`~dphawkes_core.data.domain`).

    Returns
    -------
    Events
        The validated data set, times relative to each window start.

    Raises
    ------
    DataError
        With a one-line message naming the row and column at fault.
    """
    lenient = _declared(domain)
    source = _csv_input(source, None if lenient else max_bytes)
    header = _csv_header(source[:HEAD_BYTES] if isinstance(source, bytes) else _file_head(source), lenient)
    columns = _csv_columns(source, header, lenient)
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
    columns = _parquet_columns(source, None if _declared(domain) else max_bytes)
    return _events_from_columns(columns, first_row=1, names=names, end_time=end_time, start_time=start_time,
                                time_unit=time_unit, domain=domain)


def source_key(source: str | os.PathLike, max_bytes: int | None = None) -> str:
    """The privacy ledger's key of an event file (CSV or Parquet, by suffix): the key of its rows as stored
    (:mod:`~dphawkes_core.data.row_key`), read without a declaration — the :attr:`Events.source_key` of every load of
    the file, whatever its declared domain, window or time unit. No size guard unless ``max_bytes`` is given (the key
    serves formal releases, which are never refused for a file's size)."""
    return columns_key(_declared_columns(source, Path(source).suffix.lower() in (".parquet", ".pq"), max_bytes))


def sequence_keys(source: str | os.PathLike | bytes | BinaryIO, parquet: bool) -> tuple[str, ...] | None:
    """The distinct keys of a file's ``sequence`` column in order of first appearance, each as a declared-domain load
    reads it (:func:`~dphawkes_core.data.cells.key_codes`: a cell's stripped text, a typed cell as a CSV writer
    writes it) — the keys a user can declare from the file; ``None`` without a sequence column."""
    columns = _declared_columns(source, parquet, None)
    if "sequence" not in columns:
        return None
    distinct, inverse = cells.key_texts(columns["sequence"])
    first = np.full(len(distinct), len(inverse))
    np.minimum.at(first, inverse, np.arange(len(inverse)))
    return tuple(str(distinct[k]) for k in np.argsort(first, kind="stable"))


def _declared_columns(source, parquet: bool, max_bytes: int | None) -> dict:
    """Every column of a file as a declared-domain load reads it (a CSV leniently, as text)."""
    if parquet:
        return _parquet_columns(source, max_bytes)
    raw = _read_bytes(source, max_bytes)
    return _csv_columns(raw, _csv_header(raw[:HEAD_BYTES], lenient=True), lenient=True)


def _declared(domain: Domain | None) -> bool:
    """A declared domain (dimensions or sequence keys): the loads a formal release can come from, which drop and
    count what they cannot use and refuse nothing for a row or the file's size."""
    return domain is not None and (domain.dimensions is not None or domain.sequences is not None)


def _parquet_columns(source, max_bytes: int | None) -> dict:
    """Every column of a Parquet file (typed or text, as :func:`table_columns`), one row group at a time."""
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
        groups = [table_columns(parquet.read_row_group(i).rename_columns(header))
                  for i in range(parquet.num_row_groups)]
    except (pa.ArrowException, OSError) as exc:
        raise DataError(f"not a readable Parquet file: {_first_line(exc)}") from None
    return {name: _concatenated([g[name] for g in groups]) for name in header}


def save_csv(events: Events, path: str | os.PathLike | io.TextIOBase) -> None:
    """Write events as ``time,dimension`` (plus ``sequence`` when there are several sequences).

    Times are written relative to the window start. Dimension labels are written as integers; names
    round-trip through ``labels.csv`` style metadata only, so pass them again to :func:`load_csv`.
    """
    frame = events.to_frame()
    columns = ["sequence", "time", "dimension"] if events.n_sequences > 1 else ["time", "dimension"]
    frame[columns].to_csv(path, index=False, float_format="%.10g")


def load_labels(path: str | os.PathLike) -> tuple[str, ...] | None:
    """Read a ``labels.csv`` (``dimension,label``) next to a data set, if there is one: every cell as its text (a
    label ``01`` stays ``01``), in the order of the dimension column's integers (else of its text)."""
    path = Path(path)
    if not path.is_file():
        return None
    import pandas as pd

    frame = pd.read_csv(path, dtype=str, keep_default_na=False, skipinitialspace=True)
    frame.columns = [str(c).strip() for c in frame.columns]
    if {"dimension", "label"} - set(frame.columns):
        return None
    order = frame["dimension"].str.strip()
    numbers = [cells.whole_number(x) for x in order]
    key = numbers if all(n is not None for n in numbers) else list(order)
    return tuple(frame["label"].str.strip().iloc[np.argsort(np.array(key, dtype=object), kind="stable")])


# --- reading ---------------------------------------------------------------------------------------


def _read_bytes(source, max_bytes: int | None) -> bytes:
    """The bytes of ``source``, refused over ``max_bytes`` (``None``: no limit)."""
    if isinstance(source, (bytes, bytearray)):
        raw = bytes(source)
    elif hasattr(source, "read"):
        raw = source.read() if max_bytes is None else source.read(max_bytes + 1)
        if isinstance(raw, str):
            raw = raw.encode()
    else:
        path = Path(source)
        _check_size(path, max_bytes)
        raw = path.read_bytes()
    if max_bytes is not None and len(raw) > max_bytes:
        raise DataError(f"file is over the {max_bytes / 2**20:.0f} MiB limit")
    return raw


def _csv_input(source, max_bytes: int | None) -> bytes | Path:
    """A CSV's bytes, or its path (size checked) so that the parser reads the file itself."""
    if isinstance(source, (str, os.PathLike)):
        path = Path(source)
        _check_size(path, max_bytes)
        return path
    return _read_bytes(source, max_bytes)


def _file_head(path: Path) -> bytes:
    with path.open("rb") as fh:
        return fh.read(HEAD_BYTES)


def _check_size(path: Path, max_bytes: int | None) -> None:
    if not path.is_file():
        raise DataError(f"no such file: {path}")
    size = path.stat().st_size
    if max_bytes is not None and size > max_bytes:
        raise DataError(f"file is {size / 2**20:.1f} MiB, over the {max_bytes / 2**20:.0f} MiB limit")


def _csv_header(head: bytes, lenient: bool = False) -> list[str]:
    """The normalised column names from the file's first bytes; refuses empty and non-UTF-8 files (``lenient``,
    under a declared domain: only the header line must be text — a row is a neighbour's to drop, not to refuse)."""
    if not head.strip():
        raise DataError("the file is empty: expected a header 'time,dimension[,sequence]' and rows")
    if lenient:
        head = head.lstrip().split(b"\n", 1)[0]
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


def _csv_columns(source: bytes | Path, header: list[str], lenient: bool = False) -> dict:
    """Every column of a CSV as text (Arrow string columns; :mod:`~dphawkes_core.data.csv_text`): under a declared
    domain (``lenient``) each line one row and no line refused; without one, a file Arrow cannot parse gets a one-line
    error from the diagnostic read (:func:`_csv_text_columns`)."""
    import pyarrow as pa

    if lenient:
        return csv_text.text_columns(source if isinstance(source, bytes) else source.read_bytes(), header)
    try:
        table = csv_text.strict_text_table(io.BytesIO(source) if isinstance(source, bytes) else str(source), header)
    except pa.ArrowInvalid:  # e.g. ragged rows or bytes that are not UTF-8: find out which, row by row
        return _csv_text_columns(source if isinstance(source, bytes) else source.read_bytes(), header)
    return {name: table.column(name) for name in header}


def _csv_text_columns(raw: bytes, header: list[str]) -> dict:
    """Slow diagnostic read (every cell as text) of a file Arrow's parser refused, without a declared domain."""
    import pandas as pd

    try:
        frame = pd.read_csv(io.BytesIO(raw), dtype=str, skipinitialspace=True, keep_default_na=False,
                            encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        raise _not_text(exc) from None
    except (pd.errors.ParserError, ValueError) as exc:
        raise DataError(f"not a readable CSV file: {_first_line(exc)}") from None
    frame.columns = header
    return {name: frame[name].fillna("").astype(str) for name in header}  # a missing cell: empty


def table_columns(table) -> dict:
    """Every column of an Arrow table as its cells (:mod:`~dphawkes_core.data.cells`): text (an Arrow string column,
    missing cells empty) or typed NumPy values (numbers, booleans as 1.0/0.0, ``datetime64[ns]``): the row reader of
    every path — a CSV, a Parquet file and each partition of a store (:mod:`~dphawkes_core.statistics.partitioned`)
    — before the domain filter (:func:`~dphawkes_core.data.columns.restrict_to_domain`)."""
    return {name: _arrow_values(table.column(name)) for name in table.column_names}


def _concatenated(parts: list):
    """One column from its row-group parts (text Arrow columns or NumPy arrays)."""
    if len(parts) == 1:
        return parts[0]
    if cells.is_text(parts[0]):
        import pyarrow as pa

        return pa.chunked_array([c for part in parts for c in part.chunks], type=pa.string())
    return np.concatenate(parts)


def _arrow_values(column):
    """An Arrow column as its cells, each as its writer typed it: numbers (booleans read as the numbers 1 and 0, as a
    writer that inferred a boolean column from ``0``/``1`` cells stored them), timestamps (one outside the
    nanosecond range is NaT, never a refusal of the file), or text (anything else; bytes that are not UTF-8 with their
    bad bytes replaced)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    kind = column.type
    if pa.types.is_boolean(kind):
        return _numbers(column.cast(pa.float64()))
    if pa.types.is_integer(kind) or pa.types.is_floating(kind):
        return _numbers(column)
    if pa.types.is_timestamp(kind) or pa.types.is_date(kind):
        if pa.types.is_date(kind):
            column = column.cast(pa.timestamp("s"))
        return cells.nanoseconds(column.to_numpy())
    if pa.types.is_binary(kind) or pa.types.is_large_binary(kind) or pa.types.is_fixed_size_binary(kind):
        raw = pc.fill_null(column.cast(pa.binary()), b"").to_pylist()
        return pa.chunked_array([pa.array([b.decode("utf-8", errors="replace") for b in raw], type=pa.string())])
    text = column.cast(pa.string()) if not pa.types.is_string(kind) else column
    return pc.fill_null(text, "") if text.null_count else text


def _numbers(column) -> np.ndarray:
    """A numeric Arrow column as NumPy values, missing values (Parquet only) as NaN.

    Without missing values the column goes through DLPack: ``to_numpy`` would import pandas (pyarrow
    converts through its pandas layer), which a numeric CSV otherwise never needs (start-up time).
    """
    if column.null_count:
        return column.to_numpy()
    return np.from_dlpack(column.combine_chunks())


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
