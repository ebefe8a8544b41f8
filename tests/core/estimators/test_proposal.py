"""The proposal rule: one branch per measured case, from public facts only (its inputs are the privacy of the fit,
the declared kernel shape and a size), and every figure its reasons rest on is in docs/accuracy.md."""

from pathlib import Path

import pytest

from dphawkes_core.errors import ConfigError
from dphawkes_core.estimators import FitConfig, get_family
from dphawkes_core.estimators.proposal import CTLS_FROM, DELAYED, DERIVED_FROM, SMOOTH, UNKNOWN, propose_family


@pytest.mark.parametrize("private, kernels, events, method", [
    (False, SMOOTH, None, "exp"), (False, DELAYED, 10**6, "mle"), (False, UNKNOWN, None, "mle"),
    (True, SMOOTH, 100, "exp"), (True, SMOOTH, None, "exp"), (True, SMOOTH, DERIVED_FROM, "exp"),
    (True, DELAYED, CTLS_FROM, "ctls"),
    (True, UNKNOWN, 10**6, "ctls"), (True, DELAYED, CTLS_FROM - 1, "ssp"), (True, UNKNOWN, None, "ssp"),
])
def test_one_branch_per_case(private, kernels, events, method):
    proposal = propose_family(private, kernels, events)
    assert proposal.method == method
    formal = {"calibration": "formal", "epsilon": 1.0, "count_cap": 2} if private else {}
    config = FitConfig(method=method, bin_size=1.0, lags=2, **{**formal, **proposal.options})  # a config that exists
    assert config.family.privacy.private == private or (config.sigma2 == 0 and not private)
    if method == "exp" and not private:
        assert config.exp_likelihood and config.sigma2 == 0
    if method == "exp" and private:  # the derived Gram from the size it was measured better at, stated
        derived = events is not None and events >= DERIVED_FROM
        expected = ("differences", "derived") if derived else ("decays", "released")
        assert (config.exp_basis, config.exp_gram) == expected


def test_a_shape_that_is_not_one_of_the_three_is_refused():
    with pytest.raises(ConfigError, match="declared"):
        propose_family(True, "wiggly")


def test_the_measurements_it_quotes_are_in_the_accuracy_page():
    import dphawkes_core.estimators.proposal as rule

    docs = (Path(__file__).parents[3] / "docs" / "accuracy.md").read_text()
    section = docs.split("## Which family predicts: the proposal rule")[1].split("\n## ")[0]
    for figure in ("0.221", "0.332", "0.456", "0.135", "0.247", "0.100", "0.117", "0.130", "0.166"):
        assert figure in rule.__doc__ and figure in section, figure
    assert get_family("ctls") and f"{CTLS_FROM:,}" in section
