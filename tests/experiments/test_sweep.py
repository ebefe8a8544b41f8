"""The sweep engine end to end: cells, columns, reproducibility by seed, caching, cancellation, I/O, Dask."""

import concurrent.futures as cf
import math

import numpy as np
import pandas as pd
import pytest

from dphawkes_core.data.kernels import get_scenario
from dphawkes_core.data.simulate import simulate
from dphawkes_core.errors import ConfigError
from dphawkes_core.estimators import FitConfig, fit
from dphawkes_core.estimators.gradient import THEOREM_1, paper_sigma2
from dphawkes_core.evaluation.metrics import compare
from dphawkes_core.statistics.binning import lags_from_support
from dphawkes_experiments.sweep import (
    DataSource,
    SweepSpec,
    cell_key,
    dask_executor,
    default_executor,
    load_table,
    merge_tables,
    run_sweep,
    save_table,
)

TIMING = ["elapsed_s", "stats_s", "sim_s"]
SCENARIO = get_scenario("paper-2d")


def _spec(**changes):
    base = dict(
        source=DataSource(scenario=SCENARIO, n_events=300, label="paper-2d"),
        methods=("cls", "pgd"), bin_sizes=(0.5, 1.0), levels=(0.0, 1.0), runs=2, seed=5,
        support=4.0, bound=0.2, iters=50,
    )
    base.update(changes)
    return SweepSpec(**base)


def _without_timing(frame):
    return frame.drop(columns=TIMING).reset_index(drop=True)


@pytest.fixture(scope="module")
def pool():
    with default_executor(2) as ex:
        yield ex


@pytest.fixture(scope="module")
def table(pool):
    return run_sweep(_spec(), pool)


def test_grid_cells_and_columns(table):
    # cls: one cell per (seed, Δ); pgd: one per level -> (1 + 2) × 2 Δ × 2 seeds.
    assert len(table) == 12 and table.attrs["complete"]
    assert table["key"].is_unique
    for col in ["method", "bin_size", "lags", "level", "seed", "noise_seed", "sigma2", "epsilon",
                "epsilon_paper", "epsilon_formal", "epsilon_tight_paper", "relative_error_paper",
                "relative_error", "zero_estimate_relative_error", "constraint_ratio", "shrunk", *TIMING]:
        assert col in table.columns
    assert sorted(table["seed"].unique()) == [5, 6]
    pgd = table[table.method == "pgd"]
    assert set(pgd["sigma2"]) == {0.0, 1.0}
    assert np.all(np.isinf(pgd.loc[pgd.sigma2 == 0, "epsilon_paper"]))
    assert np.all(np.isfinite(pgd.loc[pgd.sigma2 == 1, "epsilon_paper"]))


def test_cells_match_independent_fits(table):
    # A cls cell equals fitting the same simulation directly; seeds give fresh simulations.
    row = table[(table.method == "cls") & (table.bin_size == 0.5) & (table.seed == 6)].iloc[0]
    events = simulate(SCENARIO, n_events=300, seed=6)
    lags = lags_from_support(4.0, 0.5)
    result, _ = fit(events, FitConfig(bin_size=0.5, lags=lags))
    assert row["lags"] == lags
    assert row["relative_error"] == pytest.approx(compare(result.H, SCENARIO.true_H(0.5, lags)).relative_error)
    other = table[(table.method == "cls") & (table.bin_size == 0.5) & (table.seed == 5)].iloc[0]
    assert other["relative_error"] != row["relative_error"]
    # A private cell equals the same FitConfig fitted directly (same noise seed).
    cell = table[(table.method == "pgd") & (table.bin_size == 1.0) & (table.level == 1.0) & (table.seed == 5)].iloc[0]
    events = simulate(SCENARIO, n_events=300, seed=5)
    cfg = FitConfig(method="pgd", bin_size=1.0, lags=4, bound=0.2, iters=50, sigma2=1.0, seed=int(cell["noise_seed"]))
    direct, _ = fit(events, cfg)
    assert cell["relative_error"] == pytest.approx(compare(direct.H, SCENARIO.true_H(1.0, 4)).relative_error)
    assert cell["epsilon_paper"] == pytest.approx(direct.privacy.epsilon_by_calibration["paper"])


