"""The grid-free family (``ctls``) against references written here, independent of the package:
statistics by brute force (explicit loops over event pairs, ``∫ φφᵀ`` exactly between breakpoints and on a
fine grid), boundary terms, sums over sequences, the keep-first-C cap, the sensitivity bound reached by
adversarial neighbours through the code that runs, σ = 0 equal to the non-private fit, seeded fits not formal,
the kernels' layout on a simulation, the CLI and a worst-case audit that catches a halved noise."""

from __future__ import annotations

import json
import math
from dataclasses import replace

import numpy as np
import pytest
from audit_tools import audits_as_claimed_and_halved

from dphawkes_core.data.io import Events, EventSequence, from_arrays
from dphawkes_core.data.kernels import get_scenario
from dphawkes_core.data.simulate import simulate
from dphawkes_core.errors import ConfigError
from dphawkes_core.estimators import (
    FitConfig,
    binned_stats,
    fit,
    fit_stats,
    get_family,
    prepare_stats,
    privacy_report,
    release_status,
)
from dphawkes_core.estimators.grid_free.release import EDGE_PARTS, ctls_sensitivity, release_layout, worst_case_events
from dphawkes_core.evaluation.lag_average import fit_steps
from dphawkes_core.evaluation.metrics import kernel_function_error
from dphawkes_core.statistics.binning import bin_events, keep_first
from dphawkes_core.statistics.exact_times import GridFreeStats, assemble, grid_free_pieces

FAMILY = get_family("ctls")


# --- references ---------------------------------------------------------------------------------------------

def kept(times: np.ndarray, width: float, cap: int | None) -> list[float]:
    """The first ``cap`` events of every bin [kw, (k+1)w), by a loop."""
    out, seen = [], {}
    for t in sorted(times):
        k = math.floor(t / width + 1e-12)
        seen[k] = seen.get(k, 0) + 1
        if cap is None or seen[k] <= cap:
            out.append(float(t))
    return out


def phi(t: float, events, width: float, lags: int, dim: int) -> np.ndarray:
    """``(N_j^b(t) for b, j lag-major, 1)`` by a loop over the events."""
    v = np.zeros(dim * lags + 1)
    v[-1] = 1.0
    for u, j in events:
        for b in range(lags):
            if b * width < t - u <= (b + 1) * width:
                v[b * dim + j] += 1
    return v


def brute_force(sequences, width: float, lags: int, cap: int | None, dim: int, grid: int | None = None):
    """``G`` (exactly between breakpoints, or by the midpoint rule on ``grid`` cells per unit of w) and ``c``
    summed over sequences ``[(times per dimension, T)]``; the first s of each window is history only."""
    s, q = lags * width, dim * lags + 1
    G, c = np.zeros((q, q)), np.zeros((dim, q))
    for times, end in sequences:
        events = [(t, j) for j in range(dim) for t in kept(times[j], width, cap)]
        if end <= s:
            continue
        if grid is None:
            points = sorted({s, end} | {u + b * width for u, _ in events for b in range(lags + 1)
                                        if s < u + b * width < end})
        else:
            points = list(np.linspace(s, end, int(round((end - s) / width * grid)) + 1))
        for t0, t1 in zip(points, points[1:]):
            f = phi((t0 + t1) / 2, events, width, lags, dim)
            G += (t1 - t0) * np.outer(f, f)
        for t, i in events:
            if t >= s:
                c[i] += phi(t, events, width, lags, dim)
    return G, c


def random_sequences(rng, dim: int, ends, dense: int = 12):
    out = []
    for end in ends:
        times = [np.sort(rng.uniform(0, end, int(rng.integers(2, dense)))) for _ in range(dim)]
        out.append((times, end))
    return out


def as_events(sequences, dim: int) -> Events:
    return Events(tuple(EventSequence(tuple(t), end) for t, end in sequences), tuple(str(j) for j in range(dim)),
                  window_stated=True, dimensions_declared=True)


