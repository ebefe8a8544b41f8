"""One row never changes how another row is read (issue 40, item 4).

A reader that inferred a column's type from its cells let one row retype the column: a CSV of ``0``/``1`` dimension
cells plus one row ``1000,True`` became a boolean column, every row fell outside the declared dimensions, and the
neighbour got a formal release of an empty data set (MAT quakes: 6,485 events → 0); zero-padded labels ``01, 02`` were
read as integers until one text row made the column text again. Property (Hypothesis, derandomized): a row of
arbitrary cells — booleans, zero-padded, signed and huge numbers, NaN and infinity, unicode, empty, quoted, ragged,
whitespace, bytes that are not UTF-8 — inserted anywhere in a data set leaves every other row's parsed values, the
release's shape and σ² unchanged on a CSV, on a Parquet file typed by its writer (Arrow's inference: the row may
retype the column) and on a Parquet file of text, and is counted once: one event more, or one row more dropped and
counted (a blank line is no row) — the event or the count the line has when read on its own.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

from dphawkes_cli.main import main
from dphawkes_core.data.domain import Domain
from dphawkes_core.data.io import load_csv, load_parquet
from dphawkes_core.errors import DataError
from dphawkes_core.estimators import FitConfig, fit_stats, prepare_stats
from dphawkes_core.statistics.partitioned import read_partition

END = 30.0
DOMAIN = Domain(dimensions=("0", "1"), sequences=("0", "1"))
PADDED = Domain(dimensions=("01", "02"), sequences=("0", "1"))
CONFIG = FitConfig(method="ssp", bin_size=1.0, lags=2, count_cap=2, epsilon=1.0, calibration="formal", seed=5)
HEADER = "time,dimension,sequence"
QUIRKY_MALFORMED = 7  # the row of the quirky base whose time is malformed
MAT = Path("/work/shared/data/mat_quakes_magnitude")

# cells a user's tools write, and cells that break them
ODD_CELLS = ["True", "False", "true", "TRUE", "0", "1", "01", "02", "001", "+1", "-1", "-0", "1.0", "1e0", "0.5", "2",
             "99999999999999999999999", "1e308", "1e400", "-1e400", "9" * 400, "nan", "NaN", "-nan", "inf", "-inf",
             "Infinity", "nan(1)", "", " ", "  1 ", "\t0", "١", "１", "é", "日本", "\u00a0", "\ufeff1", '"1.5"', '"0"',
             '"a,b"', '"x""y"', '"', '"1', 'a"b', "0x10", "1_000", "2024-01-01", "1,5", "\x00", "NA", "null", "#N/A"]
ONE_LINE = st.characters(exclude_characters="\n\r")  # a line break makes two lines: two rows (a test below)
CELL = st.one_of(st.sampled_from(ODD_CELLS), st.text(ONE_LINE, max_size=6),
                 st.floats(allow_nan=True, allow_infinity=True).map(repr), st.integers(-10**30, 10**30).map(str),
                 st.floats(0, END).map(lambda x: f"{x:.3f}"), st.sampled_from(["0", "1"]))
ROW = st.one_of(st.lists(CELL, min_size=3, max_size=3).map(",".join),
                st.lists(CELL, min_size=1, max_size=5).map(",".join),  # ragged when not three cells
                st.sampled_from(['"6.5,0,1', 'x"y,"z,1', "1000,True", "1000,True,0", "3.5,01,1", "", "   ", ",,",
                                 "4.5,1,1,", "5.5"]))
LINE = st.one_of(ROW.map(lambda row: row.encode()),
                 st.binary(max_size=8).map(lambda raw: b"4.5," + raw.replace(b"\n", b"").replace(b"\r", b"")
                                           + b",0"))  # not UTF-8 text
PROPERTY = settings(max_examples=40, derandomize=True, deadline=None, database=None,
                    suppress_health_check=[HealthCheck.too_slow])


def _base_rows(padded: bool = False) -> list[list[str]]:
    """Two sequences, two dimensions, times with three decimals on [0, 30] (a fixed sample)."""
    rng = np.random.default_rng(40)
    labels = ["01", "02"] if padded else ["0", "1"]
    return [[f"{t:.3f}", labels[int(rng.integers(2))], str(int(rng.integers(2)))]
            for t in np.sort(rng.uniform(0.1, END - 0.1, 60))]


def _csv_bytes(rows, inserted: bytes | None = None, at: int = 0, quirky: bool = False) -> bytes:
    """The rows as a CSV (``quirky``: some cells quoted or padded with spaces, as spreadsheets write them), with the
    line ``inserted`` before row ``at``."""
    lines = []
    for k, (t, j, s) in enumerate(rows):
        if quirky and k % 3 == 0:
            t, j = f'"{t}"', f" {j}"
        if quirky and k == QUIRKY_MALFORMED:
            t = f' "{t}"'  # a quote after a space is a character of the cell (RFC 4180): a malformed time
        lines.append(f"{t},{j},{s}".encode())
    if inserted is not None:
        lines.insert(at, inserted)
    return HEADER.encode() + b"\n" + b"\n".join(lines) + b"\n"


def _cells(csv_bytes: bytes) -> list[list[str]] | None:
    """The rows of a CSV as Arrow's parser reads its cells (text, unquoted); None unless three cells a row."""
    try:
        table = pacsv.read_csv(io.BytesIO(csv_bytes), read_options=pacsv.ReadOptions(column_names=["t", "d", "s"]),
                               convert_options=pacsv.ConvertOptions(column_types=dict.fromkeys("tds", pa.string())))
    except pa.ArrowInvalid:
        return None
    return [list(row) for row in zip(*(table.column(c).to_pylist() for c in "tds"))]