def test_same_seeds_same_table_on_another_executor(table):
    with cf.ThreadPoolExecutor(3) as ex:
        again = run_sweep(_spec(), ex)
    pd.testing.assert_frame_equal(_without_timing(table), _without_timing(again))


def test_widening_runs_only_new_cells(table, pool):
    narrow = run_sweep(_spec(runs=1), pool)
    assert len(narrow) == 6
    seen = []
    wide_new = run_sweep(_spec(), pool, done=set(narrow["key"]), progress=lambda n, total, rows: seen.append(total))
    assert len(wide_new) == 6 and set(wide_new["seed"]) == {6}
    assert seen and seen[-1] == 6
    merged = merge_tables(narrow, wide_new)
    pd.testing.assert_frame_equal(_without_timing(merged), _without_timing(table))


def test_cancel_keeps_finished_rows(pool):
    spec = _spec(runs=3)
    part = run_sweep(spec, pool, should_stop=lambda: True)
    assert not part.attrs["complete"]
    assert 0 < len(part) < spec.n_cells
    keys = {cell_key(spec, c) for c in spec.cells()}
    assert set(part["key"]) <= keys


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_save_and_load_round_trip(table, tmp_path, suffix):
    spec = _spec()
    path = save_table(table, tmp_path / f"sweep{suffix}", spec.to_dict())
    back, params = load_table(path)
    assert params["methods"] == ["cls", "pgd"] and params["source"]["scenario"] == "paper-2d"
    pd.testing.assert_frame_equal(back, table, check_dtype=False)


def test_epsilon_levels_calibrate_noise(pool):
    spec = _spec(methods=("pgd",), bin_sizes=(1.0,), privacy="epsilon", levels=(2.0,), runs=1)
    row = run_sweep(spec, cf.ThreadPoolExecutor(1)).iloc[0]
    assert row["epsilon_paper"] == pytest.approx(2.0)
    events = simulate(SCENARIO, n_events=300, seed=5)
    from dphawkes_core.estimators import prepare_stats
    from dphawkes_core.privacy.calibration import data_R

    stats, _ = prepare_stats(events, FitConfig(bin_size=1.0, lags=4))
    expected = paper_sigma2(THEOREM_1, 2.0, 1e-5, 50, 1.0 * 0.2, data_R(stats))
    assert row["sigma2"] == pytest.approx(expected)


def test_shrink_flag_against_truth_scale():
    spec = _spec(methods=("pgd",), bin_sizes=(0.1,), levels=(0.0,), runs=1)
    tight = run_sweep(spec, cf.ThreadPoolExecutor(1)).iloc[0]
    truth_norm = np.linalg.norm(SCENARIO.true_H(0.1, 40))
    assert tight["constraint_ratio"] == pytest.approx(0.2 / truth_norm)
    assert tight["shrunk"]
    auto = run_sweep(_spec(methods=("pgd",), bin_sizes=(0.1,), levels=(0.0,), runs=1, bound=None),
                     cf.ThreadPoolExecutor(1)).iloc[0]
    assert auto["constraint_ratio"] == pytest.approx(1.0) and not auto["shrunk"]
    assert auto["relative_error"] < tight["relative_error"]


def test_fixed_data_without_truth_uses_prediction_error():
    events = simulate(SCENARIO, n_events=400, seed=2)
    spec = SweepSpec(DataSource(events=events, label="data"), methods=("cls", "pgd"), bin_sizes=(0.5,),
                     levels=(0.0,), runs=2, bound=None, iters=30)
    frame = run_sweep(spec, cf.ThreadPoolExecutor(2))
    assert len(frame) == 4
    assert frame["relative_error"].isna().all()
    assert np.all(np.isfinite(frame["rmse"])) and np.all(frame["n_predictions"] > 0)
    # Fixed data: the non-private fit is the same for every seed.
    cls = frame[frame.method == "cls"]["rmse"].to_numpy()
    assert cls[0] == cls[1]
    assert (frame["constraint_source"][frame.method == "pgd"].str.contains("data-dependent")).all()


