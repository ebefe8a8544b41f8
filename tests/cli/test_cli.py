"""CLI round trips, every shared data set, and one-line error exits."""

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from cli_tools import run

from dphawkes_cli.main import main
from dphawkes_core.data.datasets import default_data_dir
from dphawkes_core.data.io import load_csv
from dphawkes_core.privacy.report import NOT_RELEASED

DATA = default_data_dir()
# (folder, bin size, support) in each data set's own time unit
REAL = [
    ("email_dyad", 12.0, 120.0),
    ("japan_quakes_zones", 1.0, 20.0),
    ("mat_quakes_magnitude", 5.0, 100.0),
    ("nyc_taxi", 0.25, 2.0),
]



@pytest.fixture(scope="module")
def simulated(tmp_path_factory):
    path = tmp_path_factory.mktemp("cli") / "events.csv"
    assert main(["simulate", "--scenario", "paper-2d", "--events", "1000", "--seed", "1", "--out", str(path)]) == 0
    return path


def test_simulate_writes_a_valid_csv(simulated):
    events = load_csv(simulated)
    assert events.n_events == 1000 and events.dim == 2


def test_fit_round_trip_with_truth(simulated, tmp_path, capsys):
    out = tmp_path / "out.json"
    code, _, err = run(["fit", str(simulated), "--bin-size", "0.1", "--support", "5", "--method", "cls",
                        "--scenario", "paper-2d", "--json", str(out)], capsys)
    assert code == 0, err
    payload = json.loads(out.read_text())
    for key in ("method", "bin_size", "lags", "n_bins", "n_events", "dropped_events", "baseline", "kernels",
                "elapsed_s", "relative_error_paper", "relative_error", "zero_estimate_relative_error"):
        assert key in payload
    assert payload["lags"] == 50 and payload["n_events"] == 1000
    assert np.asarray(payload["kernels"]).shape == (2, 2, 50)
    assert len(payload["baseline"]) == 2
    assert payload["zero_estimate_relative_error"] == 1.0
    assert payload["relative_error_paper"] == pytest.approx(payload["relative_error"] / (2 * 101))


def _window_end(path) -> str:
    """A public window end at or after the last event (what a user states with --end-time)."""
    return str(float(np.ceil(load_csv(path).end_time)))


def test_private_fit_reports_every_calibration(simulated, tmp_path, capsys):
    out = tmp_path / "pgd.json"
    code, _, err = run(["fit", str(simulated), "--bin-size", "0.5", "--lags", "10", "--method", "pgd",
                        "--bound", "0.5", "--iters", "50", "--epsilon", "1", "--dp-delta", "1e-5",
                        "--calibration", "formal", "--count-cap", "4", "--end-time", _window_end(simulated),
                        "--dimensions", "2", "--json", str(out)], capsys)
    assert code == 0, err
    p = json.loads(out.read_text())
    for key in ("sigma2", "epsilon", "dp_delta", "calibration", "sensitivity", "R", "count_cap", "iters",
                "bound", "loss_history", "epsilon_by_calibration"):
        assert key in p
    assert p["epsilon_by_calibration"]["formal"] == pytest.approx(1.0, rel=1e-6)
    assert len(p["loss_history"]) == 51 and p["formal_settings"] is True  # formal settings; not a session's
    assert p["formal_guarantee"] is False and p["formal_reasons"] == [NOT_RELEASED]  # release without --ledger
    # σ² given directly: ε is reported under each calibration, the paper's one labelled
    out2 = tmp_path / "cg.json"
    code, _, err = run(["fit", str(simulated), "--bin-size", "0.5", "--lags", "10", "--method", "cg",
                        "--radius", "1", "--sigma2", "0.01", "--json", str(out2)], capsys)
    assert code == 0, err
    q = json.loads(out2.read_text())
    assert q["sigma2"] == 0.01 and q["formal_guarantee"] is False
    assert (q["radius"], q["iters"], q["fw_step"]) == (1, 100, "paper")  # DP-CG's options, K at its default
    assert not {"bound", "clip", "step"} & set(q)  # only the options DP-CG reads
    assert q["epsilon_by_calibration"]["formal"] is None  # no count cap, no formal claim
    assert "NOT a formal guarantee" in q["note"]


