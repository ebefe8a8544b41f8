"""The σ² = 0 line of the Estimate page is named by the family's own noiseless limit: ctls and exp without noise
are their own least squares on exact times, not the binned CLS."""

import pytest

from dphawkes_app.estimate.references import noiseless_label
from dphawkes_core.estimators import FitConfig, get_family


@pytest.mark.parametrize("method, limit", [("ctls", "continuous least squares"),
                                           ("exp", "exponential least squares"),
                                           ("pgd", "projected gradient"),
                                           ("ssp", "CLS")])
def test_the_noiseless_line_names_the_family_own_limit(method, limit):
    options = {"exp": {"decays": (1.0,)}, "pgd": {"bound": 1.0}}.get(method, {})
    calibration = "formal" if get_family(method).formal_only else "paper"
    config = FitConfig(method=method, bin_size=0.5, lags=4, epsilon=1.0, calibration=calibration, **options)
    label = noiseless_label(config)
    assert label.startswith(f"{get_family(method).label} with σ² = 0: {limit},")
    if get_family(method).fits_event_times:
        assert "CLS" not in label
