"""The exponential-kernel family (``exp``) against independent facts: its statistics against the double
sums over event pairs written here, its fit against tick's ``HawkesSumExpKern`` and ``HawkesExpKern`` (and the
contrast against tick's ``ModelHawkesSumExpKernLeastSq``) on the same data, the lag grid against the kernels' integrals,
the sensitivity bound reached by the adversarial neighbours through the code that runs and never exceeded by
random or tied neighbours, seeded fits not formal, the CLI's ``--decays`` and a worst-case audit that catches a
halved noise."""

from __future__ import annotations

import json

import numpy as np
import pytest
from audit_tools import audits_as_claimed_and_halved

from dphawkes_core.data.io import Events, EventSequence, from_arrays
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
from dphawkes_core.estimators.exp import statistics as exp_statistics
from dphawkes_core.estimators.exp.statistics import exp_pieces

FAMILY = get_family("exp")
DECAYS = (0.7, 1.5, 3.0)


def exact_config(**options) -> FitConfig:
    return FitConfig(method="exp", bin_size=0.5, lags=8, calibration="formal", sigma2=0.0, seed=0,
                     **{"exp_ridge": 0.0, "exp_nonnegative": False, **options})


def double_sums(sequences, decays):
    """``G``, ``∫g``, ``c`` summed over ``[(times per dimension, T)]``: every pair of events, in closed form."""
    d, U = len(sequences[0][0]), len(decays)
    q = d * U
    G, integral, c = np.zeros((q, q)), np.zeros(q), np.zeros((d, q))
    for times, T in sequences:
        for u, bu in enumerate(decays):
            for j in range(d):
                integral[u * d + j] += sum(1 - np.exp(-bu * (T - s)) for s in times[j])
                for i in range(d):
                    c[i, u * d + j] += sum(bu * np.exp(-bu * (t - s)) for t in times[i] for s in times[j] if s < t)
                for v, bv in enumerate(decays):
                    for k in range(d):
                        G[u * d + j, v * d + k] += sum(
                            bu * bv / (bu + bv) * np.exp(-bu * (max(s, r) - s) - bv * (max(s, r) - r))
                            * (1 - np.exp(-(bu + bv) * (T - max(s, r)))) for s in times[j] for r in times[k])
    return G, integral, c


def random_sequences(seed, d=2, n=7, T=9.0, sequences=2):
    rng = np.random.default_rng(seed)
    return [([np.sort(rng.uniform(0, T, n)) for _ in range(d)], T) for _ in range(sequences)]


@pytest.mark.parametrize("span_limit", [500.0, 0.9])  # 0.9: a block every few events, the recursion carried over
def test_the_statistics_equal_the_double_sums_over_pairs(monkeypatch, span_limit):
    monkeypatch.setattr(exp_statistics, "SPAN_LIMIT", span_limit)
    sequences = random_sequences(3)
    sequences[0][0][1][2] = sequences[0][0][0][4]  # two dimensions at one time: neither is before the other
    events = Events(tuple(EventSequence(tuple(t), end) for t, end in sequences), ("0", "1"), window_stated=True)
    pieces, _ = exp_pieces(events, DECAYS, 0.5, None)
    G, integral, c = double_sums(sequences, DECAYS)
    assert np.allclose(pieces.gram, G, rtol=1e-12, atol=1e-12)
    assert np.allclose(pieces.integral, integral, rtol=1e-12) and np.allclose(pieces.pairs, c, rtol=1e-12, atol=1e-14)
    assert pieces.duration == 18.0 and list(pieces.totals) == [14, 14]


def tick_data(seed=3, end=3000.0):
    from tick.hawkes import SimuHawkesSumExpKernels

    adjacency = np.zeros((2, 2, 3))
    adjacency[0, 0], adjacency[1, 0], adjacency[1, 1], adjacency[0, 1] = (
        [0.2, 0.1, 0],
        [0, 0.3, 0.1],
        [0.1, 0, 0.2],
        [0.05] * 3,
    )
    simu = SimuHawkesSumExpKernels(adjacency=adjacency, decays=list(DECAYS), baseline=[0.5, 0.4], end_time=end,
                                   seed=seed, verbose=False)
    simu.simulate()
    return [np.asarray(t, dtype=float) for t in simu.timestamps]


