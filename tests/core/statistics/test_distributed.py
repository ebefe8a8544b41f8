"""A partitioned event store reduced on Dask equals the in-process fit (partitions by sequence and by time)."""

import json

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from dphawkes_cli import main as cli
from dphawkes_core.data.io import load_parquet
from dphawkes_core.data.kernels import get_scenario
from dphawkes_core.data.simulate import simulate
from dphawkes_core.estimators import FitConfig, fit, fit_partitions, fit_stats, prepare_stats
from dphawkes_core.statistics.binning import BinnedCounts, bin_sparse, tail_counts
from dphawkes_core.statistics.moments import moment_pieces
from dphawkes_core.statistics.partitioned import (
    hold_first_bin,
    partitioned_fingerprint,
    partitioned_pieces,
    partitioned_tails,
    partitioned_window,
    reduce_segments,
    segment_of,
)

DELTA, P, CAP, END = 0.5, 8, 3, 1500.0


def _write(path, times, dims, seqs):
    pq.write_table(pa.table({"time": np.asarray(times, float), "dimension": np.asarray(dims, np.int64),
                             "sequence": np.asarray(seqs, np.int64)}), path)


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    """Three paper-2d sequences as one file, partitioned by sequence, and by time at cuts inside bins."""
    root = tmp_path_factory.mktemp("store")
    rows = []
    for s in range(3):
        seq = simulate(get_scenario("paper-2d"), end_time=END, seed=10 + s).sequences[0]
        for j, t in enumerate(seq.times):
            rows += [(x, j, s) for x in t]
    cuts = [400.27, 401.1, 900.6]  # inside bins (Δ = 0.5); 401.1 leaves a partition shorter than p bins
    # a bin split by a cut holding more than C events in total: re-clipped in the reduce step
    rows += [(400.26, 0, 1), (400.26, 0, 1), (400.28, 0, 1), (400.29, 0, 1)]
    t, d, s = (np.array(c) for c in zip(*rows))
    _write(root / "whole.parquet", t, d, s)
    (root / "by_seq").mkdir()
    for k in range(3):
        _write(root / "by_seq" / f"part-{k}.parquet", t[s == k], d[s == k], s[s == k])
    (root / "by_time").mkdir()
    edges = [-np.inf, *cuts, np.inf]
    for k in range(len(edges) - 1):
        part = (t >= edges[k]) & (t < edges[k + 1])
        _write(root / "by_time" / f"part-{k}.parquet", t[part], d[part], s[part])
    return root


@pytest.fixture(scope="module")
def in_process(store):
    events = load_parquet(store / "whole.parquet", end_time=END)
    config = FitConfig(bin_size=DELTA, lags=P, count_cap=CAP)
    stats, info = prepare_stats(events, config)
    return stats, info, fit_stats(stats, config)


@pytest.fixture(scope="module")
def executor():
    """A 2-worker Dask LocalCluster (threads: quick to start; the CLI test starts worker processes)."""
    from distributed import Client, LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=":0",
                      scheduler_kwargs={"dashboard": False}) as cluster, \
            Client(cluster) as client:
        yield client.get_executor(pure=False)


@pytest.mark.parametrize("layout", ["by_seq", "by_time"])
def test_dask_fit_equals_the_in_process_fit(store, in_process, executor, layout):
    stats, info, result = in_process
    paths = sorted(str(p) for p in (store / layout).glob("*.parquet"))
    config = FitConfig(bin_size=DELTA, lags=P, count_cap=CAP)
    dist, dist_info = fit_partitions(paths, config, executor, end_time=END)
    np.testing.assert_allclose(dist.H, result.H, rtol=0, atol=1e-9)
    pieces, _ = partitioned_pieces(paths, DELTA, P, CAP, executor, end_time=END)
    for field in ("lagged", "totals", "heads", "tails", "n_bins"):
        np.testing.assert_array_equal(getattr(pieces, field), getattr(stats.pieces, field))
    for key in ("n_bins", "n_events", "binned_events", "dropped_events", "clipped_events", "skipped_sequences"):
        assert dist_info[key] == info[key], key
    assert info["clipped_events"] > 0 and dist_info["window_stated"]


