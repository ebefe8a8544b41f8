"""Event-unit sensitivities on ALL-AT-CAP adversarial neighbours, through the code that runs, against an
independent dense reference.

For every release the formal calibration covers — DP-SSP's ``full`` release (upper triangle of A without the
public corner, and b), DP-SSP's ``lagged`` release (C[0..p], totals, edge rows), the noisy gradient
``(UA − b)A`` of DP-PGD / DP-CG at the worst U of the constraint set, and pgd-clip's clipped per-bin gradient
sum — each test

* builds count series where every bin is at the cap C and a neighbour that differs by one event at the first
  bin, the last head bin, the first target bin, a middle bin, the first tail bin and the last bin (both
  orders: an event added and removed; and 0 → 1 in an otherwise saturated series);
* measures the L2 change of the released numbers as the package computes them, after checking them against a
  design ``Z``, ``Y`` built here with plain loops from the raw count array (not from the package's binning or
  statistics code);
* asserts ``measured <= bound·(1 + 1e-9)`` and ``measured >= fraction·bound``.

The fractions are the issue's documented ones where the worst case reaches them (0.91 for the gradient bounds
and the full release, 1.0 to 1e-9 for the lagged release). Where it does not, the real achievable fraction
was measured (all-at-cap pairs at every position were the best pairs; a hill-climb over the counts from
random starts found nothing better, and the worst U is found exactly by solving the trust-region problem
below) and is pinned per (d, p, C) in the tables, with the reason next to them: a bound made looser fails the
pin, a bound made tighter than the worst case fails ``measured <= bound``.
"""

import math

import numpy as np
import pytest

from dphawkes_core.estimators import binned_stats, clipped_gradient, per_bin_design, run_dp_pgd
from dphawkes_core.estimators.clipped import pgd_clip_sensitivity  # each family's sensitivity beside its fit
from dphawkes_core.estimators.gradient import GradientOperator, formal_bounds
from dphawkes_core.estimators.releases import noisy_statistics, ssp_sensitivity
from dphawkes_core.estimators.ssp import release_pieces, released_stats, ssp_lagged_sensitivity
from dphawkes_core.statistics.binning import BinnedCounts

# (d, p, C): the issue's d = 1, p = 6, C = 2 and other small settings; n = 3p + 2 bins (a middle bin exists)
CASES = [(1, 1, 1), (1, 3, 1), (1, 6, 2), (1, 2, 3), (2, 2, 1), (2, 3, 2), (3, 2, 2)]
REL = 1e-9  # measured <= bound·(1 + REL): float64 rounding only

DOC_FULL_SSP_FRACTION = 0.91  # docs/privacy.md: "the worst ratio is 0.91" (full release)
DOC_GRADIENT_FRACTION = 0.91  # docs/privacy.md (DP-PGD / DP-CG)
DOC_LAGGED_FRACTION = 1.0  # attained to 1e-9 by a middle bin with every count at C

# Full DP-SSP release, best all-at-cap pair, measured / ssp_sensitivity (floored at 4 decimals).
# d = 1 reaches the documented 0.91 (0.935-0.994). d >= 2 does not, and cannot: the bound uses
# ||M̄ + M̄ᵀ||_F <= 2||M̄||_F, i.e. <M̄, M̄ᵀ> = tr(M̄²) <= ||M̄||²_F, but tr(M̄²) only involves the entries of
# dimension j (the changed one), about 1/d of ||M̄||²_F, so the A part is loose by about sqrt((1 + 1/d)/2)
# for d >= 2 (slack in the bound, not a privacy bug: the bound still holds).
FULL_SSP_FRACTION = {(1, 1, 1): 0.9354, (1, 3, 1): 0.9548, (1, 6, 2): 0.9925, (1, 2, 3): 0.9938,
                     (2, 2, 1): 0.8980, (2, 3, 2): 0.9096, (3, 2, 2): 0.8924}

