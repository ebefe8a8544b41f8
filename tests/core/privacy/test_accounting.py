"""The one composition function on dp-accounting's typed events, against closed forms and dp-accounting's own
accountants (PLD for Gaussian and Laplace events, RDP for zCDP ones)."""

import math

import numpy as np
import pytest
from dp_accounting import dp_event
from dp_accounting.pld import PLDAccountant
from dp_accounting.rdp import rdp_privacy_accountant as rdp
from scipy.optimize import brentq
from scipy.stats import norm

from dphawkes_core.errors import DPHawkesError
from dphawkes_core.privacy.accounting import Mechanism, PureDpEvent, compose_epsilon

DELTA = 1e-5


def gdp_epsilon(mu: float, delta: float) -> float:
    """ε of a μ-GDP mechanism at δ: Balle & Wang's δ(ε) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2), solved by scipy."""
    return brentq(lambda e: norm.cdf(-e / mu + mu / 2) - math.exp(e) * norm.cdf(-e / mu - mu / 2) - delta,
                  0.0, 500.0, xtol=1e-12)


def test_nested_gaussian_events_compose_to_one_gaussian():
    """A composed event of a self-composed Gaussian and a single one is one Gaussian of μ² = 7/3² + 1/2²."""
    nested = dp_event.ComposedDpEvent([dp_event.SelfComposedDpEvent(dp_event.GaussianDpEvent(3.0), 7),
                                       dp_event.GaussianDpEvent(2.0)])
    assert compose_epsilon([nested], DELTA) == pytest.approx(gdp_epsilon(math.sqrt(7 / 9 + 1 / 4), DELTA), rel=1e-6)
    # a ledger's labelled entries are the same events
    entries = [Mechanism("gaussian", 3.0, 7, "gradients"), Mechanism("gaussian", 2.0, 1, "cap")]
    assert compose_epsilon(entries, DELTA) == compose_epsilon([nested], DELTA)


def test_gaussian_and_laplace_events_match_dp_accountings_pld_accountant():
    events = [dp_event.SelfComposedDpEvent(dp_event.GaussianDpEvent(20.0), 30),
              dp_event.SelfComposedDpEvent(dp_event.LaplaceDpEvent(15.0), 2)]
    accountant = PLDAccountant(value_discretization_interval=1e-4)
    accountant.compose(dp_event.ComposedDpEvent(events))
    assert compose_epsilon(events, DELTA) == pytest.approx(accountant.get_epsilon(DELTA), rel=0.01)


def test_a_zcdp_event_composes_everything_in_zcdp_as_the_rdp_accountant():
    """A discrete Gaussian release (ρ-zCDP) with a continuous one: ρ adds up, the same conversion as
    dp-accounting's RDP accountant on a dense grid of orders (never below it on its default orders)."""
    events = [dp_event.ZCDpEvent(0.02), dp_event.SelfComposedDpEvent(dp_event.GaussianDpEvent(10.0), 4)]
    ours = compose_epsilon(events, DELTA)
    default = rdp.RdpAccountant()
    default.compose(dp_event.ComposedDpEvent(events))
    dense = rdp.RdpAccountant(orders=list(1.0 + np.exp(np.linspace(-9, 12, 20000))))
    dense.compose(dp_event.ComposedDpEvent(events))
    assert ours <= default.get_epsilon(DELTA) * (1 + 1e-12)
    assert ours == pytest.approx(dense.get_epsilon(DELTA), rel=1e-6)
    # the discrete Gaussian is not μ-GDP: composed in zCDP, the total is above the GDP composition
    mu = math.sqrt(2 * 0.02 + 4 / 100)
    assert ours > gdp_epsilon(mu, DELTA)


def test_a_pure_step_costs_its_epsilon_and_nothing_costs_nothing():
    assert compose_epsilon([PureDpEvent(0.3)], DELTA) == pytest.approx(0.3, abs=2e-3)
    assert compose_epsilon([PureDpEvent(0.3), dp_event.GaussianDpEvent(5.0)], DELTA) > compose_epsilon(
        [dp_event.GaussianDpEvent(5.0)], DELTA)
    assert compose_epsilon([], DELTA) == 0.0 == compose_epsilon([dp_event.NoOpDpEvent()], DELTA)


@pytest.mark.parametrize("event", [
    dp_event.PoissonSampledDpEvent(0.1, dp_event.GaussianDpEvent(1.0)),  # subsampling: not what a fit does
    dp_event.ZCDpEvent(0.1, xi=0.5),  # approximate zCDP
    dp_event.GaussianDpEvent(0.0),
])
def test_an_event_the_accountant_cannot_compose_is_refused(event):
    with pytest.raises(DPHawkesError):
        compose_epsilon([event], DELTA)