def test_the_contrast_is_ticks_least_squares_loss():
    from tick.hawkes.model import ModelHawkesSumExpKernLeastSq

    times = tick_data(end=500.0)
    T = 520.0
    model = ModelHawkesSumExpKernLeastSq(np.array(DECAYS)).fit(times, end_times=T)
    stats, _ = prepare_stats(from_arrays(times, end_time=T), exact_config())
    rng = np.random.default_rng(0)
    d, U = 2, len(DECAYS)
    for _ in range(3):
        mu, a = rng.uniform(0.1, 1, d), rng.uniform(0, 0.3, (d, d, U))  # tick: coefficients (μ, a[i, j, u])
        theta = np.concatenate([a.transpose(0, 2, 1).reshape(d, d * U), mu[:, None]], axis=1)
        ours = sum(theta[i] @ stats.A @ theta[i] - 2 * theta[i] @ stats.b[i] for i in range(d)) * T
        theirs = model.loss(np.concatenate([mu, a.ravel()])) * model.n_jumps
        assert ours == pytest.approx(theirs, rel=1e-9)


def test_the_fit_equals_ticks_hawkes_sum_exp_kern():
    from tick.hawkes import HawkesSumExpKern

    times = tick_data()
    learner = HawkesSumExpKern(list(DECAYS), penalty="none", max_iter=5000, tol=1e-14)
    learner.fit(times)  # tick's window ends at the last event
    end = max(t[-1] for t in times)
    result, _ = fit(from_arrays(times, end_time=end), exact_config(exp_nonnegative=True))  # tick keeps them >= 0
    assert np.abs(np.array(result.info["adjacency"]) - learner.adjacency).max() < 1e-5
    assert np.abs(np.array(result.info["baseline"]) - learner.baseline).max() < 1e-5
    assert np.array(result.info["adjacency"]).min() == 0.0  # the constraint binds: the comparison tests it


def test_one_decay_equals_ticks_hawkes_exp_kern():
    from tick.hawkes import HawkesExpKern, SimuHawkesExpKernels

    simu = SimuHawkesExpKernels(adjacency=np.array([[0.3, 0.1], [0.2, 0.25]]), decays=1.3, baseline=[0.4, 0.3],
                                end_time=2000, seed=5, verbose=False)
    simu.simulate()
    times = [np.asarray(t, dtype=float) for t in simu.timestamps]
    learner = HawkesExpKern(1.3, gofit="least-squares", penalty="none", max_iter=5000, tol=1e-14)
    learner.fit(times)
    result, _ = fit(from_arrays(times, end_time=max(t[-1] for t in times)),
                    exact_config(decays=(1.3,), exp_nonnegative=True))
    assert np.abs(np.array(result.info["adjacency"])[:, :, 0] - learner.adjacency).max() < 1e-5
    assert np.abs(np.array(result.info["baseline"]) - learner.baseline).max() < 1e-5


def test_the_estimate_on_the_lag_grid_is_each_steps_mean_of_the_fitted_kernel():
    times = tick_data(end=400.0)
    config = exact_config()
    result, _ = fit(from_arrays(times, end_time=400.0), config)
    a, mu = np.array(result.info["adjacency"]), np.array(result.info["baseline"])
    fine = np.linspace(0, config.bin_size, 20001)
    for k in range(config.lags):
        t = k * config.bin_size + fine
        values = np.einsum("iju,ut->ijt", a, np.array(DECAYS)[:, None] * np.exp(-np.outer(DECAYS, t)))
        assert np.allclose(result.kernels[:, :, k], np.trapezoid(values, t, axis=2) / config.bin_size, rtol=1e-7)
    assert np.allclose(result.baseline, mu)


# --- privacy ------------------------------------------------------------------------------------------------

def moved_fraction(config, pair) -> float:
    s_d, s_n = (prepare_stats(events, config)[0] for events in pair)
    moved = np.linalg.norm(FAMILY.query_vector(s_n, config) - FAMILY.query_vector(s_d, config))
    return float(moved / privacy_report(s_d, config).sensitivity)


@pytest.mark.parametrize("d,cap,width,decays,rho,reach", [(1, 1, 1.0, DECAYS, 1.0, 0.99),
                                                         (2, 3, 0.5, (1.0,), 1.0, 0.99),
                                                         (3, 2, 0.2, DECAYS, 3.0, 0.99),
                                                         (2, 2, 2.0, (0.5, 4.0), 0.5, 0.98)])