def _parquet_bytes(csv_bytes: bytes, as_text: bool, inserted: bytes | None = None, at: int = 0) -> bytes | None:
    """The CSV's rows (plus the line ``inserted`` before row ``at``, read on its own) as a Parquet file, typed by
    Arrow's inference as a writer does (``as_text``: every column text); None when the line is not three cells."""
    rows = _cells(csv_bytes.split(b"\n", 1)[1]) or []
    if inserted is not None:
        line = _cells(inserted + b"\n")
        if line is None or len(line) != 1:
            return None
        rows.insert(at, line[0])
    text = io.StringIO()
    csv.writer(text, lineterminator="\n").writerows([HEADER.split(","), *rows])  # quoted where a cell needs it
    columns = dict.fromkeys(HEADER.split(","), pa.string()) if as_text else None
    table = pacsv.read_csv(io.BytesIO(text.getvalue().encode()), convert_options=pacsv.ConvertOptions(
        column_types=columns), parse_options=pacsv.ParseOptions(newlines_in_values=True))
    assert table.num_rows == len(rows)
    sink = io.BytesIO()
    pq.write_table(table, sink)
    return sink.getvalue()


def _extra_events(events, base, alone=None) -> int:
    """How many events ``events`` holds beyond ``base`` (0 or 1), asserting every event of ``base`` is there with
    its value unchanged, bit for bit, and nothing else changed; with ``alone`` (the line read on its own), that the
    extra event is the one the line has on its own."""
    assert events.names == base.names and events.n_sequences == base.n_sequences
    extra = 0
    for s, (seq, ref) in enumerate(zip(events.sequences, base.sequences)):
        assert seq.end_time == ref.end_time and seq.start_time == ref.start_time
        for j, (times, expected) in enumerate(zip(seq.times, ref.times)):
            own = np.empty(0) if alone is None else alone.sequences[s].times[j]
            if len(times) == len(expected):
                np.testing.assert_array_equal(times, expected)
                assert alone is None or not len(own), (s, j, own)
                continue
            assert len(times) == len(expected) + 1
            k = int(np.argmax(np.append(times[:-1] != expected, True)))  # the first place they differ
            np.testing.assert_array_equal(np.delete(times, k), expected)
            assert alone is None or own.tolist() == [times[k]], (s, j, times[k], own)
            extra += 1
    return extra


def _release(events) -> tuple:
    stats, info = prepare_stats(events, CONFIG)
    result = fit_stats(stats, CONFIG)
    return result.kernels.shape, result.privacy.sigma2, info["n_bins"]


