"""The sequence unit's replace-one bound √2·G, the public G_M of a cap of M events per sequence, and the
selections' releases (the automatic count cap's tail counts, the automatic G's norm histogram), each measured
on adversarial neighbours through the package's code and checked against an independent reference written
here (per-sequence vectors from plain loops over the raw counts, tail counts by brute force), and each
formula against its documented form (docs/privacy.md, docs/sequence_privacy.md): a mutated formula either
falls below a measured change or no longer reaches the documented fraction.
"""

import math

import numpy as np
import pytest
from dp_accounting.gaussian_mechanism import get_sigma_gaussian

from dphawkes_core.privacy.calibration import compose_count_cap, compose_sequence_clip
from dphawkes_core.privacy.count_cap import cap_noise_sigma, dp_count_cap
from dphawkes_core.privacy.sequence import (
    clip_grid,
    clip_noise_sigma,
    clipped_sums,
    contribution_norms,
    dp_sequence_clip,
    max_events_clip,
    norm_histogram,
    pieces_vector,
    sequence_sensitivity,
)
from dphawkes_core.statistics.binning import BinnedCounts, SparseCounts, tail_counts

REL = 1e-9
D, P, C = 2, 3, 2

# docs/privacy.md, "A public G from M": a burst of M events at C in one dimension reaches 0.745·G_M (full
# release, M = 12) and 0.77·G_M (lagged release, M = 40), p = 3, C = 2. Measured here: 0.7453 and 0.7698 (the
# lagged one by M/C bins all at C: every bin is in C[τ] and the head and tail rows are at the cap too).
# Why not 1: the full bound lets the same M·c "energy" count fully in the lagged block, the intercept column
# and YZᵀ at once; the lagged bound lets it count fully in each C[τ] and in both edges (the packed sequence's
# edge rows hold p·c², not M·c).
G_M_FRACTION = {("full", 12): 0.7453, ("lagged", 40): 0.7698}
# Replace-one at G = G_M (nothing clipped), packed sequence in dimension 0 against the same in dimension 1
# (disjoint supports, <v, v'> = 0): ||v − v'|| = sqrt(||v||² + ||v'||²) = √2·||v||, so the fraction of √2·G_M
# is the G_M fraction above. Clipped at a G below both norms it is exactly 1.
G_M_REPLACE_FRACTION = {("full", 12): 0.7453, ("lagged", 40): 0.7698}


def _counts(*series, cap=C):
    return SparseCounts.from_binned(BinnedCounts(tuple(np.asarray(x, dtype=np.int64) for x in series), 1.0, 0, 0, cap))


