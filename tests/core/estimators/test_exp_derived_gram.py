"""exp's release with the Gram derived from the values at the events (``exp_gram="derived"``) against independent
facts: the Gram and the values of exponential features written out here as double sums over event pairs (closed-form
integrals, no recursion), the identity that derives one from the other, a fit with next to no noise against exp's
own least squares, the bound against the family-blind neighbour search and the family's own adversarial neighbours,
a planted understatement caught by that search, the contract suite, the noise, the audit, replay and the refusals."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from audit_tools import audit_catches_a_halved_noise, noise_is_calibrated, released_and_replayed
from audit_tools import moved_fraction as shared_moved_fraction

import dphawkes_core.estimators.exp as exp_family
from dphawkes_core.data.io import Events, EventSequence, from_arrays
from dphawkes_core.errors import ConfigError
from dphawkes_core.estimators import FitConfig, fit, get_family, prepare_stats, privacy_report
from dphawkes_core.estimators.checks import CHECKS
from dphawkes_core.estimators.exp import DERIVED_EDGE_LIMIT, derived_edge_share
from dphawkes_core.estimators.exp.basis import adversarial_events, basis_sensitivity, to_basis
from dphawkes_core.estimators.exp.release import (
    DERIVED,
    corner_bounds,
    exp_sensitivity,
    pieces_from_release,
    raw_release,
    swap_bounds,
)
from dphawkes_core.estimators.exp.statistics import exp_pieces, gram_from_values
from dphawkes_core.estimators.exp.totals import TOTALS_SHARE, totals_weight
from dphawkes_core.estimators.neighbour_search import Budget, search_neighbours

FAMILY = get_family("exp")
DECAYS = (0.7, 1.5, 3.0)


def derived_config(width=0.5, cap=2, decays=DECAYS, basis="decays", **changes) -> FitConfig:
    values = dict(method="exp", bin_size=width, lags=4, calibration="formal", count_cap=cap, sigma2=1.0,
                  decays=decays, exp_basis=basis, exp_gram="derived")
    return FitConfig(**{**values, **changes})


# --- the identity, against double sums written out here ------------------------------------------------------------

def double_sums(times: list[np.ndarray], decays, end: float) -> tuple[np.ndarray, np.ndarray]:
    """The Gram ``∫_0^end g_ju g_kv dt`` and the values ``c_i[(j, u)] = Σ_{t ∈ i} g_ju(t−)`` of the features
    ``g_ju(t) = Σ_{s ∈ j, s < t} β_u e^{−β_u (t − s)}`` (decay-major columns), pair by pair in closed form: for
    events s, s′ the product of their terms integrates over ``[max(s, s′), end]`` to
    ``β_u β_v e^{−β_u (m − s) − β_v (m − s′)} (1 − e^{−(β_u + β_v)(end − m)})/(β_u + β_v)``, ``m = max(s, s′)``."""
    beta = np.asarray(decays, dtype=float)
    d, U = len(times), beta.size
    gram, values = np.zeros((U * d, U * d)), np.zeros((d, U * d))
    for u in range(U):
        for j in range(d):
            for v in range(U):
                for k in range(d):
                    total = 0.0
                    for s in times[j]:
                        for s2 in times[k]:
                            m = max(s, s2)
                            rate = beta[u] + beta[v]
                            total += (beta[u] * beta[v] * math.exp(-beta[u] * (m - s) - beta[v] * (m - s2))
                                      * -math.expm1(-rate * (end - m)) / rate)
                    gram[u * d + j, v * d + k] = total
            for i in range(d):
                values[i, u * d + j] = sum(beta[u] * math.exp(-beta[u] * (t - s)) for t in times[i] for s in times[j]
                                           if s < t)
    return gram, values


def small_events(rng, end_after: float):
    times = [np.sort(rng.uniform(0, 20, rng.integers(8, 16))) for _ in range(2)]
    last = max(float(t[-1]) for t in times)
    return times, last + end_after


@pytest.mark.parametrize("decays", [DECAYS, (0.4, 2.0), (1.0,)])
def test_the_gram_the_values_imply_is_the_gram_of_the_double_sums(decays):
    """With the window long after the last event the derived Gram is the Gram to round-off; the recursion's own
    statistics are the double sums; the integrals are the counts."""
    rng = np.random.default_rng(len(decays))
    times, end = small_events(rng, 80.0 / min(decays))
    gram, values = double_sums(times, decays, end)
    pieces = exp_pieces(from_arrays(times, end_time=end), decays, 0.5, None)[0]
    np.testing.assert_allclose(pieces.pairs, values, rtol=1e-10, atol=1e-12 * np.abs(values).max())
    np.testing.assert_allclose(pieces.gram, gram, rtol=1e-10, atol=1e-12 * np.abs(gram).max())
    derived = gram_from_values(pieces)
    np.testing.assert_allclose(derived.gram, gram, rtol=1e-10, atol=1e-12 * np.abs(gram).max())
    np.testing.assert_allclose(derived.integral, np.tile([t.size for t in times], len(decays)), rtol=1e-12)


def test_a_window_that_ends_near_the_last_event_leaves_out_exactly_the_tail():
    """Ending the window 0.3 after the last event, the derived Gram exceeds the exact one entrywise by the double
    sums' mass beyond the window (the identity integrates to ∞)."""
    rng = np.random.default_rng(7)
    times, end = small_events(rng, 0.3)
    pieces = exp_pieces(from_arrays(times, end_time=end), DECAYS, 0.5, None)[0]
    far, _ = double_sums(times, DECAYS, end + 80.0 / min(DECAYS))
    excess = gram_from_values(pieces).gram - pieces.gram
    assert np.all(excess >= -1e-12 * np.abs(far).max())
    np.testing.assert_allclose(excess, far - pieces.gram, rtol=1e-8, atol=1e-11 * np.abs(far).max())
    assert excess.max() > 1e-3 * np.abs(far).max()  # the tail is not negligible here: the check measures it


