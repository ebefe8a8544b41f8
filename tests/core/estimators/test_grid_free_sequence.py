"""The grid-free family (``ctls``) with one sequence as the privacy unit: per-sequence pieces summed
against the event unit's pieces, non-negative release vectors, the public G that a cap of M events guarantees
(never exceeded by random or adversarial sequences, reached to a good fraction by packed ones), the replace-one
sensitivity √2·G measured through the code that runs, σ² = 0 equal to the event unit's non-private fit, the
calibration through the public pipeline and a privacy session, G chosen privately and accounted, and the CLI."""

from __future__ import annotations

import json
import math
from dataclasses import replace

import numpy as np
import pytest
from dp_accounting.gaussian_mechanism import get_sigma_gaussian

from dphawkes_core.data.io import Events, EventSequence, save_csv
from dphawkes_core.errors import ConfigError
from dphawkes_core.estimators import (
    FitConfig,
    fit,
    fit_stats,
    get_family,
    prepare_stats,
    privacy_report,
    release_status,
)
from dphawkes_core.estimators.grid_free.release import raw_release
from dphawkes_core.estimators.grid_free.sequence import (
    GridFreeSequenceStats,
    clipped_sequence_sum,
    ctls_max_events_clip,
    sequence_kappa,
    sequence_norms,
    sequence_vector,
    window_pieces,
)
from dphawkes_core.privacy.calibration import compose_sequence_clip
from dphawkes_core.privacy.report import NOT_RELEASED
from dphawkes_core.privacy.sequence import cap_events, clip_grid, clip_rng, dp_sequence_clip
from dphawkes_core.statistics.exact_times import grid_free_pieces, one_sequence_pieces

FAMILY = get_family("ctls")
PIECES = ("lagged", "pairs", "totals", "head_gram", "tail_gram", "head_int", "tail_int", "head_pairs", "head_counts")
DECLARED = {"window_stated": True, "dimensions_declared": True, "sequences_declared": True}


# --- data ------------------------------------------------------------------------------------------------------

def as_events(sequences, dim: int) -> Events:
    """``[(times per dimension, T)]`` as declared events (window, dimensions and sequences stated)."""
    return Events(
        tuple(EventSequence(tuple(np.asarray(t, float) for t in times), float(end)) for times, end in sequences),
        tuple(str(j) for j in range(dim)),
        window_stated=True,
        dimensions_declared=True,
        sequences_declared=True,
    )


def random_sequence(rng, dim: int, end: float, most: int, width: float = 1.0):
    """Up to ``most`` events in a window of length ``end`` (units of ``width``): uniform, or crowded into a short
    stretch (full bins), or near the window's ends."""
    n = int(rng.integers(0, most + 1))
    kind = rng.integers(3)
    if kind == 0:
        t = rng.uniform(0, end, n)
    elif kind == 1:
        start = rng.uniform(0, max(end - 3, 0))
        t = start + rng.uniform(0, min(3.0, end), n)
    else:
        t = np.where(rng.random(n) < 0.5, rng.uniform(0, min(3.0, end), n), end - rng.uniform(0, min(3.0, end), n))
    dims = rng.integers(0, dim, n)
    return [np.sort(t[dims == j] * width) for j in range(dim)], end * width


def packed(dim: int, M: int, C: int, start: float, which: int = 0, eps: float = 1e-3):
    """M events in dimension ``which``: clusters of 2C straddling every second grid point from ``start`` (C at the
    end of one bin, C at the start of the next), so that every even lag sees 2C partners (the bound's worst
    case for ``R``)."""
    t, g = [], float(start)
    while len(t) + 2 * C <= M:
        t += [g - eps] * C + [g] * C
        g += 2.0
    t += [g - eps] * min(C, M - len(t))
    times = [np.zeros(0) for _ in range(dim)]
    times[which] = np.sort(np.asarray(t))
    return times


def evenly_full(dim: int, M: int, C: int, start: float, which: int = 0, phase: float = 0.3):
    """M events in dimension ``which``, C per bin at the same phase of consecutive bins."""
    t, k = [], float(start)
    while len(t) < M:
        t += [k + phase] * min(C, M - len(t))
        k += 1.0
    times = [np.zeros(0) for _ in range(dim)]
    times[which] = np.asarray(t)
    return times


def config(width=1.0, lags=3, **shared) -> FitConfig:
    shared = {"calibration": "formal", "count_cap": 2, "sigma2": 0.0, "privacy_unit": "sequence", **shared}
    return FitConfig(method="ctls", bin_size=width, lags=lags, **shared)