def packed(dim, events, n=40, start=5, cap=C, d=D):
    """``events`` events at the cap in consecutive bins of one dimension (the norms' worst case)."""
    x = np.zeros((n, d), dtype=np.int64)
    x[start:start + events // cap, dim] = cap
    return x


# --- independent per-sequence vectors (plain loops over the raw counts) -----------------------------------


def full_vector(x, p):
    """Upper triangle of ``ZZᵀ_s`` (diagonal included, intercept corner excluded) and ``YZᵀ_s``."""
    n, d = x.shape
    q = d * p + 1
    zz = np.zeros((q, q))
    yz = np.zeros((d, q))
    for t in range(p, n):
        z = [float(x[t - lag, j]) for lag in range(1, p + 1) for j in range(d)] + [1.0]
        for r in range(q):
            for c in range(q):
                zz[r, c] += z[r] * z[c]
            for i in range(d):
                yz[i, r] += float(x[t, i]) * z[r]
    upper = [zz[r, c] for r in range(q) for c in range(r, q) if (r, c) != (q - 1, q - 1)]
    return np.concatenate([upper, yz.ravel()])


def lagged_vector(x, p):
    """Upper triangle of C[0], C[1..p], totals, upper triangles of the head and tail Gram matrices of the first
    and last p rows (flattened to pd numbers), and those rows."""
    n, d = x.shape
    lagged = np.zeros((p + 1, d, d))
    for tau in range(p + 1):
        for m in range(tau, n):
            for a in range(d):
                for c in range(d):
                    lagged[tau, a, c] += float(x[m, a] * x[m - tau, c])
    head = [float(x[m, j]) for m in range(p) for j in range(d)]
    tail = [float(x[m, j]) for m in range(n - p, n) for j in range(d)]
    gram = lambda h: [h[r] * h[c] for r in range(p * d) for c in range(r, p * d)]  # noqa: E731
    return np.concatenate([[lagged[0, a, c] for a in range(d) for c in range(a, d)], lagged[1:].ravel(),
                           x.sum(axis=0).astype(float), gram(head), gram(tail), head, tail])


VECTORS = {"full": full_vector, "lagged": lagged_vector}


def clip_to(v, g):
    norm = np.linalg.norm(v)
    return v * min(1.0, g / norm) if norm > 0 else v


def released_sum(series, p, g, release):
    """``Σ_s clip_G(v_s)`` as the package releases it (unnormalised)."""
    sums = clipped_sums(_counts(*series), p, g, release)
    if release == "lagged":
        return pieces_vector(sums.stats.summed_pieces)
    stats = sums.stats
    upper = stats.A[np.triu_indices(stats.n_params)][:-1]
    return np.concatenate([upper, stats.b.ravel()]) * stats.n_rows


# --- tests ------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("release", ["full", "lagged"])
def test_package_norms_are_the_independent_vectors(release):
    rng = np.random.default_rng(1)
    series = [np.minimum(rng.poisson(rate, (n, D)), C) for n, rate in ((12, 0.5), (P + 1, 2.0), (9, 3.0))]
    series += [packed(0, 12, n=15), np.zeros((10, D), dtype=np.int64)]
    expected = [np.linalg.norm(VECTORS[release](x, P)) for x in series]
    np.testing.assert_allclose(contribution_norms(_counts(*series), P, release), expected, rtol=1e-12)


@pytest.mark.parametrize("release", ["full", "lagged"])
def test_replace_one_change_is_exactly_root2_g_when_both_are_clipped(release):
    """Background sequences, then the replaced one: a packed burst in dimension 0 against one in dimension 1,
    both clipped at G: disjoint supports, so ``||Σ' − Σ|| = √2·G`` exactly (fraction 1); the same difference
    from the independent vectors; random and other adversarial replacements never exceed √2·G."""
    rng = np.random.default_rng(2)
    background = [np.minimum(rng.poisson(0.5, (20, D)), C) for _ in range(3)]
    a, b = packed(0, 12, n=20), packed(1, 12, n=20)
    g = 0.5 * min(np.linalg.norm(VECTORS[release](a, P)), np.linalg.norm(VECTORS[release](b, P)))
    n_rows = sum(len(x) - P for x in background) + 20 - P
    bound = sequence_sensitivity(g, n_rows) * n_rows
    change = np.linalg.norm(
        released_sum(background + [a], P, g, release) - released_sum(background + [b], P, g, release)
    )
    independent = np.linalg.norm(clip_to(VECTORS[release](a, P), g) - clip_to(VECTORS[release](b, P), g))
    assert change == pytest.approx(independent, rel=1e-9)
    assert change / bound == pytest.approx(1.0, abs=1e-9)
    candidates = [a, b, np.zeros((20, D), dtype=np.int64), np.full((20, D), C), packed(1, 12, n=20, start=0)]
    candidates += [np.minimum(rng.poisson(r, (20, D)), C) for r in (0.3, 1.0, 4.0)]
    base = released_sum(background + [a], P, g, release)
    for x in candidates:
        assert np.linalg.norm(released_sum(background + [x], P, g, release) - base) <= bound * (1 + REL)


def test_sequence_sensitivity_is_root2_g_over_n():
    """Not the generic 2G (the contributions are entrywise >= 0) and not G (disjoint supports reach √2·G)."""
    for g, n_rows in ((1.0, 1), (7.5, 123), (0.3, 10_000)):
        assert sequence_sensitivity(g, n_rows) == pytest.approx(math.sqrt(2.0) * g / n_rows, rel=1e-15)


def documented_g_m(p, m, cap, release):
    """docs/sequence_privacy.md: ``M·√((p c² + 1)(p + 1))`` (full), ``√((p + 3)c²M² + M² + 2cM)`` (lagged),
    ``c = min(C, M)``."""
    c = min(cap, m) if cap is not None else m
    if release == "full":
        return m * math.sqrt((p * c * c + 1) * (p + 1))
    return math.sqrt((p + 3) * c * c * m * m + m * m + 2 * c * m)


@pytest.mark.parametrize("release", ["full", "lagged"])
def test_g_m_is_the_documented_formula(release):
    for p, m, cap in ((1, 1, 1), (3, 12, 2), (4, 40, 3), (8, 60, 3), (2, 3, 10), (5, 7, None)):
        assert max_events_clip(p, m, cap, release) == pytest.approx(documented_g_m(p, m, cap, release), rel=1e-14)
    # the documented numbers: 544.1 / 320.4 at p = 4, M = 40, C = 3; 1538 / 600.3 at p = 8, M = 60, C = 3
    assert max_events_clip(4, 40, 3, "full") == pytest.approx(544.1, abs=0.05)
    assert max_events_clip(4, 40, 3, "lagged") == pytest.approx(320.4, abs=0.05)
    assert max_events_clip(8, 60, 3, "full") == pytest.approx(1538, abs=0.5)
    assert max_events_clip(8, 60, 3, "lagged") == pytest.approx(600.3, abs=0.05)


@pytest.mark.parametrize("release, m", [("full", 12), ("lagged", 40)])
def test_g_m_bounds_every_sequence_of_m_events_and_a_packed_one_reaches_the_documented_fraction(release, m):
    g_m = max_events_clip(P, m, C, release)
    rng = np.random.default_rng(3)
    candidates = [packed(0, m), packed(1, m, start=0), packed(0, m, n=m // C, start=0)]
    for n in (P + 1, 2 * P, 2 * P + 1, 30):  # short sequences: the edges overlap
        for _ in range(25):
            x = np.zeros((n, D), dtype=np.int64)
            np.add.at(x, (rng.integers(0, n, m), rng.integers(0, D, m)), 1)
            candidates.append(np.minimum(x, C))
        x = np.zeros((n, D), dtype=np.int64)  # as many events at the cap as M allows, both dimensions, from bin 0
        flat = x.reshape(-1)
        flat[: min(m // C, flat.size)] = C
        candidates.append(x)
    norms = []
    for x in candidates:
        assert x.sum() <= m
        norms.append(float(contribution_norms(_counts(x), P, release)[0]))
        assert norms[-1] == pytest.approx(np.linalg.norm(VECTORS[release](x, P)), rel=1e-12)
    assert max(norms) <= g_m * (1 + REL)
    assert max(norms) / g_m >= G_M_FRACTION[(release, m)]


@pytest.mark.parametrize("release, m", [("full", 12), ("lagged", 40)])
def test_replace_one_at_g_m_reaches_the_documented_fraction(release, m):
    g_m = max_events_clip(P, m, C, release)
    background = [np.minimum(np.random.default_rng(4).poisson(0.4, (40, D)), C)]
    # the largest norms: full, a burst inside a longer window; lagged, M/C bins all at C (edges at the cap too)
    layout = dict(n=40, start=5) if release == "full" else dict(n=m // C, start=0)
    a, b = (packed(dim, m, **layout) for dim in (0, 1))
    change = np.linalg.norm(released_sum(background + [a], P, g_m, release)
                            - released_sum(background + [b], P, g_m, release))
    ratio = change / (sequence_sensitivity(g_m, 1) * 1)
    assert ratio <= 1 + REL
    assert ratio >= G_M_REPLACE_FRACTION[(release, m)]


def brute_tails(values, max_cap):
    return np.array([sum(1 for v in values if v >= c) for c in range(1, max_cap + 1)], dtype=float)


def test_tail_counts_change_by_exactly_one_entry_by_exactly_one():
    """The automatic count cap's release (sensitivity 1): for every neighbour that adds an event to a count v,
    ``T[v+1]`` moves by 1 and nothing else (fraction 1 of the bound); at or above the public range nothing
    moves. Against a brute-force count of the raw values."""
    max_cap = 5
    x = np.array([[0, 4], [5, 7], [1, 0], [4, 4], [2, 3]], dtype=np.int64)
    base = tail_counts(BinnedCounts((x,), 1.0, 0, 0, None), max_cap)
    np.testing.assert_array_equal(base, brute_tails(np.minimum(x, max_cap).ravel(), max_cap))
    ratios = []
    for m in range(x.shape[0]):
        for j in range(x.shape[1]):
            x2 = x.copy()
            x2[m, j] += 1
            diff = tail_counts(BinnedCounts((x2,), 1.0, 0, 0, None), max_cap) - base
            np.testing.assert_array_equal(diff, brute_tails(np.minimum(x2, max_cap).ravel(), max_cap)
                                          - brute_tails(np.minimum(x, max_cap).ravel(), max_cap))
            ratios.append(np.linalg.norm(diff) / 1.0)
            if x[m, j] < max_cap:
                assert np.count_nonzero(diff) == 1 and diff[x[m, j]] == 1
            else:
                assert not diff.any()
    assert max(ratios) == 1.0


def test_count_cap_noise_is_the_sensitivity_one_gaussian_at_its_share():
    for eps, delta, share in ((1.0, 1e-5, 0.05), (4.0, 1e-6, 0.2), (0.5, 1e-3, 0.5)):
        expected = get_sigma_gaussian(share * eps, delta)
        assert cap_noise_sigma(eps, delta, share) == pytest.approx(expected, rel=1e-12)
        x = np.array([[3, 0], [1, 2]], dtype=np.int64)
        auto = dp_count_cap(BinnedCounts((x,), 1.0, 0, 0, None), eps, delta, np.random.default_rng(0), share)
        assert auto.sigma == pytest.approx(expected, rel=1e-12)
    assert cap_noise_sigma(1.0, 1e-5, 0.05) == pytest.approx(57.8, abs=0.05)  # docs/privacy.md


@pytest.mark.parametrize("releases, share", [(1, 0.05), (1, 0.3), (20, 0.05)])
def test_selection_and_release_compose_to_exactly_the_budget(releases, share):
    """μ-GDP adds in squares: ``1/m_cap² + K·(S/σ)² = 1/z(ε, δ)²`` for the count cap (K releases) and the
    sequence clip (one release), whose selection has the count cap's noise multiplier."""
    eps, delta, sens = 1.0, 1e-5, 0.37
    z = get_sigma_gaussian(eps, delta)
    sigma, split = compose_count_cap(eps, delta, sens, releases, share, 3)
    assert split.cap_sigma == pytest.approx(get_sigma_gaussian(share * eps, delta), rel=1e-12)
    assert 1 / split.cap_sigma ** 2 + releases * (sens / sigma) ** 2 == pytest.approx(1 / z**2, rel=1e-9)
    assert split.epsilon_total == pytest.approx(eps, rel=1e-9)
    if releases == 1:
        sigma_seq, split_seq = compose_sequence_clip(eps, delta, sens, share, 5.0)
        assert sigma_seq == pytest.approx(sigma, rel=1e-12) and split_seq.sequence_clip == 5.0
        if share == 0.05:  # docs/privacy.md: 3.738 instead of 3.731 at ε = 1
            assert sigma / sens == pytest.approx(3.738, abs=5e-4) and z == pytest.approx(3.731, abs=5e-4)


@pytest.mark.parametrize("release", ["full", "lagged"])
def test_norm_histogram_replace_one_moves_exactly_root2(release):
    """G's release: the packed sequence (top bucket) replaced by the empty one (bottom bucket) moves the
    histogram by exactly √2 (fraction 1); its noise is √2·z(share·ε, δ)."""
    m = 12
    top = max_events_clip(P, m, C, release)
    grid = clip_grid(top)
    others = [np.minimum(np.random.default_rng(5).poisson(0.2, (30, D)), C) for _ in range(3)]
    hist = [norm_histogram(contribution_norms(_counts(*others, last), P, release), grid)
            for last in (packed(0, m, n=30), np.zeros((30, D), dtype=np.int64))]
    assert np.linalg.norm(hist[0] - hist[1]) == pytest.approx(math.sqrt(2.0), rel=1e-15)
    for eps, delta, share in ((1.0, 1e-5, 0.05), (3.0, 1e-6, 0.25)):
        expected = math.sqrt(2.0) * get_sigma_gaussian(share * eps, delta)
        assert clip_noise_sigma(eps, delta, share) == pytest.approx(expected, rel=1e-12)
        auto = dp_sequence_clip(np.array([1.0, 2.0]), top, eps, delta, np.random.default_rng(0), share)
        assert auto.sigma == pytest.approx(expected, rel=1e-12)
