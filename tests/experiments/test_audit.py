"""Empirical privacy audit: exact binomial bounds, the ε lower bound, correct mechanisms pass, a broken
one is caught, cancellation."""

import math

import numpy as np
import pytest

from dphawkes_app.figures.audit import audit_distributions, audit_epsilons
from dphawkes_core.data.kernels import get_scenario
from dphawkes_core.data.simulate import simulate
from dphawkes_core.errors import ConfigError
from dphawkes_core.estimators import FitConfig
from dphawkes_core.statistics.binning import bin_events
from dphawkes_experiments.audit import AuditCancelled, AuditConfig, add_event, default_count_cap, run_audit
from dphawkes_experiments.audit_statistics import clopper_pearson_upper, epsilon_lower_bound

DT, P = 0.5, 6


@pytest.fixture(scope="module")
def events():
    return simulate(get_scenario("paper-2d"), n_events=300, seed=2)


@pytest.fixture(scope="module")
def cap(events):
    return default_count_cap(events, DT)


def _fit(method, cap, **kw):
    base = dict(method=method, bin_size=DT, lags=P, count_cap=cap, calibration="formal", epsilon=1.0)
    extra = {"pgd": dict(bound=0.6, iters=20), "pgd-clip": dict(bound=0.6, iters=20, clip=1.0),
             "cg": dict(radius=0.4, iters=20), "ssp": {}}[method]
    return FitConfig(**{**base, **extra, **kw})


def test_clopper_pearson_closed_forms():
    # zero errors: the one-sided bound solves (1 − u)^n = α
    assert clopper_pearson_upper(0, 50, 0.05) == pytest.approx(1 - 0.05 ** (1 / 50), rel=1e-10)
    # all errors but one: P(X <= n-1 | u) = 1 − u^n = α
    assert clopper_pearson_upper(49, 50, 0.05) == pytest.approx(0.95 ** (1 / 50), rel=1e-10)
    assert clopper_pearson_upper(50, 50, 0.05) == 1.0


def test_epsilon_lower_bound_formula():
    assert epsilon_lower_bound(0.5, 0.5, 0.0) == 0.0
    assert epsilon_lower_bound(0.01, 0.2, 1e-5) == pytest.approx(math.log((1 - 1e-5 - 0.2) / 0.01))
    assert epsilon_lower_bound(0.3, 0.02, 0.0) == pytest.approx(math.log(0.7 / 0.02))


def test_add_event_respects_cap(events, cap):
    binned = bin_events(events, DT, cap)
    x = binned.counts[0]
    full_bin, full_dim = np.unravel_index(int(np.argmax(x)), x.shape)  # the cap is the data's max count
    assert x[full_bin, full_dim] == cap
    with pytest.raises(ConfigError, match="cap"):
        add_event(binned, 0, int(full_bin), int(full_dim))
    free = int(np.flatnonzero(x[:, 1] < cap)[0])
    assert add_event(binned, 0, free, 1).counts[0][free, 1] == x[free, 1] + 1


@pytest.mark.parametrize("method", ["ssp", "pgd-clip", "pgd"])
def test_correct_mechanisms_are_not_refuted(events, cap, method):
    result = run_audit(events, AuditConfig(_fit(method, cap), trials=300, seed=1))
    assert not result.violated, result.verdict()
    assert result.epsilon_lower_bound <= result.epsilon_claimed
    assert result.scores_d.size == result.scores_d_prime.size == 150


def test_broken_mechanism_is_caught(events, cap):
    result = run_audit(events, AuditConfig(_fit("ssp", cap), trials=300, broken_factor=1e4, seed=1))
    assert result.violated and result.epsilon_lower_bound > 1.0
    assert result.sigma2_used == pytest.approx(result.sigma2_claimed / 1e8)
    payload = result.to_dict()
    for key in ("epsilon_claimed", "epsilon_lower_bound", "confidence", "trials", "fpr", "fnr", "count_cap"):
        assert key in payload
    assert payload["count_cap"] == cap and payload["broken"]
    assert len(audit_distributions(result).data) == 2
    # one headline bound: the chart's bar and the verdict's number are the larger of the two tests' bounds
    headline = max(result.epsilon_lower_bound, result.epsilon_lower_bound_gdp)
    assert result.mu_claimed is not None and result.epsilon_audited == headline
    assert audit_epsilons(result).data[0].x[-1] == pytest.approx(headline)
    assert f"ε ≥ {headline:.3g}," in result.verdict()