def test_merging_random_cuts_equals_the_whole_series():
    """Cut count series at random bins (often the same bin twice: a bin split between segments) and reduce."""
    rng = np.random.default_rng(3)
    for trial in range(30):
        n, d, p, cap = int(rng.integers(5, 120)), int(rng.integers(1, 4)), int(rng.integers(1, 9)), [None, 2][trial % 2]
        raw = rng.poisson(rng.choice([0.05, 0.5, 3.0]), (n, d))
        events = [(k + rng.uniform(0, 1), j) for k in range(n) for j in range(d) for _ in range(raw[k, j])]
        cuts = np.sort(rng.uniform(0, n, int(rng.integers(0, 6))))
        segments = []
        for lo, hi in zip([-1.0, *cuts], [*cuts, n + 1.0]):
            times = [np.array([t for t, j in events if j == dim and lo <= t < hi]) for dim in range(d)]
            segments.append(segment_of("s", times, n, 1.0, p, cap))
        rng.shuffle(segments)
        clipped = raw if cap is None else np.minimum(raw, cap)
        if n <= p:
            continue
        pieces, counts = reduce_segments(segments, p, cap)
        whole = moment_pieces(BinnedCounts((clipped,), 1.0, 0, 0, cap), p)
        for field in ("lagged", "totals", "heads", "tails"):
            np.testing.assert_array_equal(getattr(pieces, field), getattr(whole, field), err_msg=f"{trial} {field}")
        assert counts["clipped_events"] == (raw - clipped).sum()


def test_partitions_overlapping_in_time_equal_their_rows_read_as_one_file(store, tmp_path):
    """Every row twice, in two partitions spanning the same times: the store's pieces, counts and automatic-cap tail
    counts are those of the doubled rows in one file (the sequences are gathered whole), not a refusal."""
    whole = pq.read_table(store / "whole.parquet")
    for name in ("a", "b"):
        pq.write_table(whole, tmp_path / f"{name}.parquet")
    pq.write_table(pa.concat_tables([whole, whole]), tmp_path / "doubled.parquet")
    paths = [str(tmp_path / "a.parquet"), str(tmp_path / "b.parquet")]
    config = FitConfig(bin_size=DELTA, lags=P, count_cap=CAP)
    stats, info = prepare_stats(load_parquet(tmp_path / "doubled.parquet", end_time=END), config)
    pieces, counts = partitioned_pieces(paths, DELTA, P, CAP, end_time=END)
    for field in ("lagged", "totals", "heads", "tails", "n_bins"):
        np.testing.assert_array_equal(getattr(pieces, field), getattr(stats.pieces, field))
    for key in ("n_bins", "n_events", "binned_events", "clipped_events"):
        assert counts[key] == info[key], key
    window = partitioned_window(paths, end_time=END)
    assert set(window.gathered) == {0, 1, 2} and all(holders == tuple(paths) for holders in window.gathered.values())
    binned = bin_sparse(load_parquet(tmp_path / "doubled.parquet", end_time=END), DELTA, None)
    np.testing.assert_array_equal(partitioned_tails(paths, window, DELTA, 6), tail_counts(binned, 6))


@pytest.mark.slow  # starts a LocalCluster of worker processes, as the CLI does (about 15 s here)
def test_cli_fit_of_a_glob_on_dask_equals_the_single_file_fit(store, tmp_path, capsys):
    common = ["--bin-size", str(DELTA), "--lags", str(P), "--end-time", str(END)]
    assert cli.main(["fit", str(store / "whole.parquet"), *common, "--json", str(tmp_path / "one.json")]) == 0
    assert cli.main(["fit", str(store / "by_time" / "*.parquet"), *common, "--dask", "local",
                     "--json", str(tmp_path / "dask.json")]) == 0
    one, dask = (json.loads((tmp_path / f"{n}.json").read_text()) for n in ("one", "dask"))
    np.testing.assert_allclose(dask["kernels"], one["kernels"], rtol=0, atol=1e-9)
    np.testing.assert_allclose(dask["baseline"], one["baseline"], rtol=0, atol=1e-9)
    assert dask["n_events"] == one["n_events"] and dask["partitions"] == 4
    assert cli.main(["fit", str(tmp_path / "none-*.parquet"), *common, "--dask", "local"]) == 2
    assert "no Parquet partitions" in capsys.readouterr().err


@pytest.mark.parametrize("layout", ["by_seq", "by_time"])
def test_an_automatic_count_cap_equals_the_in_process_one(store, executor, layout):
    """Same events, same seed: the partitioned tail counts, the released C and the estimate (on Dask) equal
    the single-file fit's (the time cuts split bins, one holding more than C events in total)."""
    events = load_parquet(store / "whole.parquet", end_time=END)
    paths = sorted(str(p) for p in (store / layout).glob("*.parquet"))
    window = partitioned_window(paths, end_time=END)
    for max_cap in (2, 5, 64):
        assert np.array_equal(partitioned_tails(paths, window, DELTA, max_cap, executor),
                              tail_counts(bin_sparse(events, DELTA), max_cap)), max_cap
    for share, seed in ((0.05, 4), (0.5, 7)):  # a large share resolves a small C: the bin cut in two matters
        config = FitConfig(method="ssp", bin_size=DELTA, lags=P, count_cap="auto", epsilon=1.0, seed=seed,
                           calibration="formal", count_cap_share=share)
        one, one_info = fit(events, config)
        dist, dist_info = fit_partitions(paths, config, executor, end_time=END)
        assert dist_info["auto_count_cap"] == one_info["auto_count_cap"]
        assert dist_info["count_cap"] == one_info["count_cap"] == one_info["auto_count_cap"]["count_cap"]
        assert dist_info["clipped_events"] == one_info["clipped_events"]
        np.testing.assert_allclose(dist.H, one.H, rtol=0, atol=1e-9)
        assert dist.privacy.epsilon == pytest.approx(one.privacy.epsilon) and one.privacy.epsilon == pytest.approx(1.0)