@pytest.mark.filterwarnings("ignore:divide by zero:RuntimeWarning")  # ε of σ² = 1e-30 is infinite
def test_with_next_to_no_noise_the_fit_is_exps_least_squares():
    """A derived release at σ² = 1e-30 reads back exp's exact least squares (its window long after the events)."""
    rng = np.random.default_rng(3)
    parents = np.sort(rng.uniform(0, 300, 250))
    children = parents + rng.exponential(0.8, parents.size)
    events = from_arrays([parents, np.sort(children)], end_time=float(children.max()) + 120.0)
    exact = dict(method="exp", bin_size=0.5, lags=6, calibration="formal", count_cap=50, seed=1, exp_ridge=0.0,
                 exp_nonnegative=False)
    plain, _ = fit(events, FitConfig(**exact, sigma2=0.0))
    for basis in ("decays", "differences"):
        derived, _ = fit(events, FitConfig(**exact, sigma2=1e-30, exp_gram="derived", exp_basis=basis))
        np.testing.assert_allclose(derived.H, plain.H, rtol=1e-6, atol=1e-8 * np.abs(plain.H).max())
        assert derived.info["gram"] == "derived" and derived.info["gram_scale"] is None


def test_many_short_windows_give_a_note_of_the_bias_and_one_long_window_none():
    """The edge share (windows / (β_min·Σ T), public) predicts the derived Gram's bias on the windows' ends; past
    :data:`DERIVED_EDGE_LIMIT` the result says so (the release is private either way: only its accuracy suffers)."""
    rng = np.random.default_rng(11)
    short = Events(tuple(EventSequence(tuple(np.sort(rng.uniform(0, 8, 6)) for _ in range(2)), 8.0)
                         for _ in range(60)), ("0", "1"), window_stated=True)
    config = derived_config(sigma2=None, epsilon=1.0, seed=1)
    stats = prepare_stats(short, config)[0]
    share = derived_edge_share(stats.exp_pieces)
    assert share == pytest.approx(60 / (0.7 * 480.0), rel=1e-12) and share > DERIVED_EDGE_LIMIT
    exact = stats.exp_pieces
    bias = np.abs(gram_from_values(exact).gram - exact.gram).max() / np.abs(exact.gram).max()
    assert 0.1 * share < bias < 2 * share  # the share is the bias' order of magnitude
    noted = fit(short, config)[0].info
    assert noted["edge_share"] == pytest.approx(share)
    assert f"{share:.1%}" in noted["gram_note"] and "Gram released beside the values" in noted["gram_note"]
    assert "--" not in noted["gram_note"]  # words the app shows as they are, no command-line flag
    long = from_arrays([np.sort(rng.uniform(0, 2000, 400)) for _ in range(2)], end_time=2000.0)
    assert "gram_note" not in fit(long, config)[0].info


# --- the bound -------------------------------------------------------------------------------------------------------