# DP-PGD gradient at the exact worst U on the ball ||U||_F <= β (trust-region solution), measured / bound.
# The documented 0.91 is reached only for d = 1 with large p·C² (0.91 at d = 1, p = 5, C = 3 and beyond).
# At small p and for d >= 2 the bound 2βM_A·D_A + M_b·D_A + M_A·D_b is loose, for three reasons that the
# measurement separates: (i) D_A = √p(2 z_max + 1)/N is a triangle-inequality bound whose two cross terms
# EZᵀ and ZEᵀ are not aligned (measured ||ΔA||_F is 0.45-0.87 of D_A here; the SSP derivation's
# 2√p·z̄/N is already smaller); (ii) it is used as an operator-norm bound (||XΔA||_F <= ||X||_F ||ΔA||_op
# <= ||X||_F ||ΔA||_F) although ΔA = M̄ + M̄ᵀ has rank 2 with eigenvalues of both signs, so
# ||ΔA||_op < ||ΔA||_F unless M̄ is nearly rank one and symmetric, which needs d = 1; (iii) D_b's two terms
# are not aligned for d >= 2 (0.86 of D_b at d = 2). Not a privacy bug (every measured change is below the
# bound). docs/privacy.md's "0.91 at U = 0 on the audit's pair" (d = 2, n = 40, p = 3, C = 3) measures
# 0.705 through GradientOperator.
GRADIENT_FRACTION = {
    (1, 1, 1, 1e-3): 0.5372, (1, 1, 1, 0.5): 0.4613,
    (1, 3, 1, 1e-3): 0.6868, (1, 3, 1, 0.5): 0.6215,
    (1, 6, 2, 1e-3): 0.8889, (1, 6, 2, 0.5): 0.8548,
    (1, 2, 3, 1e-3): 0.8459, (1, 2, 3, 0.5): 0.8117,
    (2, 2, 1, 1e-3): 0.5477, (2, 2, 1, 0.5): 0.5056,
    (2, 3, 2, 1e-3): 0.6631, (2, 3, 2, 0.5): 0.6401,
    (3, 2, 2, 1e-3): 0.5695, (3, 2, 2, 0.5): 0.5498,
}
# A setting where the documented 0.91 is reached (d = 1, larger p·C²).
GRADIENT_DOC_CASE = (1, 5, 3, 1e-3)

# ||A' − A||_F / D_A on the same pairs (reason (i) above).
DA_FRACTION = {(1, 1, 1): 0.4524, (1, 3, 1): 0.6633, (1, 6, 2): 0.8672, (1, 2, 3): 0.8167,
               (2, 2, 1): 0.6060, (2, 3, 2): 0.7441, (3, 2, 2): 0.6982}

# pgd-clip: Σ_t clip_G(g_t)/N at an adversarial U (every affected term flips its residual's sign, every term
# clipped), measured / 2(p+1)G/N. Not exactly 1: the p regressor rows' z_t turn by the angle between z_t and
# z_t − e (one count C → C−1), so each of those terms moves by 2G·cos(angle/2) < 2G; the target row's term
# moves by exactly 2G. Approaches 1 as d·p·C² grows.
PGD_CLIP_FRACTION = {(1, 1, 1): 0.9434, (1, 3, 1): 0.9518, (1, 6, 2): 0.9917, (1, 2, 3): 0.9937,
                     (2, 2, 1): 0.9691, (2, 3, 2): 0.9933, (3, 2, 2): 0.9944}


# --- independent reference: the paper's design from the raw count array, plain loops ----------------------


def dense_design(x, p):
    """``Z`` (q × N) and ``Y`` (d × N): column t−p is ``z_t = [X[t−1], …, X[t−p], 1]``, ``y_t = X[t]``."""
    n, d = len(x), len(x[0])
    q = d * p + 1
    Z = np.zeros((q, n - p))
    Y = np.zeros((d, n - p))
    for col, t in enumerate(range(p, n)):
        for lag in range(1, p + 1):
            for j in range(d):
                Z[(lag - 1) * d + j, col] = float(x[t - lag][j])
        Z[q - 1, col] = 1.0
        for j in range(d):
            Y[j, col] = float(x[t][j])
    return Z, Y


def dense_stats(x, p):
    """``A = ZZᵀ/N``, ``b = YZᵀ/N`` and N from :func:`dense_design`."""
    Z, Y = dense_design(x, p)
    N = Z.shape[1]
    return Z @ Z.T / N, Y @ Z.T / N, N


