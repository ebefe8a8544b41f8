"""Parquet input (read by row group) and the CLI's data-loading flags."""

import json

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from dphawkes_cli.inputs import load_events_file
from dphawkes_cli.main import main
from dphawkes_core.data.io import load_csv, load_parquet, save_csv
from dphawkes_core.data.kernels import get_scenario
from dphawkes_core.data.simulate import simulate
from dphawkes_core.errors import DataError

EPOCH = 1_700_000_000


@pytest.fixture(scope="module")
def events():
    return simulate(get_scenario("paper-2d"), n_events=600, seed=4)


def _frame(events):
    return events.to_frame()[["time", "dimension"]]


def test_parquet_in_several_row_groups_loads_like_the_csv(events, tmp_path):
    csv_path, parquet_path = tmp_path / "e.csv", tmp_path / "e.parquet"
    save_csv(events, csv_path)
    pq.write_table(pa.Table.from_pandas(pd.read_csv(csv_path)), parquet_path, row_group_size=100)
    assert pq.ParquetFile(parquet_path).num_row_groups == 6
    from_csv, from_parquet = load_csv(csv_path, end_time=events.end_time), load_parquet(parquet_path,
                                                                                        end_time=events.end_time)
    for a, b in zip(from_csv.sequences[0].times, from_parquet.sequences[0].times):
        np.testing.assert_array_equal(a, b)
    assert from_parquet.window_stated and from_parquet.end_time == from_csv.end_time


def test_parquet_timestamps_and_labels(tmp_path):
    stamps = pd.to_datetime(["2024-05-01 00:00", "2024-05-01 06:00", "2024-05-02 00:00"], utc=True)
    path = tmp_path / "t.parquet"
    pq.write_table(pa.table({"Time": stamps, "dimension": ["buy", "sell", "buy"]}), path)
    events = load_parquet(path, time_unit="h", start_time="2024-05-01", end_time="2024-05-03")
    assert events.names == ("buy", "sell") and events.time_kind == "datetime"
    assert events.sequences[0].times[0].tolist() == [0.0, 24.0] and events.end_time == 48.0
    assert events.window_stated


@pytest.mark.parametrize("content, fragment", [(b"PAR1 not really", "not a readable Parquet file"),
                                               (None, "missing column 'dimension'")])
def test_bad_parquet_gives_one_line_errors(tmp_path, content, fragment):
    path = tmp_path / "bad.parquet"
    if content is None:
        pq.write_table(pa.table({"time": [1.0]}), path)
    else:
        path.write_bytes(content)
    with pytest.raises(DataError) as info:
        load_parquet(path)
    assert fragment in str(info.value) and "\n" not in str(info.value)


def test_load_events_file_dispatches_on_the_suffix_and_reads_labels(tmp_path):
    pq.write_table(pa.table({"time": [0.5, 1.5], "dimension": [0, 1]}), tmp_path / "e.parquet")
    (tmp_path / "labels.csv").write_text("dimension,label\n0,up\n1,down\n")
    events = load_events_file(str(tmp_path / "e.parquet"), end_time=2)
    assert events.names == ("up", "down") and events.window_stated


def test_cli_fit_of_epoch_shifted_data_with_its_window_equals_the_unshifted_fit(events, tmp_path, capsys):
    frame = _frame(events)
    plain, shifted = tmp_path / "plain.csv", tmp_path / "shifted.csv"
    frame.assign(time=[f"{t:.6f}" for t in frame["time"]]).to_csv(plain, index=False)
    frame.assign(time=[f"{EPOCH + t:.6f}" for t in frame["time"]]).to_csv(shifted, index=False)
    end = f"{np.ceil(frame['time'].max()):.0f}"
    fits = []
    for path, window in ((plain, ["--end-time", end]),
                         (shifted, ["--start-time", str(EPOCH), "--end-time", str(EPOCH + int(end))])):
        assert main(["fit", str(path), "--bin-size", "0.1", "--support", "3", *window]) == 0
        fits.append(json.loads(capsys.readouterr().out))
    assert fits[0]["kernels"] == fits[1]["kernels"] and fits[0]["baseline"] == fits[1]["baseline"]
    assert fits[0]["n_bins"] == fits[1]["n_bins"] and fits[1]["window_stated"]
    main(["fit", str(shifted), "--bin-size", "0.1", "--support", "3"])
    err = capsys.readouterr().err
    assert "read: 2 dimensions: 0, 1; 600 events; window [1700000004.106, " in err and "read from the data" in err


def test_cli_window_flags_refuse_bad_values_in_one_line(tmp_path, capsys):
    path = tmp_path / "e.csv"
    path.write_text("time,dimension\n1,0\n")
    assert main(["fit", str(path), "--bin-size", "0.1", "--support", "1", "--start-time", "yesterday"]) == 2
    err = capsys.readouterr().err
    assert "not a number or an ISO-8601 datetime" in err and err.count("\n") == 1
    assert main(["fit", str(path), "--bin-size", "0.1", "--support", "1", "--start-time", "2024-01-01"]) == 2
    assert "holds numbers" in capsys.readouterr().err


def test_parquet_missing_values_are_reported_by_row(tmp_path):
    path = tmp_path / "gaps.parquet"
    pq.write_table(pa.table({"time": [1.0, 2.0, 3.0], "dimension": ["a", None, "b"]}), path, row_group_size=2)
    with pytest.raises(DataError, match="row 2, column 'dimension': empty value"):
        load_parquet(path)
    pq.write_table(pa.table({"time": [1.0, None], "dimension": [0, 1]}), path)
    with pytest.raises(DataError, match="row 2, column 'time'.*not a finite number"):
        load_parquet(path)
