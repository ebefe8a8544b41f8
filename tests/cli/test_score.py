"""``dphawkes score`` and ``fit --holdout-start``: the same numbers both ways, the fit made on the training part only,
tick's score on real data, and one-line exits on bad input."""

import json

import numpy as np
import pytest
from cli_tools import run

from dphawkes_cli.inputs import load_events_file
from dphawkes_cli.main import main
from dphawkes_cli.score import _fit_kernels
from dphawkes_core.data.datasets import default_data_dir
from dphawkes_core.evaluation.exp_kernels import ExponentialKernels
from dphawkes_core.evaluation.lag_average import average_lags
from dphawkes_experiments.prediction import heldout_split, score_heldout

JAPAN = default_data_dir() / "japan_quakes_zones" / "events.csv"



@pytest.fixture(scope="module")
def simulated(tmp_path_factory):
    path = tmp_path_factory.mktemp("score") / "events.csv"
    assert main(["simulate", "--scenario", "paper-2d", "--events", "3000", "--seed", "2", "--out", str(path)]) == 0
    return path


FIT = ["--bin-size", "0.5", "--support", "4", "--method", "ctls", "--sigma2", "0"]


def test_fit_holdout_fits_on_the_training_part_and_score_agrees(simulated, tmp_path, capsys):
    lines = simulated.read_text().splitlines()
    times = np.array([float(line.split(",")[0]) for line in lines[1:]])
    cut = float(np.quantile(times, 0.6))
    code, out, err = run(["fit", simulated, *FIT, "--holdout-start", cut, "--json", tmp_path / "fit.json"], capsys)
    assert code == 0, err
    payload = json.loads((tmp_path / "fit.json").read_text())
    heldout = payload["heldout"]
    assert "not private" in heldout["note"] and f"held-out verdict: {heldout['verdict_text']}" in err
    assert heldout["verdict"] == "better" and heldout["verdict_text"].startswith("better than a constant rate")
    # The fit is the fit of the events before the cut, on the window [0, cut).
    before = tmp_path / "before.csv"
    before.write_text("\n".join([lines[0]] + [line for line, t in zip(lines[1:], times) if t < cut]) + "\n")
    assert run(["fit", before, *FIT, "--end-time", cut, "--json", tmp_path / "before.json"], capsys)[0] == 0
    np.testing.assert_allclose(payload["kernels"], json.loads((tmp_path / "before.json").read_text())["kernels"],
                               rtol=1e-12, atol=1e-15)
    assert heldout["n_test_events"] == np.count_nonzero(times >= cut)
    assert heldout["n_train_events"] == np.count_nonzero(times < cut)
    # `score` on the exported fit reports the same numbers.
    code, out, err = run(["score", tmp_path / "fit.json", simulated, "--holdout-start", cut], capsys)
    assert code == 0, err
    scored = json.loads(out)
    for key in ("loglik_per_event", "poisson_loglik_per_event", "gain_over_poisson", "gain_standard_error",
                "n_test_events", "nonpositive_intensity_events"):
        assert scored[key] == pytest.approx(heldout[key], rel=1e-12)
    assert scored["gain_over_poisson"] > 0  # a non-negative fit of a self-exciting process beats Poisson


@pytest.mark.parametrize("argv, message", [
    (["--holdout-start", "1e9"], "inside the window"),
    ([], "give --holdout-start"),
    (["--holdout-start", "100", "--train-fraction", "0.5"], "--train-fraction splits several sequences"),
    (["--holdout-start", "soon"], "is not a number"),
])
def test_score_refuses_bad_splits_in_one_line(simulated, tmp_path, capsys, argv, message):
    fit_json = tmp_path / "fit.json"
    assert run(["fit", simulated, *FIT, "--json", fit_json], capsys)[0] == 0
    code, out, err = run(["score", fit_json, simulated, *argv], capsys)
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1 and out == ""