def test_cancel_and_bad_config(events, cap):
    calls = []
    with pytest.raises(AuditCancelled):
        run_audit(events, AuditConfig(_fit("ssp", cap), trials=200), progress=lambda d, t: calls.append(d),
                  should_stop=lambda: len(calls) >= 1, chunk=50)
    assert calls == [50]
    with pytest.raises(ConfigError):
        AuditConfig(FitConfig(bin_size=DT, lags=P), trials=100)
    with pytest.raises(ConfigError):
        AuditConfig(_fit("ssp", cap), trials=5)


@pytest.mark.usefixtures("clear_streamlit_caches")
def test_audit_page_runs_and_catches_broken():
    from pathlib import Path

    from streamlit.testing.v1 import AppTest

    from dphawkes_app.controls import calibration_words

    page = Path(__file__).resolve().parents[2] / "pages" / "5_Privacy_audit.py"
    at = AppTest.from_file(str(page), default_timeout=120)
    at.run()
    at.selectbox(key="au_method").set_value("ssp").run()
    assert at.selectbox(key="au_calib").options == [calibration_words("formal")]
    at.number_input(key="au_trials").set_value(200).run()
    at.button(key="au_run").click().run()
    assert not at.exception and at.success and len(at.get("plotly_chart")) == 2
    at.toggle(key="au_broken").set_value(True).run()
    at.button(key="au_run").click().run()
    assert not at.exception and "VIOLATION" in at.error[0].value


def test_an_unseeded_lagged_ssp_is_audited_as_released(events, cap):
    """The release draws the discrete Gaussian under a zCDP calibration: the audit holds the mechanism to that
    claim (the unseeded config's report, not the seeded one's) and its runs draw integer noise on the integer
    pieces (every observed number times N is an integer), from a seed; a seeded config keeps numpy's noise."""
    from dphawkes_core.estimators import binned_stats, privacy_report
    from dphawkes_experiments.audit import prepare_audit

    unseeded = _fit("ssp", cap)
    session = prepare_audit(events, AuditConfig(unseeded, trials=20, seed=3))
    released = privacy_report(session.stats_d, unseeded)
    assert session.config.discrete and released.discrete and session.claimed == released
    assert session.claimed.sigma2 > privacy_report(session.stats_d, _fit("ssp", cap, seed=3)).sigma2  # zCDP's σ
    session.run_chunk(20)
    n_rows = binned_stats(bin_events(events, DT, cap), P).n_rows
    scaled = np.asarray(session.outputs_d) * n_rows
    assert np.allclose(scaled, np.rint(scaled), rtol=0, atol=1e-6)  # integer noise on integer pieces
    again = prepare_audit(events, AuditConfig(unseeded, trials=20, seed=3))
    again.run_chunk(20)
    assert np.array_equal(np.asarray(again.outputs_d), np.asarray(session.outputs_d))  # seeded: it repeats
    result = session.result()
    assert result.extra["sampler"].startswith("discrete Gaussian")
    assert result.mu_claimed == pytest.approx(released.sensitivity / math.sqrt(released.sigma2), rel=1e-12)
    seeded = prepare_audit(events, AuditConfig(_fit("ssp", cap, seed=5), trials=20, seed=3))
    assert not seeded.config.discrete and not seeded.claimed.discrete
    seeded.run_chunk(20)
    scaled = np.asarray(seeded.outputs_d) * n_rows
    assert not np.allclose(scaled, np.rint(scaled), rtol=0, atol=1e-6)