def config(width=0.5, lags=4, **shared) -> FitConfig:
    shared = {"calibration": "formal", "count_cap": 2, "sigma2": 0.0, **shared}
    return FitConfig(method="ctls", bin_size=width, lags=lags, **shared)


# --- statistics ---------------------------------------------------------------------------------------------

def test_statistics_equal_brute_force_over_pairs_and_breakpoints():
    rng = np.random.default_rng(1)
    # windows longer than 2s, between s and 2s (head and tail overlap) and shorter than s (skipped)
    sequences = random_sequences(rng, 2, (9.3, 3.1, 2.2, 1.5))
    sequences[0][0][0][3] = 2.0  # an event on a bin edge
    sequences[0][0][1][:2] = (4.0, 4.0)  # and two at the same time in another dimension
    sequences[0][0][1].sort()
    for cap in (None, 1, 2):
        pieces, info = grid_free_pieces(as_events(sequences, 2), 0.5, 4, cap)
        G, c = assemble(pieces)
        G_ref, c_ref = brute_force(sequences, 0.5, 4, cap, 2)
        assert np.allclose(G * 0.5, G_ref, rtol=0, atol=1e-12), cap
        assert np.array_equal(c, c_ref), cap
        assert pieces.skipped_sequences == 1


def test_statistics_equal_the_fine_grid_integral():
    rng = np.random.default_rng(2)
    sequences = random_sequences(rng, 2, (6.7,), dense=8)
    pieces, _ = grid_free_pieces(as_events(sequences, 2), 1.0, 3, None)
    G, _ = assemble(pieces)
    G_fine, _ = brute_force(sequences, 1.0, 3, None, 2, grid=2000)
    assert np.allclose(G, G_fine, atol=2e-3 * np.abs(G_fine).max())


def test_boundary_terms_are_the_integrals_before_s_and_after_t():
    rng = np.random.default_rng(3)
    (times, end), = random_sequences(rng, 1, (7.0,), dense=14)
    width, lags = 1.0, 3
    pieces, _ = grid_free_pieces(as_events([(times, end)], 1), width, lags, None)
    events = [(t, 0) for t in times[0]]
    cells = 4000

    def integral(lo, hi):
        t = lo + (np.arange(int((hi - lo) * cells)) + 0.5) / cells
        f = np.array([phi(x, events, width, lags, 1)[:-1] for x in t])
        return f.T @ f / cells, f.sum(axis=0) / cells

    head_gram, head_int = integral(-1.0, float(lags))
    tail_gram, tail_int = integral(end, end + lags + 1)
    assert np.allclose(pieces.head_gram, head_gram, atol=2e-3) and np.allclose(pieces.head_int, head_int, atol=2e-3)
    assert np.allclose(pieces.tail_gram, tail_gram, atol=2e-3) and np.allclose(pieces.tail_int, tail_int, atol=2e-3)
    assert np.array_equal(pieces.head_counts, [np.sum(times[0] < lags)])


def test_several_sequences_sum_their_pieces():
    rng = np.random.default_rng(4)
    sequences = random_sequences(rng, 3, (8.0, 5.5, 12.25))
    together, _ = grid_free_pieces(as_events(sequences, 3), 0.75, 4, 2)
    apart = [grid_free_pieces(as_events([one], 3), 0.75, 4, 2)[0] for one in sequences]
    for name in ("lagged", "pairs", "totals", "head_gram", "tail_gram", "head_int", "tail_int", "head_pairs",
                 "head_counts", "duration"):
        assert np.allclose(getattr(together, name), sum(getattr(p, name) for p in apart)), name


def test_the_cap_keeps_the_first_c_events_of_every_bin():
    times = np.array([0.0, 0.1, 0.2, 0.3, 0.5, 0.9999, 1.0, 1.0, 1.0, 2.5, 2.7, 2.9, 2.95])
    for cap in (1, 2, 3):
        assert list(times[keep_first(times, 0.5, cap)]) == kept(times, 0.5, cap)
    events = from_arrays([times, times[::2]], end_time=3.0)
    _, info = prepare_stats(events, config(width=0.5, lags=2, count_cap=1))
    assert info["clipped_events"] == len(times) + len(times[::2]) - len(kept(times, 0.5, 1)) - len(
        kept(times[::2], 0.5, 1))


