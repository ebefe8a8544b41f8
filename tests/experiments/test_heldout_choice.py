"""Selection of w, s and exp's decays by held-out likelihood: each candidate's score is the held-out score of
that fit on the validation block, the support that holds the kernels beats one that cuts them, the true decay
beats a wrong one, −∞ never wins, and the CLI never reads the test block."""

from __future__ import annotations

import dataclasses
import json
import math

import numpy as np
import pytest

from dphawkes_cli.main import main
from dphawkes_core.data.io import save_csv
from dphawkes_core.data.kernels import ExponentialKernel, Scenario, get_scenario
from dphawkes_core.data.simulate import simulate
from dphawkes_core.errors import ConfigError
from dphawkes_core.estimators import FitConfig, fit
from dphawkes_core.evaluation.lag_average import fit_steps
from dphawkes_experiments.heldout_choice import Candidate, SelectionReport, select_by_heldout
from dphawkes_experiments.prediction import heldout_split, score_heldout


@pytest.fixture(scope="module")
def paper_events():
    return simulate(get_scenario("paper-2d"), n_events=6000, seed=21)


def test_each_score_is_the_heldout_score_of_that_fit(paper_events):
    v = 0.7 * paper_events.end_time
    report = select_by_heldout(paper_events, FitConfig(method="cls"), [0.5], [1.0, 5.0], v)
    split = heldout_split(paper_events, v)
    for candidate in report.candidates:
        result, _ = fit(split.train, FitConfig(method="cls", bin_size=0.5, lags=candidate.lags))
        score = score_heldout(fit_steps(result), result.baseline, split)
        assert candidate.gain == score.gain_over_poisson
    assert report.n_fit_events == split.train.n_events
    assert report.best == max(report.candidates, key=lambda c: c.gain)


def test_a_support_holding_the_kernels_beats_one_that_cuts_them(paper_events):
    report = select_by_heldout(paper_events, FitConfig(method="cls"), [0.25], [0.25, 5.0],
                               0.7 * paper_events.end_time)
    short, long = report.candidates
    assert long.gain > short.gain + 3 * max(long.standard_error, short.standard_error)
    assert report.best.support == 5.0


def test_the_true_decay_beats_a_wrong_one():
    beta = 1.5
    scenario = Scenario(name="exp-1d", baseline=(0.5,), kernels=((ExponentialKernel(0.6, beta),),))
    events = simulate(scenario, n_events=8000, seed=3)
    base = FitConfig(method="exp", calibration="formal", sigma2=0.0)
    report = select_by_heldout(events, base, [0.5], [5.0], 0.7 * events.end_time, [(beta,), (40 * beta,)])
    right, wrong = report.candidates
    assert right.gain > wrong.gain and report.best.decays == (beta,)


def test_minus_infinity_never_wins_and_an_all_infinite_grid_is_refused():
    minus = Candidate(0.1, 1.0, 10, None, -math.inf, math.nan, 3)
    report = SelectionReport((minus,), None, 1.0, 10, 10)
    with pytest.raises(ConfigError, match="−∞"):
        report.config(FitConfig())
    assert report.to_dict()["candidates"][0]["gain_over_poisson"] == "-inf"


def test_decays_for_a_family_without_them_are_refused(paper_events):
    with pytest.raises(ConfigError, match="no decays"):
        select_by_heldout(paper_events, FitConfig(method="cls"), [0.5], [5.0], 100.0, [(1.0,)])


def test_the_cli_never_reads_the_test_block(paper_events, tmp_path):
    end = paper_events.end_time
    x, v = 0.8 * end, 0.6 * end
    seq = paper_events.sequences[0]
    rng = np.random.default_rng(0)
    moved = tuple(np.sort(np.where(t >= x, rng.uniform(x, end, t.size), t)) for t in seq.times)  # a new test block
    other = dataclasses.replace(paper_events, sequences=(dataclasses.replace(seq, times=moved),))
    reports = []
    for k, events in enumerate((paper_events, other)):
        path, out = tmp_path / f"e{k}.csv", tmp_path / f"r{k}.json"
        save_csv(events, path)
        assert main(["select", str(path), "--widths", "0.5,1", "--supports", "2,5", "--validation-start", f"{v!r}",
                     "--holdout-start", f"{x!r}", "--end-time", f"{end!r}", "--json", str(out)]) == 0
        reports.append(json.loads(out.read_text()))
    assert reports[0] == reports[1]
    assert len(reports[0]["candidates"]) == 4 and "not a private choice" in reports[0]["note"]


def test_the_cli_refuses_a_validation_start_after_the_test_block(paper_events, tmp_path, capsys):
    path = tmp_path / "e.csv"
    save_csv(paper_events, path)
    assert main(["select", str(path), "--widths", "0.5", "--supports", "5", "--validation-start", "900",
                 "--holdout-start", "800"]) == 2
    assert "before --holdout-start" in capsys.readouterr().err
