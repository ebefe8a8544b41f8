"""Sequence-level privacy: per-sequence contributions against the dense design, the clip bound of a cap on
events, the replace-one sensitivity on adversarial replacement sequences, calibration, unit conversion
against the closed-form Gaussian profile, the audit on sequence neighbours, and the CLI on the taxi data."""

import dataclasses
import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from dp_accounting.gaussian_mechanism import get_epsilon_gaussian, get_sigma_gaussian
from scipy.stats import norm

from dphawkes_cli.main import main
from dphawkes_core.data.datasets import DATA_DIR_ENV, default_data_dir
from dphawkes_core.data.io import Events, EventSequence, save_csv
from dphawkes_core.errors import ConfigError
from dphawkes_core.estimators import FitConfig, binned_stats, fit, fit_stats, prepare_stats
from dphawkes_core.estimators.ssp import released_stats
from dphawkes_core.privacy.report import NOT_RELEASED
from dphawkes_core.privacy.sequence import (
    cap_events,
    clipped_sums,
    contribution_norm,
    max_events_clip,
    pieces_vector,
    release_pieces_vector,
    sequence_contribution,
    sequence_pieces,
    sequence_sensitivity,
    vector_pieces,
)
from dphawkes_core.privacy.unit_conversion import unit_conversion
from dphawkes_core.statistics.binning import BinnedCounts, SparseCounts
from dphawkes_core.statistics.moments import design_matrix
from dphawkes_experiments.audit import AuditConfig, prepare_sequence_audit, run_session
from tests.references import zcdp_epsilon_reference

D, P, C = 2, 3, 2
ROOT = Path(__file__).resolve().parents[3]


def _taxi() -> Path:
    """The real NYC taxi data, found as the app finds its data sets (``$DPHAWKES_DATA_DIR``, else
    ``<repo>/../shared/data``: :func:`~dphawkes_core.data.datasets.default_data_dir`); the test is skipped without
    it."""
    path = default_data_dir() / "nyc_taxi" / "events.csv"
    if not path.is_file():
        pytest.skip(f"real data set {path} not present (set {DATA_DIR_ENV} to the real-data directory)")
    return path


def _counts(*series, cap=C):
    return SparseCounts.from_binned(BinnedCounts(tuple(np.asarray(x, dtype=np.int64) for x in series), 1.0, 0, 0, cap))


def _released(stats):
    """What the full release adds noise to: the upper triangle of A without the public corner, and b."""
    upper = stats.A[np.triu_indices(stats.n_params)][:-1]
    return np.concatenate([upper, stats.b.ravel()])


