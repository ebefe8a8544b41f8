"""The exponential family's statistics of a partitioned store equal the in-process ones: partitions by sequence, by
time (cuts inside a w-bin where the cap bites, a partition inside one w-bin, simultaneous events split across
two partitions, events exactly on the cuts), both, with and without a cap, an automatic cap, random cuts; on a
2-worker Dask cluster and via the CLI. Each number is compared at its own scale."""

import json
from functools import partial

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from partition_stores import crowded_events, write_events, write_layouts

from dphawkes_cli import main as cli
from dphawkes_core.data.io import load_parquet
from dphawkes_core.errors import ConfigError
from dphawkes_core.estimators import FitConfig, fit, fit_partitions, fit_stats, prepare_partitioned, prepare_stats
from dphawkes_core.statistics.partitioned import partitioned_window
from tests.configs import fit_config

W, CAP, END, DECAYS = 0.5, 2, 300.0, (0.7, 1.5, 3.0)
CUTS = [100.27, 100.9, 101.6, 102.2, 150.1, 150.3, 200.0, 200.5]  # in w-bins, 0.6 apart, inside one bin, on events
PIECES = ("gram", "integral", "pairs", "totals")
COUNTS = ("n_bins", "n_events", "binned_events", "dropped_events", "clipped_events", "skipped_sequences")


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    """Three paper-2d sequences, with crowded w-bins cut by the partitions and events on bin edges and on cuts."""
    root = tmp_path_factory.mktemp("exp_store")
    t, d, s = crowded_events(END, first_seed=30)
    write_layouts(root, t, d, s, CUTS)
    return root


def _paths(store, layout):
    return sorted(str(p) for p in (store / layout).glob("*.parquet"))


_config = partial(fit_config, method="exp", bin_size=W, lags=10, count_cap=CAP, decays=DECAYS, sigma2=0.0)


def _same(dist, one, dist_info, one_info):
    for name in PIECES:
        mine, theirs = getattr(dist.exp_pieces, name), getattr(one.exp_pieces, name)
        np.testing.assert_allclose(mine, theirs, rtol=1e-9, atol=1e-11 * max(1.0, float(np.abs(theirs).max())),
                                   err_msg=name)
    assert dist.exp_pieces.duration == pytest.approx(one.exp_pieces.duration, rel=1e-12)
    for name in ("sequences", "count_cap", "decays"):
        assert getattr(dist.exp_pieces, name) == getattr(one.exp_pieces, name), name
    for key in COUNTS:
        assert dist_info[key] == one_info[key], key


@pytest.mark.parametrize("cap", [CAP, None])
@pytest.mark.parametrize("layout", ["by_seq", "by_time", "mixed", "on_edge"])
def test_partitioned_statistics_equal_the_in_process_ones(store, layout, cap):
    events = load_parquet(store / "whole.parquet", end_time=END)
    config = _config(count_cap=cap)
    one, one_info = prepare_stats(events, config)
    paths = _paths(store, layout)
    window = partitioned_window(paths, end_time=END)
    assert not window.gathered  # touching partitions are merged, not read whole
    dist, dist_info = prepare_partitioned(paths, config, window)
    _same(dist, one, dist_info, one_info)
    assert dist_info["partitions"] == len(paths) and dist_info["count_cap"] == cap
    if cap is not None:
        assert one_info["clipped_events"] > 0
    np.testing.assert_allclose(fit_stats(dist, config).H, fit_stats(one, config).H, rtol=1e-8,
                               atol=1e-10 * float(np.abs(fit_stats(one, config).H).max()))


def test_simultaneous_events_in_two_partitions_see_the_state_before_them(tmp_path):
    """Events at one instant, split between two partitions that touch there: each sees only the events strictly
    before it (the in-process convention), so the values at the events equal the one-file ones, and differ from
    what a partition boundary treated as 'earlier' would give."""
    t = np.array([1.0, 2.0, 2.0, 2.0, 3.5])
    d = np.array([0, 0, 1, 1, 0])
    write_events(tmp_path / "whole.parquet", t, d, np.zeros(5))
    write_events(tmp_path / "a.parquet", t[:2], d[:2], np.zeros(2))
    write_events(tmp_path / "b.parquet", t[2:], d[2:], np.zeros(3))
    config = _config(count_cap=None)
    one, _ = prepare_stats(load_parquet(tmp_path / "whole.parquet", end_time=5.0), config)
    paths = [str(tmp_path / "a.parquet"), str(tmp_path / "b.parquet")]
    dist, _ = prepare_partitioned(paths, config, partitioned_window(paths, end_time=5.0))
    _same(dist, one, {k: 0 for k in COUNTS}, {k: 0 for k in COUNTS})
    beta = np.array(DECAYS)
    # c_1[(0, u)]: dimension 1's two events at 2 see the event at 1 only (not the one at 2 in dimension 0).
    np.testing.assert_allclose(one.exp_pieces.pairs[1, 0::2], 2 * beta * np.exp(-beta), rtol=1e-12)