# --- privacy --------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("dim,lags,cap,fraction", [(2, 25, 2, 0.93), (1, 20, 3, 0.90), (3, 4, 2, 0.74)])
def test_adversarial_neighbours_reach_the_sensitivity_bound_through_the_code(dim, lags, cap, fraction):
    cfg = config(width=1.0, lags=lags, count_cap=cap, sigma2=1.0)
    d_events, d_prime = FAMILY.worst_case_events(cfg, dim)
    assert d_prime.n_events == d_events.n_events + 1
    s_d, s_n = (prepare_stats(e, cfg)[0] for e in (d_events, d_prime))
    bound = privacy_report(s_d, cfg).sensitivity
    assert privacy_report(s_n, cfg).sensitivity == pytest.approx(bound, rel=1e-12)  # public
    moved = np.linalg.norm(FAMILY.query_vector(s_n, cfg) - FAMILY.query_vector(s_d, cfg))
    assert fraction * bound <= moved <= bound * (1 + 1e-9)


def test_both_kinds_of_neighbour_and_random_ones_stay_under_the_bound():
    rng = np.random.default_rng(5)
    for kind in ("insert", "swap"):
        for dim, lags, cap in ((1, 3, 1), (2, 6, 2)):
            cfg = config(width=1.0, lags=lags, count_cap=cap, sigma2=1.0, ctls_gram_scale=1.0)
            pair = worst_case_events(dim, lags, cap, 1.0, kind)
            s_d, s_n = (prepare_stats(e, cfg)[0] for e in pair)
            moved = np.linalg.norm(FAMILY.query_vector(s_n, cfg) - FAMILY.query_vector(s_d, cfg))
            assert moved <= privacy_report(s_d, cfg).sensitivity * (1 + 1e-9)
    for _ in range(60):  # full bins, clustered positions, short windows, events near both ends
        dim, lags, cap = int(rng.integers(1, 3)), int(rng.integers(1, 5)), int(rng.integers(1, 3))
        end = float(rng.uniform(lags + 0.5, 3 * lags + 3))
        times = [np.sort(np.concatenate([k + rng.choice([0.0, 0.001, 0.5, 0.999], cap + 1)
                                         for k in range(int(end))])) for _ in range(dim)]
        times = [t[t <= end] for t in times]
        grown = [t.copy() for t in times]
        grown[0] = np.sort(np.append(grown[0], rng.uniform(0, end)))
        cfg = config(width=1.0, lags=lags, count_cap=cap, sigma2=1.0, ctls_gram_scale=float(rng.choice([1.0, 3.0])))
        s_d, s_n = (prepare_stats(from_arrays(t, end_time=end), cfg)[0] for t in (times, grown))
        moved = np.linalg.norm(FAMILY.query_vector(s_n, cfg) - FAMILY.query_vector(s_d, cfg))
        assert moved <= privacy_report(s_d, cfg).sensitivity * (1 + 1e-9)


@pytest.mark.parametrize("dim,lags,cap", [(1, 40, 2), (2, 25, 2)])
def test_at_gram_scale_one_the_swap_term_binds_and_a_swap_pair_reaches_it(dim, lags, cap):
    """The keep-first-C swap (u added before the bin's last kept v, which leaves) binds at ρ = 1 and large B (its
    R(m) term is twice the insertion's): the swap pair must move the release by at most the bound the code uses
    and by nearly all of it (0.978–0.980 measured). A swap term halved lets this pair move 1.06–1.07× the bound."""
    cfg = config(width=1.0, lags=lags, count_cap=cap, sigma2=1.0, ctls_gram_scale=1.0)
    d_events, d_prime = worst_case_events(dim, lags, cap, 1.0, "swap")
    s_d, s_n = (prepare_stats(e, cfg)[0] for e in (d_events, d_prime))
    bound = privacy_report(s_d, cfg).sensitivity
    moved = np.linalg.norm(FAMILY.query_vector(s_n, cfg) - FAMILY.query_vector(s_d, cfg))
    assert moved <= bound * (1 + 1e-9), moved / bound
    assert moved >= 0.975 * bound, moved / bound
    sens = FAMILY.sensitivity(s_d, cfg)
    assert sens.toeplitz["swap"] > sens.toeplitz["insert"]  # the swap term is the one that binds here
    assert sens.total == pytest.approx(math.hypot(sens.toeplitz["swap"], sens.edge["swap"] / sens.kappa), rel=1e-12)


