"""ctls's option ``ctls_width_choice="validation"`` through the family (``prepare_stats``, ``query_vector``,
``noisy_output``, ``fit``): the estimate on the fine grid is the chosen coarse one, the choice without noise is the
argmin of exact contrasts computed directly, adversarial neighbours in either block or across the split move the
release by at most the stated bound, the noise has the stated std, and the refusals."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from dphawkes_core.data.io import from_arrays
from dphawkes_core.data.kernels import get_scenario
from dphawkes_core.data.simulate import simulate
from dphawkes_core.errors import ConfigError
from dphawkes_core.estimators import FitConfig, fit, get_family, prepare_stats, privacy_report
from dphawkes_core.estimators.checks import CHECKS
from dphawkes_core.estimators.grid_free.release import default_edge_share, worst_case_events
from dphawkes_core.estimators.grid_free.width_choice import (
    add_pieces,
    candidate_grid,
    contrast,
    on_fine_grid,
    split_sensitivity,
    split_sequences,
    truncate_pieces,
    validation_cuts,
)
from dphawkes_core.privacy.accounting import gaussian_multiplier
from dphawkes_core.privacy.noise import noise_source
from dphawkes_core.statistics.exact_times import grid_free_pieces, stats_from_pieces

CTLS = get_family("ctls")


def validation_config(width=0.25, lags=16, **shared):
    shared.setdefault("sigma2", 1.0)
    return FitConfig(method="ctls", bin_size=width, lags=lags, calibration="formal", ctls_width_choice="validation",
                     **{"count_cap": 3, **shared})


def random_events(seed, d=2, n=200, ends=(80.0,)):
    rng = np.random.default_rng(seed)
    windows = [from_arrays([np.sort(rng.uniform(0, end, rng.integers(n // 2, n))) for _ in range(d)], end_time=end)
               for end in ends]
    return dataclasses.replace(windows[0], sequences=tuple(w.sequences[0] for w in windows))


def step_value(U, width, t):
    """``h_ij(t)`` of ``U = wθ`` (lag-major columns, the baseline last) at the times ``t``: the height of the step
    whose interval ``(b·w, (b+1)·w]`` holds t, 0 beyond the support; and the baselines."""
    d = U.shape[0]
    lags = (U.shape[1] - 1) // d
    theta = U / width
    steps = np.ceil(t / width).astype(int) - 1  # t in (b·w, (b+1)·w]
    inside = (steps >= 0) & (steps < lags)
    values = np.zeros((d, d, t.size))
    for i in range(d):
        for j in range(d):
            values[i, j, inside] = theta[i, steps[inside] * d + j]
    return values, theta[:, -1]


@pytest.mark.parametrize(("factor", "lags", "fine", "seed"), [(1, 4, 16, 0), (2, 8, 16, 1), (4, 2, 16, 2),
                                                             (8, 1, 8, 3), (2, 3, 12, 4)])
def test_the_estimate_on_the_fine_grid_is_the_chosen_coarse_one(factor, lags, fine, seed):
    rng = np.random.default_rng(seed)
    d, w0 = 2, 0.25
    U = rng.normal(size=(d, d * lags + 1))
    expanded = on_fine_grid(U, factor, fine)
    assert expanded.shape == (d, d * fine + 1)
    t = rng.uniform(0, 1.2 * fine * w0, size=500)  # beyond the support too
    coarse, coarse_base = step_value(U, factor * w0, t)
    got, base = step_value(expanded, w0, t)
    np.testing.assert_allclose(got, coarse, rtol=1e-13, atol=0)
    np.testing.assert_allclose(base, coarse_base, rtol=1e-13)


def test_without_noise_the_fit_chooses_the_argmin_of_the_exact_contrasts_computed_directly():
    """σ² = 0, no ridge, smoothing or constraint: the family's fit scores every candidate of the grid by its
    exact least-squares fit on the training block at its own (k·w0, s), computed there directly, against the
    validation block computed directly; it picks their argmin and returns that candidate fitted on both blocks,
    on the fine grid."""
    width, lags = 0.25, 16
    events = random_events(9, ends=(80.0, 61.3))
    config = validation_config(width, lags, sigma2=0.0, count_cap=None, ctls_ridge=0.0, ctls_smoothing=0.0,
                               ctls_nonnegative=False)
    result, _ = fit(events, config)
    train, validation = (dataclasses.replace(events, sequences=tuple(block))
                         for block in split_sequences(events.sequences, validation_cuts(events.sequences, width, 0.3)))
    scores, on_both = {}, {}
    for k, b in candidate_grid(lags):
        coarse = k * width
        pieces = {name: truncate_pieces(grid_free_pieces(block, coarse, lags // k, None)[0], b)
                  for name, block in (("train", train), ("validation", validation))}
        stats = stats_from_pieces(pieces["train"], coarse)
        scores[(k, b)] = contrast(np.linalg.solve(stats.A.T, stats.b.T).T, pieces["validation"], coarse)
        both = stats_from_pieces(add_pieces(pieces["train"], pieces["validation"]), coarse)
        on_both[(k, b)] = np.linalg.solve(both.A.T, both.b.T).T
    best = min(scores, key=scores.get)
    info = result.info
    assert (info["chosen_width"], info["chosen_support"]) == pytest.approx((best[0] * width, best[0] * best[1] * width))
    got = {(round(c["width"] / width), round(c["support"] / c["width"])): c["score"] for c in info["candidates"]}
    assert got.keys() == scores.keys()
    for key, score in scores.items():
        assert got[key] == pytest.approx(score, rel=1e-7)
    assert result.H.shape == (2, 2 * lags + 1) and result.lags == lags and result.bin_size == width
    t = np.random.default_rng(0).uniform(0, lags * width * 1.1, 400)
    expected, expected_base = step_value(on_both[best], best[0] * width, t)
    got_steps, got_base = step_value(result.H * width, width, t)
    scale = np.abs(expected).max()
    np.testing.assert_allclose(got_steps, expected, rtol=0, atol=1e-8 * scale)
    np.testing.assert_allclose(got_base, expected_base, rtol=1e-8)


# --- the release's sensitivity through the wired path -------------------------------------------------------

def _moved(pair, config) -> float:
    stats = [CTLS.prepare_stats(events, config)[0] for events in pair]
    bound = privacy_report(stats[0], config).sensitivity
    assert privacy_report(stats[1], config).sensitivity == pytest.approx(bound, rel=1e-12)  # public
    return float(np.linalg.norm(CTLS.query_vector(stats[1], config) - CTLS.query_vector(stats[0], config)) / bound)


def _placed(events, shift: float, end: float, other=None):
    """``events``' one window shifted by ``shift`` inside a window of length ``end`` (with ``other``'s events,
    absolute times, beside them)."""
    times = [t + shift for t in events.sequences[0].times]
    if other is not None:
        times = [np.sort(np.concatenate([a, b])) for a, b in zip(times, other, strict=True)]
    return from_arrays(times, end_time=end)


@pytest.mark.parametrize(("d", "lags", "cap"), [(1, 20, 2), (2, 20, 2), (2, 24, 3), (3, 20, 1)])
def test_worst_case_neighbours_in_either_block_and_across_the_split_stay_within_the_bound(d, lags, cap):
    """The family's adversarial neighbours (both kinds) in a window twice as long as theirs, validation share
    50 % (so V is the middle, a multiple of w0): in the training block, in the validation block (starting at V,
    where their own window started) and across V (the added event just before or after V, or s_max/2 away). The
    release moves by at most the bound; in either block by ≥ 0.8 of it (the family's fraction at B ≥ 20)."""
    width = 0.25
    config = validation_config(width, lags, count_cap=cap, ctls_validation_share=50.0)
    rng = np.random.default_rng(d * 100 + lags)
    fractions = {"train": [], "validation": [], "across": []}
    for kind in ("insert", "swap"):
        pair = worst_case_events(d, lags, cap, width, kind)
        length = float(pair[0].sequences[0].end_time)
        end = 2 * length
        assert validation_cuts(_placed(pair[0], 0.0, end).sequences, width, 0.5) == [length]
        noise = [np.sort(rng.uniform(0, length, 30)) for _ in range(d)]
        added = float(np.setdiff1d(pair[1].sequences[0].times[0], pair[0].sequences[0].times[0])[0])
        fractions["train"].append(_moved([_placed(e, 0.0, end, [n + length for n in noise]) for e in pair], config))
        fractions["validation"].append(_moved([_placed(e, length, end, noise) for e in pair], config))
        for offset in (-1.5, -0.5, 0.3, 1.5, lags / 2):  # the added event at V + offset·w0
            shift = length - added + offset * width
            fractions["across"].append(_moved([_placed(e, shift, end) for e in pair], config))
    assert max(max(f) for f in fractions.values()) <= 1.0 + 1e-9
    assert max(fractions["train"]) >= 0.8 and max(fractions["validation"]) >= 0.8


def test_random_neighbours_near_the_split_never_exceed_the_bound():
    rng = np.random.default_rng(21)
    worst = 0.0
    for _ in range(30):
        d, lags, cap = int(rng.integers(1, 3)), int(rng.choice([4, 6, 8])), int(rng.integers(1, 4))
        width, end = 0.5, float(rng.uniform(30.0, 50.0))
        share = float(rng.uniform(20.0, 50.0))
        config = validation_config(width, lags, count_cap=cap, ctls_validation_share=share)
        base = random_events(int(rng.integers(1000)), d=d, n=120, ends=(end,))
        cut = validation_cuts(base.sequences, width, share / 100)[0]
        times = list(base.sequences[0].times)
        j = int(rng.integers(d))  # one event added within s_max of the split, in dimension j
        times[j] = np.sort(np.append(times[j], cut + rng.uniform(-lags * width, lags * width)))
        neighbour = from_arrays(times, end_time=end)
        worst = max(worst, _moved((base, neighbour), config))
    assert 0.05 < worst <= 1.0


def test_the_noise_has_the_stated_std_and_unseeded_draws_differ():
    """``noisy_output`` − ``query_vector`` has std z(ε, δ)·S/N (S: the ctls bound at (w0, s_max) with the edge share
    of both blocks' windows; N: the blocks' public Σ(T − s)/w0), measured on every released number."""
    events = random_events(3, n=300, ends=(80.0, 70.0))
    config = validation_config(0.25, 16, sigma2=None, epsilon=1.0)
    stats, _ = prepare_stats(events, config)
    report = privacy_report(stats, config)
    pieces = add_pieces(stats.train_pieces, stats.validation_pieces)
    bound = split_sensitivity(2, 16, 3, default_edge_share(pieces), config.ctls_gram_scale).total
    expected = gaussian_multiplier(1.0, config.dp_delta) * bound / pieces.duration
    assert np.sqrt(report.sigma2) == pytest.approx(expected, rel=1e-9)
    clean = CTLS.query_vector(stats, config)
    draws = [CTLS.noisy_output(stats, config, report, noise_source(None)) for _ in range(2)]
    residual = draws[0] - clean
    n = residual.size
    assert n > 1000
    assert residual.std() == pytest.approx(expected, rel=6 / np.sqrt(2 * n))
    assert abs(residual.mean()) < 6 * expected / np.sqrt(n)
    assert not np.allclose(draws[0], draws[1])
    results = [fit(events, config)[0].H for _ in range(2)]  # unseeded fits: fresh noise each time
    assert not np.allclose(*results)


# --- the refusals -----------------------------------------------------------------------------------------------

def test_the_refusals_each_say_why_in_one_line():
    with pytest.raises(ConfigError, match="event unit") as unit:
        validation_config(privacy_unit="sequence", max_events=20, count_cap=None)
    with pytest.raises(ConfigError, match="nothing to choose|one candidate") as one:
        validation_config(1.0, 1)
    with pytest.raises(ConfigError, match="validation block longer than the support") as short:
        prepare_stats(random_events(1, ends=(12.0,)), validation_config(0.25, 16))  # V = 8.25: 3.75 < s = 4
    with pytest.raises(ConfigError, match="below 100"):
        validation_config(ctls_validation_share=100.0)
    for refusal in (unit, one, short):
        assert "\n" not in str(refusal.value)


def test_statistics_of_the_other_choice_are_refused():
    events = random_events(2)
    stated = FitConfig(method="ctls", bin_size=0.25, lags=16, sigma2=1.0, calibration="formal", count_cap=3)
    chosen = validation_config()
    with pytest.raises(ConfigError, match="another choice of the width"):
        privacy_report(prepare_stats(events, stated)[0], chosen)
    with pytest.raises(ConfigError, match="another choice of the width"):
        privacy_report(prepare_stats(events, chosen)[0], stated)
    with pytest.raises(ConfigError, match="another choice of the width"):
        privacy_report(prepare_stats(events, chosen)[0], chosen.with_changes(ctls_validation_share=40.0))


# --- the family's contract at a validation-mode config ----------------------------------------------------------

@pytest.mark.parametrize("check", ["sensitivity", "only a session release is formal", "foreign options refused",
                                   "options round trip"])
def test_the_family_contract_holds_with_the_width_chosen_by_validation(check, monkeypatch):
    """The contract suite's checks that apply to a config (the noiseless limit is one width's fit, not a choice),
    run with the validation choice among the family's worst-case options."""
    hints = dataclasses.replace(CTLS.audit_hints, worst_case_options={"ctls_width_choice": "validation"})
    monkeypatch.setattr(type(CTLS), "audit_hints", hints)
    CHECKS[check](CTLS)


def test_the_option_help_quotes_what_docs_accuracy_measured():
    """The help the CLI and the app show for the width choice states where it was measured to help, in the words of
    docs/accuracy.md's section (10⁶ events, two processes of three) — not a claim the measurement does not make."""
    from pathlib import Path

    from dphawkes_core.estimators import get_family

    (setting,) = [s for s in get_family("ctls").settings if s.name == "ctls_width_choice"]
    docs = (Path(__file__).parents[3] / "docs" / "accuracy.md").read_text()
    section = docs.split("## Width and support inside the release")[1].split("\n## ")[0]
    for claim in ("at 10⁶ events, on two processes of three", "state Δ and s from what you know"):
        assert claim in setting.help
    assert "beats it at 10⁶ on two processes of three" in section and "state (Δ, s) from what you know" in section


def test_the_cost_model_counts_every_candidate_solve():
    """The predicted time of a fit with the width chosen by validation is the stated fit's plus q³ per candidate of
    the grid (q = d·B' + 1) and once more for the refit of the largest — the solves it runs besides the one
    solve of d·B + 1 parameters (written out here from the grid's definition: k ∈ {1, 2, 4, 8} dividing B, supports
    ¼, ½ and all of s_max)."""
    from dphawkes_core.estimators.cost import _SECONDS_PER_FLOP
    from dphawkes_core.estimators.pipeline import fit_cost

    events = simulate(get_scenario("paper-2d"), n_events=2000, seed=3)
    stated = FitConfig(method="ctls", bin_size=0.25, lags=16, epsilon=1.0, calibration="formal", count_cap=3)
    chosen = stated.with_changes(ctls_width_choice="validation")
    sizes = {(k, max(1, round(f * 16 / k))) for k in (1, 2, 4, 8) for f in (0.25, 0.5, 1.0)}
    qs = [2 * lags + 1 for _, lags in sizes]
    expected = (sum(q**3 for q in qs) + max(qs) ** 3) * _SECONDS_PER_FLOP
    assert fit_cost(events, chosen).seconds - fit_cost(events, stated).seconds == pytest.approx(expected, rel=1e-9)
