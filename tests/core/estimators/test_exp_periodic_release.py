"""exp's formal release with a baseline that follows the clock: the parts' numbers go out through the family's one
noised vector (``query_vector`` / ``noisy_output``: what a family-blind neighbour search measures), their bound
(:func:`~dphawkes_core.estimators.exp.baseline.periodic_sensitivity`) holds on adversarial neighbours the family did
not choose — random insertions and evictions, and a swap across a part's edge that reaches it — and a planted bound
without the swap's term is broken by that swap."""

import math

import numpy as np
import pytest

from dphawkes_core.data.io import from_arrays
from dphawkes_core.estimators import FitConfig, fit, get_family
from dphawkes_core.estimators.exp.baseline import periodic_sensitivity
from dphawkes_core.estimators.exp.release import exp_sensitivity

EXP = get_family("exp")


def _config(decays, width, cap, period, parts, rho=3.0):
    return FitConfig(method="exp", bin_size=width, lags=2, sigma2=1.0, calibration="formal", count_cap=cap,
                     decays=decays, baseline_period=period, baseline_bins=parts, exp_gram_scale=rho)


def _parts_change(config, events, neighbour, dim):
    """The change of the parts' numbers (the tail of the release vector) and of the whole vector, in the pieces'
    units (the vector times N = Σ T)."""
    vectors = [EXP.query_vector(EXP.prepare_stats(e, config)[0], config) for e in (events, neighbour)]
    q = dim * len(config.decays)
    tail = q * config.baseline_bins + dim * config.baseline_bins
    duration = events.end_time
    delta = (vectors[1] - vectors[0]) * duration
    return float(np.linalg.norm(delta[-tail:])), float(np.linalg.norm(delta))


def test_a_swap_across_a_parts_edge_reaches_the_bound_and_breaks_an_insertion_only_bound():
    """C = 1, fast decays: z at 0.4 evicts the kept v at 0.6 of the same w-bin [0, 1), on either side of the parts'
    edge at 0.5 — the counts move by 1 in two parts and each decay's mass moves from one part to the other."""
    decays, rho = (200.0, 150.0), 3.0
    config = _config(decays, 1.0, 1, 1.0, 2, rho)
    before = from_arrays([np.array([0.6]), np.array([3.3])], end_time=6.0)
    after = from_arrays([np.array([0.4, 0.6]), np.array([3.3])], end_time=6.0)
    moved, _ = _parts_change(config, before, after, 2)
    bound = periodic_sensitivity(decays, 1.0, rho)
    assert moved <= bound * (1 + 1e-9)
    assert moved >= 0.99 * bound
    insertion_only = math.sqrt(1 + len(decays) / rho**2)  # the planted bug: a bound that forgets evictions
    assert moved > insertion_only * 1.05


@pytest.mark.parametrize("decays, width, cap, period, parts", [
    ((0.7, 1.5, 3.0), 1.0, 2, 5.0, 4), ((4.0,), 0.5, 1, 1.3, 3), ((0.3, 9.0), 2.0, 3, 24.0, 8)])
def test_random_neighbours_stay_within_the_parts_bound_and_the_whole_release_within_its_bound(decays, width, cap,
                                                                                               period, parts):
    """Insertions anywhere (into full w-bins: evictions; into empty ones; past the cap: nothing), in every dimension,
    on crowded random data: the parts' numbers move at most their bound, the whole vector at most the report's."""
    rng = np.random.default_rng(int(10 * width + cap))
    config = _config(decays, width, cap, period, parts)
    end, d = 40.0, 2
    base = [np.sort(rng.uniform(0, end, 60)) for _ in range(d)]
    events = from_arrays(base, end_time=end)
    stats = EXP.prepare_stats(events, config)[0]
    total_bound = EXP.privacy_report(stats, config).sensitivity * end
    assert total_bound == pytest.approx(math.hypot(
        exp_sensitivity(d, decays, width, cap, 3.0).total, periodic_sensitivity(decays, width, 3.0)))
    worst = 0.0
    for _ in range(60):
        j, z = int(rng.integers(d)), float(rng.uniform(0, end))
        neighbour = from_arrays([np.append(t, z) if k == j else t for k, t in enumerate(base)], end_time=end)
        parts_moved, whole = _parts_change(config, events, neighbour, d)
        assert parts_moved <= periodic_sensitivity(decays, width, 3.0) * (1 + 1e-9)
        assert whole <= total_bound * (1 + 1e-9)
        worst = max(worst, parts_moved)
    assert worst > 0.5 * periodic_sensitivity(decays, width, 3.0)


def test_the_release_is_one_noised_vector_and_the_fit_reads_its_parts():
    """The noised vector a neighbour search observes is the one the fit reads: with σ² = 0 the formal fit equals the
    non-private least squares with the same cap; the profile is in the result and every part is at least its floor."""
    rng = np.random.default_rng(3)
    times = [np.sort(rng.uniform(0, 200, 150)), np.sort(rng.uniform(0, 200, 90))]
    events = from_arrays(times, end_time=200.0)
    config = _config((0.5, 2.0), 1.0, 3, 24.0, 4).with_changes(sigma2=0.0)
    stats = EXP.prepare_stats(events, config)[0]
    report = EXP.privacy_report(stats, config)
    rng_draw = np.random.default_rng(0)
    assert EXP.noisy_output(stats, config, report, rng_draw).size == EXP.query_vector(stats, config).size
    noiseless, _ = fit(events, config)
    private, _ = fit(events, config.with_changes(sigma2=None, epsilon=1.0, seed=5))
    profile = np.array(private.info["baseline_profile"])
    assert profile.shape == (2, 4) and np.all(profile >= np.array(private.info["baseline_floor"])[:, None] - 1e-15)
    assert np.array(noiseless.info["baseline_profile"]).shape == (2, 4)
    constant = config.with_changes(baseline_bins=1, baseline_period=None)
    assert private.privacy.sensitivity > EXP.privacy_report(EXP.prepare_stats(events, constant)[0],
                                                            constant).sensitivity
