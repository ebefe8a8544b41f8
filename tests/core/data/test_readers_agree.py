"""Every reader drops what it cannot use, the same way.

With a declared domain, a row whose time is NaN, infinite or missing, whose dimension is −1, 0.5, missing or
undeclared, or whose sequence key is missing or undeclared, is dropped and counted — on a CSV, a Parquet file, a
partitioned store read in this process and the same store mapped over Dask — never refused (a refusal, exit 2, tells
the one-row neighbours apart: ε = ∞). Property: malformed rows injected at random into random partitions give, on
every path, the statistics, output shape and σ² of the same data without them, and the counts of what was dropped
that were injected. Item 10: the declared dimensions include one without rows at random, and d stays declared.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from dphawkes_cli.main import main
from dphawkes_core.data.domain import Domain
from dphawkes_core.data.io import load_csv, load_parquet
from dphawkes_core.estimators import FitConfig, fit_stats, prepare_partitioned, prepare_stats
from dphawkes_core.statistics.partitioned import partitioned_window

DELTA, LAGS, CAP = 1.0, 2, 2
NAN, INF = float("nan"), float("inf")

# each kind of malformed row: (time, dimension, sequence) given a valid time t, dimension j, key s and the declared
# d and S (None: a missing value); and what it is counted as
MALFORMED = {
    "NaN time": (lambda t, j, s, d, S: (NAN, j, s), "domain"),
    "infinite time": (lambda t, j, s, d, S: (INF, j, s), "domain"),
    "minus infinite time": (lambda t, j, s, d, S: (-INF, j, s), "domain"),
    "missing time": (lambda t, j, s, d, S: (None, j, s), "domain"),
    "dimension -1": (lambda t, j, s, d, S: (t, -1, s), "domain"),
    "dimension 0.5": (lambda t, j, s, d, S: (t, 0.5, s), "domain"),
    "undeclared dimension": (lambda t, j, s, d, S: (t, d, s), "domain"),
    "missing dimension": (lambda t, j, s, d, S: (t, None, s), "domain"),
    "undeclared sequence": (lambda t, j, s, d, S: (t, j, S + 4), "domain"),
    "missing sequence": (lambda t, j, s, d, S: (t, j, None), "domain"),
    "time before the window": (lambda t, j, s, d, S: (-1.25, j, s), "window"),
    "time after the window": (lambda t, j, s, d, S: (t + 1e3, j, s), "window"),
}


def _clean_rows(rng, d: int, n_seq: int, end: float) -> list[tuple]:
    """Events of ``n_seq`` sequences on ``[0, end]``, in the first dimensions only: the last declared dimension
    often has no rows (item 10)."""
    used = int(rng.integers(1, d + 1))
    rows = []
    for s in range(n_seq):
        for j in range(used):
            times = np.round(np.sort(rng.uniform(0, end, int(rng.poisson(end * 1.2)))), 3)
            rows += [(float(t), j, s) for t in times]
    return sorted(rows, key=lambda r: (r[2], r[0]))


def _inject(rng, rows: list[tuple], d: int, n_seq: int, count: int) -> tuple[list[list[tuple]], dict]:
    """``rows`` cut into random contiguous partitions (each sequence's time ranges stay disjoint), with ``count``
    malformed rows of random kinds at random places in random partitions; the counts injected."""
    cuts = np.sort(rng.choice(np.arange(1, len(rows)), size=min(len(rows) - 1, int(rng.integers(1, 5))),
                              replace=False))
    parts = [list(p) for p in np.split(np.array(rows, dtype=object), cuts)]
    injected = {"domain": 0, "window": 0}
    kinds = list(MALFORMED)
    for _ in range(count):
        make, what = MALFORMED[kinds[int(rng.integers(len(kinds)))]]
        t, j, s = rows[int(rng.integers(len(rows)))]
        part = parts[int(rng.integers(len(parts)))]
        part.insert(int(rng.integers(len(part) + 1)), tuple(make(t, j, s, d, n_seq)))
        injected[what] += 1
    return [[tuple(r) for r in p] for p in parts], injected


def _write_partition(path, rows) -> None:
    t, j, s = (list(c) for c in zip(*rows)) if rows else ([], [], [])
    pq.write_table(pa.table({"time": pa.array(t, pa.float64()), "dimension": pa.array(j, pa.float64()),
                             "sequence": pa.array(s, pa.int64())}), path)


def _cell(value) -> str:
    """A CSV cell as a user's tool writes it: empty when missing, ``nan``/``inf``/``-inf``, whole numbers without a
    point, other numbers exactly (``repr``)."""
    if value is None:
        return ""
    if isinstance(value, float) and math.isfinite(value) and value == int(value):
        return str(int(value))
    return repr(value) if isinstance(value, float) and math.isfinite(value) else str(value)


def _write_csv(path, rows) -> None:
    path.write_text("time,dimension,sequence\n" + "".join(",".join(_cell(v) for v in row) + "\n" for row in rows))


def _store(folder, parts) -> dict:
    """The same rows as a CSV, one Parquet file (several row groups) and a partitioned store."""
    folder.mkdir()
    rows = [r for p in parts for r in p]
    _write_csv(folder / "all.csv", rows)
    t, j, s = zip(*rows)
    pq.write_table(pa.table({"time": pa.array(t, pa.float64()), "dimension": pa.array(j, pa.float64()),
                             "sequence": pa.array(s, pa.int64())}), folder / "all.parquet", row_group_size=7)
    (folder / "store").mkdir()
    for k, part in enumerate(parts):
        _write_partition(folder / "store" / f"part-{k:02d}.parquet", part)
    return {"csv": folder / "all.csv", "parquet": folder / "all.parquet",
            "store": sorted(str(p) for p in (folder / "store").glob("*.parquet"))}


def _config(method: str) -> FitConfig:
    return FitConfig(method=method, bin_size=DELTA, lags=LAGS, count_cap=CAP, epsilon=1.0, calibration="formal",
                     seed=11)


def _every_path(files, names, keys, end, config, executor) -> dict:
    """``(stats, counts)`` of each path: CSV and Parquet in process, the store in process and on Dask."""
    domain = Domain(dimensions=names, sequences=keys)
    out = {}
    for path, load in (("csv", load_csv), ("parquet", load_parquet)):
        events = load(files[path], end_time=end, domain=domain)
        stats, info = prepare_stats(events, config)
        out[path] = stats, {**info, "outside_window": events.outside_window, "dim": events.dim}
    for path, where in (("store", None), ("dask", executor)):
        window = partitioned_window(files["store"], where, end_time=end, dimensions=names, sequences=keys)
        stats, info = prepare_partitioned(files["store"], config, window, where)
        out[path] = stats, {**info, "dim": window.dim}
    return out


COUNTS = ("n_bins", "n_events", "binned_events", "dropped_events", "clipped_events", "skipped_sequences",
          "outside_domain", "outside_window", "dim")


def _same_statistics(stats, reference, what: str) -> None:
    np.testing.assert_allclose(stats.A, reference.A, rtol=1e-12, atol=1e-13, err_msg=what)
    np.testing.assert_allclose(stats.b, reference.b, rtol=1e-12, atol=1e-13, err_msg=what)
    for field in ("n_rows", "dim", "lags", "skipped_sequences"):
        assert getattr(stats, field) == getattr(reference, field), (what, field)
    if stats.pieces is not None:  # the binned moment pieces: integer sums, equal bit for bit
        for field in ("lagged", "totals", "heads", "tails", "n_bins"):
            np.testing.assert_array_equal(getattr(stats.pieces, field), getattr(reference.pieces, field),
                                          err_msg=f"{what} {field}")


@pytest.fixture(scope="module")
def executor():
    """A 2-worker Dask LocalCluster (threads: quick to start); the Dask extra is installed."""
    pytest.importorskip("distributed", reason="the [dask] extra is not installed")
    from distributed import Client, LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=":0",
                      scheduler_kwargs={"dashboard": False}) as cluster, Client(cluster) as client:
        yield client.get_executor(pure=False)


@pytest.mark.parametrize("method", ["ssp", "ctls"])  # binned moment pieces; exact event times
def test_malformed_rows_in_random_partitions_change_nothing_on_any_path(tmp_path, executor, method):
    rng = np.random.default_rng(27 if method == "ssp" else 72)
    config = _config(method)
    for trial in range(6):
        d, n_seq, end = int(rng.integers(1, 4)), int(rng.integers(1, 4)), float(rng.integers(12, 30))
        names, keys = tuple(str(j) for j in range(d)), tuple(str(s) for s in range(n_seq))
        rows = _clean_rows(rng, d, n_seq, end)
        clean_parts, _ = _inject(rng, rows, d, n_seq, 0)
        dirty_parts, injected = _inject(rng, rows, d, n_seq, int(rng.integers(1, 9)))
        clean = _every_path(_store(tmp_path / f"clean{trial}", clean_parts), names, keys, end, config, executor)
        dirty = _every_path(_store(tmp_path / f"dirty{trial}", dirty_parts), names, keys, end, config, executor)
        reference, reference_info = clean["csv"]
        released = fit_stats(reference, config)
        for path, (stats, info) in dirty.items():
            what = f"trial {trial}, {path}"
            _same_statistics(stats, reference, what)  # the statistics of the data without the malformed rows
            _same_statistics(clean[path][0], reference, what + " (clean)")
            assert info["outside_domain"] == injected["domain"], what
            assert info["outside_window"] == injected["window"], what
            assert info["dim"] == d and info["dimensions_declared"] and info["sequences_declared"], what
            for key in COUNTS[:6]:
                assert info[key] == reference_info[key], (what, key)
            result = fit_stats(stats, config)
            assert result.kernels.shape == released.kernels.shape == (d, d, LAGS), what
            assert result.privacy.sigma2 == released.privacy.sigma2, what


def _rows_text(rows) -> str:
    return "time,dimension,sequence\n" + "".join(f"{t},{j},{s}\n" for t, j, s in rows)


BASE = [(0.5 + 0.7 * k, k % 2, k % 3 // 2) for k in range(40)]  # two sequences, two dimensions, window [0, 30]
NEIGHBOURS = {"NaN time": "nan,0,0", "infinite time": "inf,1,1", "missing time": ",0,1", "dimension -1": "3.5,-1,0",
              "dimension 0.5": "4.5,0.5,1", "undeclared dimension": "5.5,7,0", "undeclared sequence": "6.5,0,9",
              "missing dimension": "7.5,,0"}


def _cli(target, out, *extra) -> tuple[int, dict | None]:
    argv = ["fit", str(target), "--method", "ssp", "--bin-size", "1", "--lags", "2", "--epsilon", "1",
            "--calibration", "formal", "--count-cap", "2", "--end-time", "30", "--dimensions", "2",
            "--sequences", "2", "--json", str(out), *extra]
    status = main(argv)
    return status, json.loads(out.read_text()) if status == 0 else None


def _as_files(folder, text: str) -> dict:
    """One data set as a CSV, a Parquet file and a two-partition store (cut by sequence), via pyarrow's CSV reader
    (so a malformed cell is stored as the CSV holds it: the columns become text where a cell is not a number)."""
    import pyarrow.csv as pacsv

    folder.mkdir()
    (folder / "d.csv").write_text(text)
    table = pacsv.read_csv(folder / "d.csv", convert_options=pacsv.ConvertOptions(
        null_values=[], strings_can_be_null=False))
    pq.write_table(table, folder / "d.parquet")
    (folder / "store").mkdir()
    half = table.num_rows // 2
    pq.write_table(table.slice(0, half), folder / "store" / "a.parquet")
    pq.write_table(table.slice(half), folder / "store" / "b.parquet")
    return {"csv": folder / "d.csv", "parquet": folder / "d.parquet", "store": folder / "store"}


@pytest.mark.parametrize("kind", sorted(NEIGHBOURS))
def test_a_one_row_neighbour_is_dropped_and_counted_by_the_cli_on_every_path(tmp_path, kind):
    """Through the real CLI: the data and its neighbour with one malformed row — in the middle of the rows, so in
    a partition with good rows — give exit 0 on every path, the same shape, σ² and bins, one row outside the
    domain."""
    rows = _rows_text(BASE)
    cut = rows.index("\n", len(rows) // 2) + 1
    base = _as_files(tmp_path / "base", rows)
    neighbour = _as_files(tmp_path / "neighbour", rows[:cut] + NEIGHBOURS[kind] + "\n" + rows[cut:])
    reference = None
    for path in ("csv", "parquet", "store"):
        status, ours = _cli(base[path], tmp_path / f"b-{path}.json")
        status_n, theirs = _cli(neighbour[path], tmp_path / f"n-{path}.json")
        assert status == status_n == 0, (kind, path)
        reference = reference or ours
        for payload in (ours, theirs):
            assert np.shape(payload["kernels"]) == np.shape(reference["kernels"]) == (2, 2, 2), (kind, path)
            assert payload["sigma2"] == reference["sigma2"] and payload["n_bins"] == reference["n_bins"] == 60
            assert payload["n_events"] == reference["n_events"] and payload["formal_settings"], (kind, path)
        assert ours["outside_domain"] == 0 and theirs["outside_domain"] == 1, (kind, path)


@pytest.mark.slow  # starts a LocalCluster of worker processes, as the CLI does
def test_the_cli_on_dask_drops_and_counts_as_the_csv_does(tmp_path):
    rows = _rows_text(BASE)
    bad = "".join(f"{line}\n" for line in NEIGHBOURS.values())
    files = _as_files(tmp_path / "data", rows + bad)
    status, one = _cli(files["csv"], tmp_path / "csv.json")
    status_dask, dask = _cli(files["store"], tmp_path / "dask.json", "--dask", "local")
    assert status == status_dask == 0
    assert dask["outside_domain"] == one["outside_domain"] == len(NEIGHBOURS)
    for key in ("n_bins", "n_events", "binned_events", "sigma2"):
        assert dask[key] == one[key], key
    assert np.shape(dask["kernels"]) == np.shape(one["kernels"])


@pytest.mark.parametrize("declare", ["--dimensions", "labels.csv"])
def test_a_declared_dimension_whose_only_row_is_removed_keeps_d(tmp_path, declare):
    """Item 10: d is the declared count on every path, also when the neighbour's only event of a declared dimension
    is gone (d read from the data would shrink the output and change σ²)."""
    rows = _rows_text(BASE)
    extra = "12.25,2,1\n"  # the only event of dimension 2
    declared = ("--dimensions", "3") if declare == "--dimensions" else ()
    payloads = []
    for name, text in (("with", rows + extra), ("without", rows)):
        files = _as_files(tmp_path / name, text)
        if declare == "labels.csv":
            for folder in (files["csv"].parent, files["store"]):
                (folder / "labels.csv").write_text("dimension,label\n0,a\n1,b\n2,c\n")
        for path in ("csv", "parquet", "store"):
            argv = ["fit", str(files[path]), "--method", "ssp", "--bin-size", "1", "--lags", "2", "--epsilon", "1",
                    "--calibration", "formal", "--count-cap", "2", "--end-time", "30", "--sequences", "2",
                    *declared, "--json", str(tmp_path / "out.json")]
            assert main(argv) == 0, (name, path)
            payloads.append((name, path, json.loads((tmp_path / "out.json").read_text())))
    for name, path, payload in payloads:
        assert np.shape(payload["kernels"]) == (3, 3, 2), (name, path)
        assert payload["sigma2"] == payloads[0][2]["sigma2"] and payload["n_bins"] == 60, (name, path)
        assert payload["formal_settings"] and payload["dimensions_declared"], (name, path)


def test_which_text_times_are_kept_follows_the_declared_window_not_a_count_of_rows():
    """A text time column: with a numeric window a number is kept and a datetime dropped, whatever most rows are
    (a majority of datetimes once made every number malformed, and then the release failed)."""
    good = "".join(f"{0.5 + k},{k % 2}\n" for k in range(3))
    for n_dates in (2, 3, 4):  # fewer, as many as and more datetimes than numbers
        text = "time,dimension\n" + good + "2024-01-01,0\n" * n_dates
        events = load_csv(text.encode(), end_time=10, domain=Domain(dimensions=("0", "1")))
        assert events.n_events == 3 and events.outside_domain == n_dates, n_dates


@pytest.mark.parametrize("neighbour", ["", "40,0,1\n", "3.5,5,1\n", "nan,0,1\n"])  # none; outside the window;
def test_data_with_no_row_in_the_declared_domain_are_released_not_refused(tmp_path, neighbour):  # or the domain
    """The neighbour of a one-row data set with no row left in the declared domain and window is a data set of
    empty sequences: released with the same shape, bins and σ² on every path, where it used to be refused
    ("no events")."""
    one = _as_files(tmp_path / "one", "time,dimension,sequence\n3.5,0,1\n")
    other = _as_files(tmp_path / "other", "time,dimension,sequence\n" + neighbour)
    for path in ("csv", "parquet", "store"):
        status, ours = _cli(one[path], tmp_path / "one.json")
        status_n, theirs = _cli(other[path], tmp_path / "other.json")
        assert status == status_n == 0, path
        assert np.shape(theirs["kernels"]) == np.shape(ours["kernels"]) == (2, 2, 2), path
        assert theirs["sigma2"] == ours["sigma2"] and theirs["n_bins"] == ours["n_bins"] == 60, path
        assert ours["n_events"] == 1 and theirs["n_events"] == 0 and theirs["formal_settings"], path


@pytest.mark.parametrize("row", [b"2.5,0,1,9", b"\xff\xfe,0,1", b"\x00,1,0", b"4.5", b"5.5,1", b'"6.5,0,1'],
                         ids=["too many cells", "not UTF-8", "NUL byte", "one cell", "two cells", "unclosed quote"])
def test_a_row_a_csv_cannot_parse_is_dropped_and_counted_under_a_declared_domain(tmp_path, row, capsys):
    """CSV rows Parquet cannot hold — ragged, not text, a quote that would swallow the rows after it — near the top
    of the file (inside the header check's first bytes): dropped and counted under a declared domain, refused in
    one line without one."""
    rows = _rows_text(BASE).encode()
    head_end = rows.index(b"\n") + 1
    base, neighbour = tmp_path / "base.csv", tmp_path / "neighbour.csv"
    base.write_bytes(rows)
    neighbour.write_bytes(rows[:head_end] + row + b"\n" + rows[head_end:])
    (status, ours), (status_n, theirs) = (_cli(p, tmp_path / f"{p.stem}.json") for p in (base, neighbour))
    assert status == status_n == 0
    assert theirs["outside_domain"] == 1 and ours["outside_domain"] == 0
    assert theirs["sigma2"] == ours["sigma2"] and np.shape(theirs["kernels"]) == np.shape(ours["kernels"])
    assert theirs["n_events"] == ours["n_events"] and theirs["formal_settings"]
    capsys.readouterr()
    assert main(["fit", str(neighbour), "--bin-size", "1", "--lags", "2", "--end-time", "30"]) == 2
    assert capsys.readouterr().err.count("\n") == 1


@pytest.mark.parametrize("method", ["ssp", "ctls"])
def test_one_row_moved_into_another_partitions_time_range_changes_nothing(tmp_path, executor, method):
    """A store whose partitions of one sequence overlap in time — one row moved from its partition into another
    one's time range — gives on every path the statistics, counts, output shape and σ² of the same rows read as one
    file, never a refusal (which one moved row would trigger: ε = ∞)."""
    rng = np.random.default_rng(270 if method == "ssp" else 720)
    config = _config(method)
    overlapping = 0
    for trial in range(5):
        d, n_seq, end = int(rng.integers(1, 4)), int(rng.integers(1, 4)), float(rng.integers(12, 30))
        names, keys = tuple(str(j) for j in range(d)), tuple(str(s) for s in range(n_seq))
        rows = _clean_rows(rng, d, n_seq, end)
        parts, _ = _inject(rng, rows, d, n_seq, 0)
        source = int(rng.integers(len(parts)))
        while len(parts[source]) < 2:
            source = int(rng.integers(len(parts)))
        moved = parts[source].pop(int(rng.integers(len(parts[source]))))
        same = [k for k, part in enumerate(parts) if k != source and any(r[2] == moved[2] for r in part)]
        target = int(rng.choice(same)) if same else int(rng.integers(len(parts)))  # where its sequence has rows
        parts[target].insert(int(rng.integers(len(parts[target]) + 1)), moved)
        files = _store(tmp_path / f"moved{trial}", parts)
        window = partitioned_window(files["store"], end_time=end, dimensions=names, sequences=keys)
        overlapping += bool(window.gathered)
        every = _every_path(files, names, keys, end, config, executor)
        reference, reference_info = every["csv"]
        released = fit_stats(reference, config)
        for path, (stats, info) in every.items():
            what = f"trial {trial}, {path}, row {moved} into partition {target}, gathered {sorted(window.gathered)}"
            _same_statistics(stats, reference, what)
            for key in COUNTS:
                assert info[key] == reference_info[key], (what, key)
            result = fit_stats(stats, config)
            assert result.kernels.shape == released.kernels.shape == (d, d, LAGS), what
            assert result.privacy.sigma2 == released.privacy.sigma2, what
    assert overlapping >= 2  # the moved row did make partitions of a sequence overlap


def test_the_cli_fits_a_store_with_a_row_moved_into_overlap_as_the_csv(tmp_path):
    """Through the real CLI: the last row of the first partition moved into the second (whose times overlap it now)
    gives exit 0 and the CSV's output (shape, σ², bins, events)."""
    rows = _rows_text(BASE).splitlines(keepends=True)
    header, body = rows[0], rows[1:]
    files = _as_files(tmp_path / "data", header + "".join(body))
    import pyarrow.csv as pacsv

    table = pacsv.read_csv(files["csv"])
    half = table.num_rows // 2
    moved = int(np.argmax(table.column("sequence").to_numpy()[:half] == 0))  # a row of sequence 0, early
    keep = [k for k in range(half) if k != moved]
    pq.write_table(table.take(keep), files["store"] / "a.parquet")
    pq.write_table(pa.concat_tables([table.slice(half), table.take([moved])]), files["store"] / "b.parquet")
    status, one = _cli(files["csv"], tmp_path / "csv.json")
    status_store, store = _cli(files["store"], tmp_path / "store.json")
    assert status == status_store == 0
    for key in ("n_bins", "n_events", "binned_events", "sigma2", "outside_domain"):
        assert store[key] == one[key], key
    assert np.shape(store["kernels"]) == np.shape(one["kernels"]) == (2, 2, 2)


# one-row neighbours whose cell used to retype its whole column (issue 40, item 4): the row, and whether a declared
# domain keeps it (True: dimension 1 or 0) on a CSV; a writer that infers a boolean column keeps ``True`` as 1
RETYPING = {"boolean dimension": ("8.5,True,0", False), "lowercase boolean": ("8.5,false,1", False),
            "zero-padded dimension": ("9.5,01,1", True), "float-written dimension": ("10.25,1.0,1", True),
            "boolean time": ("True,0,1", False), "unicode digit dimension": ("10.5,١,0", False),
            "huge dimension": ("11.5,99999999999999999999999,1", False), "padded sequence": ("12.5,0,01", True)}


@pytest.fixture(scope="module")
def base_releases(tmp_path_factory) -> dict:
    """The CLI's release of :data:`BASE` on each path (computed once for the neighbours below)."""
    folder = tmp_path_factory.mktemp("retyping")
    files = _as_files(folder / "base", _rows_text(BASE))
    return {path: _cli(files[path], folder / f"{path}.json") for path in ("csv", "parquet", "store")}


@pytest.mark.parametrize("kind", sorted(RETYPING))
def test_a_cell_that_used_to_retype_its_column_changes_no_other_row_on_any_path(tmp_path, base_releases, kind):
    """Through the real CLI on a CSV, a Parquet file and a store written by Arrow's type inference (the row may make
    a column boolean, integer or text): every base row is still binned, the row is one event more or one row dropped
    and counted, and the shape, bins and σ² are the base's. On the CSV the row is kept exactly when its cells name a
    declared dimension and key; a writer's boolean column keeps ``True``/``false`` as 1/0."""
    row, kept_on_csv = RETYPING[kind]
    rows = _rows_text(BASE)
    cut = rows.index("\n", len(rows) // 2) + 1
    neighbour = _as_files(tmp_path / "neighbour", rows[:cut] + row + "\n" + rows[cut:])
    for path in ("csv", "parquet", "store"):
        status, ours = base_releases[path]
        status_n, theirs = _cli(neighbour[path], tmp_path / f"n-{path}.json")
        assert status == status_n == 0, (kind, path)
        assert np.shape(theirs["kernels"]) == np.shape(ours["kernels"]) == (2, 2, 2), (kind, path)
        assert theirs["sigma2"] == ours["sigma2"] and theirs["n_bins"] == ours["n_bins"] == 60, (kind, path)
        kept = theirs["n_events"] - ours["n_events"]
        assert (kept, theirs["outside_domain"] - ours["outside_domain"]) in ((1, 0), (0, 1)), (kind, path)
        assert theirs["formal_settings"] and ours["outside_domain"] == 0, (kind, path)
        writer_boolean = "boolean" in kind and kind != "boolean time" and path != "csv"
        assert kept == (kept_on_csv or writer_boolean), (kind, path)
