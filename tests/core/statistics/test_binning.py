"""Binning conventions, dropped events, clipping, and robust lag computation."""

from fractions import Fraction

import numpy as np
import pytest

from dphawkes_core.data.io import from_arrays
from dphawkes_core.errors import ConfigError
from dphawkes_core.statistics.binning import EDGE_ULPS, bin_events, bin_index, bins_in_window, lags_from_support


def test_lags_are_robust_to_floating_point():
    assert 0.9 / 0.03 > 30 and 0.3 / 0.1 < 3  # the traps themselves
    assert lags_from_support(3, 0.1) == 30
    assert lags_from_support(0.9, 0.03) == 30
    assert lags_from_support(5, 0.03) == 167
    assert lags_from_support(0.3, 0.1) == 3
    assert lags_from_support(0.31, 0.1) == 4
    assert bins_in_window(0.3, 0.1) == 3


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


def reference_bin(t: float, delta: float) -> int:
    """Independent reference: exact rational ⌊(t + EDGE_ULPS·ulp(t)) / Δ⌋ with Python's Fraction."""
    shifted = Fraction(t) + EDGE_ULPS * Fraction(float(np.spacing(t)))
    return int(shifted // Fraction(delta))


@pytest.mark.parametrize("delta", [0.1, 0.03, 1.0, 7.3, 1e-3])
@pytest.mark.parametrize("scale", [1e0, 1e3, 1e6, 1e8, 1e10])
def test_bin_index_matches_exact_rational_reference_up_to_1e10_bins(delta, scale):
    rng = np.random.default_rng(int(scale) % 9973 + int(delta * 1000))
    k = np.floor(rng.uniform(0, scale, 400))
    # times on, just below and just above the edges kΔ, and uniformly inside bins
    edges = k * delta
    t = np.concatenate([edges, np.nextafter(edges, 0), np.nextafter(edges, np.inf),
                        edges - 8 * np.spacing(edges), edges - 2 * np.spacing(edges),
                        edges + rng.uniform(0, delta, edges.size)])
    t = t[t >= 0]
    expected = np.array([reference_bin(float(x), delta) for x in t])
    np.testing.assert_array_equal(bin_index(t, delta), expected)


def test_representation_error_counts_as_on_the_edge_but_a_fraction_of_a_bin_never_does():
    assert bin_index(np.array([0.3]), 0.1)[0] == 3  # float 0.3 < 3·float(0.1): still the edge
    # the old relative 1e-9 tolerance moved events 1e-3 of a bin early at t/Δ ≈ 1e6 into the next bin
    t = 1e6 * 0.03 - 0.03 * 1e-3
    assert bin_index(np.array([t]), 0.03)[0] == 999_999
    # epoch-second times: half a bin below an edge stays in its bin
    t = 1.7e9 + 0.05
    assert bin_index(np.array([t - 0.1]), 0.1)[0] == reference_bin(t - 0.1, 0.1)


def test_binned_counts_match_an_independent_loop_on_epoch_scale_times():
    rng = np.random.default_rng(3)
    delta, start_bin = 0.1, 10_000_000  # t ≈ 1e6 (t/Δ ≈ 1e7): the old tolerance was 1 % of a bin there
    offsets = rng.choice([0.0, 0.05, delta - 5e-4], 3000)  # on an edge, mid-bin, 0.5 % of a bin below an edge
    times = np.sort((start_bin + rng.integers(0, 500, 3000)) * delta + offsets)
    end = (start_bin + 500) * delta
    binned = bin_events(from_arrays([times], end_time=end), delta)
    expected = np.zeros(bins_in_window(end, delta), dtype=np.int64)
    for x in times:
        k = reference_bin(float(x), delta)
        if k < expected.size:
            expected[k] += 1
    np.testing.assert_array_equal(binned.counts[0][:, 0], expected)