def head_insertion(dim: int, lags: int, cap: int, at: float):
    """The family's insertion pair moved so that the added event sits at ``at`` inside the head ``[0, s)`` (units of
    w = 1): the clusters before the window's start are cut off, the window stays long (no tail piece moves)."""
    g = 2 * lags + 4  # where worst_case_events puts its added event, at g + ½
    end = 20 * (lags + 2)
    shift = g + 0.5 - at

    def cut(events):
        times = [np.asarray(t) - shift for t in events.sequences[0].times]
        return from_arrays([t[(t >= 0) & (t <= end)] for t in times], end_time=float(end))

    return tuple(cut(events) for events in worst_case_events(dim, lags, cap, 1.0, "insert"))


def test_a_head_insertion_moves_the_release_by_at_most_the_bound():
    """An event added in the last unit of the head ``[0, s)`` moves the head pieces, released divided by their public
    scale ρκ (ρ = 3, κ = 35 at this window's default edge share): the move must stay under the bound the code uses,
    and it reaches 0.924 of it (the Toeplitz part 0.927 of its bound: the window's start cuts off a few partners;
    the head pieces 0.21 of theirs). Released without κ, the head pieces let this pair move 1.06× the bound
    (1.09× without ρκ)."""
    dim, lags, cap = 2, 20, 2
    cfg = config(width=1.0, lags=lags, count_cap=cap, sigma2=1.0)
    d_events, d_prime = head_insertion(dim, lags, cap, at=lags - 0.5)
    assert d_prime.n_events == d_events.n_events + 1
    s_d, s_n = (prepare_stats(e, cfg)[0] for e in (d_events, d_prime))
    assert s_n.grid_pieces.head_counts.sum() == s_d.grid_pieces.head_counts.sum() + 1  # the event is in the head
    change = FAMILY.query_vector(s_n, cfg) - FAMILY.query_vector(s_d, cfg)
    bound = privacy_report(s_d, cfg).sensitivity
    assert np.linalg.norm(change) <= bound * (1 + 1e-9), np.linalg.norm(change) / bound
    assert np.linalg.norm(change) >= 0.92 * bound, np.linalg.norm(change) / bound
    sens = FAMILY.sensitivity(s_d, cfg)
    toeplitz = sum(n for name, n in release_layout(dim, lags) if name not in EDGE_PARTS)
    edge_moved = np.linalg.norm(change[toeplitz:]) * s_d.grid_pieces.duration
    assert edge_moved >= 0.2 * sens.edge["insert"] / sens.kappa  # the pair exercises the head pieces' term


def test_the_bound_is_the_documented_formula():
    sens = ctls_sensitivity(2, 50, 2, edge_share=0.1, gram_scale=3.0)  # d = 2, B = 50, C = 2, ρ = 3
    insert = (2 * 3 * min(2 * 4 * 50, 4 * 4 * 49) + 4 * 4 + 7**2) / 9 + 4 * 3 * 4 * 51 + 1
    swap = (8 * 3 * 4 * 49 + 4 * 4 + 6**2) / 9 + 2 * 3 * 4 * 50
    e = 2 * 2 * math.sqrt(2 * 2 * 50 * 51) + math.sqrt(50)
    edge = {"insert": 2 * (e**2 + 50) / 9 + 4 * 3 * 4 * 51 + 1, "swap": 2 * (4 * e**2 + 50) / 9 + 2 * 3 * 4 * 50}
    assert sens.toeplitz == pytest.approx({"insert": math.sqrt(insert), "swap": math.sqrt(swap)})
    kappa2 = max(edge.values()) / max(insert, swap) * 9  # the edges' share of the square is 0.1
    assert sens.kappa == pytest.approx(math.sqrt(kappa2))
    assert sens.total == pytest.approx(max(math.sqrt(insert + edge["insert"] / kappa2),
                                           math.sqrt(swap + edge["swap"] / kappa2)))
    assert sens.total <= math.sqrt(max(insert, swap) / 0.9)
    assert sum(n for _, n in release_layout(2, 50)) == len(FAMILY.query_vector(
        prepare_stats(worst_case_events(2, 50, 2)[0], config(width=1.0, lags=50, sigma2=1.0))[0],
        config(width=1.0, lags=50, sigma2=1.0)))


