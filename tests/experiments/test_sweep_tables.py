"""Sweep tables are plain files: a CSV that any reader opens (parameters beside it) or Parquet metadata."""

import json

import pandas as pd
import pyarrow.parquet as pq
import pytest

from dphawkes_cli.main import main
from dphawkes_experiments.sweep import load_table, save_table, sidecar_path

ARGS = ["sweep", "--scenario", "paper-2d", "--events", "200", "--bin-size", "1", "--sigma2", "0", "0.5",
        "--method", "cls", "pgd", "--bound", "0.3", "--iters", "20", "--runs", "1", "--seed", "3", "--workers", "1"]


@pytest.fixture(scope="module")
def table(tmp_path_factory):
    out = tmp_path_factory.mktemp("sweep") / "x.csv"
    assert main([*ARGS, "--out", str(out)]) == 0
    return out


def test_cli_csv_is_plain_with_the_header_first_and_parameters_in_a_sidecar(table):
    frame = pd.read_csv(table)  # no options
    assert table.read_text().splitlines()[0] == ",".join(frame.columns)
    assert len(frame) == 3 and {"method", "bin_size", "level"} <= set(frame.columns)  # cls once, pgd per σ²
    params = json.loads(sidecar_path(table).read_text())
    assert sidecar_path(table).name == "x.csv.json"
    assert params["levels"] == [0.0, 0.5] and params["source"]["scenario"] == "paper-2d"


def test_csv_and_parquet_round_trip_with_their_parameters(table, tmp_path):
    frame, params = load_table(table)
    plain = pd.read_csv(table)
    assert list(frame.columns) == list(plain.columns) and frame.shape == plain.shape
    pd.testing.assert_series_equal(frame["relative_error"], plain["relative_error"])
    parquet = save_table(frame, tmp_path / "x.parquet", params)
    back, back_params = load_table(parquet)
    assert back_params == params
    pd.testing.assert_frame_equal(back, frame, check_dtype=False)
    stored = pq.read_schema(parquet).metadata[b"dphawkes_sweep"]
    assert json.loads(stored) == params
    assert not sidecar_path(parquet).exists()


def test_tables_written_with_the_old_comment_line_still_load(tmp_path):
    old = tmp_path / "old.csv"
    old.write_text('# dphawkes-sweep {"runs": 4}\na,b\n1,2\n')
    frame, params = load_table(old)
    assert params == {"runs": 4} and frame.to_dict("list") == {"a": [1], "b": [2]}
