"""The sequence unit's clip norm G chosen privately (``sequence_clip="auto"``): the histogram's replace-one
sensitivity on adversarial neighbours, the rule on known histograms, the composition against dp-accounting's
PLD accountant, and seeded end-to-end fits (library and CLI)."""

import json
import math
from functools import partial

import numpy as np
import pytest
from dp_accounting import dp_event
from dp_accounting.gaussian_mechanism import get_sigma_gaussian
from dp_accounting.pld import pld_privacy_accountant

from dphawkes_cli.main import main
from dphawkes_core.data.io import Events, EventSequence, save_csv
from dphawkes_core.errors import ConfigError
from dphawkes_core.estimators import fit, prepare_stats, release_status
from dphawkes_core.privacy.calibration import compose_sequence_clip
from dphawkes_core.privacy.report import NOT_RELEASED
from dphawkes_core.privacy.sequence import (
    choose_clip,
    clip_grid,
    clip_noise_sigma,
    clip_rng,
    contribution_norms,
    dp_sequence_clip,
    max_events_clip,
    norm_histogram,
)
from dphawkes_core.statistics.binning import BinnedCounts, SparseCounts
from tests.configs import fit_config

D, P, C, M = 2, 3, 2, 12


def _counts(*series):
    return SparseCounts.from_binned(BinnedCounts(tuple(np.asarray(x, dtype=np.int64) for x in series), 1.0, 0, 0, C))


