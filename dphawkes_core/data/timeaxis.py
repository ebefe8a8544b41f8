"""Time columns as people have them: numbers or ISO-8601 datetimes, units and observation windows.

A time column is read into :class:`TimeValues`: either exact integer *ticks* (datetimes in
nanoseconds; decimal numbers scaled by ``10**k``, recovered from their floats, when a window start
must be subtracted) or plain floats. Relative times ``t - start`` are then computed in integers and rounded once, so
data shifted by an epoch offset (e.g. ``1.7e9`` seconds) with the matching window give exactly the same relative
times as the unshifted data.

Numbers are taken as they are when no unit is asked for; with ``time_unit`` they are read as seconds
(e.g. Unix time) and converted, like datetimes (seconds since the window start / unit).
"""

from __future__ import annotations

import datetime as _dt
import math
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import TYPE_CHECKING

import numpy as np

from dphawkes_core.errors import DataError

if TYPE_CHECKING:
    import pandas as pd

TIME_UNITS = {"s": 1, "min": 60, "h": 3600, "d": 86400}
NS_PER_SECOND = 1_000_000_000
EPOCH_LIKE = 1e8  # numbers from here on (1973 in Unix seconds) are read as timestamps, not as relative times
MAX_DECIMALS = 9
_MAX_EXACT = 2**53
_MAX_RECOVERABLE = 2**51  # |x| * 10**k up to here: x's float and the product err by under half a tick


@dataclass(frozen=True)
class TimeValues:
    """One time column, parsed.

    Attributes
    ----------
    kind : str
        ``"number"`` or ``"datetime"``.
    values : numpy.ndarray
        int64 ticks (``ticks_per_unit`` per input unit; input unit = seconds for datetimes) or float64.
    ticks_per_unit : int
        0 when ``values`` are floats.
    """

    kind: str
    values: np.ndarray
    ticks_per_unit: int = 0


def unit_seconds(time_unit: str | None) -> float:
    """Seconds per ``time_unit`` (1 when none is asked for); refuses unknown units."""
    if time_unit in (None, ""):
        return 1.0
    if time_unit not in TIME_UNITS:
        raise DataError(f"unknown time unit {time_unit!r}; use one of {', '.join(TIME_UNITS)}")
    return float(TIME_UNITS[time_unit])


def unit_label(kind: str, time_unit: str | None) -> str:
    """Unit of the converted axis: the asked unit, seconds for datetimes, else unknown (``""``)."""
    if time_unit:
        return time_unit
    return "s" if kind == "datetime" else ""


def parse_column(text: pd.Series | None, typed: np.ndarray | None, column: str, first_row: int) -> TimeValues:
    """Parse a time column from its typed values (fast path) or its text.

    Parameters
    ----------
    text : text column, optional
        The column's cells as text (Arrow, pandas or NumPy strings; used when ``typed`` is None), each parsed on its
        own (:mod:`~dphawkes_core.data.cells`).
    typed : numpy.ndarray, optional
        Already typed values: float64 numbers or datetime64[ns] (UTC).
    column : str
        Column name for error messages.
    first_row : int
        Row number of the first value (2 for a CSV with a header line).
    """
    if typed is not None:
        if np.issubdtype(typed.dtype, np.datetime64):
            return TimeValues("datetime", typed.astype("datetime64[ns]").view(np.int64), NS_PER_SECOND)
        values = typed.astype(float, copy=False)
        _check_finite(values, None, column, first_row)
        return TimeValues("number", values)
    from dphawkes_core.data import cells  # text: each cell parsed on its own, as under a declared domain

    numbers, is_number = cells.numbers(text)
    if not len(is_number) or is_number[0]:
        bad = ~is_number
        if bad.any():
            _refuse(_text_cell(text, int(np.flatnonzero(bad)[0])), int(np.flatnonzero(bad)[0]), column, first_row,
                    "number")
        _check_finite(numbers, text, column, first_row)
        return TimeValues("number", numbers)
    stamps = cells.datetimes(text)
    bad = np.isnat(stamps)
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        _refuse(_text_cell(text, row), row, column, first_row, "datetime")
    return TimeValues("datetime", stamps.view(np.int64), NS_PER_SECOND)


def _text_cell(text, row: int) -> str:
    from dphawkes_core.data import cells

    return str(cells.text_list(text[row:row + 1])[0])


def no_times(kind: str) -> TimeValues:
    """An empty time column of ``kind`` (data without a row in a declared domain)."""
    if kind == "datetime":
        return TimeValues("datetime", np.zeros(0, dtype=np.int64), NS_PER_SECOND)
    return TimeValues("number", np.zeros(0))