def full_release_vector(A, b):
    """The numbers DP-SSP's full release perturbs: the upper triangle of A (diagonal included) without the
    public corner A[q, q] = 1, and b."""
    q = A.shape[0]
    upper = [A[r, c] for r in range(q) for c in range(r, q) if (r, c) != (q - 1, q - 1)]
    return np.concatenate([np.array(upper), b.ravel()])


def lagged_release_vector(x, p):
    """The lagged release of one series from plain loops: C[1..p], the upper triangle of C[0], the totals,
    the first p rows and the last p rows, ``C[τ][a, c] = Σ_{m >= τ} X[m, a] X[m − τ, c]``."""
    n, d = len(x), len(x[0])
    lagged = np.zeros((p + 1, d, d))
    for tau in range(p + 1):
        for m in range(tau, n):
            for a in range(d):
                for c in range(d):
                    lagged[tau, a, c] += float(x[m][a]) * float(x[m - tau][c])
    upper0 = [lagged[0, a, c] for a in range(d) for c in range(a, d)]
    totals = [sum(float(x[m][a]) for m in range(n)) for a in range(d)]
    heads = [float(x[m][a]) for m in range(p) for a in range(d)]
    tails = [float(x[m][a]) for m in range(n - p, n) for a in range(d)]
    return np.concatenate([lagged[1:].ravel(), upper0, totals, heads, tails])


