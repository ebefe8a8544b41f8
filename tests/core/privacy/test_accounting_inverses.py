"""The accountant's inverses (:func:`remaining`, :func:`split`) and group privacy (:func:`grouped`), checked
against the one composition they invert, against dp-accounting's own search, and against the ledger's remaining
budget as written before the accountant had one (its closed form and its bisection, copied below as the reference:
``DataLedger.remaining`` is to be rewired onto :func:`remaining`, so the reference must not be the ledger itself)."""

from __future__ import annotations

import math
from types import SimpleNamespace

import pytest
from dp_accounting.gaussian_mechanism import get_epsilon_gaussian, get_sigma_gaussian

from dphawkes_core.errors import ConfigError, DPHawkesError
from dphawkes_core.privacy.accounting import (
    Mechanism,
    _next_mu,
    _search_next_mu,
    compose_epsilon,
    gaussian_mu,
    gaussian_multiplier,
    grouped,
    remaining,
    split,
    zcdp_rho,
)
from dphawkes_core.release.ledger import Budget, DataLedger, Entry, LedgerKey

DELTA = 1e-5

GAUSSIAN_LEDGERS = [
    (Mechanism("gaussian", 3.0, 2), Mechanism("gaussian", 10.0, 30)),
    (Mechanism("gaussian", 57.8, 1), Mechanism("gaussian", 4.2, 1)),
    (Mechanism("gaussian", 400.0, 1000),),
]
MIXED_LEDGERS = [  # the ledger's bisection: a discrete Gaussian (zCDP), a Laplace or a pure step beside Gaussians
    (Mechanism("discrete-gaussian", 3.0, 1), Mechanism("gaussian", 10.0, 30)),
    (Mechanism("discrete-gaussian", 57.8, 1), Mechanism("discrete-gaussian", 5.0, 1)),
    (Mechanism("laplace", 2.0, 1), Mechanism("gaussian", 10.0, 3)),
    (Mechanism("pure", 0.5, 1), Mechanism("gaussian", 4.0, 3)),
]


def ledger_remaining_before(past: tuple, budget) -> float:
    """``DataLedger.remaining`` as written at 31194c8 (the reference): a closed form for Gaussians, a 20-step
    bisection on the next Gaussian's μ through the composition otherwise."""
    delta = budget.delta
    if compose_epsilon(past, delta) >= budget.epsilon:
        return 0.0
    mu_budget = 1.0 / get_sigma_gaussian(budget.epsilon, delta)
    if all(m.kind == "gaussian" for m in past):
        mu_next_sq = mu_budget**2 - sum(m.releases / m.parameter**2 for m in past)
        return float(get_epsilon_gaussian(1.0 / math.sqrt(mu_next_sq), delta)) if mu_next_sq > 0 else 0.0
    low, high = 0.0, mu_budget
    for _ in range(20):
        mid = (low + high) / 2
        fits = compose_epsilon(past + (Mechanism("gaussian", 1.0 / mid),), delta) <= budget.epsilon
        low, high = (mid, high) if fits else (low, mid)
    return float(get_epsilon_gaussian(1.0 / low, delta)) if low > 0 else 0.0


def data_ledger(past: tuple, epsilon: float) -> DataLedger:
    return DataLedger(LedgerKey("a" * 64), Budget(epsilon, DELTA), entries=(Entry("r", "x", True, (), past),))


# ---- remaining ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("past", GAUSSIAN_LEDGERS)
@pytest.mark.parametrize("epsilon", [1.0, 5.0, 40.0])
def test_remaining_is_the_ledgers_closed_form_on_gaussian_ledgers(past, epsilon):
    budget = Budget(epsilon, DELTA)
    expected = ledger_remaining_before(past, budget)
    assert remaining(past, budget) == pytest.approx(expected, rel=1e-12)
    assert remaining(past, budget) == pytest.approx(data_ledger(past, epsilon).remaining(), rel=1e-12)


@pytest.mark.parametrize("past", MIXED_LEDGERS)
def test_remaining_agrees_with_the_ledgers_bisection_and_stays_in_the_budget(past):
    budget = Budget(5.0, DELTA)
    ours, bisected = remaining(past, budget), ledger_remaining_before(past, budget)
    assert ours == pytest.approx(bisected, rel=1e-5)  # 20 halvings of μ: about 1e-6 of it
    assert ours >= bisected * (1 - 1e-9)  # the bisection's end is inside the budget; ours is its limit
    assert ours == pytest.approx(data_ledger(past, 5.0).remaining(), rel=1e-5)
    # the next release at that ε composes with the ledger to the budget, never over it
    following = past + (Mechanism("gaussian", get_sigma_gaussian(ours, DELTA)),)
    assert compose_epsilon(following, DELTA) == pytest.approx(5.0, rel=1e-6)
    assert compose_epsilon(following, DELTA) <= 5.0 * (1 + 1e-9)


def test_a_spent_budget_leaves_nothing_and_an_empty_ledger_the_whole_budget():
    spent = (Mechanism("gaussian", 0.5, 10),)
    assert compose_epsilon(spent, DELTA) > 5.0
    assert remaining(spent, Budget(5.0, DELTA)) == 0.0
    assert remaining((), Budget(5.0, DELTA)) == pytest.approx(5.0, rel=1e-9)
    assert remaining((), SimpleNamespace(epsilon=2.0, delta=1e-6)) == pytest.approx(2.0, rel=1e-9)  # any budget


