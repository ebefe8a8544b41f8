"""The maximum-likelihood family (``mle``) against facts independent of its code: a log-likelihood
written here from its definition with loops (targets ``t >= s``, the compensator over ``[s, T]`` piece by piece),
its finite-difference gradient (the KKT conditions at the fit), perturbed parameters (never better) and tick's
``HawkesEM`` run to convergence on the same events and width.

tick's conventions, matched where tick is the reference: every event is a target (no history-only start), the
baseline is integrated over ``[0, T]`` and each kernel step over ``n_j·w`` (tick's M-step denominator: no
correction for the steps cut by the window's end), steps ``[bw, (b+1)w)`` (ours ``(bw, (b+1)w]``: the same for
continuous times, which have no pair exactly a multiple of w apart)."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from dphawkes_cli.main import main
from dphawkes_core.data.io import Events
from dphawkes_core.data.kernels import get_scenario
from dphawkes_core.data.simulate import simulate
from dphawkes_core.errors import ConfigError
from dphawkes_core.estimators import FitConfig, fit, fit_stats, get_family, prepare_stats
from dphawkes_core.estimators.mle import log_likelihood, maximise_likelihood, pair_design
from dphawkes_core.evaluation.lag_average import fit_steps
from dphawkes_core.evaluation.metrics import kernel_function_error

FAMILY = get_family("mle")


# --- references -------------------------------------------------------------------------------------------------

WIDTH, LAGS = 0.5, 3  # the small fits' steps: 11 of their 14 parameters are positive at the optimum


def small_events():
    """80 events of the paper's 2-d process (window [0, T]) and their (time, dimension) list."""
    events = simulate(get_scenario("paper-2d"), n_events=80, seed=3)
    return events, [(float(t), j) for j, ts in enumerate(events.sequences[0].times) for t in ts]


def brute_log_likelihood(theta: np.ndarray, events, end: float, width: float, lags: int) -> float:
    """``Σ_{t_k >= s} log λ(t_k) − ∫_s^T λ`` by loops: ``λ_i(t) = μ_i + Σ_{u < t} a_{i, j_u, b}`` for
    ``t − u ∈ (bw, (b+1)w]``; ``∫_s^T`` of a step is the length of ``(u + bw, u + (b+1)w] ∩ [s, T]``."""
    d = theta.shape[0]
    s = lags * width
    total = 0.0
    for i in range(d):
        for t, k in events:
            if k != i or t < s:
                continue
            lam = theta[i, -1]
            for u, j in events:
                for b in range(lags):
                    if b * width < t - u <= (b + 1) * width:
                        lam += theta[i, b * d + j]
            total += math.log(lam)
        total -= theta[i, -1] * (end - s)
        for u, j in events:
            for b in range(lags):
                overlap = min(u + (b + 1) * width, end) - max(u + b * width, s)
                total -= theta[i, b * d + j] * max(overlap, 0.0)
    return total


def numeric_gradient(theta, events, end, width, lags, h=1e-6):
    grad = np.zeros_like(theta)
    for index in np.ndindex(theta.shape):
        up, down = theta.copy(), theta.copy()
        up[index] += h
        down[index] -= h
        grad[index] = (brute_log_likelihood(up, events, end, width, lags)
                       - brute_log_likelihood(down, events, end, width, lags)) / (2 * h)
    return grad


def small_fit(tol=1e-13):
    """The fit of the small events, their list and window end, and the result."""
    data, events = small_events()
    config = FitConfig(method="mle", bin_size=WIDTH, lags=LAGS, mle_tol=tol, mle_max_iter=200000)
    result, _ = fit(data, config)
    return result.H, events, float(data.end_time), result


# --- the likelihood and the optimum -----------------------------------------------------------------------------

def test_its_log_likelihood_is_the_brute_force_one():
    data, events = small_events()
    stats, _ = prepare_stats(data, FitConfig(method="mle", bin_size=WIDTH, lags=LAGS))
    theta = np.random.default_rng(0).uniform(0.01, 0.3, size=(2, 2 * LAGS + 1))
    assert log_likelihood(theta, stats.pair_design) == pytest.approx(
        brute_log_likelihood(theta, events, float(data.end_time), WIDTH, LAGS), rel=1e-12)