def test_a_seeded_fit_is_not_a_private_release_and_sigma_zero_is_not_formal():
    declared = {"window_stated": True, "dimensions_declared": True, "sequences_declared": True}
    cfg = config(sigma2=None, epsilon=1.0)
    assert release_status(cfg, declared, released=True).formal  # as a privacy session releases it
    seeded = release_status(replace(cfg, seed=3), declared, released=True)
    assert not seeded.formal and any("seed" in r for r in seeded.reasons)
    assert not release_status(config(), declared, released=True).formal  # σ² = 0


def test_with_no_noise_it_is_the_non_private_fit():
    rng = np.random.default_rng(6)
    sequences = random_sequences(rng, 2, (14.0, 6.0), dense=20)
    events = as_events(sequences, 2)
    G, c = brute_force(sequences, 0.5, 4, 2, 2)
    theta = np.linalg.solve(G, c.T).T
    plain = config(ctls_ridge=0.0, ctls_smoothing=0.0, ctls_nonnegative=False)
    result, _ = fit(events, plain)
    assert np.allclose(result.H, theta, rtol=1e-9, atol=1e-12)
    G_all, c_all = brute_force(sequences, 0.5, 4, None, 2)
    uncapped, _ = fit(events, config(count_cap=None, ctls_nonnegative=False))  # σ² = 0: no cap needed
    assert np.allclose(uncapped.H, np.linalg.solve(G_all, c_all.T).T, rtol=1e-9, atol=1e-12)
    nonnegative, _ = fit(events, config())
    assert np.all(nonnegative.H >= 0)
    from scipy.optimize import nnls
    L = np.linalg.cholesky(G)  # θ_i = argmin_{θ >= 0} ½ θGθᵀ − c_i θᵀ
    for i in range(2):
        expected = nnls(L.T, np.linalg.solve(L, c[i]))[0]
        assert np.allclose(nonnegative.H[i], expected, atol=1e-8)


def test_a_private_fit_runs_with_an_automatic_cap_and_refuses_binned_statistics():
    events = simulate(get_scenario("paper-2d"), n_events=3000, seed=2)
    auto = config(width=0.5, lags=10, sigma2=None, epsilon=1.0, count_cap="auto", seed=1)
    result, info = fit(events, auto)
    assert info["auto_count_cap"]["count_cap"] == info["count_cap"] >= 1
    assert result.privacy.budget_split.epsilon_total == pytest.approx(1.0, rel=1e-6)
    assert np.all(np.isfinite(result.H)) and result.info["statistics"] == "exact event times"
    binned = binned_stats(bin_events(events, 0.5, 2), 10)
    with pytest.raises(ConfigError, match="exact event times"):
        fit_stats(binned, config(width=0.5, lags=10, sigma2=1.0))
    stats, _ = prepare_stats(events, config(width=0.5, lags=10, sigma2=1.0))
    assert isinstance(stats, GridFreeStats)
    for other in (dict(method="ssp"), dict(method="pgd", bound=1.0, iters=5), dict(method="pgd-clip", bound=1.0,
                                                                                 clip=1.0, iters=5)):
        with pytest.raises(ConfigError):  # a binned family's formal bound does not hold for these statistics
            fit_stats(stats, FitConfig(bin_size=0.5, lags=10, calibration="formal", count_cap=2, sigma2=1.0, **other))