def test_score_refuses_a_file_that_is_not_a_fit(simulated, tmp_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text('{"kernels": [[1]]}')
    code, _, err = run(["score", bad, simulated, "--holdout-start", "100"], capsys)
    assert code == 2 and "is not a fit's JSON" in err and len(err.strip().splitlines()) == 1
    other = tmp_path / "1d.csv"
    other.write_text("time,dimension\n1.0,0\n2.5,0\n")
    assert run(["fit", other, "--bin-size", "1", "--lags", "1", "--json", tmp_path / "1d.json"], capsys)[0] == 0
    code, _, err = run(["score", tmp_path / "1d.json", simulated, "--holdout-start", "100"], capsys)
    assert code == 2 and "1 dimensions, the data 2" in err


def test_holdout_start_is_read_on_the_datetime_axis_like_the_window(tmp_path, capsys):
    """ISO datetimes fitted in hours on a stated window: ``--holdout-start`` is a datetime on the same axis."""
    rng = np.random.default_rng(5)
    hours = np.sort(rng.uniform(0, 500, 400))
    stamps = np.datetime64("2024-01-01T00:00:00") + (hours * 3600).astype("timedelta64[s]")
    events = tmp_path / "log.csv"
    events.write_text("time,dimension\n" + "".join(f"{s},{j}\n" for s, j in zip(stamps, rng.integers(0, 2, 400))))
    window = ["--start-time", "2024-01-01", "--end-time", "2024-01-21T20:00:00", "--time-unit", "h"]
    code, _, err = run(["fit", events, "--bin-size", "1", "--support", "4", *window, "--holdout-start",
                        "2024-01-15T12:00:00", "--json", tmp_path / "fit.json"], capsys)
    assert code == 0, err
    heldout = json.loads((tmp_path / "fit.json").read_text())["heldout"]
    cut = 14 * 24 + 12  # hours after the window start
    assert heldout["n_train_events"] == np.count_nonzero(hours < cut)
    assert heldout["n_test_events"] == np.count_nonzero(hours >= cut)
    code, _, err = run(["score", tmp_path / "fit.json", events, *window, "--holdout-start", "2024-01-15T12:00:00",
                        "--json", tmp_path / "score.json"], capsys)
    assert code == 0, err
    assert json.loads((tmp_path / "score.json").read_text())["loglik_per_event"] == heldout["loglik_per_event"]


def test_several_sequences_are_split_by_a_share_in_fit_and_score(tmp_path, capsys):
    rng = np.random.default_rng(6)
    rows = [(k, t, j) for k in range(5) for t, j in zip(np.sort(rng.uniform(0, 50, 60)), rng.integers(0, 2, 60))]
    events = tmp_path / "seq.csv"
    events.write_text("sequence,time,dimension\n" + "".join(f"{k},{t},{j}\n" for k, t, j in rows))
    code, _, err = run(["fit", events, "--bin-size", "1", "--lags", "3", "--end-time", "50", "--train-fraction",
                        "0.6", "--json", tmp_path / "fit.json"], capsys)
    assert code == 0, err
    heldout = json.loads((tmp_path / "fit.json").read_text())["heldout"]
    assert heldout["split"] == "sequences" and heldout["n_blocks"] == 2 and heldout["test_sequences"] == 2
    assert heldout["n_train_events"] == 180 and heldout["n_test_events"] == 120
    code, out, err = run(["score", tmp_path / "fit.json", events, "--end-time", "50", "--train-fraction", "0.6"],
                         capsys)
    assert code == 0, err
    assert json.loads(out)["gain_over_poisson"] == heldout["gain_over_poisson"]
    code, _, err = run(["score", tmp_path / "fit.json", events, "--end-time", "50", "--holdout-start", "30"], capsys)
    assert code == 2 and "several sequences are split by --train-fraction" in err


def test_sweep_on_data_scores_from_the_holdout_start(simulated, tmp_path, capsys):
    times = np.array([float(line.split(",")[0]) for line in simulated.read_text().splitlines()[1:]])
    cut = float(np.quantile(times, 0.5))
    out = tmp_path / "sweep.csv"
    code, _, err = run(["sweep", "--data", simulated, "--bin-size", "0.5", "--support", "3", "--sigma2", "0",
                        "--method", "cls", "--runs", "1", "--workers", "1", "--holdout-start", cut, "--out", out],
                       capsys)
    assert code == 0, err
    import pandas as pd

    row = pd.read_csv(out).iloc[0]
    assert row["heldout_events"] == np.count_nonzero(times >= cut)
    code, _, err = run(["sweep", "--data", simulated, "--bin-size", "0.5", "--sigma2", "0", "--holdout-start", "-1",
                        "--out", out], capsys)
    assert code == 2 and "inside the window" in err


@pytest.mark.skipif(not JAPAN.exists(), reason=f"the shared data set is absent: {JAPAN}")
def test_real_data_score_matches_ticks_score_of_hawkes_em(tmp_path, capsys):
    """Japan quakes, window [0, 3652) days (its PROVENANCE.md), cut at 70 %: tick's HawkesEM fitted on the training
    part (s = 5 days, 20 steps) is scored by ``dphawkes score`` as tick scores it (full minus training part), and it
    beats Poisson, as the issue measured."""
    from tick.hawkes import HawkesEM

    from dphawkes_core.data.io import load_csv

    cut, end = 0.7 * 3652, 3652.0
    events = load_csv(JAPAN, end_time=end)
    times = [np.asarray(t) for t in events.sequences[0].times]
    train = [t[t < cut] for t in times]
    em = HawkesEM(kernel_support=5.0, kernel_size=20, max_iter=100, tol=1e-10)
    em.fit(train, end_times=cut)
    grid = 0.25 * np.arange(1, 21)
    fit_json = tmp_path / "em.json"
    fit_json.write_text(json.dumps({"kernels": em.kernel.tolist(), "baseline": em.baseline.tolist(),
                                    "lag_grid": grid.tolist()}))
    code, out, err = run(["score", fit_json, JAPAN, "--end-time", "3652", "--holdout-start", cut], capsys)
    assert code == 0, err
    scored = json.loads(out)

    def loglik(sample, window):
        n = sum(len(t) for t in sample)
        return em.score(events=sample, end_times=window, baseline=em.baseline, kernel=em.kernel) * n - 5 * window

    expected = (loglik(times, end) - loglik(train, cut)) / scored["n_test_events"]
    assert scored["n_test_events"] == sum(np.count_nonzero(t >= cut) for t in times)
    assert scored["nonpositive_intensity_events"] == 0
    assert scored["loglik_per_event"] == pytest.approx(expected, rel=1e-9)
    assert scored["gain_over_poisson"] > 2 * scored["gain_standard_error"] > 0


@pytest.mark.skipif(not JAPAN.exists(), reason=f"the shared data set is absent: {JAPAN}")
def test_real_data_zero_intensities_are_counted_and_said(tmp_path, capsys):
    """A non-private ctls fit on Japan quakes without the baseline floor has zero baselines: the events where its
    intensity is 0 are counted (brute force over the exported step kernels), the score reads it as at least the
    floor there and the verdict says those events could not happen; with the floor (the default) there are none."""
    from dphawkes_core.data.io import load_csv

    cut = 0.7 * 3652
    fit = ["fit", JAPAN, "--end-time", "3652", "--bin-size", "0.25", "--support", "5", "--method", "ctls",
           "--sigma2", "0", "--holdout-start", cut, "--json", tmp_path / "fit.json"]
    code, _, err = run([*fit, "--baseline-floor", "0"], capsys)
    assert code == 0, err
    payload = json.loads((tmp_path / "fit.json").read_text())
    table = payload["kernel_functions"]
    edges, right = np.asarray(table["t"])[::2], np.asarray(table["values"])[:, :, 1::2]
    seq = load_csv(JAPAN, end_time=3652).sequences[0]
    times = np.concatenate(seq.times)
    dims = np.concatenate([np.full(len(t), j) for j, t in enumerate(seq.times)])
    zero = 0
    for t, i in zip(times[times >= cut], dims[times >= cut]):
        lag = t - times
        near = (lag > 0) & (lag <= edges[-1])
        index = np.searchsorted(edges, lag[near], side="left") - 1
        zero += payload["baseline"][i] + right[i, dims[near], index].sum() <= 0
    heldout = payload["heldout"]
    assert heldout["nonpositive_intensity_events"] == zero > 0 and heldout["rectified"]
    assert np.isfinite(heldout["loglik_per_event"]) and heldout["gain_standard_error"] > 0
    assert f"the fit says {zero:,} of the {heldout['n_test_events']:,} test events could not happen" \
        in heldout["verdict_text"]
    code, _, err = run(fit, capsys)
    assert code == 0, err
    floored = json.loads((tmp_path / "fit.json").read_text())
    assert floored["heldout"]["nonpositive_intensity_events"] == 0 and not floored["heldout"]["rectified"]
    assert min(floored["baseline"]) > 0


def test_score_reads_an_exp_fit_as_its_exponential_sums_like_fit_holdout(simulated, tmp_path, capsys):
    """An exp fit's JSON is scored on its exponential sums (``solver_info``), as ``fit --holdout-start`` scores
    the fit in process; its step kernels on the lag grid would give another score."""
    cut = 1500.0
    argv = ["--method", "exp", "--decays", "0.7,2", "--bin-size", "0.5", "--support", "4", "--sigma2", "0"]
    code, _, err = run(["fit", simulated, *argv, "--holdout-start", cut, "--json", tmp_path / "fit.json"], capsys)
    assert code == 0, err
    heldout = json.loads((tmp_path / "fit.json").read_text())["heldout"]
    code, out, err = run(["score", tmp_path / "fit.json", simulated, "--holdout-start", cut], capsys)
    assert code == 0, err
    scored = json.loads(out)
    for key in ("loglik_per_event", "gain_over_poisson", "gain_standard_error", "n_test_events",
                "nonpositive_intensity_events"):
        assert scored[key] == pytest.approx(heldout[key], rel=1e-12)
    kernels, _ = _fit_kernels(tmp_path / "fit.json")
    assert isinstance(kernels, ExponentialKernels)
    payload = json.loads((tmp_path / "fit.json").read_text())
    steps = average_lags(np.asarray(payload["kernels"]), np.asarray(payload["baseline"]), 0.5, 1)
    split = heldout_split(load_events_file(str(simulated)), cut)
    as_steps = score_heldout(steps, steps.baseline, split).loglik_per_event
    assert abs(as_steps - scored["loglik_per_event"]) > 1e-6 * abs(scored["loglik_per_event"])


def test_a_baseline_that_follows_the_clock_is_fitted_exported_and_scored_the_same_way(tmp_path, capsys):
    """``--baseline-period 24 --baseline-bins 4`` on hours whose rate follows the day: the fit's JSON carries the
    parts (``solver_info``), ``score`` reads them and gives ``fit --holdout-start``'s numbers, and the parts predict
    better than the constant baseline the same fit would have."""
    rng = np.random.default_rng(12)
    candidates = np.sort(rng.uniform(0, 2400, 2000))
    hours = candidates[rng.uniform(0, 1, candidates.size) < 0.5 + 0.45 * np.sin(2 * np.pi * candidates / 24)]
    events = tmp_path / "daily.csv"
    events.write_text("time,dimension\n" + "".join(f"{t},0\n" for t in hours))
    argv = ["--end-time", "2400", "--method", "mle", "--bin-size", "1", "--support", "4"]
    code, _, err = run(["fit", events, *argv, "--baseline-period", "24", "--baseline-bins", "4", "--holdout-start",
                        "1700", "--json", tmp_path / "daily.json"], capsys)
    assert code == 0, err
    payload = json.loads((tmp_path / "daily.json").read_text())
    assert payload["solver_info"]["baseline_bins"] == 4 and len(payload["solver_info"]["baseline_profile"][0]) == 4
    code, out, err = run(["score", tmp_path / "daily.json", events, "--end-time", "2400", "--holdout-start", "1700"],
                         capsys)
    assert code == 0, err
    assert "held-out verdict: better than a constant rate" in err
    scored = json.loads(out)
    assert scored["loglik_per_event"] == pytest.approx(payload["heldout"]["loglik_per_event"], rel=1e-12)
    code, _, err = run(["fit", events, *argv, "--holdout-start", "1700", "--json", tmp_path / "flat.json"], capsys)
    flat = json.loads((tmp_path / "flat.json").read_text())["heldout"]
    assert scored["gain_over_poisson"] > flat["gain_over_poisson"] + 0.05
