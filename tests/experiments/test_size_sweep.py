"""The "how much data does ε need" sweep: one ordinary sweep per number of events."""

import concurrent.futures as cf

import pytest

from dphawkes_core.data.kernels import get_scenario
from dphawkes_core.data.simulate import simulate
from dphawkes_core.errors import ConfigError
from dphawkes_experiments.sweep import DataSource, SweepSpec, run_size_sweep, run_sweep, size_specs

SCENARIO = get_scenario("paper-2d")


def spec(**source):
    return SweepSpec(DataSource(scenario=SCENARIO, label="paper-2d", **({"n_events": 100} | source)),
                     methods=("cls", "ssp"), bin_sizes=(0.5,), privacy="epsilon", levels=(1.0,), runs=2,
                     calibration="formal", count_cap=5)


def test_size_specs_are_sorted_distinct_and_keep_every_other_setting():
    specs = size_specs(spec(), [3000, 300, 3000])
    assert [s.source.n_events for s in specs] == [300, 3000]
    assert all(s.methods == ("cls", "ssp") and s.count_cap == 5 and s.runs == 2 for s in specs)
    assert specs[0].source.fingerprint != specs[1].source.fingerprint  # cells of different sizes never collide


@pytest.mark.parametrize("sizes", [[], [0, 100]])
def test_size_specs_refuse_no_or_empty_sizes(sizes):
    with pytest.raises(ConfigError, match="number of events"):
        size_specs(spec(), sizes)


def test_size_specs_refuse_fixed_data():
    fixed = SweepSpec(DataSource(scenario=SCENARIO, events=simulate(SCENARIO, n_events=200, seed=0)))
    with pytest.raises(ConfigError, match="simulates every size"):
        size_specs(fixed, [100])


def test_run_size_sweep_equals_one_sweep_per_size_with_progress_over_all():
    seen = []
    with cf.ThreadPoolExecutor(2) as pool:
        frame = run_size_sweep(spec(), [200, 400], pool, progress=lambda done, total, rows: seen.append((done, total)))
        direct = [run_sweep(one, pool) for one in size_specs(spec(), [200, 400])]
    assert len(frame) == 2 * 2 * 2  # sizes × methods × runs
    for one in direct:
        n = one["n_events_requested"].iloc[0]
        shown = frame[frame["n_events_requested"] == n].sort_values(["method", "seed"])["relative_error"]
        assert list(shown) == pytest.approx(list(one.sort_values(["method", "seed"])["relative_error"]), rel=1e-12)
    assert [t for _, t in seen] == [8] * len(seen) and seen[-1][0] == 8
    assert [d for d, _ in seen] == sorted(d for d, _ in seen)
    assert len(run_size_sweep(spec(), [200, 400], done=set(frame["key"]))) == 0  # finished cells are skipped
