"""``dphawkes_core.data.arrow_calls`` calls Arrow's compute functions by name, without ``pyarrow.compute``: each
gives what ``pyarrow.compute`` (and ``Array.cast``) gives, on cells chosen to differ — whitespace of every kind,
non-ASCII text, empty and missing cells, numbers in every spelling the grammar accepts and some it refuses, chunked
columns — and fails where it fails, with the same error."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc
import pytest

from dphawkes_core.data import arrow_calls

TEXT = [" 1.5", "2\t", "\u00a03e2\u2003", "", "-0", "+.5", "inf", " NaN ", "1e400", "١٢", "0x10", "1_000", "True",
        "é", "  ", "a b", None]


def same(a, b) -> bool:
    """Equal type and cells, NaN equal to NaN (``repr`` of a float is exact)."""
    return a.type == b.type and [repr(v) for v in a.to_pylist()] == [repr(v) for v in b.to_pylist()]


def columns():
    plain = pa.array(TEXT, type=pa.string())
    yield plain
    yield pa.chunked_array([plain[:5], plain[5:]])


@pytest.mark.parametrize("column", list(columns()), ids=["array", "chunked"])
def test_trimming_and_encoding_are_arrows(column):
    assert arrow_calls.trim_whitespace(column).equals(pc.utf8_trim_whitespace(column))
    assert arrow_calls.dictionary_encode(column).equals(pc.dictionary_encode(column))


@pytest.mark.parametrize("target", [pa.float64(), pa.int64(), pa.string(), pa.timestamp("ns"), pa.uint8()])
def test_a_cast_is_arrows_cast_value_for_value_and_failure_for_failure(target):
    for cells in (["1", "2.5", "-3e2", "nan"], ["7", "255", "0"], ["2020-01-01T00:00:00", "1970-01-01"], TEXT,
                  ["256"]):
        column = pa.array(cells, type=pa.string())
        try:
            expected = column.cast(target)
        except pa.ArrowException as error:
            with pytest.raises(type(error)):
                arrow_calls.cast(column, target)
            continue
        assert same(arrow_calls.cast(column, target), expected)


def test_a_safe_cast_refuses_what_does_not_fit():
    """Safe, as ``Array.cast``: 300 is no byte and 2.5 no integer — an unsafe cast would wrap and truncate."""
    with pytest.raises(pa.ArrowInvalid):
        arrow_calls.cast(pa.array([300]), pa.uint8())
    with pytest.raises(pa.ArrowInvalid):
        arrow_calls.cast(pa.array([2.5]), pa.int64())
