"""A family is one module plus one registry line: the toy family of ``toy_family.py`` (a module under
``tests/``), registered here and nowhere else, appears in the CLI, the comparison table, sweeps and audits,
and passes the contract suite's checks. (The Estimate page's method choice: ``tests/app``.)"""

from __future__ import annotations

import json

import numpy as np
import pytest
from toy_family import ToyMeanRate

from dphawkes_cli.main import main
from dphawkes_core.data.kernels import get_scenario
from dphawkes_core.data.simulate import simulate
from dphawkes_core.estimators import (
    FitConfig,
    PrivacyTags,
    binned_stats,
    fit_stats,
    get_family,
    register,
    unregister,
)
from dphawkes_core.estimators.checks import binned, check_family, foreign_options, sample_counts
from dphawkes_experiments.audit import AuditConfig, run_audit, worst_case_fit
from dphawkes_experiments.compare import compare_methods
from dphawkes_experiments.sweep import DataSource, SweepSpec, run_sweep

NAME = ToyMeanRate.name


@pytest.fixture(autouse=True)
def toy_registered():
    register(ToyMeanRate())  # the one registry line
    yield
    unregister(NAME)


def test_cli_fits_it(tmp_path, capsys):
    events = tmp_path / "events.csv"
    assert main(["simulate", "--scenario", "paper-2d", "--events", "2000", "--seed", "1", "--out", str(events)]) == 0
    out = tmp_path / "fit.json"
    code = main(
        [
            "fit",
            str(events),
            "--bin-size",
            "0.5",
            "--lags",
            "4",
            "--method",
            NAME,
            "--epsilon",
            "1",
            "--calibration",
            "formal",
            "--count-cap",
            "5",
            "--end-time",
            "1000",
            "--dimensions",
            "2",
            "--shrink",
            "0.5",
            "--json",
            str(out),
        ]
    )
    assert code == 0, capsys.readouterr().err
    payload = json.loads(out.read_text())
    assert payload["method"] == NAME and payload["formal_settings"] is True and payload["shrink"] == 0.5
    assert payload["formal_guarantee"] is False  # no --ledger: not released through a privacy session
    assert np.all(np.asarray(payload["kernels"]) == 0)


def test_cli_refuses_its_option_on_another_method(tmp_path, capsys):
    code = main(["fit", "x.csv", "--bin-size", "0.5", "--lags", "4", "--method", "ssp", "--epsilon", "1",
                 "--calibration", "formal", "--count-cap", "5", "--shrink", "0.5"])
    assert code == 2 and "does not read shrink" in capsys.readouterr().err


def _stats():
    events = simulate(get_scenario("paper-2d"), n_events=3000, seed=2)
    config = FitConfig(bin_size=0.5, lags=4, count_cap=5)
    from dphawkes_core.estimators import prepare_stats
    return prepare_stats(events, config)


def test_it_has_a_row_in_the_comparison_table():
    stats, info = _stats()
    chosen = FitConfig(method="ssp", bin_size=0.5, lags=4, epsilon=1.0, calibration="formal", count_cap=5, seed=1)
    reference = fit_stats(stats, FitConfig(bin_size=0.5, lags=4)).H
    rows = compare_methods(stats, info, chosen, 1.0, reference, public={"bound": 1.0, "radius": 0.5, "clip": 1.0,
                                                                          "iters": 20})
    toy = next(row for row in rows if row.method == NAME)
    assert toy.ran and np.isfinite(toy.relative_error) and toy.epsilon == pytest.approx(1.0)


@pytest.mark.slow
def test_a_sweep_runs_it():
    spec = SweepSpec(DataSource(scenario=get_scenario("paper-2d"), n_events=1000, label="paper-2d"),
                     methods=("cls", NAME), bin_sizes=(0.5,), privacy="epsilon", levels=(1.0,), runs=2,
                     support=2.0, calibration="formal", count_cap=5)
    frame = run_sweep(spec)
    toy = frame[frame.method == NAME]
    assert len(toy) == 2 and toy["formal_settings"].all() and np.isfinite(toy["relative_error"]).all()
    assert not toy["formal_guarantee"].any()  # seeded experiments, never releases


def test_an_audit_of_it_holds_and_catches_a_broken_copy():
    events = simulate(get_scenario("paper-2d"), n_events=500, seed=3)
    fit = worst_case_fit(NAME, lags=2, count_cap=3, epsilon=4.0)
    honest = run_audit(events, AuditConfig(fit, trials=1000, neighbours="worst-case", seed=1))
    assert honest.epsilon_lower_bound <= honest.epsilon_claimed
    broken = run_audit(events, AuditConfig(fit, trials=1000, neighbours="worst-case", seed=1, broken_factor=4.0))
    assert broken.epsilon_lower_bound > broken.epsilon_claimed


def test_it_passes_the_contract_checks():
    """What a plug-in author runs: every check but the noiseless limit (no reference for a mean rate here:
    the next test checks it) and the sequence unit's (it has none), and the foreign options include the other
    families' bound, radius, clip, K."""
    outcomes = check_family(get_family(NAME))
    assert [o.check for o in outcomes if not o.passed] == ["noiseless limit", "sequence-unit sensitivity"]
    assert {"bound", "radius", "clip", "iters"} <= set(foreign_options(get_family(NAME)))


def test_with_no_noise_it_is_the_mean_rate():
    counts = sample_counts(2)
    config = FitConfig(method=NAME, bin_size=0.5, lags=2, calibration="formal", count_cap=3, sigma2=0.0, seed=0)
    result = fit_stats(binned_stats(binned(counts, 3), 2), config)
    n_rows = len(counts) - 2
    assert np.allclose(result.baseline, counts.sum(axis=0) / n_rows / 0.5, rtol=1e-12)


def test_a_fact_outside_its_tag_or_a_tag_of_the_wrong_type_is_refused_when_the_family_is_defined():
    """A plug-in written against the old flat attributes fails loudly, naming the tag, instead of silently keeping
    the default (``private = False`` on a subclass would otherwise leave ``privacy.private`` True)."""
    with pytest.raises(TypeError, match=r"private -> privacy.*statistics -> inputs"):
        type("Flat", (ToyMeanRate,), {"private": False, "statistics": "events"})
    with pytest.raises(TypeError, match=r"Flat.privacy must be a PrivacyTags"):
        type("Flat", (ToyMeanRate,), {"privacy": {"private": False}})
    tagged = type("Tagged", (ToyMeanRate,), {"privacy": PrivacyTags(private=False)})
    assert not tagged.privacy.private and ToyMeanRate.privacy.private  # the tag replaces the parent's, alone
