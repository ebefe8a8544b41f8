"""The grid-free statistics (``ctls``) of a partitioned store equal the in-process ones: partitions by
sequence, by time (cuts inside a w-bin where the cap bites, a partition inside one w-bin, cuts closer than s),
both, with and without a cap, an automatic cap, events on bin edges; on a 2-worker Dask cluster and via the CLI."""

import json
from functools import partial

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from partition_stores import crowded_events, write_layouts

from dphawkes_cli import main as cli
from dphawkes_core.data.io import load_parquet
from dphawkes_core.errors import ConfigError
from dphawkes_core.estimators import FitConfig, fit, fit_partitions, fit_stats, prepare_partitioned, prepare_stats
from dphawkes_core.statistics.partitioned import partitioned_window
from tests.configs import fit_config

W, B, CAP, END = 0.5, 6, 2, 300.0  # s = 3
CUTS = [100.27, 100.9, 101.6, 102.2, 150.1, 150.3, 200.0]  # inside w-bins, closer than s, a partition inside one bin
PIECES = ("lagged", "pairs", "totals", "head_gram", "tail_gram", "head_int", "tail_int", "head_pairs", "head_counts")
COUNTS = ("n_bins", "n_events", "binned_events", "dropped_events", "clipped_events", "skipped_sequences")


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    """Three paper-2d sequences, with crowded w-bins cut by the partitions and events on bin edges."""
    root = tmp_path_factory.mktemp("grid_free_store")
    t, d, s = crowded_events(END, first_seed=20)
    write_layouts(root, t, d, s, CUTS)
    return root


def _paths(store, layout):
    return sorted(str(p) for p in (store / layout).glob("*.parquet"))


_config = partial(fit_config, method="ctls", bin_size=W, lags=B, count_cap=CAP, sigma2=0.0)


def _same(dist, one, dist_info, one_info):
    for name in PIECES:
        np.testing.assert_allclose(getattr(dist.grid_pieces, name), getattr(one.grid_pieces, name), rtol=1e-9,
                                   atol=1e-9 * max(1.0, float(np.abs(getattr(one.grid_pieces, name)).max())),
                                   err_msg=name)
    for name in ("duration", "total_time", "edge_time"):
        assert getattr(dist.grid_pieces, name) == pytest.approx(getattr(one.grid_pieces, name), rel=1e-12), name
    for name in ("sequences", "skipped_sequences", "count_cap"):
        assert getattr(dist.grid_pieces, name) == getattr(one.grid_pieces, name), name
    scale = float(np.abs(one.A).max())
    np.testing.assert_allclose(dist.A, one.A, rtol=1e-9, atol=1e-9 * scale)
    np.testing.assert_allclose(dist.b, one.b, rtol=1e-9, atol=1e-9 * float(np.abs(one.b).max()))
    for key in COUNTS:
        assert dist_info[key] == one_info[key], key


@pytest.mark.parametrize("cap", [CAP, None])
@pytest.mark.parametrize("layout", ["by_seq", "by_time", "mixed"])
def test_partitioned_statistics_equal_the_in_process_ones(store, layout, cap):
    events = load_parquet(store / "whole.parquet", end_time=END)
    config = _config(count_cap=cap)
    one, one_info = prepare_stats(events, config)
    paths = _paths(store, layout)
    dist, dist_info = prepare_partitioned(paths, config, partitioned_window(paths, end_time=END))
    _same(dist, one, dist_info, one_info)
    assert dist_info["partitions"] == len(paths) and dist_info["count_cap"] == cap
    if cap is not None:
        assert one_info["clipped_events"] > 0
    np.testing.assert_allclose(fit_stats(dist, config).H, fit_stats(one, config).H, rtol=1e-9, atol=1e-12)


def test_random_cuts_closer_than_the_support(tmp_path):
    """Many random cuts (often several inside s, some inside one w-bin), dense bins, random caps and starts."""
    rng = np.random.default_rng(5)
    for trial in range(6):
        d, end, cap = int(rng.integers(1, 4)), float(rng.uniform(8, 30)), [None, 1, 3][trial % 3]
        n = int(rng.integers(20, 200))
        t = np.round(rng.uniform(0, end, n) * 4) / 4 if trial % 2 else rng.uniform(0, end, n)  # on edges or not
        dims, seqs = rng.integers(0, d, n), rng.integers(0, 2, n)
        cuts = np.sort(rng.uniform(0, end, int(rng.integers(1, 12))))
        write_layouts(tmp_path, t, dims, seqs, cuts, name=str(trial))
        config = FitConfig(method="ctls", bin_size=0.5, lags=4, count_cap=cap, calibration="formal", sigma2=0.0)
        one, one_info = prepare_stats(load_parquet(tmp_path / f"whole{trial}.parquet", end_time=end), config)
        for layout in ("by_time", "mixed"):
            paths = _paths(tmp_path, f"{layout}{trial}")
            dist, dist_info = prepare_partitioned(paths, config, partitioned_window(paths, end_time=end))
            _same(dist, one, dist_info, one_info)