def test_kernels_are_the_step_heights_and_the_grid_free_error_is_small():
    scenario = get_scenario("paper-2d")
    events = simulate(scenario, n_events=60_000, seed=5)
    result, _ = fit(events, config(width=0.25, lags=20, count_cap=None))
    kernels = result.kernels  # [i, j, b]: the effect of j on i on (bw, (b+1)w]
    assert kernels[0, 1, 4:12].mean() == pytest.approx(0.125, abs=0.03)  # h12 = 0.125 on [1, 3]
    assert kernels[1, 0, 8:16].mean() == pytest.approx(0.2, abs=0.04)  # h21 = 0.2 on [2, 4]
    assert np.abs(kernels[0, 1, 13:]).max() < 0.05 and np.abs(kernels[1, 0, :7]).max() < 0.06
    assert result.baseline == pytest.approx(scenario.baseline, abs=0.03)
    error = kernel_function_error(fit_steps(result), scenario)
    binned = fit(events, FitConfig(method="cls", bin_size=0.25, lags=20))[0]
    assert error < 0.2 and error < kernel_function_error(fit_steps(binned), scenario)


def test_the_cli_lists_and_fits_it(tmp_path, capsys):
    from dphawkes_cli.main import build_parser, main

    fit_parser = build_parser()._subparsers._group_actions[0].choices["fit"]
    assert "ctls" in next(a for a in fit_parser._actions if a.dest == "method").choices
    assert "--ctls-gram-scale" in fit_parser.format_help()
    csv = tmp_path / "events.csv"
    assert main(["simulate", "--scenario", "paper-2d", "--events", "2000", "--seed", "1", "--out", str(csv)]) == 0
    out = tmp_path / "fit.json"
    code = main(["fit", str(csv), "--method", "ctls", "--bin-size", "0.5", "--support", "5", "--epsilon", "1",
                 "--calibration", "formal", "--count-cap", "auto", "--end-time", "2900", "--dimensions", "2",
                 "--json", str(out), "--scenario", "paper-2d", "--ledger", str(tmp_path / "ledger.json")])
    assert code == 0, capsys.readouterr().err
    payload = json.loads(out.read_text())
    assert payload["method"] == "ctls" and payload["formal_guarantee"] is True and payload["lags"] == 10
    assert np.asarray(payload["kernels"]).shape == (2, 2, 10)


def test_a_worst_case_audit_catches_a_halved_noise():
    fit_config = FitConfig(method="ctls", bin_size=1.0, lags=3, calibration="formal", count_cap=2, epsilon=4.0)
    d_events, d_prime = FAMILY.worst_case_events(fit_config, 1)
    stats = [prepare_stats(e, fit_config)[0] for e in (d_events, d_prime)]
    results = audits_as_claimed_and_halved(fit_config, stats)
    assert not results[None].violated
    assert results[2.0].violated and results[2.0].mu_lower_bound > results[2.0].mu_claimed


def test_a_family_refuses_statistics_of_another_kind():
    # binned statistics handed to ctls, or ctls's statistics of exact times handed to a binned family, are refused
    # (CLS on the grid-free A and b would silently be the grid-free fit under the wrong name)
    from dphawkes_core.errors import ConfigError
    from dphawkes_core.estimators import FitConfig, fit_stats, prepare_stats
    events = from_arrays([np.array([0.3, 1.2, 2.5, 4.1]), np.array([0.7, 3.3])], end_time=8.0)
    binned, _ = prepare_stats(events, FitConfig(bin_size=0.5, lags=2))
    exact, _ = prepare_stats(events, FitConfig(method="ctls", bin_size=0.5, lags=2, sigma2=0.0, calibration="formal"))
    with pytest.raises(ConfigError, match="fits events statistics, these are binned"):
        fit_stats(binned, FitConfig(method="ctls", bin_size=0.5, lags=2, sigma2=0.0, calibration="formal"))
    with pytest.raises(ConfigError, match="fits binned statistics, these are events"):
        fit_stats(exact, FitConfig(method="cls", bin_size=0.5, lags=2))