@pytest.mark.parametrize("name, bin_size, support", REAL)
def test_every_shared_data_set_loads_and_fits(name, bin_size, support, tmp_path, capsys):
    path = DATA / name / "events.csv"
    if not path.is_file():
        pytest.skip(f"shared data set {path} not present")
    out = tmp_path / "fit.json"
    code, _, err = run(["fit", str(path), "--bin-size", str(bin_size), "--support", str(support),
                        "--json", str(out)], capsys)
    assert code == 0, err
    payload = json.loads(out.read_text())
    events = load_csv(path)
    assert payload["n_events"] == events.n_events
    assert payload["dim"] == events.dim
    assert np.all(np.isfinite(payload["baseline"]))
    if name == "nyc_taxi":  # many short sequences, each binned on its own window
        assert events.n_sequences == 2000
        assert payload["n_bins"] == sum(int(s.end_time // bin_size) for s in events.sequences)


BAD_CSV = {
    "nan.csv": "time,dimension\n1.0,0\nnan,1\n",
    "negative.csv": "time,dimension\n-2,0\n",
    "columns.csv": "when,dimension\n1,0\n",
    "empty.csv": "",
}


@pytest.mark.parametrize(
    "argv_tail, fragment",
    [
        (["--bin-size", "0.1", "--support", "5"], "no such file"),
        (["--bin-size", "-1", "--support", "5"], "positive number"),
        (["--bin-size", "1e-7", "--support", "5"], "limit"),
        (["--bin-size", "0.001", "--support", "100"], "limit"),
        (["--bin-size", "0.1", "--support", "5", "--method", "pgd", "--epsilon", "1"], "bound B"),
        (["--bin-size", "0.1", "--support", "5", "--method", "pgd", "--bound", "1"], "needs --epsilon"),
        (["--bin-size", "0.1", "--support", "5", "--method", "pgd", "--bound", "1", "--epsilon", "1",
          "--calibration", "formal", "--end-time", "2000"], "count cap"),
        (["--bin-size", "0.1", "--support", "5", "--method", "ssp", "--count-cap", "3", "--epsilon", "1",
          "--calibration", "formal"], "declared observation window"),
        (["--bin-size", "0.1"], "one of the arguments --support --lags is required"),
    ],
)
def test_bad_arguments_exit_2_with_one_line(simulated, argv_tail, fragment, capsys):
    target = "/nonexistent/events.csv" if fragment == "no such file" else str(simulated)
    code, out, err = run(["fit", target, *argv_tail], capsys)
    assert code == 2
    assert fragment in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


@pytest.mark.parametrize("method, option, message", [
    (["--method", "ssp", "--count-cap", "3", "--calibration", "formal"], ["--bound", "1"],
     "DP-SSP does not read bound (an option of DP-PGD, clipped DP-PGD; flag --bound)"),
    (["--method", "pgd", "--bound", "1"], ["--radius", "1"],
     "DP-PGD does not read radius (an option of DP-CG; flag --radius)"),
    (["--method", "cg", "--radius", "1"], ["--clip", "1"],
     "DP-CG does not read clip (an option of clipped DP-PGD; flag --clip)"),
    (["--method", "pgd", "--bound", "1"], ["--ssp-allow-negative"],  # the flag, not the option's name alone
     "DP-PGD does not read ssp_nonnegative (an option of DP-SSP; flag --ssp-allow-negative)"),
    (["--method", "cls"], ["--iters", "5"], "CLS does not read iters"),
])
def test_an_option_the_method_does_not_read_exits_2_naming_it(simulated, method, option, message, capsys):
    """An option of another family is refused, never silently ignored (it could not then change the release)."""
    privacy = [] if "cls" in method else ["--epsilon", "1", "--end-time", _window_end(simulated)]
    code, out, err = run(["fit", str(simulated), "--bin-size", "0.5", "--lags", "4", *method, *privacy, *option],
                         capsys)
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert err.startswith("error: ") and message in err


@pytest.mark.parametrize("name", sorted(BAD_CSV))
def test_bad_files_exit_2_with_one_line(name, tmp_path, capsys):
    path = tmp_path / name
    path.write_text(BAD_CSV[name])
    code, _, err = run(["fit", str(path), "--bin-size", "0.1", "--support", "1"], capsys)
    assert code == 2 and len(err.strip().splitlines()) == 1 and err.startswith("error:")


def test_console_script_runs_as_a_process(simulated, tmp_path):
    exe = Path(sys.executable).with_name("dphawkes")
    proc = subprocess.run([str(exe), "fit", str(simulated), "--bin-size", "0.5", "--lags", "4"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["lags"] == 4
    bad = subprocess.run([str(exe), "fit", str(simulated), "--bin-size", "zero", "--lags", "4"],
                         capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and "Traceback" not in bad.stderr


def test_the_grid_free_fit_without_noise_needs_no_calibration_or_window(simulated, tmp_path, capsys):
    # ctls has only the formal calibration, so it is the default; σ² = 0 is the exact non-private fit, which
    # claims nothing and needs no public window — equal to the same fit made in the core
    from dphawkes_core.estimators import FitConfig, fit
    out = tmp_path / "ctls.json"
    code, _, err = run(["fit", str(simulated), "--bin-size", "0.5", "--support", "4", "--method", "ctls",
                        "--sigma2", "0", "--json", str(out)], capsys)
    assert code == 0, err
    payload = json.loads(out.read_text())
    assert payload["calibration"] == "formal" and payload["formal_guarantee"] is False
    assert any("σ² = 0" in reason for reason in payload["formal_reasons"])
    direct, _ = fit(load_csv(simulated), FitConfig(method="ctls", bin_size=0.5, lags=8, sigma2=0.0,
                                                   calibration="formal"))
    np.testing.assert_allclose(payload["kernels"], direct.kernels, rtol=1e-12)
    # with noise it claims the formal guarantee, so the public window is asked for, in one line
    code, _, err = run(["fit", str(simulated), "--bin-size", "0.5", "--support", "4", "--method", "ctls",
                        "--epsilon", "1", "--count-cap", "3"], capsys)
    assert code == 2 and err.strip().splitlines()[-1].startswith("error: the formal calibration needs a declared")


@pytest.mark.parametrize("count, words", [(0, "no formal release"), (1, "one formal release"),
                                          (3, "3 formal releases")])
def test_the_migrate_summary_counts_releases_in_words(count, words):
    from dphawkes_cli.ledger import _releases

    assert _releases(count) == words
