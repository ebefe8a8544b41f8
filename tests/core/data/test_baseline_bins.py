"""The parts a baseline that follows the clock is constant on: which part a time falls in, and how long an interval
spends in each, against a brute force on a fine grid (independent of the closed forms)."""

import numpy as np
import pytest

from dphawkes_core.data.baseline_bins import BaselineBins, BaselineProfile
from dphawkes_core.errors import ConfigError


def _brute_part(t, bins, start, end):
    """The part by the definition: the phase on the data's axis (or the place in the window) over a part's length."""
    if bins.period is None:
        return min(int(t // (end / bins.bins)), bins.bins - 1)
    return int(((t + start) % bins.period) // (bins.period / bins.bins))


@pytest.mark.parametrize("bins, start, end", [
    (BaselineBins(8, 24.0), 0.0, 100.0), (BaselineBins(7, 168.0), 30.5, 900.0), (BaselineBins(3, 2.5), -1.25, 11.0),
    (BaselineBins(5), 7.0, 13.0)])
def test_parts_and_time_in_each_part_match_a_fine_grid(bins, start, end):
    rng = np.random.default_rng(0)
    times = np.sort(rng.uniform(0, end, 500))
    assert bins.index(times, start, end).tolist() == [_brute_part(t, bins, start, end) for t in times]
    a, b = 0.13 * end, 0.91 * end
    grid = np.linspace(a, b, 2_000_001)
    middles = 0.5 * (grid[1:] + grid[:-1])
    brute = np.bincount(bins.index(middles, start, end), minlength=bins.bins) * (grid[1] - grid[0])
    np.testing.assert_allclose(bins.exposure(a, b, start, end), brute, atol=2 * (grid[1] - grid[0]))
    assert bins.exposure(a, b, start, end).sum() == pytest.approx(b - a, rel=1e-12)
    cuts, parts = bins.edges(a, b, start, end)
    assert cuts[0] == a and cuts[-1] == b and np.all(np.diff(cuts) > 0)
    assert np.all(np.diff(cuts) <= bins.part_length(end) * (1 + 1e-12))


def test_a_profile_reads_its_value_and_integral():
    profile = BaselineProfile(np.array([[1.0, 3.0], [0.5, 0.25]]), BaselineBins(2, 10.0))
    assert profile.at(np.array([1.0, 6.0, 12.0]), np.array([0, 0, 1]), 0.0, 30.0).tolist() == [1.0, 3.0, 0.5]
    # [2, 17): part 0 on [2, 5) and [10, 15), part 1 on [5, 10) and [15, 17)
    np.testing.assert_allclose(profile.integral(2.0, 17.0, 0.0, 30.0), [8 * 1 + 7 * 3, 8 * 0.5 + 7 * 0.25])
    constant = BaselineProfile.constant([0.2, 0.4])
    assert constant.bins.constant and constant.integral(1.0, 4.0, 5.0, 9.0).tolist() == pytest.approx([0.6, 1.2])


def test_bad_parts_are_refused():
    with pytest.raises(ConfigError, match="whole number >= 1"):
        BaselineBins(0)
    with pytest.raises(ConfigError, match="positive number"):
        BaselineBins(4, -24.0)