def dataset(rng, dim: int, n: int, end: float, most: int, width: float = 1.0):
    return [random_sequence(rng, dim, end, most, width) for _ in range(n)]


# --- pieces and vectors ------------------------------------------------------------------------------------------

def test_per_sequence_pieces_sum_to_the_event_pieces_and_every_entry_is_nonnegative():
    rng = np.random.default_rng(0)
    for dim, lags, cap, width in ((2, 4, 2, 0.5), (1, 3, None, 1.0), (3, 5, 1, 0.25)):
        # windows longer than 2s, between s and 2s (head and tail overlap) and shorter than s (skipped)
        sequences = [random_sequence(rng, dim, end, 25, width) for end in (30.0, 7.0, 2.0, 12.0, 5.5, 40.0)]
        events = as_events(sequences, dim)
        whole, counts = grid_free_pieces(events, width, lags, cap)
        parts = [one_sequence_pieces(times, end, width, lags, cap) for times, end in sequences]
        used = [p for p, _, _ in parts if p is not None]
        assert len(used) == whole.sequences and sum(k for _, k, _ in parts) == counts["kept"]
        assert sum(c for _, _, c in parts) == counts["clipped"]
        for name in PIECES:
            np.testing.assert_allclose(sum(getattr(p, name) for p in used), getattr(whole, name), rtol=0, atol=1e-10)
        for name in ("duration", "total_time", "edge_time"):
            assert sum(getattr(p, name) for p in used) == pytest.approx(getattr(whole, name), abs=1e-10)
        template = window_pieces(events, width, lags, cap)
        assert (template.duration, template.sequences, template.skipped_sequences) == pytest.approx(
            (whole.duration, whole.sequences, whole.skipped_sequences))
        for pieces in used:  # sums of tri weights, counts, integrals of products of counts: >= 0 before the floor
            raw = raw_release(pieces, 7.0, 3.0)
            assert raw.min() >= -1e-12 and np.array_equal(sequence_vector(pieces, 7.0, 3.0), np.maximum(raw, 0))
        # nothing clipped: the clipped sum is the event unit's release vector
        total, info = clipped_sequence_sum(events, width, lags, cap, 7.0, 3.0, clip=1e12)
        np.testing.assert_allclose(total, raw_release(whole, 7.0, 3.0), rtol=0, atol=1e-9)
        assert info["clipped_sequences"] == 0 and info["sequences"] == whole.sequences


# --- G from M ---------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("dim, lags, M, C, reach", [
    (1, 3, 40, 2, 0.55), (2, 4, 60, 2, 0.6), (2, 10, 200, 3, 0.65), (3, 6, 90, 1, 0.65), (2, 4, 8, None, 0.55),
    (1, 5, 10, 3, 0.5)])
