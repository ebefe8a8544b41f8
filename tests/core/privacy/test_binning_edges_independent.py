"""Bin edges against an exact rational reference written here, with the edge tolerance pinned as a literal.

docs (binning.py's module docstring): bin k (0-based) is ``[kΔ, (k+1)Δ)``, compared in exact arithmetic, and
"a time within EDGE_ULPS units in the last place of t below an edge counts as on it, which absorbs only
representation error (0.3 written in a file is 3 × 0.1 to the user) — never a fraction of a bin". The
documented tolerance is **4 ulps**. So the bin of t is ``⌊(t + 4·ulp(t)) / Δ⌋`` with t, Δ and ulp(t) taken
as the exact rationals their floats stand for. The reference below computes exactly that with
``fractions.Fraction`` and ``math.ulp`` (no numpy, nothing from the package); the tolerance is NOT imported
from the package, so a changed ``EDGE_ULPS`` (e.g. 4096) fails here.

Times are placed on edges ``kΔ`` (the float nearest the exact edge, and exact edges for a binary Δ) and
1, 4, 5 and 4096 ulps below and above them, from ``k = 1`` to ``k ≈ 10¹²``.
"""

import math
from fractions import Fraction

import numpy as np
import pytest

from dphawkes_core.data.io import Events, EventSequence
from dphawkes_core.statistics.binning import bin_index, bin_sparse, bins_in_window

DOCUMENTED_EDGE_ULPS = 4  # the documented tolerance, pinned here on purpose (not imported)
STEPS = (0, 1, 4, 5, 4096)


def reference_bin(t: float, delta: float) -> int:
    """``⌊(t + 4·ulp(t)) / Δ⌋`` in exact rational arithmetic."""
    shifted = Fraction(t) + DOCUMENTED_EDGE_ULPS * Fraction(math.ulp(t))
    return math.floor(shifted / Fraction(delta))


def stepped(t: float, steps: int, direction: float) -> float:
    """The float ``steps`` representable numbers away from t (toward ``direction``)."""
    for _ in range(steps):
        t = math.nextafter(t, direction)
    return t


def edge_times(delta: float, ks) -> list[tuple[int, int, float]]:
    """``(k, signed steps, t)``: the float nearest each exact edge kΔ, and 1, 4, 5, 4096 floats below/above it."""
    out = []
    for k in ks:
        on_edge = float(k * Fraction(delta))  # correctly rounded exact edge
        for s in STEPS:
            out.append((k, -s, stepped(on_edge, s, 0.0)))
            if s:
                out.append((k, s, stepped(on_edge, s, math.inf)))
    return [(k, s, t) for k, s, t in out if t >= 0]


KS = (1, 3, 10, 17, 1000, 123_457, 10**6 + 3, 10**9 + 7, 10**12 + 39)


@pytest.mark.parametrize("delta", [0.1, 0.03, 1.0, 7.3, 1e-3, 0.25])
def test_bin_index_matches_the_exact_rational_reference_around_edges(delta):
    cases = edge_times(delta, KS)
    t = np.array([c[2] for c in cases])
    expected = np.array([reference_bin(c[2], delta) for c in cases])
    got = bin_index(t, delta)
    bad = [(k, s, x, int(g), int(e)) for (k, s, x), g, e in zip(cases, got, expected) if g != e]
    assert not bad, bad[:5]


def test_an_exact_edge_and_four_ulps_below_it_are_on_the_edge_five_are_not():
    """Δ = 0.25 is exact in binary, so the edges kΔ are exact floats: t on the edge is in bin k, and so is
    a time 1 or 4 ulps below it (t + 4 ulp(t) reaches the edge); 5 or 4096 ulps below is in bin k − 1."""
    delta = 0.25
    checked = 0
    for k in (1, 4, 37, 1000, 10**6 + 1):
        edge = k * delta
        assert Fraction(edge) == k * Fraction(delta)
        below = {s: stepped(edge, s, 0.0) for s in (1, 4, 5, 4096)}
        if math.ulp(below[4096]) != math.ulp(edge):
            continue  # the steps must stay in one binade for "4 ulps" to be unambiguous
        got = bin_index(np.array([edge, below[1], below[4], below[5], below[4096], stepped(edge, 1, math.inf)]),
                        delta)
        assert list(got) == [k, k, k, k - 1, k - 1, k], k
        checked += 1
    assert checked >= 3


def test_representation_error_is_absorbed():
    """0.3 / 0.1 is 2.9999999999999996 in floating point; 0.3 is on the edge 3Δ for the user."""
    assert bin_index(np.array([0.3, 0.7, 1.1]), 0.1).tolist() == [3, 7, 11]
    assert [reference_bin(x, 0.1) for x in (0.3, 0.7, 1.1)] == [3, 7, 11]


def test_never_a_fraction_of_a_bin_at_large_t_over_delta():
    """At t/Δ ≈ 10¹² (Δ = 1) an ulp of t is 1.2·10⁻⁴, so 4096 ulps are half a bin: a time 0.45 below an
    edge must stay in its own bin. 4 ulps are 5·10⁻⁴ of a bin."""
    edge = float(10**12 + 39)
    t = edge - 0.45
    assert 4096 * math.ulp(t) > 0.45 and DOCUMENTED_EDGE_ULPS * math.ulp(t) < 1e-3
    assert bin_index(np.array([t]), 1.0)[0] == 10**12 + 38 == reference_bin(t, 1.0)


def _events(times, end_time):
    """Events built directly (the times reach the binning bit for bit)."""
    return Events(sequences=(EventSequence(times=(np.asarray(times, dtype=float),), end_time=end_time),),
                  names=("0",), window_stated=True)


@pytest.mark.parametrize("delta", [0.1, 0.03, 0.25])
def test_binned_counts_and_window_follow_the_reference(delta):
    """Through the data path (bin_sparse): every time around the edges of a window of 40 bins is counted in
    the reference's bin, events at or after the last complete bin are dropped, and the number of bins is
    the reference's bin of the window end."""
    first = 10**6
    ks = range(first, first + 40)
    cases = edge_times(delta, ks)
    times = [c[2] for c in cases]
    offset = float(first * Fraction(delta))  # window [0, T] starts at 0; all times lie near bins 10⁶ .. 10⁶+39
    end = float((first + 40) * Fraction(delta))
    n_bins = reference_bin(end, delta)
    assert bins_in_window(end, delta) == n_bins
    counts = bin_sparse(_events(times, end), delta)
    expected = np.zeros(n_bins, dtype=np.int64)
    dropped = 0
    for t in times:
        k = reference_bin(t, delta)
        if k < n_bins:
            expected[k] += 1
        else:
            dropped += 1
    got = np.zeros(n_bins, dtype=np.int64)
    got[counts.bins[0]] = counts.values[0]
    assert counts.lengths[0] == n_bins and offset > 0
    np.testing.assert_array_equal(got, expected)
    assert counts.dropped_events == dropped
