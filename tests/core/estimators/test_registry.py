"""The registry's non-private reference: the maximum likelihood beside a family that fits exact event times, CLS
beside a binned one and where no family is named (the binned families' shared statistics are keyed on it)."""

from __future__ import annotations

import pytest

from dphawkes_core.estimators import FitConfig, get_family
from dphawkes_core.estimators.registry import FAMILIES, reference_method


@pytest.mark.parametrize("name", list(FAMILIES))
def test_the_reference_fits_the_same_kind_of_data_and_adds_no_noise(name):
    family = get_family(name)
    reference = get_family(reference_method(family))
    assert not reference.privacy.private
    assert reference.fits_event_times == family.fits_event_times
    assert reference_method(family) == ("mle" if family.fits_event_times else "cls")


def test_without_a_family_the_reference_is_cls_and_keys_the_binned_statistics():
    assert reference_method() == "cls"
    key = FitConfig(method="ssp", bin_size=0.5, lags=4, epsilon=1.0, calibration="formal", count_cap=3).statistics_key()
    assert key.method == "cls"