def test_partitions_overlapping_in_time_equal_their_rows_read_as_one_file(store, tmp_path):
    """Every row twice, in two partitions spanning the same times: the grid-free pieces are those of the doubled rows
    in one file (each sequence gathered whole), not a refusal."""
    whole = pq.read_table(store / "whole.parquet")
    pq.write_table(whole, tmp_path / "a.parquet")
    pq.write_table(whole, tmp_path / "b.parquet")
    pq.write_table(pa.concat_tables([whole, whole]), tmp_path / "doubled.parquet")
    paths = [str(tmp_path / "a.parquet"), str(tmp_path / "b.parquet")]
    one, one_info = prepare_stats(load_parquet(tmp_path / "doubled.parquet", end_time=END), _config())
    dist, dist_info = prepare_partitioned(paths, _config(), partitioned_window(paths, end_time=END))
    _same(dist, one, dist_info, one_info)


def test_the_sequence_unit_is_refused_on_partitions(store):
    paths = _paths(store, "by_seq")
    config = FitConfig(method="ctls", bin_size=W, lags=B, calibration="formal", count_cap=CAP, epsilon=1.0,
                       privacy_unit="sequence", max_events=400)
    with pytest.raises(ConfigError, match="event unit only"):
        prepare_partitioned(paths, config, partitioned_window(paths, end_time=END))


@pytest.fixture(scope="module")
def executor():
    """A 2-worker Dask LocalCluster (threads, as tests/core/statistics/test_distributed.py)."""
    pytest.importorskip("distributed")
    from distributed import Client, LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=":0",
                      scheduler_kwargs={"dashboard": False}) as cluster, \
            Client(cluster) as client:
        yield client.get_executor(pure=False)


@pytest.mark.parametrize("layout", ["by_seq", "by_time"])
def test_dask_fit_equals_the_in_process_fit(store, executor, layout):
    events = load_parquet(store / "whole.parquet", end_time=END)
    config = _config()
    one, one_info = fit(events, config)
    dist, dist_info = fit_partitions(_paths(store, layout), config, executor, end_time=END)
    np.testing.assert_allclose(dist.H, one.H, rtol=1e-9, atol=1e-12)
    for key in COUNTS:
        assert dist_info[key] == one_info[key], key


def test_an_automatic_count_cap_equals_the_in_process_one(store, executor):
    """Same events and seed: the same released C (from the partitioned w-bin tails), then the same estimate."""
    events = load_parquet(store / "whole.parquet", end_time=END)
    for share, seed in ((0.05, 4), (0.5, 7)):
        config = _config(count_cap="auto", sigma2=None, epsilon=1.0, seed=seed, count_cap_share=share)
        one, one_info = fit(events, config)
        dist, dist_info = fit_partitions(_paths(store, "by_time"), config, executor, end_time=END)
        assert dist_info["auto_count_cap"] == one_info["auto_count_cap"]
        assert dist_info["count_cap"] == one_info["count_cap"] == one_info["auto_count_cap"]["count_cap"]
        assert dist_info["clipped_events"] == one_info["clipped_events"]
        np.testing.assert_allclose(dist.H, one.H, rtol=1e-9, atol=1e-12)


def test_cli_fit_of_a_glob_with_ctls_equals_the_single_file_fit(store, tmp_path):
    common = ["--method", "ctls", "--bin-size", str(W), "--lags", str(B), "--end-time", str(END), "--count-cap",
              str(CAP), "--calibration", "formal", "--sigma2", "0"]
    assert cli.main(["fit", str(store / "whole.parquet"), *common, "--json", str(tmp_path / "one.json")]) == 0
    assert cli.main(["fit", str(store / "by_time" / "*.parquet"), *common, "--json", str(tmp_path / "parts.json")]) == 0
    one, parts = (json.loads((tmp_path / f"{n}.json").read_text()) for n in ("one", "parts"))
    np.testing.assert_allclose(parts["kernels"], one["kernels"], rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(parts["baseline"], one["baseline"], rtol=1e-9, atol=1e-12)
    assert parts["n_events"] == one["n_events"] and parts["partitions"] == len(CUTS) + 1