def adversarial_pairs(n, d, cap, p):
    """All-at-cap neighbours differing by one event at the first bin, the last head bin, the first target bin,
    a middle bin, the first tail bin and the last bin, in dimensions 0 and d−1: the event removed, added
    (the same pair in the other order) and a 0 → 1 bin in an otherwise saturated series."""
    positions = sorted({0, p - 1, p, n // 2, n - p, n - 1})
    for m in positions:
        for j in sorted({0, d - 1}):
            full = np.full((n, d), cap, dtype=np.int64)
            lower = full.copy()
            lower[m, j] -= 1
            yield f"remove m={m} j={j}", full, lower
            yield f"add m={m} j={j}", lower, full
            empty = full.copy()
            empty[m, j] = 0
            one = empty.copy()
            one[m, j] = 1
            yield f"0->1 m={m} j={j}", empty, one


def package_stats(x, p, cap):
    """The statistics as a fit computes them (binned_stats: sparse counts, moment pieces, assembled A, b)."""
    return binned_stats(BinnedCounts((np.asarray(x, dtype=np.int64),), 1.0, 0, 0, cap), p)


# --- the exact worst U of a quadratic change over a ball -----------------------------------------------------


def worst_u_on_ball(M, c, beta):
    """``argmax ||U M − c||_F`` over ``||U||_F <= β`` (M symmetric): the trust-region subproblem.

    In M's eigenbasis (λ_k, V) the maximiser is ``w = −λ c̃ / (ν − λ²)`` with ``ν > max λ²`` chosen so that
    ``||w|| = β`` (the secular equation, monotone in ν: bisection), or, in the hard case, β times the top
    eigenvector in one row. Both candidates (and the top eigenvector with either sign in every row) are
    evaluated; the best is returned.
    """
    lam, V = np.linalg.eigh(M)
    ct = c @ V
    top = float(np.max(lam**2))
    candidates = []
    k = int(np.argmax(lam**2))
    for i in range(c.shape[0]):
        for sign in (1.0, -1.0):
            U = np.zeros_like(c)
            U[i] = sign * beta * V[:, k]
            candidates.append(U)

    def w(nu):
        return -lam * ct / (nu - lam**2)

    lo = top * (1 + 1e-14) + 1e-300
    if np.linalg.norm(w(lo)) >= beta:
        hi = top + 1.0
        while np.linalg.norm(w(hi)) > beta:
            hi = top + 2 * (hi - top)
        for _ in range(200):
            mid = 0.5 * (lo + hi)
            lo, hi = (mid, hi) if np.linalg.norm(w(mid)) > beta else (lo, mid)
        candidates.append(w(hi) @ V.T)
    return max(candidates, key=lambda U: np.linalg.norm(U @ M - c))


def best_rank_one(U, radius):
    """The rank-one ``radius·a vᵀ`` along U's top singular pair: on the nuclear ball ``||U||_* <= r``."""
    u, _, vt = np.linalg.svd(U, full_matrices=False)
    return radius * np.outer(u[:, 0], vt[0])


# --- tests ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("d, p, cap", CASES)
def test_full_ssp_release_reaches_its_bound_on_all_at_cap_neighbours(d, p, cap):
    n = 3 * p + 2
    worst, worst_label = 0.0, None
    for label, x, x2 in adversarial_pairs(n, d, cap, p):
        vectors = []
        for series in (x, x2):
            A_ref, b_ref, N = dense_stats(series, p)
            A, b = released_stats(package_stats(series, p, cap), 0.0, "full", np.random.default_rng(0))
            np.testing.assert_allclose(A, A_ref, rtol=0, atol=1e-12)
            np.testing.assert_allclose(b, b_ref, rtol=0, atol=1e-12)
            vectors.append(full_release_vector(A, b))
        change = float(np.linalg.norm(vectors[0] - vectors[1]))
        bound = ssp_sensitivity(d, p, N, cap)
        assert change <= bound * (1 + REL), (label, change / bound)
        if change / bound > worst:
            worst, worst_label = change / bound, label
    assert worst >= FULL_SSP_FRACTION[(d, p, cap)], (worst, worst_label)
    if d == 1:
        assert worst >= DOC_FULL_SSP_FRACTION


def test_issue_19_setting_full_ssp_pair_is_within_1_percent_of_the_bound():
    """d = 1, p = 6, C = 2, the change at the first target bin: 0.9925 of ``ssp_sensitivity`` — the b part
    ``2pC²`` (the cross terms of ``e_j z_mᵀ`` and ``Σ_k y_{m+k} e_{r_k}ᵀ``) is needed: without its factor 2
    the bound is 1.024× too small for this pair."""
    d, p, cap, n = 1, 6, 2, 20
    full = np.full((n, d), cap)
    lower = full.copy()
    lower[p, 0] -= 1
    A, b, N = dense_stats(full, p)
    A2, b2, _ = dense_stats(lower, p)
    change = np.linalg.norm(full_release_vector(A, b) - full_release_vector(A2, b2))
    # the b part alone: ||Δb||² = ||z_m||² + p·d·C² + 2·p·C² (cross terms), exactly, at this pair
    z_sq = d * p * cap**2 + 1
    assert np.sum((b - b2) ** 2) * N**2 == pytest.approx(z_sq + p * d * cap**2 + 2 * p * cap**2, rel=1e-12)
    assert change / ssp_sensitivity(d, p, N, cap) == pytest.approx(0.99253, abs=1e-5)


def test_full_release_perturbs_exactly_the_measured_numbers():
    """What noisy_statistics adds noise to is the vector measured above: the upper triangle of A (mirrored),
    never the public corner, and every entry of b — so the sensitivity covers the whole release."""
    d, p, cap = 2, 3, 2
    stats = package_stats(np.full((12, d), cap), p, cap)
    A_hat, b_hat = noisy_statistics(stats, 0.7, np.random.default_rng(3))
    noise_A, noise_b = A_hat - stats.A, b_hat - stats.b
    q = d * p + 1
    assert np.array_equal(noise_A, noise_A.T) and noise_A[-1, -1] == 0.0
    released = full_release_vector(noise_A, noise_b)
    assert released.size == q * (q + 1) // 2 - 1 + d * q
    assert np.all(released != 0.0)


@pytest.mark.parametrize("d, p, cap", CASES)
def test_lagged_ssp_release_attains_its_bound_at_a_middle_bin(d, p, cap):
    n = 3 * p + 2
    ratios = {}
    for label, x, x2 in adversarial_pairs(n, d, cap, p):
        vectors = []
        for series in (x, x2):
            pieces = package_stats(series, p, cap).pieces
            package = np.concatenate([pieces.lagged[1:].ravel(), pieces.lagged[0][np.triu_indices(d)],
                                      pieces.totals, pieces.heads.ravel(), pieces.tails.ravel()])
            np.testing.assert_array_equal(package, lagged_release_vector(series, p))
            vectors.append(package)
        N = n - p
        change = float(np.linalg.norm(vectors[0] - vectors[1])) / N
        bound = ssp_lagged_sensitivity(d, p, N, cap)
        assert change <= bound * (1 + REL), label
        ratios[label] = change / bound
    middle = [r for label, r in ratios.items() if f"m={n // 2} " in label and not label.startswith("0->1")]
    assert min(middle) == pytest.approx(DOC_LAGGED_FRACTION, abs=1e-9)


def test_lagged_release_perturbs_exactly_the_measured_numbers():
    """release_pieces adds noise to C[0] (symmetric: its upper triangle), C[1..p], the totals, the heads and
    the tails, and nothing else (n_bins stays exact): the vector measured above, entry for entry."""
    d, p, cap, n = 2, 3, 2, 11
    pieces = package_stats(np.full((n, d), cap), p, cap).pieces
    noisy = release_pieces(pieces, 0.9, np.random.default_rng(4))
    noise0 = noisy.lagged[0] - pieces.lagged[0]
    assert np.array_equal(noise0, noise0.T)
    parts = [noisy.lagged[1:] - pieces.lagged[1:], noise0[np.triu_indices(d)], noisy.totals - pieces.totals,
             noisy.heads - pieces.heads, noisy.tails - pieces.tails]
    released = np.concatenate([np.ravel(x) for x in parts])
    assert np.all(released != 0.0) and released.size == lagged_release_vector(np.full((n, d), cap), p).size
    assert np.array_equal(noisy.n_bins, pieces.n_bins)


def _gradient_change(x, x2, p, cap, beta, rank_one=False):
    """Change of the released gradient at the worst U on the ball (or its rank-one version for DP-CG), through
    GradientOperator (the loop's gradient), after checking the operator against the dense reference."""
    A, b, N = dense_stats(x, p)
    A2, b2, _ = dense_stats(x2, p)
    M, c = A2 @ A2 - A @ A, b2 @ A2 - b @ A  # ∇L(U; X') − ∇L(U; X) = U M − c
    U = worst_u_on_ball(M, c, beta)
    if rank_one:
        U = best_rank_one(U, beta)
        assert np.linalg.norm(U, "nuc") <= beta * (1 + 1e-12)
    grads = []
    for series, (A_ref, b_ref) in ((x, (A, b)), (x2, (A2, b2))):
        grad_t, _ = GradientOperator(package_stats(series, p, cap), exact=True)(U.T.copy())
        np.testing.assert_allclose(grad_t.T, (U @ A_ref - b_ref) @ A_ref, rtol=1e-12, atol=1e-10)
        grads.append(grad_t)
    return float(np.linalg.norm(grads[1] - grads[0])), N


@pytest.mark.parametrize("beta", [1e-3, 0.5])
@pytest.mark.parametrize("d, p, cap", CASES)
def test_dp_pgd_and_dp_cg_gradient_change_at_the_worst_u(d, p, cap, beta):
    n = 3 * p + 2
    worst = {"pgd": 0.0, "cg": 0.0}
    pairs = [pair for pair in adversarial_pairs(n, d, cap, p) if not pair[0].startswith("add")]  # same as remove
    for label, x, x2 in pairs:
        for method in ("pgd", "cg"):
            change, N = _gradient_change(x, x2, p, cap, beta, rank_one=method == "cg")
            bound = formal_bounds(d, p, N, cap).gradient_sensitivity(beta)
            assert change <= bound * (1 + REL), (label, method)
            worst[method] = max(worst[method], change / bound)
    assert worst["pgd"] >= GRADIENT_FRACTION[(d, p, cap, beta)], worst
    assert worst["cg"] >= GRADIENT_FRACTION[(d, p, cap, beta)] - 1e-4, worst  # rank one: the same optimum here
    assert worst["cg"] <= worst["pgd"] * (1 + 1e-9)


@pytest.mark.parametrize("bin_size", [0.25, 4.0])
def test_dp_cg_at_a_bin_size_other_than_one_covers_the_papers_constraint_set(bin_size):
    """The paper's DP-CG (Algorithm 2) runs on ``C = {U : ||U||_* <= r}`` and outputs ``H = U/Δ``: r bounds U, not
    ΔH's scale times r. At Δ ≠ 1, (i) the run stays in that set and reaches its boundary (K = 1, classic step: U is
    the vertex ``−r u vᵀ``, so ``||ΔH||_* = r`` exactly), and (ii) the released gradient's change at the worst U
    of that set (d = 1: the nuclear ball is the Frobenius ball) stays under the sensitivity the fit reports and
    reaches 0.85 of it. A radius taken as Δ·r breaks (ii) at Δ = 0.25 (the change is 1.31× that bound) and its
    fraction at Δ = 4 (0.32)."""
    from dphawkes_core.estimators import FitConfig, fit_stats, privacy_report

    d, p, cap, radius = 1, 6, 2, 0.5
    n = 3 * p + 2
    config = FitConfig(method="cg", bin_size=bin_size, lags=p, radius=radius, iters=1, fw_step="classic",
                       calibration="formal", count_cap=cap, sigma2=1.0, seed=0)
    full = np.full((n, d), cap)
    result = fit_stats(package_stats(full, p, cap), config)
    assert np.linalg.norm(result.H * bin_size, "nuc") == pytest.approx(radius, rel=1e-12)  # U = ΔH on ||U||_* = r
    worst = 0.0
    for label, x, x2 in adversarial_pairs(n, d, cap, p):
        if label.startswith("add"):  # the same pairs as "remove", in the other order
            continue
        change, _ = _gradient_change(x, x2, p, cap, radius, rank_one=True)  # the worst U with ||U||_* <= r
        bound = privacy_report(package_stats(x, p, cap), config).sensitivity
        assert change <= bound * (1 + REL), (label, change / bound)
        worst = max(worst, change / bound)
    assert worst >= GRADIENT_FRACTION[(d, p, cap, radius)]


def test_gradient_bound_reaches_the_documented_fraction_at_d1_large_pc():
    d, p, cap, beta = GRADIENT_DOC_CASE
    n = 3 * p + 2
    full = np.full((n, d), cap)
    lower = full.copy()
    lower[p, 0] -= 1
    change, N = _gradient_change(full, lower, p, cap, beta)
    assert DOC_GRADIENT_FRACTION <= change / formal_bounds(d, p, N, cap).gradient_sensitivity(beta) <= 1 + REL


def test_the_dp_pgd_loop_releases_the_operators_gradient():
    """The first noisy gradient the running loop records (σ = 0, U_0 = 0) is GradientOperator's at U = 0 and
    the reference's ``−bA``: the function measured above is the one that runs."""
    d, p, cap = 2, 3, 2
    x = np.full((11, d), cap)
    x[5, 0] -= 1
    stats = package_stats(x, p, cap)
    transcript = []
    run_dp_pgd(stats, 0.3, 1, 0.0, np.array([1e-3]), np.random.default_rng(0), transcript=transcript)
    A, b, _ = dense_stats(x, p)
    np.testing.assert_allclose(transcript[0].T, -(b @ A), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("d, p, cap", CASES)
def test_statistics_change_bounds_hold_and_the_sizes_are_attained(d, p, cap):
    n = 3 * p + 2
    worst = 0.0
    for label, x, x2 in adversarial_pairs(n, d, cap, p):
        A, b, N = dense_stats(x, p)
        A2, b2, _ = dense_stats(x2, p)
        bounds = formal_bounds(d, p, N, cap)
        assert np.linalg.norm(A2 - A) <= bounds.dA_fro_max * (1 + REL), label
        assert np.linalg.norm(b2 - b) <= bounds.db_fro_max * (1 + REL), label
        for AA, bb in ((A, b), (A2, b2)):
            assert np.linalg.norm(AA, 2) <= bounds.A_op_max * (1 + REL)
            assert np.linalg.norm(bb) <= bounds.b_fro_max * (1 + REL)
        worst = max(worst, np.linalg.norm(A2 - A) / bounds.dA_fro_max)
    assert worst >= DA_FRACTION[(d, p, cap)]
    A, b, N = dense_stats(np.full((n, d), cap), p)  # all at the cap: the size bounds are attained exactly
    bounds = formal_bounds(d, p, N, cap)
    assert np.linalg.norm(A, 2) == pytest.approx(bounds.A_op_max, rel=1e-12)
    assert np.linalg.norm(b) == pytest.approx(bounds.b_fro_max, rel=1e-12)


@pytest.mark.parametrize("d, p, cap", CASES)
def test_change_bounds_are_the_derivations_triangle_sums_with_every_term_attained(d, p, cap):
    """docs/privacy.md: with Z' = Z + E (X' the all-at-cap series, one event more than X in a middle bin),
    ``N(A' − A) = EZ'ᵀ + Z'Eᵀ − EEᵀ`` and ``D_A = (||EZ'ᵀ|| + ||Z'Eᵀ|| + ||EEᵀ||)/N`` with each term at its
    supremum (``√p z_max``, ``√p z_max``, ``√p``); ``N(b' − b) = FZ'ᵀ + Y'Eᵀ − FEᵀ`` (FEᵀ = 0) and
    ``D_b = (||FZ'ᵀ|| + ||Y'Eᵀ||)/N``. The bounds are exactly those sums — neither ``√p·2z`` nor
    ``√p(2z + 2)`` — and every term is reached by the all-at-cap pair."""
    n = 3 * p + 2
    x_prime = np.full((n, d), cap)
    x = x_prime.copy()
    x[n // 2, 0] -= 1
    Zp, Yp = dense_design(x_prime, p)
    Z, Y = dense_design(x, p)
    E, F = Zp - Z, Yp - Y
    N = Z.shape[1]
    np.testing.assert_array_equal(Zp @ Zp.T - Z @ Z.T, E @ Zp.T + Zp @ E.T - E @ E.T)
    assert np.count_nonzero(F @ E.T) == 0
    terms_A = [np.linalg.norm(E @ Zp.T), np.linalg.norm(Zp @ E.T), np.linalg.norm(E @ E.T)]
    z_max = max(np.linalg.norm(Zp[:, t]) for t in range(N))
    y_max = max(np.linalg.norm(Yp[:, t]) for t in range(N))
    assert terms_A == pytest.approx([math.sqrt(p) * z_max, math.sqrt(p) * z_max, math.sqrt(p)], rel=1e-12)
    terms_b = [np.linalg.norm(F @ Zp.T), np.linalg.norm(Yp @ E.T)]
    assert terms_b == pytest.approx([z_max, math.sqrt(p) * y_max], rel=1e-12)
    bounds = formal_bounds(d, p, N, cap)
    assert bounds.dA_fro_max * N == pytest.approx(sum(terms_A), rel=1e-12)
    assert bounds.db_fro_max * N == pytest.approx(sum(terms_b), rel=1e-12)
    assert bounds.z_norm_max == pytest.approx(z_max, rel=1e-12)
    assert bounds.y_norm_max == pytest.approx(y_max, rel=1e-12)


def adversarial_u_for_clipping(d, p, cap, j):
    """U that makes every per-bin residual of dimension j equal −1/2 on all-at-cap rows (other dimensions 0),
    with every lag coefficient of (j, j) at −1: removing one event at bin m (dimension j) flips the sign of
    the residual of the target row m (+1) and of each regressor row m + k (its lag-k entry drops by one,
    −1·(−1) = +1), so each of the p + 1 affected clipped terms turns around."""
    U = np.zeros((d, d * p + 1))
    U[:, -1] = cap  # residual C − C = 0 in the other dimensions
    for lag in range(p):
        U[j, lag * d + j] = -1.0
    U[j, -1] = p * cap + cap - 0.5
    return U


def reference_clipped_gradient(x, p, U, clip):
    """``Σ_t clip_G((U z_t − y_t) z_tᵀ) / N`` row by row from the dense design."""
    Z, Y = dense_design(x, p)
    total = np.zeros_like(U)
    for t in range(Z.shape[1]):
        g = np.outer(U @ Z[:, t] - Y[:, t], Z[:, t])
        norm = np.linalg.norm(g)
        total += g * (clip / norm) if norm > clip else g
    return total / Z.shape[1]


@pytest.mark.parametrize("d, p, cap", CASES)
def test_pgd_clip_gradient_change_approaches_its_bound(d, p, cap):
    n, clip = 3 * p + 2, 0.05
    worst = 0.0
    for m in range(n):
        for j in range(d):
            full = np.full((n, d), cap)
            lower = full.copy()
            lower[m, j] -= 1
            U = adversarial_u_for_clipping(d, p, cap, j)
            grads = []
            for series in (full, lower):
                g = clipped_gradient(U, per_bin_design(package_stats(series, p, cap)), clip)
                np.testing.assert_allclose(g, reference_clipped_gradient(series, p, U, clip), rtol=0, atol=1e-14)
                grads.append(g)
            bound = pgd_clip_sensitivity(p, n - p, clip)
            ratio = np.linalg.norm(grads[1] - grads[0]) / bound
            assert ratio <= 1 + REL
            worst = max(worst, ratio)
    assert worst >= PGD_CLIP_FRACTION[(d, p, cap)]


@pytest.mark.parametrize("seed", range(3))
def test_random_neighbours_and_random_u_stay_below_every_bound(seed):
    """Random count series at random caps and random U on the sphere and inside the ball: nothing exceeds
    any bound (the worst case is above, this checks the bounds are not only right at the cap)."""
    rng = np.random.default_rng(100 + seed)
    for _ in range(6):
        d, p, cap = int(rng.integers(1, 4)), int(rng.integers(1, 5)), int(rng.integers(1, 4))
        n = int(rng.integers(p + 2, 4 * p + 6))
        x = np.minimum(rng.poisson(rng.uniform(0.3, 3.0), (n, d)), cap)
        m, j = int(rng.integers(n)), int(rng.integers(d))
        x2 = x.copy()
        x2[m, j] = x[m, j] - 1 if x[m, j] > 0 else 1
        A, b, N = dense_stats(x, p)
        A2, b2, _ = dense_stats(x2, p)
        assert np.linalg.norm(full_release_vector(A, b) - full_release_vector(A2, b2)) <= \
            ssp_sensitivity(d, p, N, cap) * (1 + REL)
        assert np.linalg.norm(lagged_release_vector(x, p) - lagged_release_vector(x2, p)) / N <= \
            ssp_lagged_sensitivity(d, p, N, cap) * (1 + REL)
        beta = float(rng.uniform(0.01, 2.0))
        for _ in range(5):
            U = rng.standard_normal(b.shape)
            U *= beta * rng.uniform(0.2, 1.0) / np.linalg.norm(U)
            change = np.linalg.norm((U @ A2 - b2) @ A2 - (U @ A - b) @ A)
            assert change <= formal_bounds(d, p, N, cap).gradient_sensitivity(beta) * (1 + REL)
            clip = float(rng.uniform(0.01, 5.0))
            diff = reference_clipped_gradient(x2, p, U * 50, clip) - reference_clipped_gradient(x, p, U * 50, clip)
            assert np.linalg.norm(diff) <= pgd_clip_sensitivity(p, N, clip) * (1 + REL)


def test_trust_region_maximiser_beats_random_points_on_the_sphere():
    """Sanity of the worst-U search: no random U on the sphere does better."""
    rng = np.random.default_rng(7)
    d, p, cap = 2, 2, 2
    x2 = np.full((8, d), cap)
    x = x2.copy()
    x[4, 1] -= 1
    A, b, _ = dense_stats(x, p)
    A2, b2, _ = dense_stats(x2, p)
    M, c = A2 @ A2 - A @ A, b2 @ A2 - b @ A
    for beta in (1e-3, 0.5, 3.0):
        best = np.linalg.norm(worst_u_on_ball(M, c, beta) @ M - c)
        for _ in range(300):
            U = rng.standard_normal(c.shape)
            U *= beta / np.linalg.norm(U)
            assert np.linalg.norm(U @ M - c) <= best * (1 + 1e-12)