def test_adversarial_neighbours_reach_the_bound_through_the_code_that_runs(d, cap, width, decays, rho, reach):
    """Where an insertion's corner binds, its pair reaches the bound; where the swap's does (the last case: fast
    decays against w, ρ < 1), the best pair reaches 0.98 of it (the swap's Gram bound, the larger of two
    insertions' entry by entry, is not reached)."""
    config = FitConfig(method="exp", bin_size=width, lags=3, calibration="formal", count_cap=cap, sigma2=1.0,
                       decays=decays, exp_gram_scale=rho)
    assert reach <= moved_fraction(config, FAMILY.worst_case_events(config, d)) <= 1.0


def random_neighbours(rng, d, cap, width):
    """Dense random events (most bins at the cap), z added anywhere: insertions and swaps (z before the kept
    events of a full bin evicts the last), some events on z's own time."""
    end = 12.0
    times = [np.sort(rng.uniform(0, end, rng.integers(5, 40))) for _ in range(d)]
    if rng.random() < 0.3:  # clusters on bin edges and at one time
        edge = width * rng.integers(1, int(end / width))
        times = [np.sort(np.concatenate([t, np.full(cap, edge), edge - 1e-7 * rng.random(cap)])) for t in times]
    z = float(rng.choice(np.concatenate(times))) if rng.random() < 0.3 else float(rng.uniform(0, end))
    j0 = int(rng.integers(d))
    base = from_arrays(times, end_time=end)
    times[j0] = np.sort(np.append(times[j0], z))
    return base, from_arrays(times, end_time=end)


def test_random_and_tied_neighbours_never_exceed_the_bound():
    rng = np.random.default_rng(11)
    worst = 0.0
    for _ in range(150):
        d, cap, width = int(rng.integers(1, 4)), int(rng.integers(1, 4)), float(rng.choice([0.3, 1.0, 2.0]))
        decays = tuple(sorted(set(np.round(rng.uniform(0.2, 5, rng.integers(1, 4)), 2))))
        config = FitConfig(method="exp", bin_size=width, lags=3, calibration="formal", count_cap=cap, sigma2=1.0,
                           decays=decays, exp_gram_scale=float(rng.choice([0.5, 1.0, 3.0])))
        worst = max(worst, moved_fraction(config, random_neighbours(rng, d, cap, width)))
    assert worst <= 1.0
    assert worst > 0.3  # the random neighbours do move the release (the check is not vacuous)


def test_the_release_needs_the_cap_it_is_calibrated_for():
    events = from_arrays(tick_data(end=50.0), end_time=50.0)
    stats, _ = prepare_stats(events, exact_config())
    with pytest.raises(ConfigError, match="needs a public count cap C"):
        privacy_report(stats, FitConfig(method="exp", bin_size=0.5, lags=8, calibration="formal", count_cap=2,
                                        epsilon=1.0))
    with pytest.raises(ConfigError, match="decays"):
        fit_stats(stats, exact_config(decays=(1.0,)))


def test_with_no_noise_the_release_is_the_non_private_fit_and_a_seeded_fit_is_not_formal():
    events = from_arrays(tick_data(end=300.0), end_time=300.0)
    capped = FitConfig(method="exp", bin_size=0.5, lags=8, calibration="formal", count_cap=9, sigma2=0.0, seed=1)
    exact = fit(events, FitConfig(**{**capped.to_dict(), "count_cap": None}))[0]
    private, info = fit(events, FitConfig(**{**capped.to_dict(), "sigma2": None, "epsilon": 1.0}))
    assert info["clipped_events"] == 0  # C = 9 per half unit keeps every event here
    assert np.allclose(fit(events, capped)[0].H, exact.H)
    assert not np.allclose(private.H, exact.H)
    status = release_status(FitConfig(**{**capped.to_dict(), "sigma2": None, "epsilon": 1.0}), info, released=True)
    assert not status.formal and any("seed" in reason for reason in status.reasons)