def _counted_once(events, base, line: bytes, what: str, release: bool = True, alone=None) -> None:
    """The line is one event more or one row more dropped and counted (a blank line: nothing), the other rows are
    read as without it, the line (given ``alone``: the line read on its own) as it is on its own, and
    (``release``) the formal release has the same shape, bins and σ²."""
    kept = _extra_events(events, base, alone)
    dropped = (events.outside_domain - base.outside_domain) + (events.outside_window - base.outside_window)
    blank = not line.decode("utf-8", errors="replace").strip()
    assert (kept, dropped) in ([(0, 0)] if blank else [(1, 0), (0, 1)]), (what, line, kept, dropped)
    if alone is not None:
        assert (kept, events.outside_domain - base.outside_domain, events.outside_window - base.outside_window) == \
            (alone.n_events, alone.outside_domain, alone.outside_window), (what, line)
    if release:
        assert _release(events) == _release(base), (what, line)


def _loads(rows, domain: Domain, inserted: bytes | None = None, at: int = 0, quirky: bool = False,
           **window) -> dict:
    """The rows with the line ``inserted`` before row ``at``, loaded from a CSV and from two Parquet files."""
    base = _csv_bytes(rows, quirky=quirky)
    out = {"csv": load_csv(_csv_bytes(rows, inserted, at, quirky), domain=domain, **window)}
    for name, as_text in (("parquet typed by its writer", False), ("parquet of text", True)):
        parquet = _parquet_bytes(base, as_text, inserted, at)
        if parquet is not None:
            out[name] = load_parquet(parquet, domain=domain, **window)
    return out


BASES = {(padded, quirky): _loads(_base_rows(padded), PADDED if padded else DOMAIN, quirky=quirky, end_time=END)
         for padded in (False, True) for quirky in (False, True)}


@PROPERTY
@given(line=LINE, position=st.integers(0, 60), padded=st.booleans(), quirky=st.booleans())
@example(line=b"1000,True,0", position=60, padded=False, quirky=False)  # the finding, at the end of the file
@example(line=b"3.5,True,1", position=5, padded=True, quirky=False)
@example(line=b"3.5,x,1", position=5, padded=True, quirky=False)  # a text row among padded labels
@example(line=b'"6.5,0,1', position=0, padded=False, quirky=True)  # a quote that swallowed the rows after it
@example(line=b'x"y,"z,1', position=3, padded=True, quirky=True)
@example(line=b"4.5,\xff\xfe,0", position=2, padded=False, quirky=True)  # not UTF-8
@example(line=b"2.5,0,1,9", position=1, padded=False, quirky=True)  # ragged
@example(line=b"   ", position=9, padded=False, quirky=False)  # no row
def test_an_arbitrary_row_changes_no_other_row_and_is_counted_once(line, position, padded, quirky):
    base = BASES[(padded, quirky)]
    assert base["csv"].n_events == 60 - quirky and base["csv"].outside_domain == quirky
    domain = PADDED if padded else DOMAIN
    loads = _loads(_base_rows(padded), domain, line, position, quirky, end_time=END)
    alone = _loads([], domain, line, end_time=END)  # the line on its own (a writer types it alone otherwise)
    for what, events in loads.items():  # the release (a fit: the slow part) on the CSV, the finding's path
        _counted_once(events, base[what], line, what, release=what == "csv",
                      alone=alone.get(what) if what != "parquet typed by its writer" else None)
    for what, events in base.items():  # every format reads the base rows alike, quirks and padding included
        assert _extra_events(events, base["csv"]) == 0, what


DATETIME_BASE = [[f"2024-01-01T{h:02d}:{m:02d}:{s:02d}Z", str((h + m) % 2), str(m % 2)]
                 for h, m, s in zip(range(0, 24), range(7, 60, 2), range(3, 60, 2))]
DATETIME_WINDOW = {"start_time": "2024-01-01", "end_time": "2024-01-02"}