def test_over_several_sequences_its_log_likelihood_is_the_sum_of_each_sequences_brute_force_one():
    parts = [simulate(get_scenario("paper-2d"), n_events=n, seed=seed) for n, seed in ((60, 4), (20, 5), (70, 6))]
    data = Events(tuple(p.sequences[0] for p in parts), parts[0].names, window_stated=True)
    stats, _ = prepare_stats(data, FitConfig(method="mle", bin_size=WIDTH, lags=LAGS))
    theta = np.random.default_rng(2).uniform(0.01, 0.3, size=(2, 2 * LAGS + 1))
    expected = sum(brute_log_likelihood(theta, [(float(t), j) for j, ts in enumerate(seq.times) for t in ts],
                                        float(seq.end_time), WIDTH, LAGS) for seq in data.sequences)
    assert log_likelihood(theta, stats.pair_design) == pytest.approx(expected, rel=1e-12)


def test_no_perturbation_of_the_fit_has_a_higher_brute_force_likelihood():
    theta, events, end, result = small_fit()
    assert result.info["converged"]
    best = brute_log_likelihood(theta, events, end, WIDTH, LAGS)
    rng = np.random.default_rng(1)
    for scale in (1e-1, 1e-2, 1e-4):
        for _ in range(20):
            other = np.maximum(theta + scale * theta.max() * rng.standard_normal(theta.shape), 0.0)
            other[:, -1] = np.maximum(other[:, -1], 1e-6)
            assert brute_log_likelihood(other, events, end, WIDTH, LAGS) <= best + 1e-9


def test_the_kkt_conditions_hold_at_the_fit():
    """Positive parameters: ``∂ℓ/∂θ ≈ 0``; parameters at (or EM-converging to) zero: ``∂ℓ/∂θ <= 0``, the
    derivative relative to the parameter's exposure (``∂ℓ/∂θ = Σ X/λ − E``)."""
    theta, events, end, _ = small_fit()
    grad = numeric_gradient(theta, events, end, WIDTH, LAGS)
    s = WIDTH * LAGS
    scale = np.append([sum(max(min(u + (b + 1) * WIDTH, end) - max(u + b * WIDTH, s), 0.0)
                           for u, k in events if k == j) for b in range(LAGS) for j in range(2)], end - s)
    relative = grad / scale
    zero = theta < 1e-6 * theta.max()
    assert (~zero).sum() >= 10  # an informative fit
    assert np.all(np.abs(relative[~zero]) < 1e-6), relative
    assert np.all(relative[zero] < 1e-6), relative


def test_it_reports_its_convergence_and_stops_at_max_iter():
    _, events, end, result = small_fit(tol=1e-8)
    assert result.info["converged"] and result.info["relative_change"] <= 1e-8
    assert result.info["log_likelihood"] == pytest.approx(
        brute_log_likelihood(result.H, events, end, WIDTH, LAGS), rel=1e-12)
    capped, _ = fit(small_events()[0], FitConfig(method="mle", bin_size=WIDTH, lags=LAGS, mle_tol=1e-15,
                                                 mle_max_iter=2))
    assert capped.info["iterations"] == 2 and not capped.info["converged"]
    assert capped.info["relative_change"] > 1e-15


def test_positive_baselines_and_non_negative_kernels_on_a_simulation():
    events = simulate(get_scenario("paper-2d"), n_events=3000, seed=5)
    result, _ = fit(events, FitConfig(method="mle", bin_size=0.5, lags=8))
    assert np.all(result.baseline > 0) and np.all(result.kernels >= 0) and result.info["converged"]
    assert result.privacy is None


# --- tick's HawkesEM --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("seed,width,lags", [(11, 0.5, 8), (12, 1.0, 4)])
def test_it_equals_ticks_em_at_convergence_under_ticks_conventions(seed, width, lags):
    tick = pytest.importorskip("tick.hawkes")
    events = simulate(get_scenario("paper-2d"), n_events=2000, seed=seed)
    seq = events.sequences[0]
    times = [np.ascontiguousarray(t, dtype=np.float64) for t in seq.times]
    end = float(seq.end_time)
    em = tick.HawkesEM(kernel_support=width * lags, kernel_size=lags, tol=1e-10, max_iter=200000)
    em.fit(times, end_times=end)
    d = events.dim
    counts = np.array([t.size for t in times], dtype=float)
    design = pair_design(events, width, lags, None, exposure=width * np.tile(counts, lags), baseline_time=end,
                         history=False)
    start = np.full((d, d * lags + 1), 0.1)
    ours = maximise_likelihood(design, start, tol=1e-12, max_iter=100000)
    assert ours.converged
    kernels = ours.theta[:, :-1].reshape(d, lags, d).transpose(0, 2, 1)  # [i, j, b]
    assert np.allclose(ours.theta[:, -1], em.baseline, rtol=1e-6)
    assert np.allclose(kernels, em.kernel, rtol=1e-5, atol=1e-7 * em.kernel.max())


