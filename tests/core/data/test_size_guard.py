"""The file-size guard is never a function of one row under a declared domain: a file one row over the limit and
its neighbour one row under it are both read (same shape, same σ², the row counted), through every source a formal
release can come from — a CSV or Parquet path, an upload's bytes, a file object, the ledger key of the file. Without
a declaration (exploration, never formal) the guard still refuses a file over the limit before parsing."""

from __future__ import annotations

import io

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from dphawkes_core.data.domain import Domain
from dphawkes_core.data.io import load_csv, load_parquet, source_key
from dphawkes_core.errors import DataError
from dphawkes_core.estimators import FitConfig, prepare_stats, privacy_report

DECLARED = Domain(dimensions=("0", "1"), sequences=("0", "1"))
ROWS = [(0.5 + 0.7 * k, k % 2, k % 3 // 2) for k in range(40)]  # two sequences, two dimensions, window [0, 30]
CONFIG = FitConfig(method="ssp", bin_size=1.0, lags=2, epsilon=1.0, count_cap=2, calibration="formal")


def csv_bytes(rows) -> bytes:
    return ("time,dimension,sequence\n" + "".join(f"{t:.3f},{j},{s}\n" for t, j, s in rows)).encode()


def straddling_pair(tmp_path, kind: str):
    """The data and its neighbour with one more row, written as ``kind``, and a limit between their sizes."""
    paths = []
    for name, rows in (("base", ROWS), ("neighbour", ROWS + [(29.9, 1, 1)])):
        path = tmp_path / f"{name}.{kind}"
        if kind == "csv":
            path.write_bytes(csv_bytes(rows))
        else:
            t, j, s = zip(*rows)
            pq.write_table(pa.table({"time": list(t), "dimension": list(j), "sequence": list(s)}), path)
        paths.append(path)
    small, large = (p.stat().st_size for p in paths)
    assert small < large
    return paths, small  # a file of `small` bytes is at the limit, its neighbour over it


def release_shape(events):
    stats, info = prepare_stats(events, CONFIG)
    return stats.A.shape, privacy_report(stats, CONFIG).sigma2, info["n_events"]


@pytest.mark.parametrize("kind", ["csv", "parquet"])
def test_a_one_row_neighbour_across_the_limit_is_read_under_a_declared_domain(tmp_path, kind):
    (base, neighbour), limit = straddling_pair(tmp_path, kind)
    load = load_csv if kind == "csv" else load_parquet
    shapes = []
    for source in (base, neighbour, neighbour.read_bytes(), io.BytesIO(neighbour.read_bytes())):
        events = load(source, end_time=30.0, domain=DECLARED, max_bytes=limit)
        shapes.append(release_shape(events))
    (shape, sigma2, events_base), *others = shapes
    for other_shape, other_sigma2, events_other in others:
        assert other_shape == shape and other_sigma2 == sigma2 and events_other == events_base + 1
    assert source_key(neighbour) != source_key(base)  # the ledger key reads it too, with no size guard


@pytest.mark.parametrize("kind", ["csv", "parquet"])
def test_without_a_declared_domain_the_guard_still_refuses_before_parsing(tmp_path, kind):
    (base, neighbour), limit = straddling_pair(tmp_path, kind)
    load = load_csv if kind == "csv" else load_parquet
    load(base, end_time=30.0, max_bytes=limit)
    for source in (neighbour, neighbour.read_bytes()):
        with pytest.raises(DataError, match="MiB limit"):
            load(source, end_time=30.0, max_bytes=limit)
    with pytest.raises(DataError, match="MiB limit"):
        source_key(neighbour, max_bytes=limit)