def test_partitioned_releases_are_metered_replayed_and_refused_by_the_ledger(store, tmp_path, capsys):
    """An auto-cap DP-SSP release on partitions spends budget; the same request on the same events
    partitioned differently is replayed (the fingerprint is of the events); one past the budget is refused."""
    ledger = tmp_path / "ledger.json"

    def release(pattern, epsilon):
        status = cli.main(["fit", str(store / pattern), "--bin-size", str(DELTA), "--lags", str(P), "--end-time",
                           str(END), "--method", "ssp", "--calibration", "formal", "--count-cap", "auto",
                           "--epsilon", str(epsilon), "--dimensions", "2", "--sequences", "3",
                           "--ledger", str(ledger), "--budget", "1.5", "--json", str(tmp_path / "fit.json")])
        err = capsys.readouterr().err
        return status, err, json.loads((tmp_path / "fit.json").read_text()) if status == 0 else None

    status, err, first = release("by_time/*.parquet", 1.0)
    assert status == 0 and "ledger: recorded" in err
    assert first["ledger"]["spent_epsilon"] == pytest.approx(1.0, abs=1e-6) and first["formal_guarantee"]
    assert first["count_cap"] == first["auto_count_cap"]["count_cap"]
    status, err, again = release("by_seq", 1.0)
    assert status == 0 and "replayed" in err and again["kernels"] == first["kernels"]
    assert again["ledger"]["spent_epsilon"] == first["ledger"]["spent_epsilon"]
    status, err, _ = release("whole*.parquet", 1.2)  # 1 and 1.2 compose to 1.6 > 1.5
    assert status == 2 and err.startswith("error: refused") and err.count("\n") == 1
    (shown,) = json.loads(ledger.read_text())["ledgers"]
    assert len(shown["entries"]) == 1 and shown["fingerprint"].startswith("rows-")


def test_the_partition_fingerprint_follows_the_events_not_the_files(store, tmp_path):
    """Renamed or re-partitioned: the same fingerprint; one event more, or another window: another."""
    def fingerprint(paths, end=END):
        return partitioned_fingerprint(paths, partitioned_window(paths, end_time=end))

    whole = fingerprint([str(store / "whole.parquet")])
    for layout in ("by_seq", "by_time"):
        assert fingerprint(sorted(str(p) for p in (store / layout).glob("*.parquet"))) == whole
    table = pq.read_table(store / "whole.parquet")
    pq.write_table(table.take(np.arange(table.num_rows)[::-1]), tmp_path / "renamed.pq", compression="gzip")
    assert fingerprint([str(tmp_path / "renamed.pq")]) == whole
    _write(tmp_path / "extra.parquet", [12.3], [1], [2])
    assert fingerprint([str(tmp_path / "renamed.pq"), str(tmp_path / "extra.parquet")]) != whole
    assert fingerprint([str(store / "whole.parquet")], END - 1) != whole


def _first_c_per_bin(times, width, cap):
    """Reference keep-first-C written as a loop over the events: each event kept while its bin has fewer than C."""
    seen, kept = {}, []
    for t in times:
        b = int(np.floor(t / width))
        if cap is None or seen.get(b, 0) < cap:
            kept.append(t)
            seen[b] = seen.get(b, 0) + 1
    return np.array(kept)


@pytest.mark.parametrize("cap", [None, 1, 2, 4])
def test_hold_first_bin_splits_the_kept_events_of_the_first_bin(cap):
    """Settled plus pending is keep-first-C of each dimension (a loop reference); pending is exactly the kept
    events in the w-bin of the partition's earliest event (over all dimensions), nothing pends without a cap, and
    the clipped count is what the reference removed."""
    rng = np.random.default_rng(7)
    width = 0.5
    for _ in range(20):
        per_dim = [np.sort(rng.uniform(3.2, 6.0, size=rng.integers(0, 12))) for _ in range(3)]
        if not any(t.size for t in per_dim):
            continue
        settled, pending, clipped = hold_first_bin(per_dim, width, cap)
        first_bin = np.floor(min(t[0] for t in per_dim if t.size) / width)
        removed = 0
        for t, done, held in zip(per_dim, settled, pending):
            kept = _first_c_per_bin(t, width, cap)
            removed += t.size - kept.size
            np.testing.assert_array_equal(np.sort(np.concatenate([done, held])), kept)
            expected = kept[np.floor(kept / width) == first_bin] if cap is not None else kept[:0]
            np.testing.assert_array_equal(held, expected)
        assert clipped == removed
