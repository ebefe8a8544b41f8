"""``fit --bin-size auto``: a formal fit chooses Δ and s inside its recorded release (a replay draws nothing),
another fit reads the exact count and says so; bad combinations exit 2 in one line."""

from __future__ import annotations

import json

import pytest

from dphawkes_cli.main import main
from dphawkes_core.data.io import save_csv
from dphawkes_core.data.kernels import get_scenario
from dphawkes_core.data.simulate import simulate
from dphawkes_core.privacy.selection import time_scale_from_count


@pytest.fixture
def events_csv(tmp_path):
    events = simulate(get_scenario("paper-2d"), n_events=3000, seed=11)
    path = tmp_path / "events.csv"
    save_csv(events, path)
    return path, events


def _formal(path, out, ledger, *extra):
    return ["fit", str(path), "--method", "ssp", "--bin-size", "auto", "--epsilon", "1", "--calibration", "formal",
            "--count-cap", "3", "--end-time", "1000", "--dimensions", "2", "--sequences", "1", "--ledger",
            str(ledger), "--json", str(out), *extra]


def test_a_formal_auto_scale_is_drawn_once_and_replayed(events_csv, tmp_path, monkeypatch):
    path, _ = events_csv
    ledger = tmp_path / "l.json"
    assert main(_formal(path, tmp_path / "a.json", ledger)) == 0
    first = json.loads((tmp_path / "a.json").read_text())
    scale = first["ledger"]["time_scale"]
    assert first["formal_guarantee"] and (first["bin_size"], first["lags"]) == (scale["bin_size"], scale["lags"])
    assert first["ledger"]["spent_epsilon"] == pytest.approx(1.0, rel=2e-3)

    def no_draws(*args, **kwargs):
        raise AssertionError("drawn again")

    monkeypatch.setattr("dphawkes_core.release.session.dp_time_scale", no_draws)
    assert main(_formal(path, tmp_path / "b.json", ledger)) == 0
    again = json.loads((tmp_path / "b.json").read_text())
    assert again["ledger"]["replayed"] and again["ledger"]["time_scale"] == scale
    assert again["kernels"] == first["kernels"]


def test_a_formal_auto_scale_without_a_ledger_is_refused(events_csv, tmp_path, capsys):
    path, _ = events_csv
    argv = [a for a in _formal(path, tmp_path / "a.json", tmp_path / "l.json") if a not in ("--ledger",)]
    argv.remove(str(tmp_path / "l.json"))
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--ledger" in err[0] and "Traceback" not in err[0]


def test_a_non_private_auto_scale_reads_the_exact_count_and_says_so(events_csv, tmp_path, capsys):
    path, events = events_csv
    out = tmp_path / "c.json"
    assert main(["fit", str(path), "--bin-size", "auto", "--json", str(out)]) == 0
    exact = time_scale_from_count(events.end_time, events.n_events)
    payload = json.loads(out.read_text())
    assert (payload["bin_size"], payload["lags"]) == (exact.bin_size, exact.lags)
    assert "not a private choice" in capsys.readouterr().err


def test_a_partitioned_auto_scale_is_refused(tmp_path, capsys):
    (tmp_path / "parts").mkdir()
    assert main(["fit", str(tmp_path / "parts"), "--bin-size", "auto"]) == 2
    assert "partitioned" in capsys.readouterr().err
