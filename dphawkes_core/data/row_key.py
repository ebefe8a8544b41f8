"""The key of a source of events: a hash of its rows, whatever is declared about them.

A source's rows are the multiset of ``(sequence key, dimension value, instant)`` as the file holds them, before
any declaration, window or domain filter is applied:

* the sequence key and the dimension are their cells as text (:func:`~dphawkes_core.data.domain.key_text`: ``3``,
  ``3.0`` and ``"3"`` are one key), the sequence a fixed marker when the source has no ``sequence`` column;
* the instant is absolute: a datetime is its nanoseconds since the Unix epoch (UTC, whatever the notation), a
  number is read as seconds — so a file of Unix seconds and the same file written as ISO-8601 datetimes are the
  same rows. A number written with at most 9 decimals is resolved to its exact nanoseconds (each value on its
  own, :func:`_nanoseconds`); any other number (more decimals, beyond the year 2262, NaN) keeps its float bits,
  and a cell that is neither a number nor a datetime its text, each with its own tag.

So the dimension count and order, the names, the windows, the time unit and declared empty dimensions or keys
(everything a release may declare) do not enter the key; editing, adding or removing a row does. Every row is
mixed into a 64-bit word, and the word into four 64-bit lanes that add modulo 2⁶⁴ (:func:`row_lanes`): the key
does not depend on the row order, the file format or how a store is partitioned (the lanes of partitions add
up). It is an identifier for the privacy ledger, not a cryptographic commitment: rows could be crafted to
collide, which only makes two sources share one budget.

Besides the rows' key, the module holds the other identities of data the ledger reads (one home for the hash and
its mixer): :func:`data_fingerprint` (the ledger key of loaded events), :func:`events_fingerprint` (what a
declaration made of the rows: a release's identity), :func:`partitioned_rows_key` (a Parquet store's rows, the same
key as the rows in one file) and :func:`windowed_lanes`/:func:`windowed_key` (the lanes and key of a partitioned
store's in-window events, :func:`~dphawkes_core.statistics.partitioned.partitioned_fingerprint`).
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from dphawkes_core.data.domain import key_text
from dphawkes_core.errors import DataError

if TYPE_CHECKING:
    from dphawkes_core.data.events import Events

KEY_PREFIX = "rows-"
_LANE_SALTS = np.array([0x9E3779B97F4A7C15, 0xC2B2AE3D27D4EB4F, 0x165667B19E3779F9, 0x27D4EB2F165667C5],
                       dtype=np.uint64)  # four independent 64-bit lanes of the multiset hash
_TAGS = {"ns": np.uint64(0x51A7E5D1C0FFEE01), "float": np.uint64(0x0F10A7B175C0DE02),
         "text": np.uint64(0x7E47CE11DEADBE03)}
_NO_SEQUENCE = "\x00no sequence column"
_MAX_SECONDS = 9.2e9  # nanoseconds stay inside int64
_CHUNK = 1 << 18


def no_lanes() -> np.ndarray:
    """The lanes of no rows (the start of a sum)."""
    return np.zeros(_LANE_SALTS.size, dtype=np.uint64)


def rows_key(lanes: np.ndarray, n_rows: int) -> str:
    """The source key from the summed lanes of all its rows and their number."""
    digest = hashlib.sha256(b"dphawkes-rows-v1")
    digest.update(np.asarray(lanes, dtype=np.uint64).tobytes())
    digest.update(np.int64(n_rows).tobytes())
    return KEY_PREFIX + digest.hexdigest()


def row_lanes(times, dimensions, sequences=None) -> np.ndarray:
    """The four lanes summed over rows ``(sequence, dimension, time)`` given as columns.

    Parameters
    ----------
    times : array-like
        Numbers, ``datetime64`` values or text cells (a NumPy array or a pandas Series).
    dimensions, sequences : array-like
        The cells of those columns (numbers or text); ``sequences=None``: the source has no sequence column.
    """
    time_words = _time_words(times)
    dims = _text_hashes(_as_array(dimensions))
    seqs = (np.full(len(time_words), _string_hash(_NO_SEQUENCE), dtype=np.uint64) if sequences is None
            else _text_hashes(_as_array(sequences)))
    lanes = no_lanes()
    for start in range(0, len(time_words), _CHUNK):  # bounded memory: four lanes of one chunk at a time
        rows = slice(start, start + _CHUNK)
        row = _mix(_mix(_mix(time_words[rows]) ^ dims[rows]) ^ seqs[rows])  # one word per row
        lanes += _mix(row[None, :] ^ _LANE_SALTS[:, None]).sum(axis=1, dtype=np.uint64)  # wraps modulo 2⁶⁴
    return lanes


def events_row_lanes(events) -> tuple[np.ndarray, int]:
    """Lanes and row count of events that were not read from a source (a simulation, :func:`from_arrays`): their
    rows are ``(sequence index, dimension index, window start + time)``, as :func:`~dphawkes_core.data.io.save_csv`
    writes them for events starting at 0."""
    lanes, n_rows = no_lanes(), 0
    several = events.n_sequences > 1
    for s, seq in enumerate(events.sequences):
        for j, times in enumerate(seq.times):
            if len(times):
                absolute = np.asarray(times, dtype=np.float64) + seq.start_time
                lanes += row_lanes(absolute, np.full(len(times), j), np.full(len(times), s) if several else None)
                n_rows += len(times)
    return lanes, n_rows


def data_fingerprint(events: Events) -> str:
    """The ledger key of the events' source: the key of its rows, the same for every declaration, window, time unit
    or sub-domain of them; computed from the events themselves when they were not read from a source (a
    simulation)."""
    return events.source_key or rows_key(*events_row_lanes(events))


def events_fingerprint(events: Events) -> str:
    """SHA-256 of the loaded events — d, every sequence's window and event times (dimension names are labels,
    not data): what a declaration made of the rows. The identity of a release's statistics (its request, the
    app's caches) and the key of a format-2 ledger."""
    digest = hashlib.sha256()
    digest.update(np.int64(events.dim).tobytes())
    for seq in events.sequences:
        digest.update(np.float64([seq.start_time, seq.end_time]).tobytes())
        for times in seq.times:
            digest.update(np.int64(len(times)).tobytes())
            digest.update(np.ascontiguousarray(times, dtype=np.float64).tobytes())
    return digest.hexdigest()