def test_the_bound_is_the_values_part_of_exps_own_bound():
    """In the decays basis: the square root of the largest values' part over the four insertion corners and the swap
    (each written here from :func:`corner_bounds` and :func:`swap_bounds`); below the released Gram's bound. With
    the totals weighted by k, an insertion's part gains k² − 1 (its total moves by k instead of 1), a swap's nothing
    (its totals do not move)."""
    for dim, width, cap in ((2, 0.5, 2), (5, 1.0, 3), (3, 4.0, 1)):
        inserts = [corner_bounds(dim, DECAYS, width, cap, end, after)["rest"] for end in (0, 1)
                   for after in (True, False)]
        swap = swap_bounds(dim, DECAYS, width, cap)["rest"]
        assert exp_sensitivity(dim, DECAYS, width, cap, DERIVED).total == pytest.approx(
            math.sqrt(max(*inserts, swap)), rel=1e-12)
        assert exp_sensitivity(dim, DECAYS, width, cap, DERIVED).total < exp_sensitivity(dim, DECAYS, width, cap,
                                                                                         3.0).total
        k = totals_weight(dim, DECAYS, width, cap, "decays")
        assert k == pytest.approx(TOTALS_SHARE * math.sqrt(max(*(r - 1 for r in inserts), swap)), rel=1e-12)
        assert exp_sensitivity(dim, DECAYS, width, cap, DERIVED, k).total == pytest.approx(
            math.sqrt(max(*(r - 1 + k**2 for r in inserts), swap)), rel=1e-12)


def moved_fraction(config, pair) -> float:
    return shared_moved_fraction(FAMILY, config, pair)


@pytest.mark.parametrize("d,cap,width,least", [(1, 2, 1.0, 0.85), (3, 3, 0.5, 0.9)])
def test_the_familys_adversarial_neighbours_stay_within_the_bound_and_reach_most_of_it(d, cap, width, least):
    """In both bases, through the family's own statistics and release vector (which holds no Gram)."""
    decays_config = derived_config(width, cap)
    assert moved_fraction(decays_config, FAMILY.worst_case_events(decays_config, d)) == pytest.approx(1.0, abs=0.02)
    basis_config = derived_config(width, cap, basis="differences")
    k = totals_weight(d, DECAYS, width, cap, "differences")
    fractions = {kind: moved_fraction(basis_config, adversarial_events(d, DECAYS, width, cap, DERIVED, "differences",
                                                                       kind, k)) for kind in ("insert", "swap")}
    assert max(fractions.values()) <= 1.0 and fractions["insert"] >= least
    stats = prepare_stats(FAMILY.worst_case_events(basis_config, d)[0], basis_config)[0]
    assert FAMILY.query_vector(stats, basis_config).size == d * d * len(DECAYS) + d
    assert privacy_report(stats, basis_config).sensitivity * stats.exp_pieces.duration == pytest.approx(
        basis_sensitivity(d, DECAYS, width, cap, DERIVED, "differences", k).total, rel=1e-12)


SEARCH = Budget(starts=2, steps=30, polish=1, partitions=False)
SEARCHED = [(derived_config(0.5, 2), 3), (derived_config(1.0, 1, (1.0, 4.0), "differences"), 2)]


def test_the_family_blind_search_stays_under_the_bound_and_reaches_much_of_it():
    report = search_neighbours(FAMILY, SEARCH, configs=SEARCHED)
    assert report.worst.ratio <= 1 + 1e-9
    assert report.worst.ratio > 0.75  # 0.899 measured (decays basis; the differences basis 0.747)


def test_the_search_catches_the_values_bound_without_its_swap(monkeypatch):
    """A planted bug: the derived release's bound taken over the insertions only (the bug issue 40 fixed in the
    released Gram's bound), on public settings where the swap's values part is the largest (d = 5, w = 4, C = 1, fast
    decays: 62.8 against 56.5). The search, told nothing of corners, finds neighbours past it; with the bound as it
    is, it does not."""
    real = exp_family.exp_sensitivity
    config = derived_config(4.0, 1, (2.8, 6.0, 12.0), lags=1)
    budget = Budget(starts=2, steps=40, polish=2, partitions=False)
    assert search_neighbours(FAMILY, budget, configs=[(config, 5)]).worst.ratio <= 1 + 1e-9

    def insertions_only(dim, decays, width, count_cap, gram_scale=1.0, totals_weight=1.0):
        rests = [corner_bounds(dim, decays, width, count_cap, end, after, totals_weight)["rest"] for end in (0, 1)
                 for after in (True, False)]
        return dataclasses.replace(real(dim, decays, width, count_cap, gram_scale, totals_weight),
                                   total=math.sqrt(max(rests)))

    monkeypatch.setattr(exp_family, "exp_sensitivity", insertions_only)
    assert search_neighbours(FAMILY, budget, configs=[(config, 5)]).worst.ratio > 1.02