def decimal_ticks(values: np.ndarray, extra: tuple = ()) -> tuple[np.ndarray, int] | None:
    """Numbers written with k decimals as exact int64 ticks of ``10**-k``, recovered from their floats.

    A float parsed from a decimal with k digits after the point is the correctly rounded value of
    ``m / 10**k``. While ``|x| * 10**k <= 2**51`` an ulp of ``x`` is at most half a tick, so only one
    ``m`` rounds to ``x``; ``rint(x * 10**k)`` finds it, and the check ``m / 10**k == x`` (one correctly
    rounded division, as when parsing) confirms it. k is the smallest number of decimals (at least those
    of the window bounds in ``extra``) for which every value passes the check.

    Returns
    -------
    (numpy.ndarray, int) or None
        The ticks and ``10**k``; None when no k up to ``MAX_DECIMALS`` fits (the caller then works in
        floats), e.g. numbers written with 17 significant digits.
    """
    extra_decimals = [_decimals(e) for e in extra]
    if any(e is None for e in extra_decimals):
        return None
    biggest = max([float(np.abs(values).max(initial=0.0)), *(abs(float(_number(e, "bound"))) for e in extra)])
    sample = values[:: max(1, values.size // 1000)]
    for k in range(max(extra_decimals, default=0), MAX_DECIMALS + 1):
        scale = 10**k
        if biggest * scale > _MAX_RECOVERABLE:
            return None
        if not np.array_equal(np.rint(sample * scale) / scale, sample):
            continue
        ticks = np.rint(values * scale)
        if np.array_equal(ticks / scale, values):
            return ticks.astype(np.int64), scale
    return None


def scalar_ticks(value, kind: str, ticks_per_unit: int, what: str):
    """A window bound (number, numeric text or datetime text) on the column's tick or float scale."""
    if kind == "datetime":
        if isinstance(value, (int, float, np.number)) and not isinstance(value, bool):
            raise DataError(f"the time column holds datetimes: give the {what} as a datetime, not {value!r}")
        import pandas as pd

        try:
            stamp = pd.Timestamp(value)
        except (ValueError, TypeError):
            raise DataError(f"{what} {value!r} is not an ISO-8601 datetime") from None
        if pd.isna(stamp):
            raise DataError(f"{what} {value!r} is not an ISO-8601 datetime")
        stamp = stamp.tz_localize("UTC") if stamp.tzinfo is None else stamp.tz_convert("UTC")
        return int(stamp.as_unit("ns").value)
    number = _number(value, what)
    if not ticks_per_unit:
        return float(number)
    ticks = number * ticks_per_unit
    if ticks != ticks.to_integral_value():
        raise DataError(f"{what} {value!r} has more decimals than the time column can hold exactly")
    return int(ticks)


def relative(values: np.ndarray, start, ticks_per_unit: int, seconds_per_unit: float) -> np.ndarray:
    """``(values - start)`` in input units (exact ticks: one rounding), then divided by the unit.

    The two steps are deliberate: the first gives bit for bit the float of the unshifted number, so a
    shifted file with its window and the unshifted file agree after the unit too.
    """
    if ticks_per_unit:
        diff = values - start
        if diff.size and np.abs(diff).max() >= _MAX_EXACT:
            raise DataError("the window is too long to represent its times exactly; use a coarser time unit")
        out = diff.astype(float) / ticks_per_unit
    else:
        out = values - start
    return out / seconds_per_unit if seconds_per_unit != 1 else out


def format_instant(value: float, kind: str, time_unit: str, scale: float | None = None) -> str:
    """A window bound for people: ISO datetime for datetime axes, else the number and unit.

    Parameters
    ----------
    value : float
        The instant, in ``time_unit``.
    kind : str
        ``"datetime"`` or ``"number"``.
    time_unit : str
        The unit's symbol (empty for plain numbers).
    scale : float, optional
        The size of the span the instant bounds (e.g. the window's length): a number is written to the resolution
        of six significant digits of it, so ``73288.52745954`` in a window of that length reads ``73288.5``;
        by default the instant's own size.
    """
    if kind == "datetime":
        seconds = value * unit_seconds(time_unit)
        stamp = _dt.datetime.fromtimestamp(seconds, tz=_dt.UTC)
        return stamp.strftime("%Y-%m-%d %H:%M:%S").removesuffix(" 00:00:00") + " UTC"
    size = abs(value if scale is None else scale)
    decimals = max(0, 5 - math.floor(math.log10(size))) if size > 0 and math.isfinite(size) else 0
    text = f"{value:.{decimals}f}"
    text = text.rstrip("0").rstrip(".") if "." in text else text
    return ("0" if text == "-0" else text) + (f" {time_unit}" if time_unit else "")


def _number(value, what: str) -> Decimal:
    if isinstance(value, bool):
        raise DataError(f"{what} must be a number or a datetime, got {value!r}")
    try:
        number = Decimal(repr(float(value)) if isinstance(value, (float, np.floating)) else str(value).strip())
    except (InvalidOperation, ValueError):
        raise DataError(f"the time column holds numbers: {what} {value!r} is not a number") from None
    if not number.is_finite():
        raise DataError(f"{what} must be finite, got {value!r}")
    return number


def _decimals(value) -> int | None:
    text = repr(float(value)) if isinstance(value, (float, np.floating)) else str(value).strip()
    try:
        exponent = Decimal(text).as_tuple().exponent
    except InvalidOperation:
        return None
    if "e" in text.lower() or not isinstance(exponent, int):
        return None
    return max(0, -exponent)


def _check_finite(values: np.ndarray, text, column: str, first_row: int) -> None:
    bad = ~np.isfinite(values)
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        shown = _text_cell(text, row) if text is not None else values[row]
        raise DataError(f"row {row + first_row}, column '{column}': {str(shown)!r} is not a finite number")


def _refuse(value: str, row: int, column: str, first_row: int, expected: str) -> None:
    where = f"row {row + first_row}, column '{column}'"
    if value == "":
        raise DataError(f"{where}: empty value")
    other = "datetime" if expected == "number" else "number"
    if _parses_as(value, other):
        raise DataError(f"{where}: {value!r} is a {other}, but row {first_row} holds a {expected}; "
                        f"use numbers or datetimes, not both")
    raise DataError(
        f"{where}: {value!r} is not {'a finite number' if expected == 'number' else 'an ISO-8601 datetime'}"
    )


def _parses_as(value: str, kind: str) -> bool:
    from dphawkes_core.data import cells

    cell = np.array([value], dtype=object)
    if kind == "number":
        return bool(cells.numbers(cell)[1][0])
    return not np.isnat(cells.datetimes(cell)[0])
