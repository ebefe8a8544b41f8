"""The head and tail pieces of exact event times (``exact_times.edge_pieces``: runs over b in a difference array)
against the per-step pass they replaced (each pair laid out over its B steps, one ``bincount`` per offset; kept here
as the reference, written as it was) and against a numerical integral of ``φ_K φ_Kᵀ``.

Adversarial data: ties, pairs whole steps apart, events exactly at the bound and one step from it, several sequences
with bounds of their own, sequences of one event and none."""

from __future__ import annotations

import numpy as np
import pytest

from dphawkes_core.statistics.exact_times import edge_pieces


def per_step_edge_pieces(x, dims, seq, bound, dim, lags, side):
    """The replaced pass: every pair laid out over its B steps, offset by offset."""
    d, B = int(dim), int(lags)
    q = d * B
    gram = np.zeros(q * q)
    head_pairs = np.zeros(d * q)
    steps = np.arange(B, dtype=np.float64)
    head = side == "head"

    def cut(lo, hi, edge):
        if head:
            return np.maximum(np.minimum(hi, edge) - lo, 0.0)
        return np.maximum(hi - np.maximum(lo, edge), 0.0)

    own = cut(x[:, None] + steps, x[:, None] + steps + 1.0, bound[:, None])
    cols = steps.astype(np.int64)[None, :] * d + dims[:, None]
    integral = np.bincount(cols.ravel(), weights=own.ravel(), minlength=q)
    gram += np.bincount((cols * (q + 1)).ravel(), weights=own.ravel(), minlength=q * q)
    n = x.size
    offset = 1
    active = np.arange(max(n - 1, 0))
    while active.size:
        later = active + offset
        same = seq[later] == seq[active]
        active, later = active[same], later[same]
        if not active.size:
            break
        delta = x[later] - x[active]
        je, jl, xe, edge = dims[active], dims[later], x[active], bound[active]
        fl = np.floor(delta).astype(np.int64)
        frac = delta - fl
        for k, lo_shift, hi_shift in ((fl, frac, np.ones_like(frac)), (fl + 1, np.zeros_like(frac), frac)):
            b = steps.astype(np.int64)[None, :]
            valid = (b >= k[:, None]) & (k[:, None] < B)
            start = xe[:, None] + steps[None, :]
            length = cut(start + lo_shift[:, None], start + hi_shift[:, None], edge[:, None]) * valid
            row = b * d + je[:, None]
            col = (b - k[:, None]) * d + jl[:, None]
            keep = length > 0
            if keep.any():
                r, c, v = row[keep], col[keep], length[keep]
                gram += np.bincount(r * q + c, weights=v, minlength=q * q)
                gram += np.bincount(c * q + r, weights=v, minlength=q * q)
        if head:
            positive = delta > 0
            bb = np.ceil(delta[positive]).astype(np.int64) - 1
            fits = bb < B
            head_pairs += np.bincount(jl[positive][fits] * q + bb[fits] * d + je[positive][fits], minlength=d * q)
        offset += 1
        active = active[active + offset < n]
    return gram.reshape(q, q), integral, head_pairs.reshape(d, q)


def edge_events(rng, dim, lags, side, sequences, grid):
    """Events near the head (``x < B``) or the tail (``x > T − B``) of each sequence, sorted within each: times on a
    grid of ``grid`` (ties, whole steps, the bound itself) or continuous; per event its sequence and bound."""
    xs, ds, ss, bs = [], [], [], []
    for s in range(sequences):
        end = float(lags + 3 + 2 * s) + (0.5 if grid is None else 0.0)
        n = int(rng.integers(0, 40)) if s else 40  # the first sequence never empty
        lo, hi = (0.0, float(lags)) if side == "head" else (end - lags, end)
        t = rng.uniform(lo, hi, n) if grid is None else lo + rng.integers(0, int((hi - lo) / grid) + 1, n) * grid
        t = np.sort(np.minimum(t, end))
        xs.append(t)
        ds.append(rng.integers(0, dim, n))
        ss.append(np.full(n, s))
        bs.append(np.full(n, float(lags) if side == "head" else end))
    return tuple(np.concatenate(a) for a in (xs, ds, ss, bs))


@pytest.mark.parametrize("side", ["head", "tail"])
@pytest.mark.parametrize("seed,dim,lags,sequences,grid", [
    (1, 2, 4, 1, None), (2, 3, 5, 3, None), (3, 2, 6, 2, 0.5), (4, 1, 3, 4, 1.0), (5, 4, 8, 2, 0.25)])
def test_edge_pieces_equal_the_per_step_pass(side, seed, dim, lags, sequences, grid):
    x, dims, seq, bound = edge_events(np.random.default_rng(seed), dim, lags, side, sequences, grid)
    ours = edge_pieces(x, dims, seq, bound, dim, lags, side)
    reference = per_step_edge_pieces(x, dims, seq, bound, dim, lags, side)
    for got, expected in zip(ours, reference):
        scale = max(float(np.abs(expected).max()), 1.0)
        assert np.allclose(got, expected, rtol=0, atol=1e-12 * scale)
    assert np.array_equal(ours[2], reference[2])  # the head's pairs are counts
    assert np.array_equal(ours[0], ours[0].T)
    if grid is not None:
        assert np.abs(reference[0]).sum() > 0


@pytest.mark.parametrize("side", ["head", "tail"])
def test_edge_pieces_of_no_event_and_one_event(side):
    for n in (0, 1):
        x = np.full(n, 1.5)
        ours = edge_pieces(x, np.zeros(n, dtype=np.int64), np.zeros(n, dtype=np.int64), np.full(n, 3.0), 2, 3, side)
        reference = per_step_edge_pieces(x, np.zeros(n, dtype=np.int64), np.zeros(n, dtype=np.int64),
                                         np.full(n, 3.0), 2, 3, side)
        for got, expected in zip(ours, reference):
            assert np.array_equal(got, expected)


def test_the_head_gram_is_the_integral_of_the_counts_products():
    """An independent check: ``∫_0^B φ_K(t) φ_K(t)ᵀ dt`` by the midpoint rule on a fine grid (the counts are step
    functions, so the rule is exact but for the cells a grid point straddles)."""
    rng = np.random.default_rng(7)
    d, B = 2, 4
    x = np.sort(rng.uniform(0, B, 25))
    dims = rng.integers(0, d, x.size)
    gram, integral, _ = edge_pieces(x, dims, np.zeros(x.size, dtype=np.int64), np.full(x.size, float(B)), d, B, "head")
    h = 1e-4
    t = np.arange(h / 2, B, h)
    phi = np.zeros((t.size, d * B))
    for u, j in zip(x, dims):
        lag = t - u
        b = np.ceil(lag).astype(np.int64) - 1  # t − u ∈ (b, b+1]
        inside = (lag > 0) & (b < B)
        phi[inside, b[inside] * d + j] += 1
    assert np.allclose(gram, phi.T @ phi * h, atol=5e-3 * max(np.abs(gram).max(), 1.0))
    assert np.allclose(integral, phi.sum(axis=0) * h, atol=5e-3 * B)