# --- the totals' weight -----------------------------------------------------------------------------------------------

def test_the_totals_weight_is_a_tenth_of_the_values_own_bound_and_the_fit_reports_it():
    """From public numbers only: a tenth of the derived bound with the totals weighed 0, in either basis; a derived fit
    reports the weight it released with, a released Gram's fit none."""
    for basis in ("decays", "differences"):
        values = (exp_sensitivity(3, DECAYS, 0.5, 2, DERIVED, 0.0) if basis == "decays" else
                  basis_sensitivity(3, DECAYS, 0.5, 2, DERIVED, basis, 0.0)).total
        assert totals_weight(3, DECAYS, 0.5, 2, basis) == pytest.approx(0.1 * values, rel=1e-12)
    assert TOTALS_SHARE == 0.1
    rng = np.random.default_rng(3)
    events = from_arrays([np.sort(rng.uniform(0, 50, 40)) for _ in range(2)], end_time=60.0)
    result, _ = fit(events, derived_config(sigma2=None, epsilon=1.0, basis="differences", seed=1))
    assert result.info["totals_weight"] == totals_weight(2, DECAYS, 0.5, 2, "differences")
    released, _ = fit(events, dataclasses.replace(derived_config(sigma2=None, epsilon=1.0, seed=1),
                                                  exp_gram="released"))
    assert "totals_weight" not in released.info


def test_the_released_numbers_are_the_values_and_the_totals_times_their_weight_and_read_back():
    """The vector against the pieces written out here: the values as they are, each total times the weight; the
    fit's reading divides it out exactly."""
    rng = np.random.default_rng(11)
    events = from_arrays([np.sort(rng.uniform(0, 60, 50)) for _ in range(3)], end_time=70.0)
    pieces = to_basis(exp_pieces(events, DECAYS, 0.5, 3)[0], "differences")
    k = totals_weight(3, DECAYS, 0.5, 3, "differences")
    vector = raw_release(pieces, DERIVED, k)
    np.testing.assert_array_equal(vector[:27], pieces.pairs.ravel())
    np.testing.assert_allclose(vector[27:], pieces.totals * k, rtol=1e-14)
    back = pieces_from_release(vector, pieces, DERIVED, k)
    np.testing.assert_array_equal(back.pairs, pieces.pairs)
    np.testing.assert_allclose(back.totals, pieces.totals, rtol=1e-14)


def test_one_added_event_moves_its_released_total_by_the_weight():
    """Through the family's own release vector: an event added far from every other (no value moves) moves the total
    of its dimension by exactly the totals' weight (over N), and nothing else."""
    config = derived_config(0.5, 2, basis="differences")
    times = [np.array([1.0, 2.0, 30.0]), np.array([1.5, 31.0])]
    before = from_arrays(times, end_time=400.0)
    after = from_arrays([np.append(times[0], 300.0), times[1]], end_time=400.0)
    moved = [FAMILY.query_vector(prepare_stats(e, config)[0], config) for e in (before, after)]
    change = (moved[1] - moved[0]) * 400.0
    k = totals_weight(2, DECAYS, 0.5, 2, "differences")
    assert change[-2] == pytest.approx(k, rel=1e-12) and change[-1] == 0.0
    assert np.max(np.abs(change[:-2])) < 1e-9 * k


def test_the_search_catches_a_bound_that_forgets_the_totals_weight(monkeypatch):
    """A planted bug: the totals released times their weight, the bound computed with weight 1. At the shipped share
    (0.1) that understates by at most 0.5 % — below what any search resolves, which is why the totals' part is
    checked number by number above; with the share planted at 3 the search, told nothing of weights, finds neighbours
    far past the forgetful bound, and none past the bound as it is."""
    from dphawkes_core.estimators.exp import totals

    monkeypatch.setattr(totals, "TOTALS_SHARE", 3.0)
    real = exp_family.basis_sensitivity
    config = derived_config(0.5, 2, DECAYS, "differences", lags=1)
    budget = Budget(starts=2, steps=30, polish=1, partitions=False)
    assert search_neighbours(FAMILY, budget, configs=[(config, 2)]).worst.ratio <= 1 + 1e-9

    def forgetful(dim, decays, width, count_cap, gram_scale=1.0, basis="differences", totals_weight=1.0):
        return real(dim, decays, width, count_cap, gram_scale, basis, 1.0)

    monkeypatch.setattr(exp_family, "basis_sensitivity", forgetful)
    assert search_neighbours(FAMILY, budget, configs=[(config, 2)]).worst.ratio > 2.0