def test_the_noise_has_the_calibrated_std_in_every_released_number():
    events = from_arrays(tick_data(end=100.0), end_time=100.0)
    config = FitConfig(method="exp", bin_size=0.5, lags=4, calibration="formal", count_cap=3, epsilon=1.0)
    stats, _ = prepare_stats(events, config)
    report = privacy_report(stats, config)
    rng = np.random.default_rng(2)
    draws = np.array([FAMILY.noisy_output(stats, config, report, rng) for _ in range(400)])
    clean = FAMILY.query_vector(stats, config)
    assert np.std(draws - clean) == pytest.approx(np.sqrt(report.sigma2), rel=0.02)


def test_the_cli_fits_it_with_its_decays(tmp_path, capsys):
    from dphawkes_cli.main import main

    csv = tmp_path / "events.csv"
    assert main(["simulate", "--scenario", "paper-2d", "--events", "2000", "--seed", "1", "--out", str(csv)]) == 0
    out = tmp_path / "fit.json"
    argv = ["fit", str(csv), "--method", "exp", "--bin-size", "0.5", "--support", "5", "--epsilon", "1",
            "--calibration", "formal", "--count-cap", "2", "--end-time", "2900", "--dimensions", "2",
            "--json", str(out), "--ledger", str(tmp_path / "ledger.json")]
    assert main(argv + ["--decays", "0.5,2"]) == 0, capsys.readouterr().err
    payload = json.loads(out.read_text())
    assert payload["method"] == "exp" and payload["formal_guarantee"] is True
    assert payload["config"]["decays"] == [0.5, 2.0] and np.asarray(payload["kernels"]).shape == (2, 2, 10)
    capsys.readouterr()
    assert main(argv + ["--decays", "0.5,-2"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--decays" in err[0] and "> 0" in err[0]


def test_decays_round_trip_through_json():
    config = FitConfig(method="exp", bin_size=0.5, lags=4, calibration="formal", count_cap=2, epsilon=1.0,
                       decays="0.7, 3")
    assert config.decays == (0.7, 3.0)
    assert FitConfig(**json.loads(json.dumps(config.to_dict()))) == config
    with pytest.raises(ConfigError, match="decays"):
        FitConfig(method="exp", decays=(1.0, 1.0))


def test_a_worst_case_audit_catches_a_halved_noise():
    fit_config = FitConfig(method="exp", bin_size=1.0, lags=3, calibration="formal", count_cap=2, epsilon=4.0,
                           decays=(1.0,))
    stats = [prepare_stats(e, fit_config)[0] for e in FAMILY.worst_case_events(fit_config, 1)]
    results = audits_as_claimed_and_halved(fit_config, stats)
    assert not results[None].violated
    assert results[2.0].violated and results[2.0].mu_lower_bound > results[2.0].mu_claimed


# --- everywhere ctls goes: the comparison and the sweeps, through the registry ---------------------------------

def test_it_has_a_row_of_its_own_in_the_comparison_table():
    from dphawkes_experiments.compare import compare_methods

    events = from_arrays(tick_data(end=300.0), end_time=300.0)
    chosen = FitConfig(method="ctls", bin_size=0.5, lags=6, epsilon=1.0, calibration="formal", count_cap=9, seed=1)
    stats, info = prepare_stats(events, chosen)
    reference = fit(events, FitConfig(bin_size=0.5, lags=6))[0].H
    rows = compare_methods(stats, info, chosen, 1.0, reference, public={}, events=events)
    row = next(r for r in rows if r.method == "exp")
    assert row.ran and np.isfinite(row.relative_error) and row.epsilon == pytest.approx(1.0)


@pytest.mark.slow
def test_a_sweep_runs_it_with_its_decays():
    from dphawkes_core.data.kernels import get_scenario
    from dphawkes_experiments.sweep import DataSource, SweepSpec, run_sweep

    spec = SweepSpec(DataSource(scenario=get_scenario("paper-2d"), n_events=1000, label="paper-2d"),
                     methods=("ctls", "exp"), bin_sizes=(0.5,), privacy="epsilon", levels=(1.0,), runs=2,
                     support=2.0, calibration="formal", count_cap=5, options={"decays": (1.0, 4.0)})
    frame = run_sweep(spec)
    rows = frame[frame.method == "exp"]
    assert len(rows) == 2 and rows["formal_settings"].all() and np.isfinite(rows["kernel_function_error"]).all()
    assert not rows["formal_guarantee"].any()  # seeded experiments, never releases


def test_an_automatic_cap_is_chosen_privately_composed_with_the_release_and_keeps_the_decays():
    from dphawkes_core.data.kernels import get_scenario
    from dphawkes_core.data.simulate import simulate

    events = simulate(get_scenario("paper-2d"), n_events=4000, seed=3)
    auto = FitConfig(method="exp", bin_size=0.5, lags=8, calibration="formal", count_cap="auto", epsilon=1.0,
                     seed=1, decays=(1.0, 2.0))
    result, info = fit(events, auto)
    chosen = info["auto_count_cap"]["count_cap"]
    assert info["count_cap"] == chosen >= 1
    assert result.privacy.budget_split.epsilon_total == pytest.approx(1.0, rel=1e-6)
    # The events are kept as under the public C it chose: the same statistics, to the last bit.
    public = FitConfig(**{**auto.to_dict(), "count_cap": chosen})
    stats_auto, _ = prepare_stats(events, auto)
    stats_public, info_public = prepare_stats(events, public)
    np.testing.assert_array_equal(stats_auto.A, stats_public.A)
    np.testing.assert_array_equal(stats_auto.b, stats_public.b)
    assert info_public["clipped_events"] == info["clipped_events"]
    # Part of ε chose C, so the release itself gets less than ε: more noise than a public C at the same ε.
    assert privacy_report(stats_auto, auto).sigma2 > privacy_report(stats_public, public).sigma2
    # The statistics are cached under a key that keeps the decays (other decays would be other statistics).
    keyed, _ = prepare_stats(events, auto.statistics_key())
    assert fit_stats(keyed, auto).privacy.sigma2 == pytest.approx(result.privacy.sigma2, rel=1e-12)
    with pytest.raises(ConfigError, match="share of ε"):
        FitConfig(method="exp", bin_size=0.5, lags=8, calibration="formal", count_cap="auto", sigma2=1.0)


def test_maximum_likelihood_is_ticks_sum_exp_likelihood_at_its_maximum():
    from scipy.optimize import minimize
    from tick.hawkes import ModelHawkesSumExpKernLogLik, SimuHawkesSumExpKernels

    decays = np.array([0.7, 1.5, 3.0])
    adjacency = np.array([[[0.2, 0.0, 0.1], [0.0, 0.15, 0.0]], [[0.1, 0.1, 0.0], [0.0, 0.0, 0.25]]])
    sim = SimuHawkesSumExpKernels(adjacency=adjacency, decays=decays, baseline=[0.3, 0.2], end_time=3000.0, seed=8,
                                  verbose=False)
    sim.simulate()
    times = [np.asarray(t, dtype=float) for t in sim.timestamps]
    config = FitConfig(method="exp", bin_size=0.5, lags=8, calibration="formal", sigma2=0.0,
                       decays=tuple(decays), exp_likelihood=True)
    result, _ = fit(from_arrays(times, end_time=3000.0), config)
    assert result.info["converged"]
    ours = np.concatenate([result.baseline, np.asarray(result.info["adjacency"]).ravel()])
    model = ModelHawkesSumExpKernLogLik(decays)
    model.fit(times, end_times=3000.0)
    # The KKT conditions of tick's loss (−ℓ/n up to a constant) at our estimate: zero gradient where positive, a
    # gradient pushing below 0 where at 0.
    gradient = model.grad(ours)
    positive = ours > 1e-9
    assert np.max(np.abs(gradient[positive])) < 1e-7
    assert np.all(gradient[~positive] > -1e-7)
    # No bound-constrained quasi-Newton run on tick's loss finds a better point.
    other = minimize(model.loss, np.full(ours.size, 0.05), jac=model.grad, method="L-BFGS-B",
                     bounds=[(1e-10, None)] * ours.size, options={"ftol": 1e-15, "gtol": 1e-12, "maxiter": 5000})
    assert model.loss(ours) <= other.fun + 1e-12
    np.testing.assert_allclose(ours, np.maximum(other.x, 0), atol=1e-4)
    with pytest.raises(ConfigError, match="non-private only"):
        fit(from_arrays(times, end_time=3000.0), FitConfig(method="exp", bin_size=0.5, lags=8, calibration="formal",
                                                           epsilon=1.0, count_cap=5, exp_likelihood=True))