def test_random_cuts_equal_the_one_file_statistics(tmp_path):
    """Many random cuts (several inside one w-bin, some on events), dense bins, random caps, 1–3 dimensions."""
    rng = np.random.default_rng(8)
    for trial in range(6):
        d, end, cap = int(rng.integers(1, 4)), float(rng.uniform(8, 30)), [None, 1, 3][trial % 3]
        n = int(rng.integers(20, 200))
        t = np.round(rng.uniform(0, end, n) * 4) / 4 if trial % 2 else rng.uniform(0, end, n)  # on edges or not
        dims, seqs = rng.integers(0, d, n), rng.integers(0, 2, n)
        cuts = np.sort(np.concatenate([rng.uniform(0, end, int(rng.integers(1, 12))), rng.choice(t, 2)]))
        write_layouts(tmp_path, t, dims, seqs, cuts, name=str(trial))
        config = FitConfig(method="exp", bin_size=0.5, lags=4, count_cap=cap, decays=(0.5, 4.0),
                           calibration="formal", sigma2=0.0)
        one, one_info = prepare_stats(load_parquet(tmp_path / f"whole{trial}.parquet", end_time=end), config)
        for layout in ("by_time", "mixed", "on_edge"):
            paths = _paths(tmp_path, f"{layout}{trial}")
            dist, dist_info = prepare_partitioned(paths, config, partitioned_window(paths, end_time=end))
            _same(dist, one, dist_info, one_info)


def test_partitions_overlapping_in_time_equal_their_rows_read_as_one_file(store, tmp_path):
    whole = pq.read_table(store / "whole.parquet")
    pq.write_table(whole, tmp_path / "a.parquet")
    pq.write_table(whole, tmp_path / "b.parquet")
    pq.write_table(pa.concat_tables([whole, whole]), tmp_path / "doubled.parquet")
    paths = [str(tmp_path / "a.parquet"), str(tmp_path / "b.parquet")]
    one, one_info = prepare_stats(load_parquet(tmp_path / "doubled.parquet", end_time=END), _config())
    dist, dist_info = prepare_partitioned(paths, _config(), partitioned_window(paths, end_time=END))
    _same(dist, one, dist_info, one_info)


def test_the_likelihood_is_refused_on_partitions_in_one_line(store):
    paths = _paths(store, "by_seq")
    window = partitioned_window(paths, end_time=END)
    with pytest.raises(ConfigError, match="one events file"):
        prepare_partitioned(paths, _config(count_cap=None, exp_likelihood=True), window)


@pytest.fixture(scope="module")
def executor():
    """A 2-worker Dask LocalCluster (threads, as tests/core/statistics/test_distributed.py)."""
    pytest.importorskip("distributed")
    from distributed import Client, LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=":0",
                      scheduler_kwargs={"dashboard": False}) as cluster, \
            Client(cluster) as client:
        yield client.get_executor(pure=False)


def test_a_formal_release_on_dask_with_an_automatic_cap_equals_the_in_process_one(store, executor):
    """Same events and seed: the same released C (from the partitioned w-bin tails), the same noise, the same
    estimate."""
    events = load_parquet(store / "whole.parquet", end_time=END)
    config = _config(count_cap="auto", sigma2=None, epsilon=1.0, seed=4)
    one, one_info = fit(events, config)
    dist, dist_info = fit_partitions(_paths(store, "by_time"), config, executor, end_time=END)
    assert dist_info["auto_count_cap"] == one_info["auto_count_cap"]
    assert dist_info["count_cap"] == one_info["count_cap"] == one_info["auto_count_cap"]["count_cap"]
    assert dist_info["clipped_events"] == one_info["clipped_events"]
    np.testing.assert_allclose(dist.H, one.H, rtol=1e-8, atol=1e-10 * float(np.abs(one.H).max()))
    assert dist.privacy.sigma2 == one.privacy.sigma2 > 0


def test_cli_fit_of_a_glob_with_exp_equals_the_single_file_fit(store, tmp_path):
    common = ["--method", "exp", "--decays", "0.7,1.5,3", "--bin-size", str(W), "--lags", "10", "--end-time",
              str(END), "--count-cap", str(CAP), "--epsilon", "1", "--seed", "3"]
    assert cli.main(["fit", str(store / "whole.parquet"), *common, "--json", str(tmp_path / "one.json")]) == 0
    assert cli.main(["fit", str(store / "on_edge" / "*.parquet"), *common, "--json", str(tmp_path / "parts.json")]) == 0
    one, parts = (json.loads((tmp_path / f"{n}.json").read_text()) for n in ("one", "parts"))
    scale = float(np.abs(one["kernels"]).max())
    np.testing.assert_allclose(parts["kernels"], one["kernels"], rtol=1e-8, atol=1e-10 * scale)
    np.testing.assert_allclose(parts["baseline"], one["baseline"], rtol=1e-8)
    np.testing.assert_allclose(parts["solver_info"]["adjacency"], one["solver_info"]["adjacency"], rtol=1e-8,
                               atol=1e-10 * scale)
    assert parts["n_events"] == one["n_events"] and parts["partitions"] == len(CUTS) + 1