# --- the family: contract, noise, audit, replay, refusals ----------------------------------------------------------

@pytest.mark.parametrize("check", ["noiseless limit", "sensitivity", "only a session release is formal",
                                   "foreign options refused", "options round trip"])
def test_the_family_contract_holds_with_a_derived_gram(check, monkeypatch):
    hints = dataclasses.replace(FAMILY.audit_hints, worst_case_options={"exp_gram": "derived"},
                                noiseless_options={**FAMILY.audit_hints.noiseless_options, "exp_gram": "derived"})
    monkeypatch.setattr(type(FAMILY), "audit_hints", hints)
    CHECKS[check](FAMILY)


def test_the_noise_has_the_calibrated_std_and_unseeded_draws_differ():
    rng = np.random.default_rng(1)
    events = from_arrays([np.sort(rng.uniform(0, 80, 120)) for _ in range(2)], end_time=80.0)
    config = derived_config(sigma2=None, epsilon=1.0, basis="differences")
    stats, _ = prepare_stats(events, config)
    k = totals_weight(2, DECAYS, 0.5, 2, "differences")
    bound = basis_sensitivity(2, DECAYS, 0.5, 2, DERIVED, "differences", k).total / stats.exp_pieces.duration
    noise_is_calibrated(FAMILY, stats, config, bound)


def test_a_worst_case_audit_catches_a_halved_noise():
    audit_catches_a_halved_noise(derived_config(1.0, 2, decays=(1.0, 3.0), sigma2=None, epsilon=4.0), FAMILY)


def test_the_sequence_unit_is_refused_in_one_line():
    with pytest.raises(ConfigError, match="event unit") as unit:
        derived_config(privacy_unit="sequence", max_events=20, count_cap=None)
    assert "\n" not in str(unit.value)


def test_with_a_periodic_baseline_the_parts_are_released_as_before_and_the_bounds_add_in_quadrature():
    """The baseline parts' numbers are appended at ρ as with a released Gram, so next to no noise reads back the
    released Gram's periodic fit, and the stated sensitivity is the derived bound and the parts' bound in quadrature."""
    from dphawkes_core.estimators.exp.baseline import periodic_sensitivity

    rng = np.random.default_rng(5)
    parents = np.sort(rng.uniform(0, 400, 300))
    children = parents + rng.exponential(0.8, parents.size)
    events = from_arrays([parents, np.sort(children)], end_time=float(children.max()) + 120.0)
    exact = dict(method="exp", bin_size=0.5, lags=6, calibration="formal", count_cap=40, seed=1, exp_ridge=0.0,
                 exp_nonnegative=False, baseline_period=40.0, baseline_bins=4)
    plain, _ = fit(events, FitConfig(**exact, sigma2=0.0))
    with pytest.warns(RuntimeWarning, match="divide by zero"):  # ε of σ² = 1e-30 is infinite
        derived, _ = fit(events, FitConfig(**exact, sigma2=1e-30, exp_gram="derived"))
    np.testing.assert_allclose(derived.H, plain.H, rtol=1e-6, atol=1e-8 * np.abs(plain.H).max())
    assert np.allclose(derived.info["baseline_profile"], plain.info["baseline_profile"], rtol=1e-6, atol=1e-9)
    config = FitConfig(**{**exact, "sigma2": 1.0, "count_cap": 2, "exp_gram": "derived"})
    stats, _ = prepare_stats(events, config)
    stated = privacy_report(stats, config).sensitivity * stats.exp_pieces.duration
    k = totals_weight(2, DECAYS, 0.5, 2, "decays")
    assert stated == pytest.approx(math.hypot(exp_sensitivity(2, DECAYS, 0.5, 2, DERIVED, k).total,
                                              periodic_sensitivity(DECAYS, 0.5, config.exp_gram_scale)), rel=1e-12)


def test_a_session_replays_it_without_drawing_and_the_cli_says_the_gram_was_derived(tmp_path, capsys, monkeypatch):
    first, _, _ = released_and_replayed(FAMILY, ["--exp-gram", "derived", "--exp-basis", "differences"], tmp_path,
                                        capsys, monkeypatch)
    assert first["config"]["exp_gram"] == "derived" and first["solver_info"]["gram"] == "derived"