# --- a partitioned store -----------------------------------------------------------------------------------------


def partitioned_rows_key(paths, executor=None) -> str:
    """The privacy ledger's key of a partitioned store: the key of every row of every partition (the lanes add over
    partitions), whatever is declared about them — the same as the key of those rows in one CSV or Parquet file, so
    a store and its copy share one budget. ``executor``: any ``concurrent.futures``-style executor for the map
    step (:func:`partition_rows`), or ``None`` for this process."""
    mapped = list(map(partition_rows, paths) if executor is None else executor.map(partition_rows, paths))
    return rows_key(sum((lanes for lanes, _ in mapped), no_lanes()), sum(n for _, n in mapped))


def partition_rows(path: str) -> tuple[np.ndarray, int]:
    """Map step of :func:`partitioned_rows_key`: the lanes and the number of one partition's rows, as stored
    (none dropped or refused)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    name = Path(path).name
    try:
        table = pq.read_table(path)
    except (pa.ArrowException, OSError) as exc:
        raise DataError(f"{name}: not a readable Parquet file ({str(exc).splitlines()[0]})") from None
    columns = {str(c).strip().lower(): table.column(c) for c in table.column_names}
    if "time" not in columns or "dimension" not in columns:
        raise DataError(f"{name}: expected columns time,dimension[,sequence]")
    raw = {c: _stored_values(columns[c]) for c in ("time", "dimension", "sequence") if c in columns}
    return row_lanes(raw["time"], raw["dimension"], raw.get("sequence")), table.num_rows


def _stored_values(column) -> np.ndarray:
    """A column's cells: numbers (missing as NaN; booleans as 1 and 0, as every reader reads them:
    :func:`~dphawkes_core.data.io.table_columns`), datetimes, or text (missing as empty)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if pa.types.is_boolean(column.type):
        column = column.cast(pa.float64())
    if pa.types.is_integer(column.type) or pa.types.is_floating(column.type):
        return column.to_numpy(zero_copy_only=False).astype(np.float64)
    if pa.types.is_timestamp(column.type) or pa.types.is_date(column.type):
        return column.cast(pa.timestamp("ns")).to_numpy().astype("datetime64[ns]")
    return pc.fill_null(column.cast(pa.string()), "").to_numpy(zero_copy_only=False).astype(object)


