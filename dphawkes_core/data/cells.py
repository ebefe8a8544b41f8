"""Cells read one at a time: what one cell of an event file means, whatever the other cells of its column hold.

A reader that lets a column's type be inferred from its cells lets one row change how every other row is read: a
column of ``0``/``1`` dimensions plus one row ``1000,True`` became a boolean column whose every row fell outside the
declared dimensions, and zero-padded labels ``01, 02`` were read as the integers 1 and 2 until one text row made the
column text again. So every reader reads cells as text (a CSV: :mod:`~dphawkes_core.data.csv_text`) or as their
writer typed them (Parquet), and each cell is parsed on its own here — vectorised over a column (Arrow compute,
one pandas call for datetimes), with a mask of the cells that failed, never one decision for the whole column:

* **a number** is a cell of the decimal grammar :data:`NUMBER` (sign, digits, point, exponent; or a spelling of
  NaN or infinity), after its surrounding whitespace, parsed by Arrow's correctly rounded parser; anything else
  (``True``, ``0x10``, ``1_000``, ``١٢``, empty) is not a number;
* **a datetime** is an ISO-8601 cell (pandas' ``format="ISO8601"``, each cell parsed on its own, naive ones read as
  UTC) at an instant of :data:`DATETIME_RANGE`; outside it, not a datetime (NaT) — near the ends of
  ``datetime64[ns]``'s range pandas' reading of a cell depends on the resolution the column's other cells ask for;
* **a key** (a dimension or a sequence cell) is its stripped text; a typed cell reads as a CSV writer writes it —
  an integer in decimal, a whole float without its point (``3.0`` → ``3``), a boolean as ``1``/``0`` (a writer that
  inferred a boolean column from ``0``/``1`` cells stored them so) — and matches a declared key (:func:`key_codes`)
  by its text, else, when it is a whole number, the one declared key that is the same whole number (``1`` matches
  a declared ``01``: an integer column written against zero-padded labels), else, for dimensions, the index it
  names when it is below d (files write dimensions as integers beside a ``labels.csv``).

Which cells of a column are numbers, datetimes or declared keys therefore never depends on another cell; a column
is turned into typed values (:func:`typed_column`) only when every one of its cells parses, and then into the
values each cell parses to on its own, so a typed and a text reading of the same cells agree cell by cell.
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation

import numpy as np

from dphawkes_core.data import arrow_calls

#: A number cell (after stripping its surrounding whitespace): an optionally signed decimal with an optional
#: exponent, or a spelling of NaN or infinity (which a declared domain then drops as not finite). ASCII digits only.
#: It is exactly what Arrow's float parser accepts (``tests/core/data/test_cells.py`` checks it on random strings),
#: so a column whose every cell parses is read by one cast, and any other column cell by cell with the same values.
NUMBER = r"[+-]?(?:(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|(?i:inf|infinity|nan(?:\([0-9a-z_]*\))?))"
_WHOLE = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?", re.ASCII)
_HAND_LAID_TEXT = 4096  # up to this many cells, _arrow_text lays Arrow text out itself
_MAX_KEY_DIGITS = 40  # a whole-number key with more digits than this matches by its text only
_NS_PER_UNIT = {"s": 10**9, "ms": 10**6, "us": 10**3, "ns": 1}
_PROBE = 64  # cells a cast of a whole column tries first
#: The instants a datetime cell may hold (UTC, both ends included): ``datetime64[ns]``'s range less a day or more at
#: each end, where a cell's reading would depend on its offset and on the resolution of its column.
DATETIME_RANGE = (np.datetime64("1678-01-02", "ns"), np.datetime64("2262-04-10", "ns"))


def is_text(column) -> bool:
    """Whether a column holds text cells (Arrow, pandas, or a NumPy array of strings) rather than typed values."""
    return not isinstance(column, np.ndarray) or column.dtype.kind in "OUS"


def text_cells(column):
    """A text column as one Arrow string array: missing cells empty, surrounding whitespace stripped."""
    import pyarrow as pa

    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks() if column.num_chunks != 1 else column.chunk(0)
    elif not isinstance(column, pa.Array):
        column = _arrow_text(np.asarray(column).astype(str))
    if not pa.types.is_string(column.type):
        column = arrow_calls.cast(column, pa.string())
    if column.null_count:  # a Python "" would make Arrow import pandas (start-up: tests/cli/test_startup.py)
        import pyarrow.compute as pc

        column = pc.fill_null(column, "")
    return arrow_calls.trim_whitespace(column)


def _arrow_text(strings: np.ndarray):
    """NumPy strings as an Arrow string array. A few (a key column's distinct cells) are laid out by hand:
    ``pa.array`` imports pandas on the way, which a numeric CSV otherwise never needs (start-up:
    ``tests/cli/test_startup.py``); many go through ``pa.array``, where that import is paid once."""
    import pyarrow as pa

    if strings.size > _HAND_LAID_TEXT:
        return pa.array(strings, type=pa.string())
    encoded = [str(cell).encode("utf-8") for cell in strings.ravel()]
    offsets = np.zeros(len(encoded) + 1, dtype=np.int32)
    offsets[1:] = np.cumsum([len(cell) for cell in encoded])
    return pa.Array.from_buffers(pa.string(), len(encoded), [None, pa.py_buffer(offsets.tobytes()),
                                                             pa.py_buffer(b"".join(encoded))])


def fixed_width(array) -> np.ndarray:
    """A numeric Arrow array without missing values as NumPy values, through DLPack: Arrow's ``to_numpy`` imports
    pandas on the way, which a numeric CSV otherwise never needs (start-up: ``tests/cli/test_startup.py``)."""
    if array.null_count:
        return array.to_numpy(zero_copy_only=False)
    return np.from_dlpack(array)


def text_list(column) -> np.ndarray:
    """A text column's stripped cells as a NumPy array of Python strings (for the slow, per-row paths)."""
    return text_cells(column).to_numpy(zero_copy_only=False).astype(object)


def numbers(column) -> tuple[np.ndarray, np.ndarray]:
    """``(values, is_number)``: each cell's float64 value (NaN where it is not a number) and which cells are numbers
    (:data:`NUMBER`; NaN and infinity spelled out are numbers, not finite ones). Typed numbers are their values."""
    if not is_text(column):
        values = np.asarray(column)
        if values.dtype.kind == "M":
            return np.full(values.shape, np.nan), np.zeros(values.shape, dtype=bool)
        values = values.astype(np.float64, copy=False)
        return values, np.ones(values.shape, dtype=bool)
    return _numbers(text_cells(column))


def _numbers(text) -> tuple[np.ndarray, np.ndarray]:
    """:func:`numbers` of stripped Arrow text."""
    import pyarrow as pa

    whole = _cast_all(text, pa.float64())  # every cell a number (the usual column): one cast
    if whole is not None:
        return fixed_width(whole), np.ones(len(text), dtype=bool)
    import pyarrow.compute as pc

    matched = pc.match_substring_regex(text, f"^(?:{NUMBER})$")
    is_number = fixed_width(pc.cast(matched, pa.uint8())).astype(bool)
    values = np.full(len(text), np.nan)
    values[is_number] = fixed_width(pc.cast(text.filter(matched), pa.float64()))
    return values, is_number


def _cast_all(text, kind):
    """``text`` cast to ``kind`` when every cell casts, else None (a failing cast of a long column is slow: its
    first cells are tried first)."""
    import pyarrow as pa

    try:
        if len(text) > _PROBE:
            arrow_calls.cast(text[:_PROBE], kind)
        return arrow_calls.cast(text, kind)
    except pa.ArrowInvalid:
        return None


def datetimes(column) -> np.ndarray:
    """Each cell as ``datetime64[ns]`` (UTC), NaT where it is not an ISO-8601 datetime of :data:`DATETIME_RANGE`.
    Typed timestamps are their values (inside the range)."""
    if not is_text(column):
        values = np.asarray(column)
        if values.dtype.kind == "M":
            return nanoseconds(values)
        return np.full(values.shape, np.datetime64("NaT"), dtype="datetime64[ns]")
    text = text_cells(column)
    fast = _arrow_datetimes(text)
    return fast if fast is not None else _pandas_datetimes(text)


def _in_range(values: np.ndarray) -> np.ndarray:
    """``datetime64[ns]`` values with NaT for every instant outside :data:`DATETIME_RANGE`."""
    inside = (values >= DATETIME_RANGE[0]) & (values <= DATETIME_RANGE[1])  # NaT compares False
    return np.where(inside, values, np.datetime64("NaT", "ns"))


def _pandas_datetimes(text) -> np.ndarray:
    """Each stripped cell by pandas' ISO-8601 parser (each cell on its own), NaT where it is none."""
    import pandas as pd

    cells = pd.Series(text.to_numpy(zero_copy_only=False), dtype=object)
    stamps = pd.to_datetime(cells, format="ISO8601", utc=True, errors="coerce")
    return nanoseconds(stamps.dt.tz_localize(None).to_numpy())


def _arrow_datetimes(text) -> np.ndarray | None:
    """The column by Arrow's ISO-8601 cast when every cell casts (all with a UTC offset, or all without), else None.
    Where Arrow's cast accepts a cell, it gives pandas' instant inside :data:`DATETIME_RANGE`
    (``tests/core/data/test_cells.py`` checks it on random datetimes), so this is the per-cell reading, faster."""
    import pyarrow as pa

    for kind in (pa.timestamp("ns", tz="UTC"), pa.timestamp("ns")):
        cast = _cast_all(text, kind)
        if cast is not None:
            return _in_range(fixed_width(arrow_calls.cast(cast, pa.int64())).view("datetime64[ns]"))
    return None


def nanoseconds(values: np.ndarray) -> np.ndarray:
    """``datetime64`` values of any resolution as ``datetime64[ns]``, NaT where the instant is outside
    :data:`DATETIME_RANGE` (a plain cast would wrap around: pandas reads ``1000-01-01`` at microsecond resolution)."""
    unit = np.datetime_data(values.dtype)[0]
    if unit == "ns":
        return _in_range(values)
    scale = _NS_PER_UNIT.get(unit)
    if scale is None:  # days, months, ...: through seconds
        return nanoseconds(values.astype("datetime64[s]"))
    raw = values.view(np.int64)
    missing = np.isnat(values)
    limit = np.iinfo(np.int64).max // scale
    inside = ~missing & (np.abs(raw) <= limit)
    out = np.where(inside, raw, 0) * scale
    return _in_range(np.where(inside, out, np.iinfo(np.int64).min).view("datetime64[ns]"))


def typed_column(column, parsed_numbers=None):
    """A column as typed NumPy values when every cell parses — float64 when every cell is a number, ``datetime64[ns]``
    when none is a number and every one is a datetime — else the text column itself (the readers' type inference,
    cell by cell: a typed reading gives each cell the value it has on its own). ``parsed_numbers``: a function giving
    the column's :func:`numbers`, when they are kept for later."""
    if not is_text(column):
        return column
    import pyarrow as pa

    text = text_cells(column)
    whole = _cast_all(text, pa.float64())
    if whole is not None:
        return fixed_width(whole)
    stamps = _arrow_datetimes(text)  # a cell Arrow casts to an instant is never a number
    if stamps is not None:
        return stamps
    if (parsed_numbers() if parsed_numbers is not None else _numbers(text))[1].any():
        return column
    stamps = _pandas_datetimes(text)
    return column if np.isnat(stamps).any() else stamps


def typed_keys(column, keys: tuple | None = None):
    """:func:`typed_column` of a key column (dimensions, sequences), parsed once per distinct cell (``keys``: its
    :func:`key_texts`, when already computed)."""
    if not is_text(column):
        return column
    distinct, inverse = keys if keys is not None else key_texts(column)
    values, is_number = numbers(distinct)
    return values[inverse] if is_number.all() else column


def key_texts(column) -> tuple[np.ndarray, np.ndarray]:
    """``(distinct, inverse)``: a key column's distinct cells as text (typed cells as a CSV writer writes them) and
    each row's index into them. The distinct cells are computed once (Arrow's hash for text, a sort for numbers):
    a column holds few keys, and what is done per key costs nothing per row."""
    if is_text(column):
        encoded = arrow_calls.dictionary_encode(text_cells(column))
        distinct = np.empty(len(encoded.dictionary), dtype=object)  # few keys: a list, so no pandas on the way
        distinct[:] = encoded.dictionary.to_pylist()
        return distinct, fixed_width(encoded.indices).astype(np.int64)
    values = np.asarray(column)
    if values.dtype.kind == "b":
        values = values.astype(np.int64)
    distinct, inverse = np.unique(values, return_inverse=True)
    return typed_key_text(distinct), inverse.ravel()


def typed_key_text(values: np.ndarray) -> np.ndarray:
    """Typed key cells as a CSV writer writes them: whole numbers without a decimal point, booleans as ``1``/``0``,
    anything else as its (stripped) text."""
    values = np.asarray(values)
    if values.dtype.kind == "b":
        return values.astype(np.int64).astype(str)
    if values.dtype.kind in "iu":
        return values.astype(str)
    if values.dtype.kind == "f":
        whole = np.isfinite(values) & (values == np.round(values)) & (np.abs(values) < 2.0**63)
        return np.where(whole, np.char.mod("%d", np.where(whole, values, 0).astype(np.int64)), values.astype(str))
    return np.char.strip(values.astype(str))


def key_codes(column, declared: tuple[str, ...], indices: bool = False,
              keys: tuple | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``(codes, inside)``: each cell's index among the ``declared`` keys (−1 outside) and which cells are declared.

    A cell matches by its text; else, when it is a whole number (:func:`whole_number`), the one declared key that is
    the same whole number; else, with ``indices`` (dimensions), the index it names when it is below
    ``len(declared)``. Each cell on its own, whatever the column's other cells or type. ``keys``: the column's
    :func:`key_texts`, when already computed.
    """
    distinct, inverse = keys if keys is not None else key_texts(column)
    codes = _declared_codes(distinct, declared, indices)[inverse] if len(distinct) else np.zeros(0, dtype=np.int64)
    return codes, codes >= 0


def _declared_codes(texts, declared: tuple[str, ...], indices: bool) -> np.ndarray:
    exact = {key: k for k, key in enumerate(declared)}
    by_value: dict[int, list[int]] = {}
    for k, key in enumerate(declared):
        value = whole_number(key)
        if value is not None:
            by_value.setdefault(value, []).append(k)
    codes = np.full(len(texts), -1, dtype=np.int64)
    for i, text in enumerate(texts):
        if text in exact:
            codes[i] = exact[text]
            continue
        value = whole_number(text)
        if value is None:
            continue
        if len(by_value.get(value, ())) == 1:
            codes[i] = by_value[value][0]
        elif indices and 0 <= value < len(declared):
            codes[i] = value
    return codes


def whole_number(text: str) -> int | None:
    """The integer a key cell writes (``1``, ``01``, ``+1``, ``1.0``, ``1e0``), or None when it writes no whole
    number (text, a fraction, unicode digits, more than :data:`_MAX_KEY_DIGITS` digits)."""
    text = str(text).strip()
    if len(text) > _MAX_KEY_DIGITS + 8 or not _WHOLE.fullmatch(text):
        return None
    try:
        value = Decimal(text)
    except InvalidOperation:
        return None
    if abs(value.adjusted()) > _MAX_KEY_DIGITS or value != value.to_integral_value():
        return None
    return int(value)