@settings(max_examples=20, derandomize=True, deadline=None, database=None)
@given(line=LINE, position=st.integers(0, 24))
def test_on_a_datetime_axis_an_arbitrary_row_changes_no_other_row(line, position):
    """The time cells of a datetime axis are parsed one at a time too: a number, a date only (``2024-01-01``), a
    datetime with another offset or none, or a cell pandas alone reads changes no other row's instant."""
    base = _loads(DATETIME_BASE, DOMAIN, **DATETIME_WINDOW)
    assert base["csv"].n_events == len(DATETIME_BASE)
    alone = _loads([], DOMAIN, line, **DATETIME_WINDOW)
    for what, events in _loads(DATETIME_BASE, DOMAIN, line, position, **DATETIME_WINDOW).items():
        _counted_once(events, base[what], line, what, release=False,
                      alone=alone.get(what) if what != "parquet typed by its writer" else None)


@pytest.mark.parametrize("line", [b"2024-01-01,1,0", b"2024-01-01T12:00:00+05:00,0,1", b"2024-01-01 06:30,1,1",
                                  b"1000,0,0", b"2024,0,0", b"2023-12-31T23:00:00-02:00,1,0", b"1000-01-01,0,0"])
def test_datetime_rows_of_other_spellings_are_each_read_alone(line):
    base = load_csv(_csv_bytes(DATETIME_BASE), domain=DOMAIN, **DATETIME_WINDOW)
    alone = load_csv(_csv_bytes([], line), domain=DOMAIN, **DATETIME_WINDOW)
    _counted_once(load_csv(_csv_bytes(DATETIME_BASE, line, 5), domain=DOMAIN, **DATETIME_WINDOW), base, line, "csv",
                  alone=alone)


@settings(max_examples=20, derandomize=True, deadline=None, database=None)
@given(line=ROW.filter(lambda row: row.count(",") == 2 and '"' not in row and "\x00" not in row))
def test_a_partition_of_a_store_reads_an_arbitrary_row_without_changing_the_others(tmp_path_factory, line):
    """The partitioned store's reader (one partition, written by Arrow's inference) keeps the other rows' times,
    dimensions and sequences and drops and counts the row, or keeps it."""
    folder = tmp_path_factory.mktemp("store")
    rows = _base_rows()
    (folder / "base.parquet").write_bytes(_parquet_bytes(_csv_bytes(rows), as_text=False))
    parquet = _parquet_bytes(_csv_bytes(rows), False, line.encode(), 30)
    assume(parquet is not None)
    (folder / "row.parquet").write_bytes(parquet)
    times, dims, seqs, outside = read_partition(str(folder / "base.parquet"), DOMAIN)
    times2, dims2, seqs2, outside2 = read_partition(str(folder / "row.parquet"), DOMAIN)
    base = sorted(zip(times.tolist(), dims.tolist(), seqs.tolist()))
    other = sorted(zip(times2.tolist(), dims2.tolist(), seqs2.tolist()))
    kept = len(other) - len(base)
    assert (kept, outside2 - outside) in ((1, 0), (0, 1)), line
    if kept:
        other.remove(next(r for r in other if other.count(r) > base.count(r)))
    assert other == base, line


def _quakes_like(n: int = 2_000) -> bytes:
    """A simulated catalogue shaped as MAT quakes' events.csv: times in days with 8 decimals, dimensions 0/1."""
    rng = np.random.default_rng(6485)
    times = np.sort(rng.uniform(0, 17_500, n))
    return ("time,dimension\n" + "".join(f"{t:.8f},{int(d)}\n" for t, d in zip(times, rng.random(n) < 0.33))).encode()


def _mat_quakes() -> bytes:
    path = MAT / "events.csv"
    if not path.is_file():
        pytest.skip(f"{path} is absent (the real MAT quakes data set; see its PROVENANCE.md)")
    return path.read_bytes()


