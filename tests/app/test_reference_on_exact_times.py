"""The Estimate page's non-private reference: the maximum likelihood on the same events beside a fit on exact event
times (the best non-private fit there), CLS on the same counts beside a binned fit; with the shown fit's Δ and p, on
every event: no count cap, whatever C the private fit chose (issue 43: a reference clipped at a privately chosen C
moved with ε)."""

from types import SimpleNamespace

import pytest

from dphawkes_app.estimate.references import reference_config
from dphawkes_core.estimators import FitConfig


@pytest.mark.parametrize("method, options, reference", [("ctls", {}, "mle"), ("exp", {"decays": (1.0,)}, "mle"),
                                                         ("ssp", {}, "cls")])
def test_the_reference_is_the_maximum_likelihood_on_exact_times_and_cls_on_counts(method, options, reference):
    config = FitConfig(method=method, bin_size=0.5, lags=4, epsilon=1.0, calibration="formal", **options)
    shown = SimpleNamespace(config=config, data_info={"count_cap": 3})
    got = reference_config(shown)
    assert (got.method, got.bin_size, got.lags, got.count_cap) == (reference, 0.5, 4, None)
    assert not got.family.privacy.private