def windowed_lanes(sequences) -> np.ndarray:
    """The four lanes summed over the in-window events of ``sequences`` — ``(key, per_dim)`` pairs, ``per_dim[j]``
    the times of dimension j —: the map step of a partitioned store's windowed fingerprint (each event mixed with
    its dimension and its sequence key's hash; the lanes add modulo 2⁶⁴ over partitions)."""
    lanes = no_lanes()
    for key, per_dim in sequences:
        seq_hash = np.uint64(int.from_bytes(hashlib.sha256(repr(key).encode()).digest()[:8], "little"))
        for dim, times in enumerate(per_dim):
            bits = np.ascontiguousarray(times, dtype=np.float64).view(np.uint64)
            mixed = _mix(_mix(_mix(bits[None, :] ^ _LANE_SALTS[:, None]) ^ np.uint64(dim)) ^ seq_hash)
            lanes += mixed.sum(axis=1, dtype=np.uint64)  # arrays: the sums wrap modulo 2⁶⁴
    return lanes


def windowed_key(lanes: np.ndarray, start: float, dim: int, ends: dict) -> str:
    """The windowed fingerprint (``partitions-…``) of a store's in-window events from their summed
    :func:`windowed_lanes` and the window: its start, d and each sequence's end."""
    digest = hashlib.sha256(b"dphawkes-partitions-v1")
    digest.update(np.float64([start, dim]).tobytes())
    for key in sorted(ends, key=repr):
        digest.update(f"{key!r}={ends[key]!r};".encode())
    digest.update(np.asarray(lanes, dtype=np.uint64).tobytes())
    return "partitions-" + digest.hexdigest()


def _as_array(column) -> np.ndarray:
    return column.to_numpy() if hasattr(column, "to_numpy") else np.asarray(column)


def _time_words(times) -> np.ndarray:
    """One tagged 64-bit word per time cell (see the module docstring)."""
    values = _as_array(times)
    if np.issubdtype(values.dtype, np.datetime64):
        return values.astype("datetime64[ns]").view(np.int64).view(np.uint64) ^ _TAGS["ns"]
    if values.dtype.kind in "iuf":
        return _number_words(values.astype(np.float64))
    return _text_time_words(values.astype(str))


def _number_words(values: np.ndarray) -> np.ndarray:
    ns, exact = _nanoseconds(values)
    if exact.all():
        return ns.view(np.uint64) ^ _TAGS["ns"]
    floats = np.where(np.isnan(values), np.nan, values + 0.0)  # one NaN, and -0.0 as 0.0
    return np.where(exact, ns.view(np.uint64) ^ _TAGS["ns"], floats.view(np.uint64) ^ _TAGS["float"])