@pytest.mark.parametrize("source", ["simulated", "mat_quakes"])
@pytest.mark.parametrize("row", [b"1000,True", b"1000,true", b"1000,01", b"1000,1.0", b"1000,x", b"1000,\xff"])
def test_one_boolean_or_text_cell_leaves_the_released_events_identical(source, row):
    """The finding: ``1000,True`` appended to 0/1 dimensions under the declared bands (labels.csv) made the release
    empty (6,485 events → 0). Now the kept events are the same arrays, bit for bit, plus at most the row itself
    (``01``, ``1.0``: dimension 1), and the release's shape, bins and σ² are the same."""
    raw = _quakes_like() if source == "simulated" else _mat_quakes()
    domain = Domain(dimensions=("M4.0-4.3", "M>=4.4"))
    base = load_csv(raw, end_time=17_532, domain=domain)
    events = load_csv(raw + row + b"\n", end_time=17_532, domain=domain)
    assert base.n_events == (2_000 if source == "simulated" else 6_485) and base.outside_domain == 0
    _counted_once(events, base, row, source)
    assert events.n_events >= base.n_events


def test_the_cli_releases_mat_quakes_with_a_boolean_row_as_without_it(tmp_path):
    """Through the CLI, with the data set's labels.csv declaring the bands: the neighbour with ``1000,True`` gets the
    release of the same events (one row dropped and counted), the same shape and σ², where it got an empty one."""
    raw = _mat_quakes()
    payloads = []
    for name, content in (("base", raw), ("neighbour", raw + b"1000,True\n")):
        folder = tmp_path / name
        folder.mkdir()
        (folder / "events.csv").write_bytes(content)
        (folder / "labels.csv").write_bytes((MAT / "labels.csv").read_bytes())
        out = tmp_path / f"{name}.json"
        assert main(["fit", str(folder / "events.csv"), "--method", "ssp", "--bin-size", "30", "--lags", "2",
                     "--epsilon", "1", "--calibration", "formal", "--count-cap", "3", "--end-time", "17532",
                     "--json", str(out)]) == 0
        payloads.append(json.loads(out.read_text()))
    base, neighbour = payloads
    assert base["n_events"] == neighbour["n_events"] == 6_485 and base["binned_events"] == neighbour["binned_events"]
    assert neighbour["outside_domain"] == 1 and base["outside_domain"] == 0
    assert neighbour["sigma2"] == base["sigma2"] and np.shape(neighbour["kernels"]) == np.shape(base["kernels"])
    assert neighbour["formal_settings"] and base["formal_settings"]


@pytest.mark.parametrize("body", [b'1.5,0,0\n"8\n.5",1,1\n2.5,1,0\n', b'1.5,0,0\nx"y,"z,1\n2.5,1,0\n3.5,0,1\n'])
def test_a_quote_never_spans_lines(body):
    """A quoted line break or an unclosed quote in the middle of a field: each line is read on its own, so the rows
    after it are kept, and each broken line is one row dropped and counted."""
    events = load_csv(HEADER.encode() + b"\n" + body, end_time=END, domain=DOMAIN)
    broken = body.count(b"\n") - 2 if b'"8' in body else 1
    assert events.n_events == 2 + (b"3.5" in body) and events.outside_domain == broken


def test_a_line_longer_than_the_parsers_blocks_is_one_row():
    rows = _csv_bytes(_base_rows())
    long = b"4.5," + b"7" * 3_000_000 + b",0"
    base = load_csv(rows, end_time=END, domain=DOMAIN)
    _counted_once(load_csv(rows + long + b"\n", end_time=END, domain=DOMAIN), base, long, "csv")


def test_a_labels_file_keeps_its_labels_as_written(tmp_path):
    """A labels.csv is a declaration: ``01``, ``02`` stay as written (pandas' inference read them as 1 and 2), in
    the order of the dimension integers."""
    from dphawkes_core.data.io import load_labels

    (tmp_path / "labels.csv").write_text("dimension,label\n1,02\n0,01\n10,NA\n2,3.0\n")
    assert load_labels(tmp_path / "labels.csv") == ("01", "02", "3.0", "NA")