def test_bad_grids_are_refused():
    with pytest.raises(ConfigError):
        _spec(methods=("nope",))
    with pytest.raises(ConfigError):
        _spec(privacy="epsilon", levels=(0.0,))
    with pytest.raises(ConfigError):
        _spec(runs=0)
    with pytest.raises(ConfigError):
        DataSource(scenario=SCENARIO)


@pytest.mark.slow
def test_dask_local_cluster_gives_the_same_table(table):
    pytest.importorskip("distributed")
    with dask_executor("local", n_workers=2) as ex:
        remote = run_sweep(_spec(), ex)
    pd.testing.assert_frame_equal(_without_timing(remote), _without_timing(table))
    assert math.isclose(remote["relative_error"].sum(), table["relative_error"].sum())


@pytest.mark.slow
def test_cli_sweep_writes_the_table(tmp_path):
    from dphawkes_cli.main import main

    out = tmp_path / "sweep.parquet"
    code = main(["sweep", "--scenario", "paper-2d", "--events", "300", "--bin-size", "0.5", "1", "--sigma2", "0", "1",
                 "--method", "cls", "pgd", "--bound", "0.2", "--iters", "50", "--runs", "2", "--seed", "5",
                 "--workers", "2", "--out", str(out)])
    assert code == 0
    frame, params = load_table(out)
    assert params["levels"] == [0.0, 1.0] and params["runs"] == 2
    expected = run_sweep(_spec(), cf.ThreadPoolExecutor(2))
    pd.testing.assert_frame_equal(_without_timing(frame), _without_timing(expected), check_dtype=False)


def test_cli_sweep_bad_input_is_one_line(capsys):
    from dphawkes_cli.main import main

    assert main(["sweep", "--scenario", "paper-2d", "--events", "100", "--bin-size", "0.5", "--sigma2", "0",
                 "--out", "table.txt"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and ".csv or .parquet" in err


def test_an_exact_time_family_beside_a_binned_one_fits_its_own_statistics(pool):
    # ctls fits statistics of the exact event times, ssp the binned moments: in one group each gets its own, and
    # every cell equals the same FitConfig fitted directly on the same simulation (another path: fit() prepares
    # the statistics itself). The grid-free error is the step estimate against the kernel functions.
    from dphawkes_core.evaluation.lag_average import fit_steps
    from dphawkes_core.evaluation.metrics import kernel_function_error
    spec = _spec(methods=("ssp", "ctls"), bin_sizes=(0.5,), levels=(1e-6,), runs=1, count_cap=4, calibration="formal",
                 source=DataSource(scenario=SCENARIO, n_events=2000, label="paper-2d"))
    table = run_sweep(spec, pool)
    events = simulate(SCENARIO, n_events=2000, seed=5)
    for method in ("ssp", "ctls"):
        row = table[table.method == method].iloc[0]
        cfg = FitConfig(method=method, bin_size=0.5, lags=8, sigma2=1e-6, count_cap=4, calibration="formal",
                        seed=int(row["noise_seed"]))
        direct, _ = fit(events, cfg)
        assert row["relative_error"] == pytest.approx(compare(direct.H, SCENARIO.true_H(0.5, 8)).relative_error,
                                                      rel=1e-9)
        assert row["kernel_function_error"] == pytest.approx(kernel_function_error(fit_steps(direct), SCENARIO),
                                                             rel=1e-9)
    assert table.loc[table.method == "ctls", "relative_error"].iloc[0] != table.loc[table.method == "ssp",
                                                                                      "relative_error"].iloc[0]
