"""Each cell parsed on its own (``dphawkes_core/data/cells.py``), checked against independent parsers.

The readers decide a cell's reading from its own text: the number grammar must be exactly what Arrow's float parser
accepts (so a column read by one cast and a column read cell by cell agree), Arrow's datetime cast must give pandas'
instant wherever it accepts a cell, a key matches a declared one by its own text, and a column's other cells never
change a cell's value. The references are Python's ``float``, pandas' ISO-8601 parser and Python's ``csv`` module.
"""

from __future__ import annotations

import math

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest

from dphawkes_core.data import cells

ALPHABET = list("0123456789.eE+-naifNIFty()_,dx ") + ["inf", "nan", "infinity", "e1", "1.", ".5", "\u0661", "\t"]


def _random_strings(rng, n: int) -> list[str]:
    """Half random strings of the alphabet, half numbers built part by part, one in five with a character changed."""
    strings = ["".join(rng.choice(ALPHABET, int(rng.integers(1, 7)))) for _ in range(n // 2)]
    for _ in range(n - n // 2):
        parts = [rng.choice(["", "+", "-"]), "".join(rng.choice(list("0123456789"), int(rng.integers(0, 4)))),
                 rng.choice(["", "."]), "".join(rng.choice(list("0123456789"), int(rng.integers(0, 4)))),
                 rng.choice(["", "e", "E", "e+", "e-"]) + "".join(rng.choice(list("0123456789"),
                                                                            int(rng.integers(0, 3))))]
        text = "".join(str(p) for p in parts)
        if text and rng.random() < 0.2:
            k = int(rng.integers(len(text)))
            text = text[:k] + str(rng.choice(ALPHABET)) + text[k + 1:]
        strings.append(text)
    return strings


def _arrow_accepts(text: str) -> bool:
    try:
        pc.cast(pa.array([text]), pa.float64())
    except pa.ArrowInvalid:
        return False
    return True


def test_the_number_grammar_is_exactly_what_arrows_parser_accepts():
    """Every cell of the grammar casts, and no other: a planted grammar that took ``1_000`` or ``١٢`` (Python's float
    does) or refused ``.5`` fails here."""
    strings = _random_strings(np.random.default_rng(7), 6_000) + ["1_000", "١٢", " 1", "0x10", ".e5", "1e", "-.5",
                                                                      "+nan", "nan(7)", "Infinity", "1.e5"]
    matched = pc.match_substring_regex(pa.array(strings), f"^(?:{cells.NUMBER})$").to_numpy(zero_copy_only=False)
    grammar = sorted({s for s, m in zip(strings, matched) if m})
    others = sorted({s for s, m in zip(strings, matched) if not m})
    pc.cast(pa.array(grammar), pa.float64())  # raises if one of them does not cast
    assert [s for s in others if _arrow_accepts(s)] == []
    assert len(grammar) > 600 and {"-.5", "+nan", "nan(7)", "Infinity", "1.e5"} <= set(grammar)


def test_a_number_cell_has_the_correctly_rounded_value_whatever_its_column_holds():
    """Python's float is the reference; the same cells read in an all-number column (one cast) and beside a text
    cell (cell by cell) get the same values."""
    rng = np.random.default_rng(3)
    written = [f"{rng.integers(0, 10**9)}.{rng.integers(0, 10**12):012d}" for _ in range(2_000)]
    written += [f"{rng.integers(1, 10**18)}e{rng.integers(-30, 30)}" for _ in range(2_000)]
    written += ["-0", "+1", "  2.5\t", "00012", "1e400", "9007199254740993", "5."]
    alone, is_number = cells.numbers(pa.array(written))
    beside, beside_number = cells.numbers(pa.array(written + ["True"]))
    reference = np.array([float(w) for w in written])
    np.testing.assert_array_equal(alone, reference)
    np.testing.assert_array_equal(beside[:-1], reference)
    assert is_number.all() and beside_number[:-1].all() and not beside_number[-1] and math.isnan(beside[-1])


@pytest.mark.parametrize("cell", ["True", "", "0x10", "1_000", "١٢", "１", "1,5", "1e", "abc", "\u00a0"])
def test_a_cell_that_is_no_number_is_none_wherever_it_stands(cell):
    values, is_number = cells.numbers(pa.array(["1.5", cell, "2"]))
    assert values[0] == 1.5 and values[2] == 2.0 and not is_number[1] and math.isnan(values[1])


def _iso(rng) -> str:
    day = f"{rng.choice(['2024', '1970', '1679', '2261', '2000'])}-{rng.integers(1, 13):02d}-{rng.integers(1, 29):02d}"
    text = day + str(rng.choice(["T", " "])) + f"{rng.integers(0, 24):02d}:{rng.integers(0, 60):02d}"
    if rng.random() < 0.8:
        text += f":{rng.integers(0, 60):02d}"
        if rng.random() < 0.5:
            text += "." + "".join(str(x) for x in rng.integers(0, 10, int(rng.integers(1, 10))))
    return text + str(rng.choice(["", "Z", "+01:00", "-0530", "+05", "-12:00"]))


def _one_at_a_time(cell: str) -> np.datetime64:
    """The reference: pandas on this one cell alone, NaT outside 1678-01-02 … 2262-04-10 (UTC)."""
    import pandas as pd

    try:
        stamp = pd.to_datetime(cell, format="ISO8601", utc=True)
    except (ValueError, OverflowError):
        return np.datetime64("NaT", "ns")
    inside = pd.Timestamp("1678-01-02", tz="UTC") <= stamp <= pd.Timestamp("2262-04-10", tz="UTC")
    return np.datetime64(stamp.as_unit("ns").value, "ns") if inside else np.datetime64("NaT", "ns")


@pytest.mark.parametrize("offsets", [True, False])
def test_a_datetime_cell_has_the_instant_it_has_alone_whatever_its_column_holds(offsets):
    """Columns Arrow's cast reads at once (all cells with an offset, or all without) and the same cells beside one
    only pandas reads (``2024``) or beside a cell of the other kind give each cell its instant read alone."""
    rng = np.random.default_rng(11 if offsets else 12)
    written = [_iso(rng) for _ in range(2_000)]
    written = [w for w in written if (w[-1] == "Z" or "+" in w[10:] or "-" in w[10:]) == offsets]
    reference = np.array([_one_at_a_time(w) for w in written])
    assert not np.isnat(reference).any()
    assert cells._arrow_datetimes(cells.text_cells(pa.array(written))) is not None  # the fast path is compared
    for extra in ([], ["2024"], ["2024-01-01T00:00:00" if offsets else "2024-01-01T00:00:00Z"]):
        np.testing.assert_array_equal(cells.datetimes(pa.array(written + extra))[:len(written)], reference)


@pytest.mark.parametrize("edge", ["1677-09-20 23:08:37-0530", "2262-04-11T23:47:16+01:00", "1678-01-01T23:00:00Z"])
@pytest.mark.parametrize("beside", [["2024-01-01 00:00:00+00:00"], ["2024-01-01T00:00:00.123456789Z"], ["2024"],
                                    ["2024-01-01T00:00:00.123456789Z", "2024"]])  # Arrow; pandas in µs, in ns
def test_near_the_ends_of_the_range_a_datetime_is_none_whatever_its_column_holds(edge, beside):
    """Near the ends of ``datetime64[ns]``, pandas read ``1677-09-20 23:08:37-0530`` as an instant beside
    microsecond cells and as nothing beside a nanosecond one (the local time is out of range before its offset), and
    Arrow's cast read it: outside 1678-01-02 … 2262-04-10 every path reads no datetime, a Parquet timestamp too."""
    stamps = cells.datetimes(pa.array([edge, *beside]))
    assert np.isnat(stamps[0]) and not np.isnat(stamps[1:]).any() and np.isnat(_one_at_a_time(edge))
    typed = pa.array([_arrow_instant(edge), np.datetime64("2024-01-01", "ns")], type=pa.timestamp("ns"))
    assert np.isnat(cells.nanoseconds(typed.to_numpy())[0])


def _arrow_instant(cell: str) -> np.datetime64:
    return np.datetime64(pc.cast(pa.array([cell]), pa.timestamp("ns", tz="UTC"))[0].value, "ns")


def test_a_datetime_outside_the_nanosecond_range_is_none_not_wrapped_around():
    """pandas reads ``1000-01-01`` at microsecond resolution; a plain cast to nanoseconds wrapped it into 2169."""
    stamps = cells.datetimes(pa.array(["2024-01-01", "1000-01-01", "3000-01-01T00:00:00.123456789", "2024-02-30"]))
    assert stamps[0] == np.datetime64("2024-01-01", "ns") and np.isnat(stamps[1:]).all()


def _codes(values, declared, indices=False):
    return cells.key_codes(values, declared, indices=indices)[0].tolist()


def test_a_key_matches_by_its_text_then_by_its_whole_number_then_as_an_index():
    padded = ("01", "02")
    assert _codes(pa.array(["01", "02", "1", "2", "1.0", "True", "x", "3"]), padded, indices=True) == \
        [0, 1, 0, 1, 0, -1, -1, -1]
    assert _codes(np.array([1, 2, 3]), padded) == [0, 1, -1]  # an integer column written against padded labels
    names = ("M4.0-4.3", "M>=4.4")
    assert _codes(pa.array(["0", "1", "1.0", "+1", "-1", "0.5", "2", "True", "١", "99999999999999999999999"]),
                  names, indices=True) == [0, 1, 1, 1, -1, -1, -1, -1, -1, -1]
    assert _codes(pa.array(["0", "1"]), names) == [-1, -1]  # sequence keys are never indices


def test_typed_key_cells_read_as_a_csv_writer_writes_them():
    assert _codes(np.array([True, False]), ("0", "1")) == [1, 0]
    assert _codes(np.array([1.0, 0.0, 0.5, np.nan]), ("0", "1")) == [1, 0, -1, -1]
    assert cells.typed_key_text(np.array([3.0, 2.5, -1.0])).tolist() == ["3", "2.5", "-1"]


def test_a_key_that_names_two_declared_keys_by_value_is_only_an_index():
    assert _codes(pa.array(["001", "1"]), ("1", "01"), indices=True) == [1, 0]  # "001" is 1 = both: index 1


@pytest.mark.parametrize("text,value", [("1", 1), ("01", 1), ("+1", 1), ("1.0", 1), ("1e2", 100), ("-0", 0),
                                        ("1.5", None), ("x", None), ("١", None), ("1e99", None), ("nan", None)])
def test_whole_numbers_of_key_cells(text, value):
    assert cells.whole_number(text) == value


def test_a_column_is_typed_only_when_every_cell_parses():
    assert cells.typed_column(pa.array(["1", "2.5"])).tolist() == [1.0, 2.5]
    assert cells.is_text(cells.typed_column(pa.array(["1", "x"])))
    assert cells.is_text(cells.typed_column(pa.array(["1", "2024-01-01"])))  # a number and a datetime: text
    stamps = cells.typed_column(pa.array(["2024-01-01", "2024-01-02T10:00:00Z"]))
    assert stamps.dtype == np.dtype("datetime64[ns]")
    assert cells.typed_keys(pa.array(["01", "1", "01"])).tolist() == [1.0, 1.0, 1.0]


def test_the_ledger_key_of_rows_is_the_key_of_their_text_however_they_are_read(tmp_path):
    """The source key hashes the rows whose cells parse from their parsed values and the others from their text
    (``columns._columns_key``); the reference hashes every row from its text (``row_key``'s own text path). They agree
    on a file with a ragged row, bad times, bad and padded dimensions and datetimes, and a typed Parquet file of the
    same rows has the key of the CSV."""
    from dphawkes_core.data.io import source_key
    from dphawkes_core.data.row_key import row_lanes, rows_key

    rng = np.random.default_rng(5)
    rows = [[f"{t:.4f}", str(j), str(j % 2)] for t, j in zip(np.sort(rng.uniform(0, 50, 300)), rng.integers(0, 3, 300))]
    odd = [["abc", "1", "0"], ["nan", "0", "1"], ["", "1", "1"], ["5.5", "x", "0"], ["6.5", "0.50", "1"],
           ["7.5", "01", "0"], ["2024-01-01T00:00:01Z", "1", "0"], ["1e400", "1", "1"], ["8.5", "1e0", "1.0"]]
    text = "time,dimension,sequence\n" + "".join(",".join(r) + "\n" for r in rows + odd) + "1,2,3,4\n"
    (tmp_path / "odd.csv").write_text(text)
    cells_ = [*zip(*(rows + odd + [["", "", ""]]))]  # the ragged line: a row of empty cells
    reference = rows_key(row_lanes(*(np.array(c, dtype=object) for c in cells_)), len(cells_[0]))
    assert source_key(tmp_path / "odd.csv") == reference
    (tmp_path / "rows.csv").write_text("time,dimension,sequence\n" + "".join(",".join(r) + "\n" for r in rows))
    import pyarrow.parquet as pq

    typed = pa.table({"time": [float(r[0]) for r in rows], "dimension": [int(r[1]) for r in rows],
                      "sequence": [int(r[2]) for r in rows]})
    pq.write_table(typed, tmp_path / "rows.parquet")
    assert source_key(tmp_path / "rows.csv") == source_key(tmp_path / "rows.parquet")