def test_the_sequence_keys_a_user_declares_are_the_cells_as_read(tmp_path):
    """The keys the app proposes for declaration are the declared-domain reader's keys: ``NA`` and ``03`` as written
    in a CSV (pandas made them NaN and kept ``03``), a Parquet integer column's keys as integers, a boolean one's as
    1 and 0."""
    from dphawkes_core.data.io import sequence_keys

    text = b"time,dimension,sequence\n1,0,NA\n2,0,03\n3,1,NA\n4,1, b \n"
    assert sequence_keys(text, parquet=False) == ("NA", "03", "b")
    sink = io.BytesIO()
    pq.write_table(pa.table({"time": [1.0, 2.0, 3.0], "dimension": [0, 1, 0], "sequence": [True, False, True]}), sink)
    assert sequence_keys(sink.getvalue(), parquet=True) == ("1", "0")
    assert sequence_keys(b"time,dimension\n1,0\n", parquet=False) is None


def test_csv_module_reference_reads_the_quirky_base_as_arrow_does():
    """An independent reference for the quirky base: Python's csv module (no initial-space skipping) reads the same
    cells, once stripped, as the CSV reader — ``"1.5"`` unquoted, `` 0`` a dimension 0, `` "1.5"`` (a quote after a
    space) not a number."""
    raw = _csv_bytes(_base_rows(), quirky=True)
    reference = [[c.strip() for c in row] for row in csv.reader(io.StringIO(raw.decode()))][1:]
    assert reference[QUIRKY_MALFORMED][0].startswith('"')
    del reference[QUIRKY_MALFORMED]
    events = load_csv(raw, end_time=END, domain=DOMAIN)
    got = sorted((round(float(t), 3), j) for s in events.sequences for j, ts in enumerate(s.times) for t in ts)
    assert got == sorted((float(t), int(j)) for t, j, _ in reference) and events.outside_domain == 1


def test_an_unclosed_quote_in_a_large_file_loses_no_other_row():
    """Arrow's parser, reading a file in blocks, silently dropped the lines after an unclosed quote up to the end of
    its block (on main, ``"5,0`` in the middle of a 10⁶-row file: 62,950 events gone, none counted). Each line is one
    row: the quote's line is dropped and counted, every other line kept."""
    rng = np.random.default_rng(63)
    times = np.sort(rng.uniform(0, END, 150_000))
    rows = b"".join(b"%.6f,%d\n" % (t, j) for t, j in zip(times, rng.integers(0, 2, times.size)))
    middle = rows.index(b"\n", len(rows) // 2) + 1
    domain = Domain(dimensions=("0", "1"))
    base = load_csv(b"time,dimension\n" + rows, end_time=END, domain=domain)
    events = load_csv(b"time,dimension\n" + rows[:middle] + b'"5,0\n' + rows[middle:], end_time=END, domain=domain)
    assert base.n_events == 150_000
    _counted_once(events, base, b'"5,0', "csv", release=False)


def test_lines_are_counted_as_the_line_splitter_counts_them():
    """The count that tells a row spanning lines (``csv_text._non_empty_lines``) against an independent reference:
    ``bytes.splitlines`` (``\\r\\n``, ``\\n`` and ``\\r`` end a line), empty lines left out."""
    from dphawkes_core.data.csv_text import _non_empty_lines

    rng = np.random.default_rng(13)
    for _ in range(3_000):
        data = bytes(rng.choice([10, 13, 97, 32, 34], int(rng.integers(0, 14))).astype(np.uint8))
        assert _non_empty_lines(data) == len([line for line in data.splitlines() if line]), data


def test_from_arrays_with_a_stated_window_drops_and_counts_what_it_cannot_use():
    """The array reader under a stated window [0, T] and its caller's dimensions: a time that is NaN or infinite is
    dropped and counted (it was refused), one before 0 or after T dropped and counted as outside the window."""
    from dphawkes_core.data.io import from_arrays

    base = from_arrays([[0.5, 3.0], [1.0]], end_time=10, names=["a", "b"])
    events = from_arrays([[0.5, np.nan, -1.0, 3.0, 11.0, np.inf], [1.0]], end_time=10, names=["a", "b"])
    assert _extra_events(events, base) == 0 and events.names == ("a", "b") and events.dimensions_declared
    assert (events.outside_domain, events.outside_window) == (2, 2) and events.window_stated
    with pytest.raises(DataError, match="finite"):
        from_arrays([[0.5, np.nan]])  # no stated window: read from the data, a bad time is refused
