"""``fit --bin-size auto``: a formal fit chooses Δ and s inside its recorded release (a replay draws nothing),
another fit reads the exact count and says so; bad combinations exit 2 in one line."""

from __future__ import annotations

import json

import pytest

from dphawkes_cli.main import main
from dphawkes_core.data.io import save_csv
from dphawkes_core.data.kernels import get_scenario
from dphawkes_core.data.simulate import simulate
from dphawkes_core.privacy.time_scale import decays_from_count, time_scale_from_count


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


def _exp_formal(path, out, ledger, *extra):
    return ["fit", str(path), "--method", "exp", "--bin-size", "0.5", "--lags", "8", "--decays", "auto", "--epsilon",
            "1", "--calibration", "formal", "--count-cap", "5", "--end-time", "1000", "--dimensions", "2",
            "--sequences", "1", "--ledger", str(ledger), "--json", str(out), *extra]


def test_formal_auto_decays_come_from_the_noisy_count_inside_the_release_and_are_replayed(events_csv, tmp_path,
                                                                                           monkeypatch):
    path, _ = events_csv
    ledger = tmp_path / "l.json"
    assert main(_exp_formal(path, tmp_path / "a.json", ledger)) == 0
    first = json.loads((tmp_path / "a.json").read_text())
    chosen = first["ledger"]["time_scale"]
    assert first["formal_guarantee"] and chosen["applied"] == ["decays"]
    assert first["config"]["decays"] == pytest.approx(list(decays_from_count(1000.0, chosen["noisy_count"])))
    assert (first["bin_size"], first["lags"]) == (0.5, 8)  # the public w and p kept
    assert first["ledger"]["spent_epsilon"] == pytest.approx(1.0, rel=2e-3)

    def no_draws(*args, **kwargs):
        raise AssertionError("drawn again")

    monkeypatch.setattr("dphawkes_core.release.session.dp_time_scale", no_draws)
    assert main(_exp_formal(path, tmp_path / "b.json", ledger)) == 0
    again = json.loads((tmp_path / "b.json").read_text())
    assert again["ledger"]["replayed"] and again["ledger"]["time_scale"] == chosen
    assert again["config"]["decays"] == first["config"]["decays"] and again["kernels"] == first["kernels"]


def test_auto_decays_and_an_auto_bin_size_share_one_count(events_csv, tmp_path):
    path, _ = events_csv
    argv = _exp_formal(path, tmp_path / "a.json", tmp_path / "l.json")
    argv[argv.index("0.5")] = "auto"
    argv[argv.index("--lags"):argv.index("--lags") + 2] = []
    assert main(argv) == 0
    payload = json.loads((tmp_path / "a.json").read_text())
    chosen = payload["ledger"]["time_scale"]
    rule = time_scale_from_count(1000.0, chosen["noisy_count"])
    assert chosen["applied"] == ["time scale", "decays"] and (payload["bin_size"], payload["lags"]) == (
        rule.bin_size, rule.lags)
    assert payload["config"]["decays"] == pytest.approx(list(decays_from_count(1000.0, chosen["noisy_count"])))
    assert payload["ledger"]["spent_epsilon"] == pytest.approx(1.0, rel=2e-3)


def test_auto_decays_without_a_ledger_or_on_another_method_exit_2_in_one_line(events_csv, tmp_path, capsys):
    path, _ = events_csv
    argv = _exp_formal(path, tmp_path / "a.json", tmp_path / "l.json")
    del argv[argv.index("--ledger"):argv.index("--ledger") + 2]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--decays auto" in err[0] and "--ledger" in err[0]
    assert main(["fit", str(path), "--method", "ssp", "--bin-size", "1", "--lags", "3", "--decays", "auto",
                 "--sigma2", "0"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "decays" in err[0] and "Traceback" not in err[0]


def test_non_private_auto_decays_read_the_exact_count_and_say_so(events_csv, tmp_path, capsys):
    path, events = events_csv
    out = tmp_path / "c.json"
    assert main(["fit", str(path), "--method", "exp", "--bin-size", "0.5", "--lags", "8", "--decays", "auto",
                 "--sigma2", "0", "--end-time", "1000", "--json", str(out)]) == 0
    payload = json.loads(out.read_text())
    in_window = sum(int((t <= 1000).sum()) for t in events.sequences[0].times)
    assert payload["config"]["decays"] == pytest.approx(list(decays_from_count(1000.0, in_window)))
    assert "not a private choice" in capsys.readouterr().err