@pytest.mark.parametrize("past", GAUSSIAN_LEDGERS[:2] + MIXED_LEDGERS[:2])
@pytest.mark.parametrize("kind", ["gaussian", "discrete-gaussian"])
def test_each_closed_form_equals_dp_accountings_search_over_the_composition(past, kind):
    """μ² (Gaussians) and ρ (with a zCDP event) undone in closed form, and the search that the Laplace and pure
    ledgers take (``calibrate_dp_mechanism`` over the same composition): the same next release."""
    closed, _ = _next_mu(past, 5.0, DELTA, kind)
    searched = _search_next_mu(past, 5.0, DELTA, kind)
    assert searched == pytest.approx(closed, rel=1e-8)
    assert searched <= closed * (1 + 1e-12)  # the search ends inside the budget


# ---- split -------------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("epsilon", "share"), [(1.0, 0.05), (0.3, 0.1), (8.0, 0.05), (1.0, 0.5)])
@pytest.mark.parametrize("discrete", [False, True])
@pytest.mark.parametrize("releases", [1, 30])
def test_a_split_composes_to_exactly_epsilon_and_its_selection_to_its_share(epsilon, share, discrete, releases):
    chosen = split(epsilon, DELTA, share, discrete)
    total = compose_epsilon([chosen.selection(), chosen.rest(releases)], DELTA)
    assert total == pytest.approx(epsilon, rel=1e-9)
    assert total <= epsilon * (1 + 1e-12)
    assert compose_epsilon([chosen.selection()], DELTA) == pytest.approx(share * epsilon, rel=1e-9)
    assert compose_epsilon([chosen.rest(releases)], DELTA) == pytest.approx(chosen.rest_epsilon, rel=1e-9)
    assert {chosen.selection().kind, chosen.rest().kind} == {"discrete-gaussian" if discrete else "gaussian"}


def test_the_split_is_what_the_budget_holds_after_the_selection():
    """The split's release is :func:`remaining` of a ledger holding the selection alone."""
    for discrete in (False, True):
        chosen = split(1.0, DELTA, 0.05, discrete)
        kind = chosen.selection().kind
        assert chosen.rest_epsilon == pytest.approx(
            remaining((chosen.selection(),), Budget(1.0, DELTA), kind), rel=1e-12)


def test_a_planted_naive_split_is_caught():
    """The check above fails for the split a hand calculation would write: (1 − share)·ε for the release. It
    composes well below ε (composition is sub-additive), wasting budget; and the discrete split's ρ differs from
    the continuous one's μ²."""
    naive = Mechanism("gaussian", gaussian_multiplier(0.95, DELTA))
    assert compose_epsilon([split(1.0, DELTA, 0.05).selection(), naive], DELTA) < 1.0 * (1 - 1e-3)
    continuous, discrete = split(1.0, DELTA, 0.05), split(1.0, DELTA, 0.05, discrete=True)
    assert discrete.selection_multiplier == pytest.approx(1 / math.sqrt(2 * zcdp_rho(0.05, DELTA)), rel=1e-12)
    assert discrete.rest_multiplier > continuous.rest_multiplier * 1.01


@pytest.mark.parametrize(("epsilon", "share", "message"), [(1e-300, 0.05, "leaves nothing for the release"),
                                                            (1.0, 1.0, "must be in \\(0, 1\\)"),
                                                            (-1.0, 0.05, "ε must be a positive number")])
def test_a_split_out_of_range_or_leaving_nothing_is_refused(epsilon, share, message):
    with pytest.raises(ConfigError, match=message):
        split(epsilon, DELTA, share, what="the count cap")


# ---- group privacy -----------------------------------------------------------------------------------------

def test_a_group_of_k_is_k_mu_in_gdp_and_k_squared_rho_in_zcdp():
    gaussians = (Mechanism("gaussian", 3.0, 2), Mechanism("gaussian", 10.0, 30))
    mu = math.sqrt(2 / 9 + 30 / 100)
    assert gaussian_mu(gaussians) == pytest.approx(mu, rel=1e-12)
    assert gaussian_mu(grouped(gaussians, 4)) == pytest.approx(4 * mu, rel=1e-12)
    assert compose_epsilon(grouped(gaussians, 4), DELTA) == pytest.approx(get_epsilon_gaussian(1 / (4 * mu), DELTA),
                                                                          rel=1e-9)
    discrete = (Mechanism("discrete-gaussian", 5.0, 1),)
    assert gaussian_mu(grouped(discrete, 3)) ** 2 / 2 == pytest.approx(9 / (2 * 25), rel=1e-12)  # k²ρ
    assert grouped((Mechanism("pure", 0.5),), 3)[0].parameter == 1.5  # a pure step's ε times k
    assert grouped(gaussians, math.inf) is None and grouped(gaussians, 1) == gaussians
    with pytest.raises(DPHawkesError):
        gaussian_mu((Mechanism("laplace", 2.0),))