def _burst(dim, n=30, events=12, start=5):
    """``events`` events at the cap C in one dimension, in consecutive bins (packed: the norms' worst case)."""
    x = np.zeros((n, D), dtype=np.int64)
    x[start:start + events // C, dim] = C
    return x


def test_contribution_is_the_dense_design_of_the_sequence():
    rng = np.random.default_rng(0)
    for n in (P + 1, 40, 400):
        x = np.minimum(rng.poisson(0.7, size=(n, D)), C)
        zz, yz, yy, rows = sequence_contribution(_counts(x), 0, P)
        zt, yt = design_matrix(x, P)
        np.testing.assert_allclose(zz, zt.T @ zt, atol=1e-9)
        np.testing.assert_allclose(yz, yt.T @ zt, atol=1e-9)
        assert rows == n - P and yy == pytest.approx(np.sum(yt.astype(float) ** 2))


def test_unclipped_sums_are_the_event_statistics():
    rng = np.random.default_rng(1)
    series = [np.minimum(rng.poisson(0.5, size=(n, D)), C) for n in (20, 35, 2, 50)]  # one too short: skipped
    counts = _counts(*series)
    sums = clipped_sums(counts, P, clip=1e9)
    reference = binned_stats(counts, P)
    np.testing.assert_allclose(sums.stats.A, reference.A, atol=1e-12)
    np.testing.assert_allclose(sums.stats.b, reference.b, atol=1e-12)
    assert sums.stats.n_rows == reference.n_rows and sums.clipped_sequences == 0 and sums.sequences == 3


def test_clipping_scales_a_sequence_to_norm_g():
    x = _burst(0)
    zz, yz, _, _ = sequence_contribution(_counts(x), 0, P)
    g = contribution_norm(zz, yz) / 4
    sums = clipped_sums(_counts(x), P, g)
    assert sums.clipped_sequences == 1
    assert np.linalg.norm(_released(sums.stats)) * sums.stats.n_rows == pytest.approx(g)
    assert sums.stats.A[-1, -1] == 1.0  # the public corner is not scaled


def test_max_events_clip_bounds_every_sequence_of_m_events_and_is_reached_by_a_burst():
    m = 12
    bound = max_events_clip(P, m, C, "full")
    rng = np.random.default_rng(2)
    worst = 0.0
    candidates = [_burst(0, events=m), _burst(1, events=m, start=0)]
    for _ in range(200):
        x = np.zeros((30, D), dtype=np.int64)
        cells = rng.integers(0, 30, size=m)
        np.add.at(x, (cells, rng.integers(0, D, size=m)), 1)
        candidates.append(np.minimum(x, C))
    for x in candidates:
        assert x.sum() <= m
        worst = max(worst, contribution_norm(*sequence_contribution(_counts(x), 0, P)[:2]))
    assert worst <= bound
    assert worst >= 0.7 * bound  # the burst at C in one dimension (0.745 measured): the bound is not loose


def test_replace_one_sensitivity_holds_and_is_reached_on_adversarial_replacements():
    rng = np.random.default_rng(3)
    background = [np.minimum(rng.poisson(0.6, size=(30, D)), C) for _ in range(5)]
    g = 0.5 * contribution_norm(*sequence_contribution(_counts(_burst(0)), 0, P)[:2])  # both bursts get clipped
    replacements = [_burst(0), _burst(1), np.zeros((30, D), dtype=np.int64), np.full((30, D), C)]
    replacements += [np.minimum(rng.poisson(rate, size=(30, D)), C) for rate in (0.2, 1.0, 3.0)]
    ratios = []
    for i, x in enumerate(replacements):
        for y in replacements[i + 1:]:
            a = clipped_sums(_counts(*background, x), P, g).stats
            b = clipped_sums(_counts(*background, y), P, g).stats
            change = np.linalg.norm(_released(a) - _released(b))
            ratios.append(change / sequence_sensitivity(g, a.n_rows))
    assert max(ratios) <= 1 + 1e-9
    assert max(ratios) >= 0.999  # two clipped sequences with disjoint supports: exactly √2·G


def _paper_statistics(series, lags):
    """ZZᵀ, YZᵀ and Σ||y_t||² summed over sequences, column by column of the paper's Z (plain loops)."""
    d = series[0].shape[1]
    zz, yz, yy, rows = np.zeros((d * lags + 1,) * 2), np.zeros((d, d * lags + 1)), 0.0, 0
    for x in series:
        for t in range(lags, len(x)):
            z = np.concatenate([x[t - 1 - k] for k in range(lags)] + [[1.0]])
            zz += np.outer(z, z)
            yz += np.outer(x[t], z)
            yy += float(x[t] @ x[t])
            rows += 1
    return zz, yz, yy, rows


def _released_vector(sums):
    """The numbers the sequence unit's lagged release adds noise to (unnormalised)."""
    return pieces_vector(sums.stats.summed_pieces)


def test_lagged_sums_without_noise_are_the_paper_statistics():
    rng = np.random.default_rng(10)
    series = [np.minimum(rng.poisson(rate, size=(n, D)), C) for n, rate in ((20, 0.5), (P + 1, 2.0), (2, 1.0),
                                                                              (5, 1.0), (60, 0.3))]
    sums = clipped_sums(_counts(*series), P, 1e9, "lagged")
    zz, yz, yy, rows = _paper_statistics([x for x in series if len(x) > P], P)
    assert sums.stats.n_rows == rows and sums.clipped_sequences == 0 and sums.sequences == 4
    np.testing.assert_allclose(sums.stats.A * rows, zz, atol=1e-9)
    np.testing.assert_allclose(sums.stats.b * rows, yz, atol=1e-9)
    assert sums.stats.yy * rows == pytest.approx(yy)
    full = clipped_sums(_counts(*series), P, 1e9, "full").stats  # the full release's un-noised statistics
    np.testing.assert_allclose(sums.stats.A, full.A, atol=1e-12)
    np.testing.assert_allclose(sums.stats.b, full.b, atol=1e-12)
    zero = released_stats(sums.stats, 0.0, "lagged", np.random.default_rng(0))  # σ = 0 through the release path
    np.testing.assert_allclose(zero[0] * rows, zz, atol=1e-9)


def test_pieces_vector_is_nonnegative_and_round_trips():
    rng = np.random.default_rng(11)
    x = np.minimum(rng.poisson(1.0, size=(25, D)), C)
    pieces = sequence_pieces(_counts(x), 0, P)
    vector = pieces_vector(pieces)
    assert vector.min() >= 0
    back = vector_pieces(vector, pieces)
    for field in ("lagged", "totals", "head_gram", "tail_gram", "head_sum", "tail_sum"):
        np.testing.assert_array_equal(getattr(back, field), getattr(pieces, field))
    noisy = release_pieces_vector(pieces, 2.0, np.random.default_rng(1))
    assert np.allclose(noisy.lagged[0], noisy.lagged[0].T) and noisy.n_rows == pieces.n_rows
    gram = noisy.head_gram.reshape(P * D, P * D)
    assert np.allclose(gram, gram.T)
    assert np.std(pieces_vector(noisy) - vector) == pytest.approx(2.0, rel=0.25)


def test_lagged_clipping_scales_the_vector_to_norm_g():
    x = _burst(0)
    norm = np.linalg.norm(pieces_vector(sequence_pieces(_counts(x), 0, P)))
    sums = clipped_sums(_counts(x), P, norm / 4, "lagged")
    assert sums.clipped_sequences == 1
    assert np.linalg.norm(_released_vector(sums)) == pytest.approx(norm / 4)
    unclipped = clipped_sums(_counts(x), P, 1e9, "lagged").stats
    np.testing.assert_allclose(sums.stats.b, unclipped.b / 4, atol=1e-12)  # everything scaled alike
    assert sums.stats.A[-1, -1] == 1.0


def test_lagged_max_events_clip_bounds_every_sequence_of_m_events():
    m = 40
    bound = max_events_clip(P, m, C, "lagged")
    rng = np.random.default_rng(12)
    candidates = [_burst(0, events=m), _burst(1, events=m, start=0), _burst(0, n=m // C, events=m, start=0)]
    for _ in range(200):
        x = np.zeros((30, D), dtype=np.int64)
        np.add.at(x, (rng.integers(0, 30, size=m), rng.integers(0, D, size=m)), 1)
        candidates.append(np.minimum(x, C))
    norms = [np.linalg.norm(pieces_vector(sequence_pieces(_counts(x), 0, P))) for x in candidates]
    assert all(x.sum() <= m for x in candidates)
    assert max(norms) <= bound
    assert max(norms) >= 0.75 * bound  # the packed burst (0.77 measured): the bound is not loose
    assert bound < max_events_clip(P, m, C, "full")


@pytest.mark.parametrize("clip_factor", [None, 0.5])
def test_lagged_replace_one_sensitivity_on_packed_and_empty_sequences(clip_factor):
    """Replace-one at the cap M: a packed sequence vs the empty one and vs a packed one in the other
    dimension, at G = G_M (nothing clipped) and at a G that clips both: change ≤ √2·G, and √2·G reached."""
    m = 40
    g = max_events_clip(P, m, C, "lagged")
    if clip_factor is not None:
        g = clip_factor * np.linalg.norm(pieces_vector(sequence_pieces(_counts(_burst(0, events=m)), 0, P)))
    rng = np.random.default_rng(13)
    background = [np.minimum(rng.poisson(0.6, size=(30, D)), C) for _ in range(4)]
    replacements = [_burst(0, events=m), _burst(1, events=m), _burst(1, events=m, start=0),
                    np.zeros((30, D), dtype=np.int64)]
    ratios = []
    for i, x in enumerate(replacements):
        for y in replacements[i + 1:]:
            a = _released_vector(clipped_sums(_counts(*background, x), P, g, "lagged"))
            b = _released_vector(clipped_sums(_counts(*background, y), P, g, "lagged"))
            ratios.append(np.linalg.norm(a - b) / (math.sqrt(2) * g))
    assert max(ratios) <= 1 + 1e-9
    if clip_factor is None:  # the packed pair in different dimensions, unclipped: ~0.8 of √2·G_M
        assert max(ratios) >= 0.75
    else:  # both clipped at G, disjoint supports: exactly √2·G
        assert max(ratios) >= 0.999


@pytest.mark.parametrize("release", ["lagged", "full"])
def test_fit_calibrates_one_gaussian_release_of_sensitivity_root2_g_over_n(release):
    events = _events(n_seq=12, seed=4)
    config = FitConfig(method="ssp", bin_size=1.0, lags=P, calibration="formal", epsilon=1.0, count_cap=C,
                       privacy_unit="sequence", sequence_clip=7.0, ssp_release=release)
    result, info = fit(events, config)
    n_rows = sum(int(s.end_time) - P for s in events.sequences)
    expected = math.sqrt(2) * 7.0 / n_rows * get_sigma_gaussian(1.0, config.dp_delta)
    assert math.sqrt(result.privacy.sigma2) == pytest.approx(expected, rel=1e-9)
    assert result.privacy.privacy_unit == "sequence" and result.info["ssp_release"] == release
    assert info["privacy_unit"] == "sequence" and info["sequences"] == 12


def test_cap_events_keeps_the_first_m_of_each_sequence():
    seq = EventSequence((np.array([0.5, 3.0, 7.0]), np.array([1.0, 3.0])), end_time=10.0)
    other = EventSequence((np.array([2.0]), np.array([])), end_time=10.0)
    events = _multi([seq.times, other.times], 10.0)
    capped, dropped = cap_events(events, 3)
    assert dropped == 2
    kept = capped.sequences[0].times
    np.testing.assert_array_equal(kept[0], [0.5, 3.0])  # 0.5, 1.0, then the tie at 3.0: dimension 0 first
    np.testing.assert_array_equal(kept[1], [1.0])
    assert capped.sequences[1].n_events == 1


def test_sequence_unit_config_errors():
    base = dict(bin_size=1.0, lags=P, calibration="formal", epsilon=1.0, count_cap=C)
    with pytest.raises(ConfigError, match="clip norm G or a public cap M"):
        FitConfig(method="ssp", privacy_unit="sequence", **base)
    with pytest.raises(
        ConfigError, match=r"sequence unit is available for DP-SSP and exact event times .*, not DP-PGD"
    ):
        FitConfig(method="pgd", bound=1.0, privacy_unit="sequence", sequence_clip=1.0, **base)
    with pytest.raises(ConfigError, match="belong to the sequence unit"):
        FitConfig(method="ssp", sequence_clip=1.0, **base)
    with pytest.raises(ConfigError, match="unknown privacy unit"):
        FitConfig(method="ssp", privacy_unit="person", **base)
    with pytest.raises(ConfigError, match="positive whole number"):
        FitConfig(method="ssp", privacy_unit="sequence", max_events=0, **base)


def _gaussian_delta(epsilon, mu):
    """δ(ε) of μ-GDP (Dong, Roth & Su 2019, Corollary 2.13), computed here independently."""
    return norm.cdf(-epsilon / mu + mu / 2) - math.exp(epsilon) * norm.cdf(-epsilon / mu - mu / 2)


@pytest.mark.parametrize("k", [1, 5, 50])
def test_event_fit_person_guarantee_is_k_mu_gdp(k):
    events = _events(n_seq=4, seed=5)
    # seeded: numpy's continuous Gaussian, exactly μ-GDP (an unseeded lagged release is discrete: the next test)
    result, _ = fit(events, FitConfig(method="ssp", bin_size=1.0, lags=P, calibration="formal", epsilon=1.0,
                                      count_cap=C, seed=0))
    assert not result.privacy.discrete
    conv = unit_conversion(result.privacy, k)
    delta = result.privacy.dp_delta
    assert _gaussian_delta(1.0, conv.mu) == pytest.approx(delta, rel=1e-4)
    assert conv.person_mu == pytest.approx(k * conv.mu)
    assert _gaussian_delta(conv.person_epsilon, k * conv.mu) == pytest.approx(delta, rel=1e-3)
    assert conv.event_epsilon == pytest.approx(1.0)
    if k == 1:
        assert conv.person_epsilon == pytest.approx(1.0, rel=1e-6)
    elif conv.naive_delta is not None:  # at the generic bound's own δ, exact group privacy gives less than kε
        assert get_epsilon_gaussian(1 / conv.person_mu, conv.naive_delta) < conv.naive_epsilon
    assert (conv.naive_delta is None) == (k * math.exp((k - 1) * 1.0) * delta >= 1)


@pytest.mark.parametrize("k", [1, 5, 50])
def test_event_fit_person_guarantee_of_a_discrete_release_is_k_squared_rho_zcdp(k):
    """An unseeded lagged DP-SSP release draws the discrete Gaussian: ρ-zCDP, not μ-GDP; k events shift its
    integer releases by at most k sensitivities, so a person of k events is k²ρ-zCDP."""
    events = _events(n_seq=4, seed=5)
    result, _ = fit(events, FitConfig(method="ssp", bin_size=1.0, lags=P, calibration="formal", epsilon=1.0,
                                      count_cap=C))
    report = result.privacy
    assert report.discrete
    assert report.rho == pytest.approx(report.sensitivity**2 / (2 * report.sigma2), rel=1e-12)
    conv = unit_conversion(report, k)
    assert conv.mu**2 / 2 == pytest.approx(report.rho) and conv.person_mu == pytest.approx(k * conv.mu)
    assert zcdp_epsilon_reference(report.rho, report.dp_delta) == pytest.approx(1.0, rel=1e-5)
    assert conv.person_epsilon == pytest.approx(zcdp_epsilon_reference(k * k * report.rho, report.dp_delta),
                                                rel=1e-5)
    assert conv.event_epsilon == pytest.approx(1.0)
    assert conv.naive_delta is None


@pytest.mark.parametrize("cap", [3, 30])
def test_capped_event_fit_person_guarantee_is_2m_mu_gdp_whatever_k(cap):
    """Under an enforced cap M an event-level fit costs a person 2M·μ (one sequence replaced: M kept events out, M
    in) and a raw event 2μ (a swap), checked against the μ-GDP closed form δ(ε) — never the assumed k·μ."""
    events = _events(n_seq=4, seed=5)
    result, _ = fit(events, FitConfig(method="ssp", bin_size=1.0, lags=P, calibration="formal", epsilon=1.0,
                                      count_cap=C, seed=0, max_events=cap))
    report = result.privacy
    delta = report.dp_delta
    for k in (1, 50):
        conv = unit_conversion(report, k, max_events=cap)
        assert _gaussian_delta(1.0, conv.mu) == pytest.approx(delta, rel=1e-4)
        assert conv.person_mu == pytest.approx(2 * cap * conv.mu, rel=1e-12)
        assert _gaussian_delta(conv.person_epsilon, 2 * cap * conv.mu) == pytest.approx(delta, rel=1e-3)
        assert _gaussian_delta(conv.event_epsilon, 2 * conv.mu) == pytest.approx(delta, rel=1e-3)
        assert conv.capped and conv.events_per_person == cap
        assert f"enforced cap M = {cap}" in conv.sentences()[1]
    assert unit_conversion(report, 2 * cap).person_epsilon == pytest.approx(conv.person_epsilon, rel=1e-9)
    assert unit_conversion(report, cap).person_epsilon < conv.person_epsilon  # k = M would understate it


def test_capped_event_fit_of_a_discrete_release_is_4m_squared_rho_zcdp():
    events = _events(n_seq=4, seed=5)
    result, _ = fit(events, FitConfig(method="ssp", bin_size=1.0, lags=P, calibration="formal", epsilon=1.0,
                                      count_cap=C, max_events=7))
    report = result.privacy
    assert report.discrete
    conv = unit_conversion(report, 50, max_events=7)
    assert conv.person_epsilon == pytest.approx(zcdp_epsilon_reference(14 * 14 * report.rho, report.dp_delta),
                                                rel=1e-5)
    assert conv.event_epsilon == pytest.approx(zcdp_epsilon_reference(4 * report.rho, report.dp_delta), rel=1e-5)


def test_sequence_fit_implies_the_same_event_guarantee():
    events = _events(n_seq=6, seed=6)
    result, _ = fit(events, FitConfig(method="ssp", bin_size=1.0, lags=P, calibration="formal", epsilon=0.5,
                                      count_cap=C, privacy_unit="sequence", max_events=30))
    conv = unit_conversion(result.privacy, 30)
    assert conv.person_epsilon == pytest.approx(0.5) and conv.event_epsilon == pytest.approx(0.5)
    assert "one sequence replaced" in " ".join(conv.sentences())


def _multi(times, horizon):
    """Several sequences on the stated window [0, horizon]."""
    return Events(tuple(EventSequence(tuple(np.asarray(t, float) for t in seq), float(horizon)) for seq in times),
                  tuple(str(j) for j in range(D)), window_stated=True)


def _events(n_seq, seed, horizon=30):
    rng = np.random.default_rng(seed)
    return _multi([[np.sort(rng.uniform(0, horizon, rng.integers(3, 15))) for _ in range(D)] for _ in range(n_seq)],
                  horizon)


def _adversarial_audit(broken_factor, release):
    events = _events(n_seq=8, seed=7)

    def burst(dim):
        return EventSequence(tuple(np.arange(5.5, 25) if j == dim else np.empty(0) for j in range(D)), 30.0)

    events = _multi([s.times for s in events.sequences[:-1]] + [burst(0).times], 30.0)
    fit_config = FitConfig(method="ssp", bin_size=1.0, lags=P, calibration="formal", epsilon=4.0, count_cap=C,
                           privacy_unit="sequence", sequence_clip=20.0, ssp_release=release)
    config = AuditConfig(fit_config, trials=2000, seed=1, broken_factor=broken_factor)
    return run_session(prepare_sequence_audit(events, config, events.n_sequences - 1, burst(1)))


@pytest.mark.parametrize("release", ["full", "lagged"])
def test_audit_on_sequence_neighbours_does_not_refute_a_correct_release(release):
    result = _adversarial_audit(None, release)
    assert not result.violated
    assert result.mu_lower_bound > 0.5 * result.mu_claimed  # the test sees most of the claimed μ


@pytest.mark.parametrize("release", ["full", "lagged"])
def test_audit_on_sequence_neighbours_catches_noise_halved(release):
    result = _adversarial_audit(2.0, release)
    assert result.violated


def test_cli_sequence_fit_on_taxi(tmp_path, capsys):
    out = tmp_path / "fit.json"
    code = main(["fit", str(_taxi()), "--end-time", "24", "--bin-size", "1", "--lags", "2", "--method", "ssp",
                 "--calibration", "formal", "--epsilon", "1", "--count-cap", "3", "--privacy-unit", "sequence",
                 "--max-events", "30", "--dimensions", "10", "--sequences", "2000", "--json", str(out)])
    assert code == 0
    payload = json.loads(out.read_text())
    assert payload["privacy_unit"] == "sequence" and payload["formal_settings"] is True
    assert payload["formal_reasons"] == [NOT_RELEASED]  # formal settings; a session's release needs --ledger
    assert payload["events_over_cap"] > 0 and payload["sequences"] == 2000
    assert payload["sequence_clip"] == pytest.approx(max_events_clip(2, 30, 3, "lagged"))  # the default release


def test_cli_sequence_unit_bad_method_is_one_line(capsys):
    code = main(["fit", str(_taxi()), "--end-time", "24", "--bin-size", "1", "--lags", "2", "--method", "pgd",
                 "--bound", "1", "--calibration", "formal", "--epsilon", "1", "--count-cap", "3",
                 "--privacy-unit", "sequence", "--max-events", "30"])
    assert code == 2
    assert capsys.readouterr().err.strip().splitlines()[-1].startswith("error: the sequence unit")


def _estimate_page_on_taxi(sequences=300):
    """The Estimate page on the first ``sequences`` taxi shifts (window [0, 24 h] stated), DP-SSP, C = 3."""
    from streamlit.testing.v1 import AppTest

    from dphawkes_core.data.datasets import list_samples, load_sample

    _taxi()  # skip without the real data
    sample = load_sample(next(s for s in list_samples() if s.name == "nyc_taxi"), end_time=24)
    subset = dataclasses.replace(sample, events=dataclasses.replace(  # its 10 dimensions and these shifts declared
        sample.events, sequences=sample.events.sequences[:sequences], dimensions_declared=True,
        sequences_declared=True))
    at = AppTest.from_file(str(ROOT / "pages" / "2_Estimate.py"), default_timeout=120)
    at.session_state["dataset"] = subset
    at.run()
    at.sidebar.number_input(key="dt").set_value(1.0)
    at.sidebar.radio(key="lagmode").set_value("lags p")
    at.sidebar.selectbox(key="method").set_value("DP-SSP")
    at.run()
    at.sidebar.number_input(key="p").set_value(2)
    at.sidebar.checkbox(key="Cauto").uncheck()
    at.run()
    at.sidebar.number_input(key="C").set_value(3)
    return at.run()


def _release(at):
    """Press "Release (spends ε = …)": the taxi data are private, nothing is fitted before the click."""
    button = next(b for b in at.button if b.key == "release")
    assert button.label.startswith("Release (spends ε = ") and not button.disabled
    button.click().run()
    return at


@pytest.mark.usefixtures("clear_streamlit_caches")
def test_app_sequence_unit_on_taxi_shows_both_units_and_refuses_other_methods():
    """One budget across units: a sequence-level release first (it protects events too, and makes the per-person
    promise), then an event-level release with no cap on each shift's events is refused before any draw — it
    would leave the per-person ε unbounded — with advice that can be followed; the ledger is unchanged."""
    at = _estimate_page_on_taxi()
    at.sidebar.radio(key="unit").set_value("sequence")
    at.run()
    at.sidebar.number_input(key="seqM").set_value(30)
    at.run()
    _release(at)
    assert not at.exception and not at.error
    assert any("Formal (ε, δ)-DP release** for one sequence" in s.value for s in at.success)
    text = " ".join(m.value for m in at.markdown)
    assert "Per person (one whole sequence, any number of events): ε = 1" in text
    assert "Per event: at least as strong" in text
    ledger_before = _ledger_text()
    at.sidebar.radio(key="unit").set_value("event")
    at.run()
    assert not at.exception
    assert all(b.disabled for b in at.button if b.key == "release")  # refused before any draw
    shown = " ".join(e.value for e in (*at.error, *at.warning, *at.info))
    assert "refused before any draw" in shown and "set a cap M" in shown
    assert _ledger_text() == ledger_before  # nothing drawn, nothing recorded
    at.sidebar.radio(key="unit").set_value("sequence")
    at.run()
    at.sidebar.selectbox(key="method").set_value("DP-PGD")  # the sequence unit is not DP-PGD's
    at.run()
    assert not at.exception
    # no dead ends: a method without the sequence unit is switched back to DP-SSP, saying so (was refused)
    assert at.sidebar.selectbox(key="method").value == "DP-SSP"
    assert any("has no sequence unit: the method was switched to DP-SSP" in i.value for i in at.info)


def _ledger_text() -> str:
    """The app's ledger file as it stands (the test's own, ``DPHAWKES_LEDGER``)."""
    import os
    from pathlib import Path

    path = Path(os.environ["DPHAWKES_LEDGER"])
    return path.read_text() if path.exists() else ""


def test_event_statistics_are_refused_by_the_sequence_calibration():
    events = _events(n_seq=5, seed=8)
    config = FitConfig(method="ssp", bin_size=1.0, lags=P, calibration="formal", epsilon=1.0, count_cap=C,
                       privacy_unit="sequence", sequence_clip=5.0)
    event_stats, _ = prepare_stats(events, FitConfig(bin_size=1.0, lags=P, count_cap=C))
    with pytest.raises(ConfigError, match="clipped per sequence"):
        fit_stats(event_stats, config)
    with pytest.raises(ConfigError, match="clipped per sequence"):  # clipped at another G
        fit_stats(prepare_stats(events, dataclasses.replace(config, sequence_clip=6.0))[0], config)
    with pytest.raises(ConfigError, match="clipped per sequence"):  # clipped for the other release
        fit_stats(prepare_stats(events, dataclasses.replace(config, ssp_release="full"))[0], config)


def test_sweep_on_the_sequence_unit_uses_the_clipped_sums(tmp_path):
    events = _events(n_seq=20, seed=9)
    path = tmp_path / "events.csv"
    save_csv(events, path)
    out = tmp_path / "sweep.csv"
    code = main(["sweep", "--data", str(path), "--end-time", "30", "--bin-size", "1", "--support", "3",
                 "--method", "ssp", "--epsilon", "1", "--runs", "2", "--calibration", "formal", "--count-cap", "2",
                 "--privacy-unit", "sequence", "--max-events", "25", "--dimensions", str(D), "--sequences", "20",
                 "--workers", "1", "--out", str(out)])
    assert code == 0
    table = pd.read_csv(out)
    assert set(table["privacy_unit"]) == {"sequence"} and table["formal_settings"].all()  # cells: experiments
    sigma = math.sqrt(2) * max_events_clip(3, 25, 2, "lagged") / (14 * 27) * get_sigma_gaussian(1.0, 1e-5)
    np.testing.assert_allclose(np.sqrt(table["sigma2"]), sigma, rtol=1e-9)  # N = 14 training sequences × 27 rows


@pytest.mark.parametrize("epsilon", [800.0, math.inf])
def test_unit_conversion_of_a_huge_or_infinite_epsilon(epsilon):
    from dphawkes_core.privacy.report import PrivacyReport

    report = PrivacyReport(sigma2=0.0, epsilon=epsilon, dp_delta=1e-5, calibration="formal", sensitivity=1.0, R=0.0,
                           epsilon_by_calibration={"formal": epsilon}, formal=True)
    conv = unit_conversion(report, 50)
    assert conv.naive_delta is None and conv.person_epsilon >= epsilon
    assert "nothing" in conv.sentences()[1]


@pytest.mark.usefixtures("clear_streamlit_caches")
def test_app_sequence_unit_with_g_chosen_privately():
    at = _estimate_page_on_taxi()
    at.sidebar.radio(key="unit").set_value("sequence")
    at.run()
    at.sidebar.number_input(key="seqM").set_value(30)
    at.sidebar.checkbox(key="seqGauto").check()
    at.run()
    _release(at)
    assert not at.exception and not at.error
    # relabelled "**Formal (ε, δ)-DP release** for one sequence …"
    assert any("Formal (ε, δ)-DP release** for one sequence" in s.value for s in at.success)
    shown = " ".join(e.value for kind in (at.markdown, at.caption, at.info, at.success) for e in kind)
    assert "chosen privately" in shown
    at.sidebar.number_input(key="C").set_value(2)  # a C no event-level fit has cached: the CLS reference is fitted
    at.run()
    _release(at)
    assert not at.exception and not at.error
    assert any("Released." in s.value for s in at.success) and at.get("plotly_chart")
    at.sidebar.number_input(key="seqM").set_value(0)  # no public M: G has no grid to be chosen on
    at.run()
    assert not at.exception and any("M" in e.value for e in at.error)


@pytest.mark.usefixtures("clear_streamlit_caches")
def test_app_sequence_unit_on_one_sequence_says_what_it_protects():
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "pages" / "2_Estimate.py"), default_timeout=120).run()  # one simulated sequence
    assert not any("One sequence" in w.value for w in at.warning)
    at.sidebar.checkbox(key="Cauto").uncheck()
    at.sidebar.radio(key="unit").set_value("sequence")
    at.run()
    assert not at.exception
    assert any("One sequence: under the sequence unit it is the whole data set" in w.value for w in at.warning)
