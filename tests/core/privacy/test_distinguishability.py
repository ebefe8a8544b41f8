"""The distinguishability bounds of (ε, δ) against independent computations at random (ε, δ, α): brute force
over every test of the four-point extremal mechanism (it must be (ε, δ)-DP and reach the bounds), and the exact
Neyman–Pearson test of the Gaussian mechanism calibrated to (ε, δ), which must stay within them."""

import itertools
import math

import numpy as np
import pytest
from scipy.optimize import brentq
from scipy.stats import norm

from dphawkes_core.errors import ConfigError
from dphawkes_core.privacy.distinguishability import (
    best_guess_accuracy,
    best_test_power,
    extremal_pair,
    total_variation_bound,
)

RNG = np.random.default_rng(20261126)
CASES = [(float(RNG.uniform(0.01, 8.0)), float(10 ** RNG.uniform(-9, -1)), float(RNG.uniform(0, 1)))
         for _ in range(40)]


def subsets(n):
    return itertools.chain.from_iterable(itertools.combinations(range(n), k) for k in range(n + 1))


def neyman_pearson_power(p, q, level):
    """The most powerful (randomised) test of P against Q at ``level``: outputs by decreasing Q/P, greedily."""
    order = sorted(range(len(p)), key=lambda i: -(q[i] / p[i]) if p[i] > 0 else -math.inf)
    power, spent = 0.0, 0.0
    for i in order:
        take = 1.0 if p[i] == 0 else min(1.0, (level - spent) / p[i])
        if take <= 0:
            break
        spent += take * p[i]
        power += take * q[i]
    return power


@pytest.mark.parametrize(("epsilon", "delta", "level"), CASES)
def test_the_extremal_pair_is_epsilon_delta_private_and_reaches_every_bound(epsilon, delta, level):
    p, q = extremal_pair(epsilon, delta)
    assert sum(p) == pytest.approx(1.0, abs=1e-12) and sum(q) == pytest.approx(1.0, abs=1e-12)
    for s in subsets(4):
        ps, qs = sum(p[i] for i in s), sum(q[i] for i in s)
        assert qs <= math.exp(epsilon) * ps + delta + 1e-12 and ps <= math.exp(epsilon) * qs + delta + 1e-12
    brute_tv = max(sum(q[i] - p[i] for i in s) for s in subsets(4))
    assert total_variation_bound(epsilon, delta) == pytest.approx(brute_tv, rel=1e-12)
    assert best_test_power(epsilon, delta, level) == pytest.approx(neyman_pearson_power(p, q, level), abs=1e-12)
    assert best_guess_accuracy(epsilon, delta) == pytest.approx(0.5 + 0.5 * brute_tv, rel=1e-12)


def gaussian_multiplier(epsilon, delta):
    """σ/sensitivity of the Gaussian mechanism that is exactly (ε, δ)-DP (Balle & Wang 2018), by root finding."""
    def excess(sigma):
        mu = 1.0 / sigma
        return norm.cdf(mu / 2 - epsilon / mu) - math.exp(epsilon) * norm.cdf(-mu / 2 - epsilon / mu) - delta
    return brentq(excess, 1e-3, 1e4, xtol=1e-12)


@pytest.mark.parametrize(("epsilon", "delta", "level"), CASES)
def test_the_calibrated_gaussian_mechanism_stays_within_the_bounds(epsilon, delta, level):
    mu = 1.0 / gaussian_multiplier(epsilon, delta)
    gaussian_power = norm.sf(norm.isf(level) - mu) if 0 < level < 1 else level
    assert gaussian_power <= best_test_power(epsilon, delta, level) + 1e-9
    assert 2 * norm.cdf(mu / 2) - 1 <= total_variation_bound(epsilon, delta) + 1e-12


def test_the_coin_flip_limits_and_large_epsilon():
    assert best_guess_accuracy(0.0, 0.0) == 0.5  # ε = 0, δ = 0: the output says nothing
    assert best_test_power(0.0, 0.0, 0.05) == pytest.approx(0.05)
    assert best_guess_accuracy(100.0, 1e-5) == pytest.approx(1.0)  # no overflow at the public limit
    assert best_test_power(1000.0, 0.0, 0.01) == 1.0


@pytest.mark.parametrize("bad", [(-1.0, 1e-5, 0.1), (math.inf, 1e-5, 0.1), (1.0, 2.0, 0.1), (1.0, 1e-5, 1.5)])
def test_out_of_range_arguments_are_refused(bad):
    with pytest.raises(ConfigError):
        best_test_power(*bad)