def _packed(dim, n=30, start=5):
    """M events at the cap C in one dimension, in consecutive bins: the largest norm M events reach."""
    x = np.zeros((n, D), dtype=np.int64)
    x[start:start + M // C, dim] = C
    return x


@pytest.mark.parametrize("release", ["lagged", "full"])
def test_replace_one_moves_one_sequence_between_buckets_sensitivity_root2(release):
    """A packed sequence (top bucket) replaced by an empty one (bottom bucket) moves the histogram by
    exactly √2; random replacements never by more."""
    rng = np.random.default_rng(3)
    others = [np.minimum(rng.poisson(0.15, size=(30, D)), C) for _ in range(6)]
    empty = np.zeros((30, D), dtype=np.int64)
    grid = clip_grid(max_events_clip(P, M, C, release))

    def hist(last):
        return norm_histogram(contribution_norms(_counts(*others, last), P, release), grid)

    packed, tiny = hist(_packed(0)), hist(empty)
    assert np.linalg.norm(packed - tiny) == pytest.approx(math.sqrt(2))
    assert packed[-1] - tiny[-1] == 1 and tiny[0] - packed[0] == 1  # the extreme buckets
    for _ in range(20):
        x = np.zeros((30, D), dtype=np.int64)
        np.add.at(x, (rng.integers(0, 30, M), rng.integers(0, D, M)), 1)
        assert np.linalg.norm(hist(np.minimum(x, C)) - packed) <= math.sqrt(2) + 1e-12


def test_histogram_buckets_follow_the_grid():
    grid = clip_grid(8.0, levels=3)  # 1, 2, 4, 8
    np.testing.assert_allclose(grid, [1.0, 2.0, 4.0, 8.0])
    np.testing.assert_array_equal(norm_histogram([0.0, 1.0, 1.5, 2.0, 3.0, 8.0, 9.0], grid), [2, 2, 1, 2])


def test_rule_on_known_histograms():
    grid = clip_grid(1024.0, levels=10)  # 1 … 1024
    hist = np.zeros(11)
    hist[[5, 6, 7]] = [900, 60, 40]  # 900 sequences in (16, 32], 60 in (32, 64], 40 in (64, 128]
    # noiseless: ρ = 5 % of 1000 = 50 → clip at 64 (40 above), not 32 (100 above)
    assert choose_clip(hist, grid, 0.0, 1000, 0.05) == 64.0
    assert choose_clip(hist, grid, 0.0, 1000, 0.11) == 32.0
    assert choose_clip(hist, grid, 0.0, 1000, 0.0) == 128.0  # nothing clipped
    # with noise, the count above G plus two noise std must stay under ρ·S: 40 + 2·2·√4 <= 50 at 64
    assert choose_clip(hist, grid, 2.0, 1000, 0.05) == 64.0
    assert choose_clip(hist, grid, 6.0, 1000, 0.05) == 128.0  # 40 + 2·6·√4 > 50: one step up, 2·6·√3 <= 50
    assert choose_clip(hist, grid, 400.0, 1000, 0.05) == 1024.0  # noise that resolves nothing: the top G_M
    assert choose_clip(np.zeros(11), grid, 0.0, 0, 0.05) == 1.0  # never below the public floor G_M·2^(−K)


def test_chosen_clip_tracks_the_norms_and_noise_depends_only_on_public_numbers():
    rng = np.random.default_rng(0)
    norms = rng.uniform(10, 20, size=5000)
    auto = dp_sequence_clip(norms, 1000.0, 1.0, 1e-5, rng)
    assert auto.sequence_clip == pytest.approx(1000.0 / 2**5)  # 31.25 clips nothing, 15.6 ~55 %
    assert auto.sigma == pytest.approx(math.sqrt(2) * get_sigma_gaussian(0.05, 1e-5))
    assert clip_noise_sigma(1.0, 1e-5, 0.05) == auto.sigma


@pytest.mark.parametrize("share", [0.05, 0.2])
def test_composition_is_exactly_the_users_budget(share):
    """G's histogram (noise multiplier σ/√2) and the statistics' release compose to (ε, δ): checked with
    dp-accounting's PLD accountant on the two mechanisms."""
    eps, delta, sens = 1.0, 1e-5, 0.42
    sigma, split = compose_sequence_clip(eps, delta, sens, share, 7.0)
    accountant = pld_privacy_accountant.PLDAccountant()
    accountant.compose(dp_event.GaussianDpEvent(clip_noise_sigma(eps, delta, share) / math.sqrt(2)))
    accountant.compose(dp_event.GaussianDpEvent(sigma / sens))
    pld = accountant.get_epsilon(delta)
    assert split.epsilon_total == pytest.approx(eps, rel=1e-9)  # composed exactly: one Gaussian of μ_total
    assert split.epsilon_total <= pld == pytest.approx(eps, rel=1e-6)  # the PLD's discretisation is pessimistic
    assert split.sequence_clip == 7.0 and split.cap_epsilon == pytest.approx(share * eps)
    assert sigma > sens * get_sigma_gaussian(eps, delta)  # G's share is paid by the release


def _events(n_seq=300, seed=2, horizon=40.0):
    rng = np.random.default_rng(seed)
    seqs = [EventSequence(tuple(np.sort(rng.uniform(0, horizon, rng.integers(2, 10))) for _ in range(D)), horizon)
            for _ in range(n_seq)]
    return Events(tuple(seqs), tuple(str(j) for j in range(D)), window_stated=True, dimensions_declared=True)


_config = partial(fit_config, method="ssp", lags=P, epsilon=20.0, count_cap=C, privacy_unit="sequence", max_events=M,
                  sequence_clip="auto")


def test_seeded_auto_fit_reports_the_private_choice_and_is_reproducible():
    events = _events()
    (a, info), (b, info_b) = fit(events, _config(seed=4)), fit(events, _config(seed=4))
    assert np.array_equal(a.H, b.H) and info == info_b
    g_m = max_events_clip(P, M, C, "lagged")
    stats, _ = prepare_stats(events, _config(sequence_clip=g_m, seed=4))
    # G's noise comes from its own stream of the seed: the same draw as dp_sequence_clip on the true norms
    from dphawkes_core.statistics.binning import bin_sparse
    norms = contribution_norms(bin_sparse(events, 1.0, C), P, "lagged")
    expected = dp_sequence_clip(norms, g_m, 20.0, 1e-5, clip_rng(4))
    assert info["sequence_clip"] == expected.sequence_clip == info["auto_sequence_clip"]["sequence_clip"]
    assert expected.sequence_clip in clip_grid(g_m) and expected.sequence_clip < g_m
    assert info["clipped_sequences"] == int(np.sum(norms > expected.sequence_clip))
    split = a.privacy.budget_split
    assert split.sequence_clip == info["sequence_clip"] and split.epsilon_total == pytest.approx(20.0, rel=1e-6)
    assert a.privacy.formal and "chosen privately" in a.privacy.note
    assert a.privacy.sensitivity == pytest.approx(math.sqrt(2) * info["sequence_clip"] / stats.n_rows)
    # G is a private release, not a setting taken from the data: formal when a privacy session releases it
    assert release_status(_config(), info, released=True).formal
    assert release_status(_config(), info).reasons == (NOT_RELEASED,)
    c, _ = fit(events, _config(seed=5))
    assert not np.array_equal(a.H, c.H)


@pytest.mark.parametrize("kw, message", [
    (dict(privacy_unit="event", max_events=None), "belong to the sequence unit"),
    (dict(max_events=None), "public cap M"),
    (dict(epsilon=None, sigma2=1.0), "target ε"),
    (dict(sequence_clip_share=1.5), "share of ε spent on the clip norm G"),
    (dict(sequence_clip="big"), "positive number or 'auto'"),
])
def test_bad_auto_clip_settings_are_refused(kw, message):
    with pytest.raises(ConfigError, match=message):
        _config(**kw)


def test_cli_sequence_clip_auto(tmp_path):
    data, out = tmp_path / "events.csv", tmp_path / "fit.json"
    save_csv(_events(), data)
    code = main(["fit", str(data), "--end-time", "40", "--bin-size", "1", "--lags", str(P), "--method", "ssp",
                 "--calibration", "formal", "--epsilon", "20", "--count-cap", str(C), "--privacy-unit", "sequence",
                 "--max-events", str(M), "--sequence-clip", "auto", "--dimensions", str(D), "--sequences", "300",
                 "--json", str(out)])
    assert code == 0
    payload = json.loads(out.read_text())
    assert payload["formal_settings"] is True and payload["formal_reasons"] == [NOT_RELEASED]  # no --ledger
    assert payload["sequence_clip"] == payload["auto_sequence_clip"]["sequence_clip"]
    assert payload["sequence_clip"] in clip_grid(max_events_clip(P, M, C, "lagged"))  # OS noise: any grid value
    assert payload["budget_split"]["share"] == 0.05


def test_an_auto_clip_fit_is_metered_with_its_selection_release(tmp_path):
    """Through the ledger: the histogram release that chose G is one mechanism (named for G, not the count
    cap), the statistics the other, and together they spend exactly the fit's ε."""
    from dp_accounting.gaussian_mechanism import get_epsilon_gaussian

    from dphawkes_core.release.ledger import LedgerKey
    from dphawkes_core.release.ledger_file import LedgerBook
    from dphawkes_core.release.session import metered_fit

    events = _events()
    config = _config(epsilon=2.0)
    stats, info = prepare_stats(events, config)
    book, key = LedgerBook(tmp_path / "ledger.json"), LedgerKey("e" * 64, unit="sequence")
    metered = metered_fit(book, key, stats, config, info)
    selection, release = metered.entry.mechanisms
    assert "clip norm G" in selection.label and "count cap" not in selection.label
    assert selection.parameter == metered.result.privacy.budget_split.cap_sigma
    mu = math.hypot(1 / selection.parameter, 1 / release.parameter)  # two Gaussians: μ² adds up
    assert metered.ledger.spent() == pytest.approx(get_epsilon_gaussian(1 / mu, 1e-5), rel=1e-6)
    assert metered.ledger.spent() == pytest.approx(2.0, rel=1e-6)
