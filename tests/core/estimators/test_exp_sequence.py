"""The exponential family's sequence unit: the G that M guarantees bounds every sequence of at most M events and a
burst nearly reaches it; replace-one neighbours move the released sums by at most √2·G, and adversarial ones
(a burst replaced by the same burst in another dimension) reach it through the code that runs; an automatic G
is the noisy histogram's choice and is accounted; a session releases it formally; the CLI fits it; each unit
refuses the other's statistics; the sequence-neighbour audit refutes a halved noise and not the release."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from dphawkes_core.data.io import Events, EventSequence, save_csv
from dphawkes_core.errors import ConfigError
from dphawkes_core.estimators import FitConfig, fit, get_family, prepare_stats, privacy_report
from dphawkes_core.estimators.exp.release import raw_release
from dphawkes_core.estimators.exp.sequence import exp_max_events_clip, one_sequence_pieces, sequence_vector
from dphawkes_core.estimators.exp.statistics import exp_pieces
from dphawkes_core.privacy.calibration import compose_sequence_clip
from dphawkes_core.privacy.report import NOT_RELEASED
from dphawkes_core.privacy.sequence import cap_events, clip_grid, clip_rng, dp_sequence_clip

DECAYS = (0.7, 1.5, 3.0)
EXP = get_family("exp")


def config(**changes):
    base = dict(method="exp", bin_size=1.0, lags=5, calibration="formal", decays=DECAYS, privacy_unit="sequence",
                sigma2=None, epsilon=1.0)
    return FitConfig(**{**base, **changes})


def random_sequence(rng, dim, n, end):
    """``n`` events over ``dim`` dimensions, some simultaneous, some in tight clusters."""
    t = np.concatenate([rng.uniform(0, end, n - n // 3), np.repeat(rng.uniform(0, end, 1), n // 6),
                        rng.uniform(0, end, 1) + 1e-7 * np.arange(n // 3 - n // 6)])
    dims = rng.integers(0, dim, t.size)
    return EventSequence(tuple(np.sort(t[dims == j]) for j in range(dim)), float(end))


def burst(dim, target, M, end=60.0, start=1.0):
    """M events of dimension ``target`` 10⁻⁹ apart: every pair of them as close as the bound allows."""
    return EventSequence(tuple(start + 1e-9 * np.arange(M) if j == target else np.empty(0) for j in range(dim)), end)


def norm(seq, dim, decays, rho=3.0, cap=None):
    return float(np.linalg.norm(sequence_vector(one_sequence_pieces(seq, dim, decays, 1.0, cap)[0], rho)))


@pytest.mark.parametrize("dim, decays, M", [(1, (1.0,), 8), (2, DECAYS, 12), (3, (0.5, 4.0), 30)])
def test_g_from_m_bounds_every_sequence_of_m_events_and_a_burst_nearly_reaches_it(dim, decays, M):
    rng = np.random.default_rng(M)
    bound = exp_max_events_clip(dim, decays, M, 3.0)
    worst = 0.0
    for _ in range(200):
        seq = random_sequence(rng, dim, int(rng.integers(1, M + 1)), float(rng.uniform(0.5, 50)))
        worst = max(worst, norm(seq, dim, decays))
    assert worst <= bound
    reached = norm(burst(dim, 0, M), dim, decays)
    assert reached <= bound * (1 + 1e-12) and reached >= 0.8 * bound, reached / bound


def test_per_sequence_vectors_sum_to_the_event_units_release_and_are_nonnegative():
    rng = np.random.default_rng(3)
    seqs = tuple(random_sequence(rng, 2, 25, 30.0) for _ in range(4))
    events = Events(seqs, ("0", "1"), window_stated=True)
    whole = raw_release(exp_pieces(events, DECAYS, 1.0, 2)[0], 3.0)
    parts = [sequence_vector(one_sequence_pieces(s, 2, DECAYS, 1.0, 2)[0], 3.0) for s in seqs]
    assert all(np.all(v >= 0) for v in parts)
    np.testing.assert_allclose(np.sum(parts, axis=0), whole, rtol=1e-10, atol=1e-12 * np.abs(whole).max())


def _moved(events, neighbour, cfg):
    d, _ = prepare_stats(events, cfg)
    n, _ = prepare_stats(neighbour, cfg)
    bound = privacy_report(d, cfg).sensitivity
    assert privacy_report(n, cfg).sensitivity == bound  # from public numbers only
    return float(np.linalg.norm(EXP.query_vector(n, cfg) - EXP.query_vector(d, cfg))), bound


@pytest.mark.parametrize("clip", [None, 5.0])
def test_replace_one_moves_the_release_by_at_most_root2_g_and_a_burst_swap_reaches_it(clip):
    """A burst in dimension 0 replaced by the same burst in dimension 1: disjoint supports, so the (clipped) vectors
    are orthogonal; with G from M (no clipping) the pair reaches ≥ 0.8 of √2·G, with a small stated G all of it."""
    rng = np.random.default_rng(5)
    M = 15
    others = tuple(random_sequence(rng, 2, int(rng.integers(2, M)), 60.0) for _ in range(5))
    cfg = config(max_events=M, sequence_clip=clip)
    events = Events(others + (burst(2, 0, M),), ("0", "1"), window_stated=True)
    neighbour = Events(others + (burst(2, 1, M),), ("0", "1"), window_stated=True)
    moved, bound = _moved(events, neighbour, cfg)
    assert moved <= bound * (1 + 1e-9)
    assert moved >= (0.999 if clip else 0.8) * bound, moved / bound
    for _ in range(30):  # random replacements never exceed the bound
        other = Events(others + (random_sequence(rng, 2, int(rng.integers(1, M + 1)), 60.0),), ("0", "1"),
                       window_stated=True)
        assert _moved(events, other, cfg)[0] <= bound * (1 + 1e-9)


def test_a_private_fit_is_one_gaussian_release_of_root2_g_over_n():
    rng = np.random.default_rng(6)
    events = Events(tuple(random_sequence(rng, 2, 20, 30.0) for _ in range(10)), ("0", "1"), window_stated=True)
    cfg = config(max_events=20, count_cap=3)
    result, info = fit(events, cfg)
    G = exp_max_events_clip(2, DECAYS, 20, 3.0)
    assert info["sequence_clip"] == pytest.approx(G) and info["clipped_sequences"] == 0
    assert result.privacy.sensitivity == pytest.approx(math.sqrt(2) * G / 300.0, rel=1e-12)
    assert result.privacy.privacy_unit == "sequence" and "one sequence" in result.privacy.note
    noiseless, _ = fit(events, config(max_events=20, count_cap=3, sigma2=0.0, epsilon=None, exp_ridge=0.0,
                                      exp_nonnegative=False))
    event_unit, _ = fit(events, FitConfig(method="exp", bin_size=1.0, lags=5, calibration="formal", decays=DECAYS,
                                          count_cap=3, sigma2=0.0, exp_ridge=0.0, exp_nonnegative=False))
    np.testing.assert_allclose(noiseless.H, event_unit.H, rtol=1e-8, atol=1e-10 * np.abs(event_unit.H).max())


def test_automatic_g_is_the_noisy_histograms_choice_and_is_accounted():
    rng = np.random.default_rng(9)
    events = Events(tuple(random_sequence(rng, 2, int(rng.integers(2, 13)), 40.0) for _ in range(300)),
                    ("0", "1"), window_stated=True)
    M, eps = 12, 20.0
    cfg = config(epsilon=eps, max_events=M, sequence_clip="auto", seed=4)
    result, info = fit(events, cfg)
    top = exp_max_events_clip(2, DECAYS, M, 3.0)
    norms = [norm(s, 2, DECAYS) for s in cap_events(events, M)[0].sequences]
    chosen = dp_sequence_clip(np.asarray(norms), top, eps, 1e-5, clip_rng(4))
    assert info["sequence_clip"] == chosen.sequence_clip == info["auto_sequence_clip"]["sequence_clip"]
    assert chosen.sequence_clip in clip_grid(top) and chosen.sequence_clip < top
    assert info["clipped_sequences"] == int(np.sum(np.asarray(norms) > chosen.sequence_clip))
    sensitivity = math.sqrt(2) * chosen.sequence_clip / (300 * 40.0)
    sigma, split = compose_sequence_clip(eps, 1e-5, sensitivity, 0.05, chosen.sequence_clip)
    assert result.privacy.sensitivity == pytest.approx(sensitivity, rel=1e-12)
    assert math.sqrt(result.privacy.sigma2) == pytest.approx(sigma, rel=1e-9)
    assert result.privacy.budget_split.epsilon_total == pytest.approx(eps, rel=1e-6)


def test_a_session_releases_it_formally(tmp_path):
    from dphawkes_core.release.ledger_file import LedgerBook
    from dphawkes_core.release.session import PrivacySession

    rng = np.random.default_rng(8)
    events = Events(tuple(random_sequence(rng, 2, 20, 30.0) for _ in range(40)), ("0", "1"), window_stated=True,
                    dimensions_declared=True, sequences_declared=True)
    session = PrivacySession.for_events(events, LedgerBook(tmp_path / "ledger.json"), "e" * 64, unit="sequence")
    answer = session.release(config(epsilon=2.0, max_events=30, sequence_clip="auto"))
    assert answer.status.formal and answer.result.privacy.privacy_unit == "sequence"
    assert answer.ledger.spent() == pytest.approx(2.0, rel=1e-6)


def test_each_unit_refuses_the_others_statistics_and_bad_settings():
    rng = np.random.default_rng(10)
    events = Events(tuple(random_sequence(rng, 2, 10, 20.0) for _ in range(4)), ("0", "1"), window_stated=True)
    sequence_cfg = config(sigma2=1.0, epsilon=None, max_events=20, count_cap=2)
    event_cfg = FitConfig(method="exp", bin_size=1.0, lags=5, calibration="formal", decays=DECAYS, count_cap=2,
                          sigma2=1.0)
    sequence_stats, _ = prepare_stats(events, sequence_cfg)
    event_stats, _ = prepare_stats(events, event_cfg)
    with pytest.raises(ConfigError, match="clipped sums of the sequence unit"):
        privacy_report(sequence_stats, event_cfg)
    with pytest.raises(ConfigError, match="clipped per sequence"):
        privacy_report(event_stats, sequence_cfg)
    with pytest.raises(ConfigError, match="clipped per sequence"):
        privacy_report(sequence_stats, config(sigma2=1.0, epsilon=None, max_events=21, count_cap=2))
    with pytest.raises(ConfigError, match="automatic clip norm"):
        config(sigma2=1.0, epsilon=None, max_events=20, sequence_clip="auto")
    with pytest.raises(ConfigError, match="no sequence unit"):
        prepare_stats(events, config(sigma2=0.0, epsilon=None, max_events=20, exp_likelihood=True))


def test_the_cli_fits_it_with_the_sequence_unit(tmp_path, capsys):
    from dphawkes_cli.main import main

    rng = np.random.default_rng(11)
    events = Events(tuple(random_sequence(rng, 2, 50, 40.0) for _ in range(20)), ("0", "1"), window_stated=True)
    csv, out = tmp_path / "events.csv", tmp_path / "fit.json"
    save_csv(events, csv)
    code = main(["fit", str(csv), "--method", "exp", "--decays", "0.7,1.5,3", "--bin-size", "1", "--lags", "3",
                 "--epsilon", "1", "--count-cap", "3", "--privacy-unit", "sequence", "--max-events", "30",
                 "--end-time", "40", "--dimensions", "2", "--sequences", "20", "--json", str(out)])
    assert code == 0, capsys.readouterr().err
    payload = json.loads(out.read_text())
    assert payload["method"] == "exp" and payload["privacy_unit"] == "sequence"
    assert payload["formal_settings"] is True and payload["formal_reasons"] == [NOT_RELEASED]  # no --ledger
    assert payload["sequences"] == 20 and payload["events_over_cap"] > 0
    assert payload["sequence_clip"] == pytest.approx(exp_max_events_clip(2, DECAYS, 30, 3.0))


def _sequence_audit(broken_factor):
    """The sequence-neighbour audit of an exp release: the last of 8 sequences, a burst in dimension 0, replaced by
    the same burst in dimension 1 (disjoint supports: the clipped vectors are orthogonal, √2·G apart)."""
    from dphawkes_experiments.audit import AuditConfig, prepare_sequence_audit, run_session

    rng = np.random.default_rng(7)
    others = tuple(random_sequence(rng, 2, int(rng.integers(3, 15)), 30.0) for _ in range(7))
    events = Events(others + (burst(2, 0, 20, 30.0),), ("0", "1"), window_stated=True)
    fit_config = FitConfig(method="exp", bin_size=1.0, lags=3, calibration="formal", epsilon=4.0, decays=DECAYS,
                           privacy_unit="sequence", sequence_clip=20.0)
    audit = AuditConfig(fit_config, trials=2000, seed=1, broken_factor=broken_factor)
    return run_session(prepare_sequence_audit(events, audit, events.n_sequences - 1, burst(2, 1, 20, 30.0)))


def test_the_sequence_neighbour_audit_refutes_a_halved_noise_and_not_the_release():
    correct, broken = _sequence_audit(None), _sequence_audit(2.0)
    assert not correct.violated and correct.mu_lower_bound > 0.5 * correct.mu_claimed
    assert broken.violated