def test_g_from_m_bounds_every_sequence_of_m_events_and_is_reached_by_a_packed_one(dim, lags, M, C, reach):
    rho = 3.0
    kappa = sequence_kappa(dim, lags, M, C, 0.1, rho)
    top = ctls_max_events_clip(dim, lags, M, C, kappa, rho)

    def ratio(times, end):
        seq = cap_events(as_events([(times, end)], dim), M)[0].sequences[0]
        pieces, _, _ = one_sequence_pieces(seq.times, seq.end_time, 1.0, lags, C)
        return float(np.linalg.norm(sequence_vector(pieces, kappa, rho))) / top

    long_end = 10.0 * lags + 3.0 * M
    if C is None:  # all M events at one time: R(0) = M²
        adversarial = {"one time": ([np.full(M, 5.0)] + [np.zeros(0)] * (dim - 1), 50.0),
                       "one time in the head": ([np.zeros(M)] + [np.zeros(0)] * (dim - 1), lags + 0.1)}
    else:
        adversarial = {"packed": (packed(dim, M, C, 10.0 * lags), long_end),
                       "evenly full": (evenly_full(dim, M, C, 10.0 * lags), long_end),
                       "packed from the start": (packed(dim, M, C, 1.0), max(M / C, lags) + 1.5),
                       "full window": (evenly_full(dim, M, C, 0.0, phase=0.0), max(M / C, lags) + 0.5),
                       "full head and tail": ([np.sort(np.concatenate([evenly_full(1, M // 2, C, 0.0)[0],
                                                                       evenly_full(1, M - M // 2, C, 2.0 * lags)[0]]))]
                                              + [np.zeros(0)] * (dim - 1), 2.0 * lags + (M - M // 2) / C + 0.2)}
        spread = [packed(1, M // dim, C, 10.0 * lags + 0.1 * j)[0] for j in range(dim)]  # over the dimensions
        adversarial["packed in every dimension"] = (spread, long_end)
    ratios = {name: ratio(*pair) for name, pair in adversarial.items()}
    assert max(ratios.values()) <= 1.0, ratios
    assert max(ratios.values()) >= reach, ratios  # not absurdly loose
    rng = np.random.default_rng(3)
    for _ in range(150):
        times, end = random_sequence(rng, dim, float(rng.uniform(lags + 0.2, 5.0 * lags)), 3 * M)
        assert ratio(times, end) <= 1.0
    # with G = G_M nothing is clipped
    events = as_events([adversarial[next(iter(adversarial))]] * 2, dim)
    _, info = prepare_stats(events, config(lags=lags, count_cap=C, max_events=M, ctls_edge_share=10.0))
    assert info["sequence_clip"] == pytest.approx(top) and info["clipped_sequences"] == 0


def test_the_bound_grows_with_m_and_c_and_the_kappa_rule_gives_the_edge_share():
    values = [ctls_max_events_clip(2, 5, M, C, 4.0, 3.0) for M, C in ((10, 1), (20, 1), (20, 2), (20, None))]
    assert values == sorted(values)
    for share in (0.01, 0.1, 0.5):
        kappa = sequence_kappa(2, 5, 30, 2, share, 3.0)
        at_infinity = ctls_max_events_clip(2, 5, 30, 2, 1e12, 3.0)  # the Toeplitz part alone
        assert ctls_max_events_clip(2, 5, 30, 2, kappa, 3.0) == pytest.approx(at_infinity / math.sqrt(1 - share))


# --- replace-one sensitivity --------------------------------------------------------------------------------------

@pytest.mark.parametrize("clip_factor", [1.0, 0.05])
def test_replace_one_moves_the_clipped_sum_by_at_most_root2_g_and_reaches_it(clip_factor):
    """One sequence of a data set replaced: by packed sequences in other dimensions (disjoint supports), by the
    empty one, by random ones; measured through ``prepare_stats`` and ``query_vector`` (units of A, times N)."""
    dim, lags, M, C, end = 2, 3, 40, 2, 120.0
    rng = np.random.default_rng(5)
    rest = dataset(rng, dim, 6, end, 30)
    kappa = sequence_kappa(dim, lags, M, C, 0.1, 3.0)
    top = ctls_max_events_clip(dim, lags, M, C, kappa, 3.0)
    clip = top * clip_factor
    cfg = config(lags=lags, count_cap=C, max_events=M, sequence_clip=clip, ctls_edge_share=10.0)
    candidates = [packed(dim, M, C, 20.0, which=0), packed(dim, M, C, 20.0, which=1), [np.zeros(0)] * dim,
                  evenly_full(dim, M, C, 0.0, which=0), packed(dim, 2 * M, C, 40.0, which=1)]
    candidates += [random_sequence(rng, dim, end, 3 * M)[0] for _ in range(6)]
    releases = []
    for times in candidates:
        stats, _ = prepare_stats(as_events(rest + [(times, end)], dim), cfg)
        assert isinstance(stats, GridFreeSequenceStats) and stats.kappa == pytest.approx(kappa)
        releases.append(FAMILY.query_vector(stats, cfg) * stats.grid_pieces.duration)
    moved = [np.linalg.norm(a - b) for i, a in enumerate(releases) for b in releases[i + 1:]]
    report = privacy_report(stats, replace(cfg, sigma2=1.0))
    assert report.sensitivity == pytest.approx(math.sqrt(2) * clip / stats.grid_pieces.duration, rel=1e-12)
    assert max(moved) <= math.sqrt(2) * clip * (1 + 1e-9)
    if clip_factor < 1:  # both packed sequences clipped to norm G, disjoint supports: exactly √2·G
        assert np.linalg.norm(releases[0] - releases[1]) == pytest.approx(math.sqrt(2) * clip, rel=1e-9)
    else:  # G = G_M clips nothing: the two packed sequences' own norms, ~0.6 of G_M each
        assert max(moved) >= 0.5 * math.sqrt(2) * clip


# --- the fit --------------------------------------------------------------------------------------------------

def test_with_no_noise_it_is_the_event_units_non_private_fit():
    rng = np.random.default_rng(6)
    for width, lags, cap in ((0.5, 4, 2), (1.0, 3, None)):
        events = as_events(dataset(rng, 2, 5, 20.0, 30, width) + [random_sequence(rng, 2, 3.0, 5, width)], 2)
        plain = dict(ctls_ridge=0.0, ctls_smoothing=0.0, ctls_nonnegative=False)
        for options in (plain, {}):
            expected, _ = fit(events, FitConfig(method="ctls", bin_size=width, lags=lags, calibration="formal",
                                                count_cap=cap, sigma2=0.0, **options))
            result, info = fit(events, config(width=width, lags=lags, count_cap=cap, max_events=1000, **options))
            assert info["clipped_sequences"] == 0 and info["privacy_unit"] == "sequence"
            np.testing.assert_allclose(result.H, expected.H, rtol=1e-9, atol=1e-10)


def test_a_private_fit_is_one_gaussian_release_of_root2_g_over_n_and_formal_only_when_released():
    rng = np.random.default_rng(7)
    events = as_events(dataset(rng, 2, 12, 30.0, 40), 2)
    cfg = config(width=0.5, lags=4, sigma2=None, epsilon=1.0, count_cap=2, max_events=40)
    result, info = fit(events, cfg)
    n = sum(s.end_time / 0.5 - 4 for s in events.sequences)
    assert info["sequence_clip"] == pytest.approx(ctls_max_events_clip(2, 4, 40, 2, result.info["kappa"], 3.0))
    expected = math.sqrt(2) * info["sequence_clip"] / n * get_sigma_gaussian(1.0, cfg.dp_delta)
    assert math.sqrt(result.privacy.sigma2) == pytest.approx(expected, rel=1e-9)
    assert result.privacy.privacy_unit == "sequence" and info["sequences"] == 12
    assert np.all(np.isfinite(result.H)) and np.all(result.H >= 0) and result.info["statistics"] == "exact event times"
    assert release_status(cfg, DECLARED, released=True).formal  # as a privacy session releases it
    assert release_status(cfg, DECLARED).reasons == (NOT_RELEASED,)
    assert not release_status(replace(cfg, seed=3), DECLARED, released=True).formal
    assert not release_status(config(max_events=40), DECLARED, released=True).formal  # σ² = 0
    stated, _ = fit(events, replace(cfg, sequence_clip=5.0))
    assert math.sqrt(stated.privacy.sigma2) == pytest.approx(
        math.sqrt(2) * 5.0 / n * get_sigma_gaussian(1.0, cfg.dp_delta), rel=1e-9)


def test_a_session_releases_it_formally_and_meters_an_automatic_g(tmp_path):
    from dphawkes_core.release.ledger_file import LedgerBook
    from dphawkes_core.release.session import PrivacySession

    rng = np.random.default_rng(8)
    events = as_events(dataset(rng, 2, 40, 30.0, 30), 2)
    session = PrivacySession.for_events(events, LedgerBook(tmp_path / "ledger.json"), "f" * 64, unit="sequence")
    answer = session.release(config(sigma2=None, epsilon=2.0, max_events=30, sequence_clip="auto"))
    assert answer.status.formal and answer.result.privacy.privacy_unit == "sequence"
    assert answer.ledger.spent() == pytest.approx(2.0, rel=1e-6)
    assert len(answer.entry.mechanisms) == 2  # the histogram that chose G, then the statistics
    assert answer.result.privacy.budget_split.sequence_clip == answer.data_info["sequence_clip"]


def test_automatic_g_is_the_noisy_histograms_choice_and_is_accounted():
    rng = np.random.default_rng(9)
    events = as_events(dataset(rng, 2, 300, 40.0, 12), 2)
    M, eps = 12, 20.0
    cfg = config(sigma2=None, epsilon=eps, max_events=M, sequence_clip="auto", seed=4)
    result, info = fit(events, cfg)
    again, info_again = fit(events, cfg)
    assert np.array_equal(result.H, again.H) and info == info_again
    kappa = result.info["kappa"]
    top = ctls_max_events_clip(2, 3, M, 2, kappa, 3.0)
    norms = sequence_norms(cap_events(events, M)[0], 1.0, 3, 2, kappa, 3.0)
    chosen = dp_sequence_clip(norms, top, eps, 1e-5, clip_rng(4))  # the same draw: G's own stream of the seed
    assert info["sequence_clip"] == chosen.sequence_clip == info["auto_sequence_clip"]["sequence_clip"]
    assert chosen.sequence_clip in clip_grid(top) and chosen.sequence_clip < top
    assert info["clipped_sequences"] == int(np.sum(norms > chosen.sequence_clip))
    n = sum(s.end_time - 3 for s in events.sequences)
    sensitivity = math.sqrt(2) * chosen.sequence_clip / n
    sigma, split = compose_sequence_clip(eps, 1e-5, sensitivity, 0.05, chosen.sequence_clip)
    assert result.privacy.sensitivity == pytest.approx(sensitivity, rel=1e-12)
    assert math.sqrt(result.privacy.sigma2) == pytest.approx(sigma, rel=1e-9)
    assert result.privacy.budget_split.epsilon_total == pytest.approx(eps, rel=1e-6) == split.epsilon_total
    assert "chosen privately" in result.privacy.note


def test_each_unit_refuses_the_others_statistics_and_bad_settings():
    rng = np.random.default_rng(10)
    events = as_events(dataset(rng, 2, 4, 20.0, 20), 2)
    sequence_cfg = config(sigma2=1.0, max_events=20)
    event_cfg = FitConfig(method="ctls", bin_size=1.0, lags=3, calibration="formal", count_cap=2, sigma2=1.0)
    sequence_stats, _ = prepare_stats(events, sequence_cfg)
    event_stats, _ = prepare_stats(events, event_cfg)
    with pytest.raises(ConfigError, match="clipped per sequence"):
        fit_stats(event_stats, sequence_cfg)
    with pytest.raises(ConfigError, match="event unit's sensitivity does not hold"):
        fit_stats(sequence_stats, event_cfg)
    for other in (dict(max_events=21), dict(sequence_clip=3.0), dict(count_cap=3), dict(ctls_gram_scale=2.0)):
        with pytest.raises(ConfigError, match="clipped per sequence"):
            fit_stats(sequence_stats, replace(sequence_cfg, **other))
    with pytest.raises(ConfigError, match="not 'auto'"):
        config(sigma2=None, epsilon=1.0, count_cap="auto", max_events=20)
    with pytest.raises(ConfigError, match="target ε"):
        config(sigma2=1.0, max_events=20, sequence_clip="auto")


def test_the_cli_fits_it_with_the_sequence_unit(tmp_path, capsys):
    from dphawkes_cli.main import main

    rng = np.random.default_rng(11)
    events = as_events(dataset(rng, 2, 20, 40.0, 50), 2)
    csv, out = tmp_path / "events.csv", tmp_path / "fit.json"
    save_csv(events, csv)
    code = main(["fit", str(csv), "--method", "ctls", "--bin-size", "1", "--lags", "3", "--epsilon", "1",
                 "--calibration", "formal", "--count-cap", "3", "--privacy-unit", "sequence", "--max-events", "30",
                 "--end-time", "40", "--dimensions", "2", "--sequences", "20", "--json", str(out)])
    assert code == 0, capsys.readouterr().err
    payload = json.loads(out.read_text())
    assert payload["method"] == "ctls" and payload["privacy_unit"] == "sequence"
    assert payload["formal_settings"] is True and payload["formal_reasons"] == [NOT_RELEASED]  # no --ledger
    assert payload["sequences"] == 20 and payload["events_over_cap"] > 0
    _, info = prepare_stats(events, config(sigma2=None, epsilon=1.0, count_cap=3, max_events=30))
    assert payload["sequence_clip"] == pytest.approx(info["sequence_clip"])
    assert np.asarray(payload["kernels"]).shape == (2, 2, 3)


def _sequence_audit(broken_factor):
    """The sequence-neighbour audit of a ctls release: the last of 8 sequences, a burst in dimension 0, replaced
    by the same burst in dimension 1 (disjoint supports: the clipped vectors are orthogonal, √2·G apart)."""
    from dphawkes_experiments.audit import AuditConfig, prepare_sequence_audit, run_session
    rng = np.random.default_rng(7)

    def burst(dim):
        return EventSequence(tuple(np.arange(5.5, 25) if j == dim else np.empty(0) for j in range(2)), 30.0)

    others = [EventSequence(tuple(np.sort(rng.uniform(0, 30, rng.integers(3, 15))) for _ in range(2)), 30.0)
              for _ in range(7)]
    events = Events(tuple(others) + (burst(0),), ("0", "1"), window_stated=True)
    fit_config = FitConfig(method="ctls", bin_size=1.0, lags=3, calibration="formal", epsilon=4.0, count_cap=3,
                           privacy_unit="sequence", sequence_clip=20.0)
    config = AuditConfig(fit_config, trials=2000, seed=1, broken_factor=broken_factor)
    return run_session(prepare_sequence_audit(events, config, events.n_sequences - 1, burst(1)))


def test_the_sequence_neighbour_audit_refutes_a_halved_noise_and_not_the_release():
    correct, broken = _sequence_audit(None), _sequence_audit(2.0)
    assert not correct.violated and correct.mu_lower_bound > 0.5 * correct.mu_claimed  # most of the claim seen
    assert broken.violated
