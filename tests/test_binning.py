"""Binning conventions, dropped events, clipping, and robust lag computation."""

import numpy as np
import pytest

from dphawkes_core.binning import bin_events, lags_from_support, robust_floor
from dphawkes_core.errors import ConfigError
from dphawkes_core.events import from_arrays


def test_lags_are_robust_to_floating_point():
    assert 0.9 / 0.03 > 30 and 0.3 / 0.1 < 3  # the traps themselves
    assert lags_from_support(3, 0.1) == 30
    assert lags_from_support(0.9, 0.03) == 30
    assert lags_from_support(5, 0.03) == 167
    assert lags_from_support(0.3, 0.1) == 3
    assert lags_from_support(0.31, 0.1) == 4
    assert robust_floor(0.3 / 0.1) == 3


def test_bins_are_left_closed_and_tail_events_dropped():
    # T = 1.0, Δ = 0.3 -> n = 3 bins [0,.3) [.3,.6) [.6,.9); events at >= 0.9 are dropped
    events = from_arrays([[0.0, 0.29999, 0.3, 0.6, 0.89, 0.9, 0.95]], end_time=1.0)
    binned = bin_events(events, 0.3)
    np.testing.assert_array_equal(binned.counts[0][:, 0], [2, 1, 2])
    assert binned.dropped_events == 2
    assert binned.n_events == 5


def test_clipping_counts_and_reports_removed_events():
    events = from_arrays([[0.1] * 5 + [1.1] * 2, [0.5]], end_time=2.0)
    binned = bin_events(events, 1.0, count_cap=3)
    np.testing.assert_array_equal(binned.counts[0], [[3, 1], [2, 0]])
    assert binned.clipped_events == 2


def test_absurd_bin_sizes_are_refused_before_allocation():
    events = from_arrays([[1.0, 1e6]], end_time=1e6)
    with pytest.raises(ConfigError, match="limit"):
        bin_events(events, 1e-5)
    with pytest.raises(ConfigError):
        bin_events(events, 0.0)
    with pytest.raises(ConfigError):
        bin_events(events, float("nan"))
