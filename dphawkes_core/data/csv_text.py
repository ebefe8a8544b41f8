"""A CSV read as text cells, every line one row — what a declared-domain load reads (:mod:`~dphawkes_core.data.io`).

No cell's type is inferred here: every column is read as text by Arrow's CSV parser, and each cell is parsed on its
own afterwards (:mod:`~dphawkes_core.data.cells`). What one line holds never changes how another line is read:

* a line with another number of cells than the header is a **row of empty cells**, which the domain filter drops
  and counts (Arrow's parser skips it through ``invalid_row_handler``; blank and whitespace-only lines are not rows);
* a line that is not UTF-8 text is read with its bad bytes replaced (U+FFFD), so the rest of the file stays readable
  and the line's cells match nothing declared;
* **a quote never spans lines**: when a quoted cell would take a line break into a cell (an unclosed quote, a quoted
  line break), the lines are read in halves until no group of lines contains such a cell — so each line is read
  exactly as it is read on its own, and a line with an unclosed quote is a row (ragged, or with a malformed cell)
  that cannot swallow the lines after it. The common file (no quote spans lines) is one vectorised read;
* a line too long for the parser's blocks is read in a block of its own, and a line the parser still cannot read
  is a row of empty cells: no line refuses the file.
"""

from __future__ import annotations

import io


def header_end(raw: bytes) -> int:
    """The offset just after the header line: the first line that is not blank (its ``\\r\\n``, ``\\n`` or ``\\r``
    included)."""
    start = len(raw) - len(raw.lstrip())
    ends = [i for i in (raw.find(b"\n", start), raw.find(b"\r", start)) if i >= 0]
    if not ends:
        return len(raw)
    end = min(ends)
    return end + 2 if raw[end:end + 2] == b"\r\n" else end + 1


def text_columns(raw: bytes, header: list[str]) -> dict:
    """Every cell of a CSV's rows (after its header line) as text, one Arrow string column per header name; each line
    one row, a line that cannot be a row (module docstring) a row of empty cells."""
    import pyarrow as pa

    body = raw[header_end(raw):]
    if not _is_utf8(body):
        body = body.decode("utf-8", errors="replace").encode("utf-8")
    tables, bad = _read_lines(body, header)
    columns = {}
    for name in header:
        chunks = [chunk for table in tables for chunk in table.column(name).chunks]
        columns[name] = pa.chunked_array(chunks + [pa.array([""] * bad, type=pa.string())], type=pa.string())
    return columns


def strict_text_table(source, header: list[str]):
    """Every cell of a CSV as text (Arrow's parser, no type inferred), for loads without a declared domain: a file
    Arrow cannot parse (ragged rows, bytes that are not UTF-8) raises ``pyarrow.ArrowInvalid``."""
    import pyarrow.csv as pacsv

    return pacsv.read_csv(source, read_options=_read_options(header, skip_rows=1), convert_options=_convert(header))


def _read_lines(body: bytes, header: list[str]) -> tuple[list, int]:
    """The tables of ``body``'s lines and the number of lines that are not rows, reading halves until no cell holds a
    line break (a quote that spanned lines)."""
    table, bad, spanned = _read(body, header)
    if not spanned:
        return [table], bad
    return _read_halves(body.splitlines(), header)


def _read_halves(lines: list[bytes], header: list[str]) -> tuple[list, int]:
    if not lines:
        return [], 0
    table, bad, spanned = _read(b"\n".join(lines) + b"\n", header)
    if not spanned or len(lines) == 1:  # one line cannot span lines: it is read as it is on its own
        return [table], bad
    middle = len(lines) // 2
    first, first_bad = _read_halves(lines[:middle], header)
    second, second_bad = _read_halves(lines[middle:], header)
    return first + second, first_bad + second_bad


def _read(data: bytes, header: list[str]) -> tuple:
    """``(table, lines that are not rows, whether a row spanned lines)`` of one read of ``data``."""
    import pyarrow as pa
    import pyarrow.csv as pacsv

    for block_size in (None, len(data) + 1):  # a line longer than a block: read the data in one block
        skipped = []
        options = _read_options(header, skip_rows=0, block_size=block_size)
        parse = pacsv.ParseOptions(invalid_row_handler=lambda row, into=skipped: into.append(row.text) or "skip")
        try:
            table = pacsv.read_csv(io.BytesIO(data), read_options=options, parse_options=parse,
                                   convert_options=_convert(header))
        except pa.ArrowInvalid:
            continue
        not_rows = [text for text in skipped if text.strip()]  # a blank or whitespace-only line is no row
        return table, len(not_rows), b'"' in data and _spanned(data, table, skipped)
    empty = pa.table({name: pa.array([], type=pa.string()) for name in header})
    lines = [line for line in data.splitlines() if line.strip()]
    return empty, len(lines), len(lines) > 1  # unreadable: split further; one line: a row of empty cells


def _spanned(data: bytes, table, skipped: list[str]) -> bool:
    """Whether a row of one read took more than one line of ``data`` (which holds a quote): the rows read and skipped
    are not one per non-empty line. Each line is at most one row, so a row that took a line break into a cell — or
    the lines Arrow's parser drops silently after an unclosed quote, up to the end of its block — leaves fewer rows
    than lines."""
    return table.num_rows + len(skipped) != _non_empty_lines(data)


def _non_empty_lines(data: bytes) -> int:
    """The lines of ``data`` that are not empty (``\r\n``, ``\n`` and ``\r`` end a line), counted as Arrow's
    parser counts rows: an empty line is none."""
    import numpy as np

    buf = np.frombuffer(data, dtype=np.uint8)
    if not buf.size:
        return 0
    breaks = (buf == 10) | (buf == 13)
    ends = breaks.copy()
    ends[1:] &= ~((buf[1:] == 10) & (buf[:-1] == 13))  # the \n of a \r\n ends no line of its own
    empty = ends.copy()  # a line end right at the start or right after another line's break: an empty line
    empty[1:] &= breaks[:-1]
    return int(np.count_nonzero(ends) - np.count_nonzero(empty)) + int(not breaks[-1])


def _is_utf8(body: bytes) -> bool:
    if body.isascii():  # the usual event file, checked at memory speed
        return True
    try:
        body.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _read_options(header: list[str], skip_rows: int, block_size: int | None = None):
    """Arrow's reading options: the header's names, the rows to skip, and one thread — the project's policy for
    every library that can start threads (``docs/load.md``, BLAS threads): Arrow's reader on its pool of threads
    took twice the CPU of one thread at 10^5 events (0.066 s against 0.030) and 0.25 s against 0.18 s at 10^6, on
    the shared 2-core machine."""
    import pyarrow.csv as pacsv

    options = pacsv.ReadOptions(column_names=header, skip_rows=skip_rows, use_threads=False)
    if block_size is not None:
        options.block_size = max(block_size, options.block_size)
    return options


def _convert(header: list[str]):
    import pyarrow as pa
    import pyarrow.csv as pacsv

    return pacsv.ConvertOptions(column_types={name: pa.string() for name in header}, null_values=[],
                                strings_can_be_null=False, quoted_strings_can_be_null=False)
