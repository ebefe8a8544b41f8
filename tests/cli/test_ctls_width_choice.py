"""``fit --method ctls --ctls-width-choice validation``: one line on stderr names the chosen w and s, the export
holds the estimate on the declared fine grid, ``score`` and ``--holdout-start`` read it as any fit, a ledger records
it and a replay draws nothing and returns the same choice, and every refusal is one line with exit 2."""

from __future__ import annotations

import json

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from cli_tools import run

import dphawkes_core.estimators.grid_free.width_choice as width_choice
from dphawkes_cli.main import main

CHOICE = ["--method", "ctls", "--ctls-width-choice", "validation"]
REPLAYS = 3



@pytest.fixture(scope="module")
def simulated(tmp_path_factory):
    path = tmp_path_factory.mktemp("width") / "events.csv"
    assert main(["simulate", "--scenario", "paper-2d", "--events", "3000", "--seed", "2", "--out", str(path)]) == 0
    end = float(np.loadtxt(path, delimiter=",", skiprows=1, usecols=0).max()) + 1.0
    return path, end


def _no_draws(*args, **kwargs):
    raise AssertionError("the release of the two blocks was drawn again")


def test_a_fit_says_the_chosen_width_and_support_and_exports_the_fine_grid(simulated, tmp_path, capsys):
    path, _ = simulated
    out = tmp_path / "fit.json"
    code, _, err = run(["fit", path, *CHOICE, "--bin-size", "0.25", "--support", "4", "--sigma2", "0", "--json",
                        out], capsys)
    assert code == 0, err
    payload = json.loads(out.read_text())
    info = payload["solver_info"]
    lines = [line for line in err.splitlines() if "chosen inside the release" in line]
    assert lines == [f"note: width w = {info['chosen_width']:g} and support s = {info['chosen_support']:g} chosen "
                     "inside the release by the validation contrast (post-processing: no extra privacy cost)"]
    assert payload["bin_size"] == 0.25 and payload["lags"] == 16
    assert np.asarray(payload["kernels"]).shape == (2, 2, 16)
    assert len(info["candidates"]) == len(width_choice.candidate_grid(16)) and info["width_choice"] == "validation"
    assert payload["ctls_width_choice"] == "validation" and payload["ctls_validation_share"] == 30.0


def test_score_and_holdout_read_the_chosen_fit(simulated, tmp_path, capsys):
    path, _ = simulated
    times = np.loadtxt(path, delimiter=",", skiprows=1, usecols=0)
    cut = float(np.quantile(times, 0.6))
    out = tmp_path / "fit.json"
    code, _, err = run(["fit", path, *CHOICE, "--bin-size", "0.25", "--support", "4", "--sigma2", "0",
                        "--holdout-start", cut, "--json", out], capsys)
    assert code == 0, err
    heldout = json.loads(out.read_text())["heldout"]
    code, scored, err = run(["score", out, path, "--holdout-start", cut], capsys)
    assert code == 0, err
    scored = json.loads(scored)
    assert scored["loglik_per_event"] == pytest.approx(heldout["loglik_per_event"], rel=1e-12)
    assert scored["n_test_events"] == np.count_nonzero(times >= cut)


def test_a_ledger_records_the_choice_and_a_replay_draws_nothing(simulated, tmp_path, capsys, monkeypatch):
    path, end = simulated
    ledger = tmp_path / "ledger.json"
    argv = ["fit", path, *CHOICE, "--bin-size", "0.25", "--support", "4", "--epsilon", "1", "--calibration",
            "formal", "--count-cap", "3", "--end-time", end, "--dimensions", "2", "--ledger", ledger]
    code, _, err = run([*argv, "--json", tmp_path / "first.json"], capsys)
    assert code == 0, err
    first = json.loads((tmp_path / "first.json").read_text())
    assert first["formal_guarantee"] and first["ledger"]["metered"] and not first["ledger"]["replayed"]
    note = next(line for line in err.splitlines() if "chosen inside the release" in line)
    monkeypatch.setattr(width_choice, "release_blocks", _no_draws)
    for k in range(REPLAYS):
        out = tmp_path / f"again{k}.json"
        code, _, err = run([*argv, "--json", out], capsys)
        assert code == 0, err
        again = json.loads(out.read_text())
        assert again["ledger"]["replayed"] and again["kernels"] == first["kernels"]
        assert again["ledger"]["spent_epsilon"] == first["ledger"]["spent_epsilon"]
        assert again["solver_info"]["candidates"] == first["solver_info"]["candidates"]
        assert note in err.splitlines()
    code, _, err = run([*argv[:-2], "--ctls-width-choice", "stated", "--ledger", ledger, "--json",
                        tmp_path / "stated.json"], capsys)  # the other choice is another request: drawn, spent
    assert code == 0, err
    assert not json.loads((tmp_path / "stated.json").read_text())["ledger"]["replayed"]


def _write_store(folder, path):
    data = np.loadtxt(path, delimiter=",", skiprows=1)
    folder.mkdir()
    half = data.shape[0] // 2
    for k, rows in enumerate((data[:half], data[half:])):
        pq.write_table(pa.table({"time": rows[:, 0], "dimension": rows[:, 1].astype(np.int64)}),
                       folder / f"part-{k}.parquet")
    return str(folder / "*.parquet")


@pytest.mark.parametrize("case", ["sequence unit", "one candidate", "short window", "partitioned", "share"])
def test_each_refusal_is_one_line_with_exit_2(simulated, tmp_path, capsys, case):
    path, end = simulated
    fine = ["--bin-size", "0.25", "--support", "4", "--epsilon", "1", "--calibration", "formal"]
    argv = {
        "sequence unit": [path, *fine, "--privacy-unit", "sequence", "--max-events", "50", "--end-time", end],
        "one candidate": [path, "--bin-size", "1", "--lags", "1", "--sigma2", "0"],
        "short window": [path, *fine, "--count-cap", "3", "--end-time", "12", "--support", "4"],
        "partitioned": [_write_store(tmp_path / "store", path), *fine, "--count-cap", "3", "--end-time", end],
        "share": [path, *fine, "--count-cap", "3", "--end-time", end, "--ctls-validation-share", "100"],
    }[case]
    code, _, err = run(["fit", *argv, *CHOICE], capsys)
    message = {"sequence unit": "event unit", "one candidate": "one candidate", "short window": "validation block",
               "partitioned": "partitioned store", "share": "below 100"}[case]
    assert code == 2 and err.startswith("error: ") and message in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