def _nanoseconds(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(ns, exact)``: each number's nanoseconds when it is a decimal with at most 9 decimals (the smallest such
    k: while ``|x|·10^k ≤ 2⁵¹`` one decimal rounds to x, so the check ``m/10^k == x`` finds it)."""
    whole_column = _column_nanoseconds(values)
    if whole_column is not None:
        return whole_column, np.ones(values.shape, dtype=bool)
    ns, exact = np.zeros(values.shape, dtype=np.int64), np.zeros(values.shape, dtype=bool)
    todo = np.flatnonzero(np.isfinite(values) & (np.abs(values) < _MAX_SECONDS))
    for k in range(10):
        scale = 10.0**k
        todo = todo[np.abs(values[todo]) * scale <= 2.0**51]
        m = np.rint(values[todo] * scale)
        hit = m / scale == values[todo]
        ns[todo[hit]] = m[hit].astype(np.int64) * 10 ** (9 - k)
        exact[todo[hit]] = True
        todo = todo[~hit]
    return ns, exact


def _column_nanoseconds(values: np.ndarray) -> np.ndarray | None:
    """The fast path of :func:`_nanoseconds`: one k for the whole column (the smallest that a sample and then every
    value pass), or ``None``. Each value's own smallest k then gives the same nanoseconds (one decimal per value)."""
    if not values.size or not bool(np.all(np.isfinite(values) & (np.abs(values) < _MAX_SECONDS))):
        return None
    biggest, sample = float(np.abs(values).max()), values[:: max(1, values.size // 1000)]
    for k in range(10):
        scale = 10.0**k
        if biggest * scale > 2.0**51:
            return None
        if np.array_equal(np.rint(sample * scale) / scale, sample):
            m = np.rint(values * scale)
            return m.astype(np.int64) * 10 ** (9 - k) if np.array_equal(m / scale, values) else None
    return None


def _text_time_words(cells: np.ndarray) -> np.ndarray:
    """Text cells: numbers as numbers, ISO-8601 datetimes as instants, anything else as its text."""
    import pandas as pd

    stripped = pd.Series(cells, dtype=object).astype(str).str.strip()
    numbers = pd.to_numeric(stripped, errors="coerce").to_numpy(dtype=float)
    is_number = ~np.isnan(numbers) | stripped.str.lower().isin(["nan", "+nan", "-nan"]).to_numpy()
    words = _number_words(numbers)
    rest = ~is_number
    if rest.any():
        stamps = pd.to_datetime(stripped[rest], errors="coerce", utc=True, format="ISO8601")
        parsed = ~stamps.isna().to_numpy()
        ns = stamps.to_numpy(dtype="datetime64[ns]").view(np.int64)
        text = _text_hashes(stripped[rest].to_numpy()) ^ _TAGS["text"]
        words[rest] = np.where(parsed, ns.view(np.uint64) ^ _TAGS["ns"], text)
    return words


def _text_hashes(values: np.ndarray) -> np.ndarray:
    """A 64-bit hash of each cell's key text (one SHA-256 per distinct value)."""
    if values.dtype != object and values.dtype.kind not in "US":
        uniques, inverse = _distinct_numbers(values)  # numbers: distinct values, then their text
    else:
        import pandas as pd

        inverse, uniques = pd.factorize(pd.Series(values, dtype=object), sort=False, use_na_sentinel=False)
        uniques = np.asarray(uniques, dtype=object)
    keys = _key_cells(uniques)
    hashed = np.fromiter((_string_hash(str(k)) for k in keys), dtype=np.uint64, count=len(keys))
    return hashed[np.asarray(inverse).ravel()]


def _distinct_numbers(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(uniques, inverse)`` of numeric cells: by counting when they are whole numbers in a small range (the
    usual dimension and sequence columns, O(n)), else by sorting."""
    if values.size and (values.dtype.kind in "iu" or bool(np.all(np.isfinite(values) & (values == np.round(values))
                                                                 & (np.abs(values) < 2.0**62)))):  # int64-exact
        whole = values.astype(np.int64)
        low, high = int(whole.min()), int(whole.max())
        if high - low < 1 << 22:
            present = np.zeros(high - low + 1, dtype=bool)
            present[whole - low] = True
            return np.flatnonzero(present) + low, (np.cumsum(present) - 1)[whole - low]
    return np.unique(values, return_inverse=True)


def _key_cells(values: np.ndarray) -> np.ndarray:
    """Cells as key text, typed or not: a whole number is written without a decimal point (``3``, ``3.0`` and
    ``"3.0"`` are one key), anything else as its stripped text."""
    if values.dtype != object and values.dtype.kind not in "US":
        return key_text(values)
    import pandas as pd

    text = np.char.strip(values.astype(str))
    numbers = pd.to_numeric(pd.Series(text), errors="coerce").to_numpy(dtype=float)
    whole = np.isfinite(numbers) & (numbers == np.round(numbers)) & (np.abs(numbers) < 2.0**63)
    return np.where(whole, key_text(np.where(whole, numbers, 0.0)), text)


def _string_hash(text: str) -> np.uint64:
    return np.uint64(int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little"))


def _mix(x: np.ndarray) -> np.ndarray:
    """SplitMix64's finaliser on every entry (a bijection of 64-bit words; products wrap modulo 2⁶⁴)."""
    x = x ^ (x >> np.uint64(30))
    x = x * np.uint64(0xBF58476D1CE4E5B9)
    x = x ^ (x >> np.uint64(27))
    x = x * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))
