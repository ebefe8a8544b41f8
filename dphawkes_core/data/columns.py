"""Validation and assembly of event columns into :class:`~dphawkes_core.data.events.Events`: the declared domain,
the windows, relative times, per-(sequence, dimension) groups. Every reader (:mod:`dphawkes_core.data.io`:
CSV, Parquet; :func:`from_arrays`) goes through :func:`_events_from_columns`."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace

import numpy as np

from dphawkes_core.data import cells, timeaxis
from dphawkes_core.data.domain import Domain
from dphawkes_core.data.events import Events, EventSequence
from dphawkes_core.data.row_key import no_lanes, row_lanes, rows_key
from dphawkes_core.errors import DataError

MAX_DIMENSIONS = 50
_DIGITS = re.compile(r"[0-9]+", re.ASCII)


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
        Window end T, which states the window ``[0, T]``: a time outside it is dropped and counted in
        ``outside_window``, one that is not finite in ``outside_domain`` (as the readers do under a declared domain);
        defaults to the last event time (window read from the data; a time that is not finite or negative is then
        refused).
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
    if end_time is None:  # the window is read from the data: a malformed time is refused, naming it
        events = _events_from_columns(columns, first_row=1, names=names, relative_numbers=True)
        return replace(events, dimensions_declared=True)  # the caller gave one array per dimension
    # a stated window [0, T] over the caller's dimensions: a time that is not finite is dropped and counted, one
    # outside the window dropped and counted, as the readers do under a declared domain
    positional = Domain(dimensions=tuple(str(j) for j in range(len(arrays))))
    return _events_from_columns(columns, first_row=1, end_time=end_time, relative_numbers=True, domain=positional,
                                display_names=names)


_is_text = cells.is_text


def _cell(column, row: int):
    """One cell of a text or typed column, by position (text stripped)."""
    if not _is_text(column):
        return column[row]
    return str(cells.text_list(column[row:row + 1])[0])


def columns_key(columns: dict) -> str:
    """The source key of a file's columns as read (:mod:`~dphawkes_core.data.row_key`), whatever is declared about
    them: the same for every load of a file — declared or not — and :func:`~dphawkes_core.data.io.source_key`."""
    parsed = Parsed(columns)
    return _columns_key(inferred_columns(columns, parsed), parsed)


def _columns_key(typed: dict, parsed: Parsed) -> str:
    """The key of the rows, each row's cells read as the key reads a cell alone (:mod:`~dphawkes_core.data.row_key`:
    a finite number, a datetime, a whole-number key, else its text). Rows whose text cells all parse are hashed from
    the parsed values (vectorised), the others from their text; the lanes of the parts add up to those of all rows."""
    names = ["time", "dimension"] + (["sequence"] if "sequence" in typed else [])
    parts = {name: typed[name] for name in names}
    parsed_rows = np.ones(len(typed["time"]), dtype=bool)
    for name in names[1:]:
        if _is_text(typed[name]):  # a key read as a whole number has the same key text typed
            values, is_number = parsed.numbers(name)
            parsed_rows &= is_number & np.isfinite(values) & (values == np.round(values)) & (np.abs(values) < 2.0**62)
            parts[name] = values
    groups = [(parsed_rows, parts)]
    if _is_text(typed["time"]):
        values, is_number = parsed.numbers("time")  # a text column: some cell is no number
        stamps = np.full(len(values), np.datetime64("NaT", "ns"))
        stamps[~is_number] = cells.datetimes(_rows(typed["time"], ~is_number))
        number, datetime = is_number & np.isfinite(values), ~np.isnat(stamps)
        groups = [(parsed_rows & number, {**parts, "time": values}),
                  (parsed_rows & datetime, {**parts, "time": stamps})]
        parsed_rows = parsed_rows & (number | datetime)
    lanes = no_lanes()
    for rows, columns in groups:
        if rows.any():
            lanes = lanes + row_lanes(*(columns[name][rows] for name in names[:2]),
                                      columns["sequence"][rows] if "sequence" in columns else None)
    rest = ~parsed_rows
    if rest.any():  # the rows some cell of which only its text can key
        text = [cells.text_list(_rows(typed[name], rest)) if _is_text(typed[name]) else typed[name][rest]
                for name in names]
        lanes = lanes + row_lanes(text[0], text[1], text[2] if len(text) > 2 else None)
    return rows_key(lanes, len(typed["time"]))


class Parsed:
    """What one load parses of its columns, each at most once: the numbers of a column, the distinct cells of a key
    column (:mod:`~dphawkes_core.data.cells`)."""

    def __init__(self, columns: dict):
        self._columns = columns
        self._numbers: dict = {}
        self._keys: dict = {}

    def numbers(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        """:func:`~dphawkes_core.data.cells.numbers` of a column (a key column's parsed once per distinct cell)."""
        if name not in self._numbers:
            column = self._columns[name]
            if name == "time" or not _is_text(column):
                self._numbers[name] = cells.numbers(column)
            else:
                distinct, inverse = self.keys(name)
                values, is_number = cells.numbers(distinct)
                self._numbers[name] = values[inverse], is_number[inverse]
        return self._numbers[name]

    def keys(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        """:func:`~dphawkes_core.data.cells.key_texts` of a key column."""
        if name not in self._keys:
            self._keys[name] = cells.key_texts(self._columns[name])
        return self._keys[name]


def inferred_columns(columns: dict, parsed: Parsed | None = None) -> dict:
    """The columns read without a declared domain: ``time``, ``dimension`` and ``sequence`` as typed values when every
    one of their cells parses (:func:`~dphawkes_core.data.cells.typed_column`), else as text; ``start``/``end`` as
    they are (text, parsed as window bounds). ``parsed`` keeps what is parsed for the rest of the load."""
    parsed = Parsed(columns) if parsed is None else parsed
    typed = dict(columns)
    typed["time"] = cells.typed_column(columns["time"], lambda: parsed.numbers("time"))
    for name in ("dimension", "sequence"):
        if name in columns:
            typed[name] = cells.typed_keys(columns[name], parsed.keys(name) if _is_text(columns[name]) else None)
    return typed


# --- validation and assembly -----------------------------------------------------------------------


def _events_from_columns(columns: dict, *, first_row: int, names=None, end_time=None, start_time=None,
                         time_unit=None, relative_numbers: bool = False, domain: Domain | None = None,
                         display_names: tuple[str, ...] | None = None) -> Events:
    """Validate typed or text columns and assemble :class:`Events` (windows, relative times, groups).

    ``relative_numbers`` turns off the timestamp detection for numbers; ``domain`` restricts the rows to the
    declared dimensions and sequences (:func:`restrict_to_domain`), each cell parsed on its own. Under a declared
    domain and window, data without a row in them are a data set of empty sequences, not an error: one row more must
    not make the difference between a release and a refusal. ``display_names`` name declared dimensions given by
    position (:func:`from_arrays`).
    """
    domain = domain or Domain()
    parsed = Parsed(columns)
    typed = inferred_columns(columns, parsed)
    source_key = _columns_key(typed, parsed)
    declared_bounds = [start_time, end_time, *(b for w in domain.windows or () for b in w)]
    kind = declared_kind(declared_bounds)
    if domain.dimensions is None and domain.sequences is None:
        columns, outside_domain, domain_notes = typed, 0, []
    else:
        columns, outside_domain, domain_notes = restrict_to_domain(columns, domain, kind, typed, parsed)
    n_rows = len(columns["time"])
    fully_declared = kind is not None and domain.dimensions is not None and (
        domain.sequences is not None or "sequence" not in columns)
    if n_rows == 0 and not fully_declared:
        raise DataError("the data have no event rows" + (" inside the declared domain" if outside_domain else ""))
    seconds = timeaxis.unit_seconds(time_unit)
    times = _time_values(columns["time"], "time", first_row) if n_rows else timeaxis.no_times(kind)
    if domain.dimensions is not None:  # d and the names are the declared ones, whatever the rows hold
        dims, dim_names, notes = (np.asarray(columns["dimension"], dtype=np.int64),
                                  display_names or domain.dimensions, [])
    else:
        dims, dim_names, notes = _parse_dimensions(columns["dimension"], names, first_row)
    if domain.sequences is not None:
        seq_codes, n_seq = np.asarray(columns.get("sequence", np.zeros(n_rows)), dtype=np.int64), len(domain.sequences)
    else:
        seq_codes, n_seq = _sequence_codes(columns.get("sequence"), n_rows, first_row)
    starts, ends, window_notes = _windows(domain, start_time, end_time, columns, seq_codes, n_seq, times.kind,
                                          first_row)
    notes = domain_notes + notes + window_notes
    first_time = float(times.values.min()) if n_rows else 0.0
    epoch_like = (times.kind == "number" and not relative_numbers and all(s is None for s in starts)
                  and first_time >= timeaxis.EPOCH_LIKE)
    from_data_start = times.kind == "datetime" or epoch_like
    declared = domain.dimensions is not None or domain.sequences is not None
    if not from_data_start and all(s is None for s in starts) and not declared:
        _refuse_negative(times.values, first_row)  # with a declared domain a time before 0 is outside the window
    if times.kind == "number" and (from_data_start or any(s is not None for s in starts)):
        times = _exact_numbers(times, [b for b in (*starts, *ends) if b is not None])
    start_ticks, end_ticks = _bound_ticks(starts, times, "start time"), _bound_ticks(ends, times, "end time")
    _check_order(start_ticks, end_ticks, natural_zero=not from_data_start)
    t = times.values
    window_starts = _window_starts(start_ticks, t, seq_codes, n_seq, natural_zero=not from_data_start)
    start_row = window_starts[seq_codes] if n_seq > 1 else np.broadcast_to(window_starts[0], t.shape)
    keep = _inside_window(t, start_row, end_ticks, seq_codes,
                          check_start=declared or any(s is not None for s in starts))
    outside = 0 if keep is None else int(n_rows - np.count_nonzero(keep))
    if keep is not None:
        t, start_row, dims, seq_codes = t[keep], start_row[keep], dims[keep], seq_codes[keep]
    rel = timeaxis.relative(t, start_row, times.ticks_per_unit, seconds)
    sequences = _assemble(rel, dims, seq_codes, n_seq, len(dim_names), window_starts, end_ticks, times, seconds)
    stated = (_window_declared(domain, start_time, end_time) and all(e is not None for e in end_ticks)
              and (not from_data_start or all(s is not None for s in starts)))
    warnings = notes + _window_notes(first_time if epoch_like else None, outside)
    return _validated(sequences, dim_names, warnings, allow_empty=fully_declared and stated, window_stated=stated,
                      outside_window=outside, time_unit=timeaxis.unit_label(times.kind, time_unit),
                      time_kind=times.kind, dimensions_declared=domain.dimensions is not None,
                      sequences_declared=domain.sequences is not None or "sequence" not in columns,
                      outside_domain=outside_domain, source_key=source_key)


def restrict_to_domain(columns: dict, domain: Domain, time_kind: str | None = None, typed: dict | None = None,
                       parsed: Parsed | None = None) -> tuple[dict, int, list[str]]:
    """The one domain filter of every reader (CSV, Parquet, each partition of a store, on Dask or not).

    Under a declared domain every dimension, sequence and time cell is parsed on its own
    (:mod:`~dphawkes_core.data.cells`), whatever the column's other cells or the type a writer gave it, and a row is
    dropped and counted — never refused, since a refusal would tell neighbouring data sets apart — when its dimension
    is not a declared one (−1, 0.5, ``True``, a missing value or an unknown name), its sequence key is not a declared
    one, or its time is malformed (missing, NaN, infinite, not a ``time_kind``). With declared sequences the file's
    own ``start``/``end`` columns are not read (the windows are declared, or given by the window options). Without a
    declaration nothing is dropped: the columns are returned typed where every cell parses
    (:func:`inferred_columns`), and the readers then refuse a malformed row, naming it (such data are not a formal
    release anyway).

    Parameters
    ----------
    columns : dict
        The columns as read (typed NumPy values, or text).
    domain : Domain
        The declared domain.
    time_kind : {"number", "datetime"}, optional
        The axis of the declared window (:func:`declared_kind`), which decides what a well-formed time is in a text
        column; ``None`` (no declared window): what most of its cells are.
    typed : dict, optional
        The columns already typed by :func:`inferred_columns` (not parsed twice).
    parsed : Parsed, optional
        What the load has parsed of ``columns`` already.

    Returns
    -------
    columns : dict
        The kept rows: the time column typed (float64 or ``datetime64[ns]``), the dimension (and sequence) column
        as indices into the declared ones.
    dropped : int
        The rows dropped.
    notes : list of str
        One note on them, when there are any.
    """
    parsed = Parsed(columns) if parsed is None else parsed
    typed = inferred_columns(columns, parsed) if typed is None else typed
    if domain.dimensions is None and domain.sequences is None:
        return typed, 0, []
    n_rows = len(columns["time"])
    keep = np.ones(n_rows, dtype=bool)
    coded = {}
    if domain.dimensions is not None:
        coded["dimension"], inside = cells.key_codes(columns["dimension"], domain.dimensions, indices=True,
                                                     keys=parsed.keys("dimension"))
        keep &= inside
    times, well_formed = time_cells(columns["time"], time_kind, typed["time"], parsed)
    keep &= well_formed
    if domain.sequences is not None:
        if "sequence" not in columns:
            if len(domain.sequences) != 1:
                raise DataError(f"{len(domain.sequences)} sequences are declared but the data have no 'sequence' "
                                "column")
            coded["sequence"] = np.zeros(n_rows, dtype=np.int64)
        else:
            coded["sequence"], inside = cells.key_codes(columns["sequence"], domain.sequences,
                                                        keys=parsed.keys("sequence"))
            keep &= inside
    kept = {name: _rows(typed[name], keep) for name in columns
            if name not in coded and name != "time" and not (domain.sequences is not None and name in ("start", "end"))}
    kept.update({name: codes[keep] for name, codes in coded.items()})
    kept["time"] = times[keep]
    dropped = int(n_rows - np.count_nonzero(keep))
    note = [f"{dropped:,} row{'s' if dropped != 1 else ''} outside the declared domain (unknown dimension or "
            f"sequence, or a malformed time) {'were' if dropped != 1 else 'was'} dropped"] if dropped else []
    return kept, dropped, note


def declared_kind(bounds) -> str | None:
    """The time axis a declared window is written on: ``"number"`` when every given bound reads as a number,
    else ``"datetime"``; ``None`` when no bound is given."""
    given = [b for b in bounds if b is not None]
    if not given:
        return None
    return "number" if all(_reads_as_number(b) for b in given) else "datetime"


def _reads_as_number(value) -> bool:
    if isinstance(value, (int, float, np.number)) and not isinstance(value, bool):
        return True
    try:
        float(str(value).strip())
    except ValueError:
        return False
    return True


def time_cells(column, kind: str | None, typed=None, parsed: Parsed | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``(values, well_formed)``: each time cell parsed on its own — a finite number (float64) or an ISO-8601
    datetime (``datetime64[ns]``) of the declared window's ``kind`` — and which cells are one.

    A cell's reading never depends on the column's other cells: a text cell is a number or a datetime by its own
    text (:mod:`~dphawkes_core.data.cells`), a typed cell by its writer's type. Without a declared ``kind`` (no
    window, so not a formal release) the column's type decides, or for text what most of its cells are.
    ``typed`` is the column already typed by :func:`~dphawkes_core.data.cells.typed_column`, and ``parsed`` the load's
    parsed cells (``parsed.numbers("time")`` this column's numbers), when they are.
    """
    if not _is_text(column):
        values = np.asarray(column)
        return values, _well_formed_typed(values, kind)
    typed = cells.typed_column(column) if typed is None else typed

    def numbers() -> np.ndarray:
        return (parsed.numbers("time") if parsed is not None else cells.numbers(column))[0]

    if kind is None:
        if not _is_text(typed):
            kind = "datetime" if typed.dtype.kind == "M" else "number"
        else:
            finite = np.isfinite(numbers())
            kind = "number" if np.count_nonzero(finite) * 2 >= len(finite) else "datetime"
    if kind == "number":
        values = typed if not _is_text(typed) and typed.dtype.kind == "f" else numbers()
        return values, np.isfinite(values)
    values = typed if not _is_text(typed) and typed.dtype.kind == "M" else cells.datetimes(column)
    return values, ~np.isnat(values)


def _well_formed_typed(values: np.ndarray, kind: str | None) -> np.ndarray:
    """Rows of a typed time column that are finite numbers (a missing timestamp is NaT) of the declared kind."""
    is_datetime = values.dtype.kind == "M"
    if kind is not None and is_datetime != (kind == "datetime"):
        return np.zeros(values.shape, dtype=bool)  # e.g. a Parquet column of numbers under a window of dates
    if is_datetime:
        return ~np.isnat(values)
    return np.isfinite(values) if values.dtype.kind == "f" else np.ones(values.shape, dtype=bool)


def numeric_rows(columns: dict, domain: Domain) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """One partition's rows for the map-reduce (:mod:`dphawkes_core.statistics.partitioned`), through the readers'
    domain filter (:func:`restrict_to_domain`): numeric times, dimension indices and sequence values.

    Parameters
    ----------
    columns : dict
        The partition's ``time``, ``dimension`` and optional ``sequence`` columns, as the loaders read them
        (:func:`~dphawkes_core.data.io.table_columns`).
    domain : Domain
        The declared domain (a declared key's value is its text; without declared keys, the column's values).

    Returns
    -------
    times : numpy.ndarray
        float64 times on the column's own axis.
    dims : numpy.ndarray
        int64 dimension indices.
    seqs : numpy.ndarray
        The rows' sequence values.
    outside_domain : int
        Rows dropped by the domain filter.

    Raises
    ------
    DataError
        Without a declared domain, on a malformed row (its row number); on datetime times (partitions are read on
        a numeric axis).
    """
    rows, outside, _ = restrict_to_domain(columns, domain, "number")
    n_rows = len(rows["time"])
    if n_rows == 0:
        return np.zeros(0), np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), outside
    times = _time_values(rows["time"], "time", 1)
    if times.kind != "number":
        raise DataError("column 'time' holds datetimes: partitions are read on a numeric time axis (a single "
                        "file reads datetimes)")
    dims = rows["dimension"] if domain.dimensions is not None else _data_dimensions(rows["dimension"])
    if domain.sequences is not None:
        seqs = np.asarray(domain.sequences)[rows["sequence"]]
    else:
        seqs = _plain(rows["sequence"]) if "sequence" in rows else np.zeros(n_rows, dtype=np.int64)
    return times.values.astype(np.float64, copy=False), dims, seqs, outside


def _data_dimensions(column) -> np.ndarray:
    """Dimension indices read from a partition without declared dimensions: integers 0..d−1 only."""
    if _is_text(column):
        raise DataError("column 'dimension' must hold integers 0..d-1 when the dimensions are not declared "
                        "(declare names with --dimensions)")
    return _integer_dimensions(np.asarray(column), None, None, 1)


def _plain(column) -> np.ndarray:
    """A column as a NumPy array (text as stripped str)."""
    return cells.text_list(column) if _is_text(column) else np.asarray(column)


def _rows(column, keep: np.ndarray):
    """The kept rows of a NumPy, Arrow or pandas column (a pandas one re-indexed from 0)."""
    if hasattr(column, "iloc"):
        return column[keep].reset_index(drop=True)
    if not isinstance(column, np.ndarray):
        import pyarrow as pa

        return column.filter(pa.array(keep))
    return column[keep]


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


def _window_declared(domain: Domain, start_time, end_time) -> bool:
    """The window comes from a declaration (the window options or a key file), not from the rows."""
    return domain.windows is not None or start_time is not None or end_time is not None


def _windows(domain: Domain, start_time, end_time, columns: dict, seq_codes, n_seq: int, kind: str,
             first_row: int) -> tuple[list, list, list[str]]:
    """Each sequence's window bounds (None: read from the data) and notes.

    A declared window — a key file's, or the window options for every sequence — is the only one that counts as
    stated. Without one, the file's ``start``/``end`` columns set a window for exploration (:func:`_column_bounds`);
    with one they are not read. Per-row window values never refuse a release.
    """
    if domain.windows is not None:
        if start_time is not None or end_time is not None:
            raise DataError("the key file declares each sequence's window: give no --start-time/--end-time")
        return [w[0] for w in domain.windows], [w[1] for w in domain.windows], []
    in_file = [c for c in ("start", "end") if c in columns]
    if start_time is not None or end_time is not None:
        note = [f"the file's {' and '.join(in_file)} column{'s' if len(in_file) > 1 else ''} "
                f"{'were' if len(in_file) > 1 else 'was'} not read: the window options declare the window"]
        return [start_time] * n_seq, [end_time] * n_seq, note if in_file else []
    starts, start_notes = _column_bounds(columns.get("start"), "start", seq_codes, n_seq, kind, first_row)
    ends, end_notes = _column_bounds(columns.get("end"), "end", seq_codes, n_seq, kind, first_row)
    notes = start_notes + end_notes
    if in_file:
        notes.append("the window of the start/end columns is read from the data, not declared (not a formal "
                     "release): declare it with --start-time/--end-time or a key file (--sequences KEYFILE with "
                     "sequence,start,end columns)")
    return starts, ends, notes


def _column_bounds(column, what: str, seq_codes, n_seq: int, kind: str, first_row: int) -> tuple[list, list[str]]:
    """Each sequence's bound from a per-row ``start``/``end`` column, for exploration only: the earliest start
    (latest end) among its rows' well-formed values of the time column's kind, so that no row of the sequence is
    cut off by a disagreeing row; None for a sequence without one. Disagreements and malformed cells are noted,
    never refused."""
    if column is None:
        return [None] * n_seq, []
    values, good = time_cells(column, kind)
    rows = np.flatnonzero(good)
    if not rows.size:
        return [None] * n_seq, [f"column '{what}' holds no {kind} as the time column does: not read"]
    parsed = values[rows].view(np.int64) if values.dtype.kind == "M" else values[rows]
    latest = what == "end"
    order = np.lexsort((-parsed if latest else parsed, seq_codes[rows]))
    first_of = np.full(n_seq, -1)
    first_of[seq_codes[rows][order][::-1]] = order[::-1]  # each sequence's first row in that order
    bounds = [None if k < 0 else _cell(column, int(rows[k])) for k in first_of]
    notes = []
    if rows.size < len(good):
        notes.append(f"{len(good) - rows.size:,} malformed value(s) in column '{what}' were not read")
    extreme = np.array([parsed[k] if k >= 0 else 0 for k in first_of])
    differs = parsed != extreme[seq_codes[rows]]
    if differs.any():
        row = int(rows[np.flatnonzero(differs)[0]])
        notes.append(f"rows of a sequence give different {what} values (row {row + first_row}: "
                     f"{_cell(column, row)!r}): each sequence's window is the widest its rows give")
    return [b.strip() if isinstance(b, str) else b for b in bounds], notes


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
        natural = np.array([t.min() if t.size else 0], dtype=t.dtype)
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
    distinct, codes = cells.key_texts(column)  # codes in order of first appearance
    empty = np.flatnonzero(distinct == "")
    if empty.size:
        raise DataError(f"row {int(np.argmax(codes == empty[0])) + first_row}, column 'sequence': empty value")
    return codes, len(distinct)


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
    labels = cells.text_list(column)
    empty = labels == ""
    if empty.any():
        raise DataError(f"row {int(np.flatnonzero(empty)[0]) + first_row}, column 'dimension': empty value")
    values, is_number = cells.numbers(column)
    if (is_number & np.isfinite(values)).all():
        return _integer_dimensions(values, labels, names, first_row), _integer_names(values, names), []
    distinct, inverse = cells.key_texts(column)
    uniques = sorted(str(label) for label in distinct)
    _check_dim_count(len(uniques))
    rank = {label: j for j, label in enumerate(uniques)}
    notes = []
    integer = np.array([bool(_DIGITS.fullmatch(str(label))) for label in distinct], dtype=bool)[inverse]
    if integer.any():
        odd = ~integer if integer.sum() * 2 >= len(integer) else integer
        row = int(np.flatnonzero(odd)[0])
        kind = "an integer among labels" if integer[row] else "not an integer"
        notes.append(f"column 'dimension' mixes integers and labels ({labels[row]!r} on row {row + first_row} "
                     f"is {kind}), so every value is a label: {len(uniques)} dimensions: {', '.join(uniques)}")
    codes = np.array([rank[str(label)] for label in distinct], dtype=np.int64)[inverse]
    return codes, tuple(uniques), notes


def _integer_dimensions(values: np.ndarray, labels, names, first_row: int) -> np.ndarray:
    if values.dtype.kind in "iu":
        not_int = values < 0
    else:
        not_int = ~np.isfinite(values) | (values != np.round(values)) | (values < 0)
    if not_int.any():
        row = int(np.flatnonzero(not_int)[0])
        shown = labels[row] if labels is not None else f"{values[row]:g}"
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


def _validated(sequences, names, warnings, allow_empty: bool = False, **metadata) -> Events:
    d = len(names)
    if d == 0:
        raise DataError("no dimensions given")
    if sum(s.n_events for s in sequences) == 0 and not allow_empty:
        raise DataError("the data contain no events" + (" inside the window" if metadata["outside_window"] else ""))
    for j in range(d):
        if sum(len(s.times[j]) for s in sequences) == 0:
            warnings.append(f"dimension {names[j]!r} has no events")
    return Events(sequences=tuple(sequences), names=tuple(names), warnings=tuple(warnings), **metadata)