# --- the family in the package ----------------------------------------------------------------------------------

def test_its_statistics_are_its_own_kind_and_others_are_refused():
    events = simulate(get_scenario("paper-2d"), n_events=500, seed=2)
    ctls = FitConfig(method="ctls", bin_size=0.5, lags=4, calibration="formal", count_cap=3, sigma2=0.0)
    with pytest.raises(ConfigError, match="fits pairs statistics"):
        fit_stats(prepare_stats(events, ctls)[0], FitConfig(method="mle", bin_size=0.5, lags=4))


def test_a_partitioned_store_is_refused_in_one_line():
    with pytest.raises(ConfigError, match="not available on a partitioned store"):
        FAMILY.prepare_partitioned([], FitConfig(method="mle", bin_size=0.5, lags=4), None)


def test_the_cli_refuses_mle_on_parquet_partitions_in_one_line_and_fits_the_same_rows_in_one_file(tmp_path, capsys):
    """A glob of Parquet partitions: exit 2, one line with the reason; the same rows as one file fit."""
    pa, pq = pytest.importorskip("pyarrow"), pytest.importorskip("pyarrow.parquet")
    times = simulate(get_scenario("paper-2d"), end_time=400.0, seed=3).sequences[0].times
    t = np.concatenate(times)
    d = np.concatenate([np.full(len(x), j) for j, x in enumerate(times)])
    (tmp_path / "parts").mkdir()
    for k, part in enumerate((t < 200.0, t >= 200.0)):
        pq.write_table(pa.table({"time": t[part], "dimension": d[part]}), tmp_path / "parts" / f"part-{k}.parquet")
    pq.write_table(pa.table({"time": t, "dimension": d}), tmp_path / "whole.parquet")
    args = ["--method", "mle", "--bin-size", "0.5", "--support", "2", "--end-time", "400"]
    capsys.readouterr()
    assert main(["fit", str(tmp_path / "parts" / "*.parquet"), *args]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error:") and err.count("\n") == 1 and "Traceback" not in err
    assert "partitioned store" in err and "one row per event" in err and "one file" in err
    assert main(["fit", str(tmp_path / "whole.parquet"), *args, "--json", str(tmp_path / "fit.json")]) == 0
    assert json.loads((tmp_path / "fit.json").read_text())["method"] == "mle"


def test_the_cli_fits_it_and_writes_its_convergence(tmp_path, capsys):
    events = tmp_path / "events.csv"
    assert main(["simulate", "--scenario", "paper-2d", "--events", "1500", "--seed", "1", "--out", str(events)]) == 0
    out = tmp_path / "fit.json"
    code = main(["fit", str(events), "--bin-size", "0.5", "--lags", "4", "--method", "mle", "--mle-tol", "1e-9",
                 "--json", str(out)])
    assert code == 0, capsys.readouterr().err
    payload = json.loads(out.read_text())
    assert payload["method"] == "mle"
    text = out.read_text()
    assert "relative_change" in text and "iterations" in text


def test_a_sweep_fits_it_beside_ctls_each_on_its_own_statistics():
    from dphawkes_experiments.sweep import DataSource, SweepSpec, run_sweep

    spec = SweepSpec(DataSource(scenario=get_scenario("paper-2d"), n_events=1500, label="paper-2d"),
                     methods=("ctls", "mle"), bin_sizes=(0.5,), privacy="epsilon", levels=(1.0,), runs=1,
                     support=2.0, calibration="formal", count_cap=5)
    frame = run_sweep(spec)
    row = frame[frame.method == "mle"].iloc[0]
    events = simulate(get_scenario("paper-2d"), n_events=1500, seed=int(row["seed"]))
    alone, _ = fit(events, FitConfig(method="mle", bin_size=0.5, lags=4, count_cap=5))
    assert np.isfinite(row["kernel_function_error"]) and not row["formal_settings"]
    assert row["kernel_function_error"] == pytest.approx(
        kernel_function_error(fit_steps(alone), get_scenario("paper-2d")), rel=1e-9)
