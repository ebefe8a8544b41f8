"""ctls's width and support chosen inside one release: the coarse statistics as exact sums of the fine ones
(against a direct computation at the coarse width), the support as leading blocks, the split release's sensitivity
on adversarial neighbours through the code that runs, and the selection as post-processing."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from dphawkes_core.data.io import from_arrays
from dphawkes_core.estimators.grid_free.release import default_edge_share, worst_case_events
from dphawkes_core.estimators.grid_free.width_choice import (
    add_pieces,
    block_pieces,
    candidate_grid,
    coarsen_pieces,
    contrast,
    release_split,
    split_sensitivity,
    split_sequences,
    split_vector,
    truncate_pieces,
    validation_cuts,
)
from dphawkes_core.statistics.exact_times import assemble, grid_free_pieces

FIELDS = ("lagged", "pairs", "totals", "head_gram", "tail_gram", "head_int", "tail_int", "head_pairs",
          "head_counts", "duration", "total_time", "edge_time", "sequences", "skipped_sequences")


def random_events(seed, d=2, n=60, T=40.0, sequences=2):
    rng = np.random.default_rng(seed)
    seqs = [[np.sort(rng.uniform(0, T * (1 + 0.3 * s), rng.integers(n // 2, n))) for _ in range(d)]
            for s in range(sequences)]
    events = [from_arrays(times, end_time=T * (1 + 0.3 * s)) for s, times in enumerate(seqs)]
    return dataclasses.replace(events[0], sequences=tuple(e.sequences[0] for e in events))


def assert_same(a, b):
    for name in FIELDS:
        np.testing.assert_allclose(np.asarray(getattr(a, name), float), np.asarray(getattr(b, name), float),
                                   rtol=1e-10, atol=1e-9, err_msg=name)


@pytest.mark.parametrize(("seed", "width", "lags", "factor", "d"), [(0, 0.25, 24, 2, 2), (1, 0.1, 40, 4, 2),
                                                                    (2, 0.3, 12, 3, 3), (3, 0.5, 8, 8, 1)])
def test_the_pieces_at_a_coarser_width_are_sums_of_the_fine_ones(seed, width, lags, factor, d):
    events = random_events(seed, d=d)
    fine, _ = grid_free_pieces(events, width, lags, None)
    direct, _ = grid_free_pieces(events, factor * width, lags // factor, None)  # computed at the coarse width
    assert_same(coarsen_pieces(fine, factor), direct)


def test_a_shorter_support_is_the_leading_block_of_the_same_features():
    events = random_events(4)
    pieces, _ = grid_free_pieces(events, 0.5, 10, None)
    G, c = assemble(pieces)
    short = truncate_pieces(pieces, 4)
    G4, c4 = assemble(short)
    keep = list(range(2 * 4)) + [G.shape[0] - 1]  # the first d·B' kernel features and the baseline
    np.testing.assert_allclose(G4, G[np.ix_(keep, keep)], rtol=1e-12)
    np.testing.assert_allclose(c4, c[:, keep], rtol=1e-12)


def test_the_split_puts_every_event_in_one_block_and_the_blocks_add_up():
    events = random_events(5)
    train, validation = split_sequences(events.sequences, 25.0)
    assert sum(s.n_events for s in train + validation) == events.n_events
    assert all(t.max(initial=0) < 25.0 for s in train for t in s.times)
    whole = dataclasses.replace(events, sequences=tuple(train + validation))
    a = grid_free_pieces(dataclasses.replace(events, sequences=tuple(train)), 0.5, 6, None)[0]
    b = grid_free_pieces(dataclasses.replace(events, sequences=tuple(validation)), 0.5, 6, None)[0]
    assert_same(add_pieces(a, b), grid_free_pieces(whole, 0.5, 6, None)[0])


def test_each_window_is_cut_on_a_bin_boundary_and_the_blocks_keep_what_the_window_keeps():
    """V = w0·floor((1 − share)·T/w0) per window: a multiple of w0 at or after (1 − share)·T, so keeping the first
    C per bin in each block keeps exactly the events the whole window keeps (events crowded around the cuts)."""
    rng = np.random.default_rng(11)
    width, share = 0.25, 0.3
    ends = (40.3, 57.9, 23.0)
    sequences = []
    for end in ends:
        cut = width * np.floor((1 - share) * end / width)
        crowd = cut + rng.uniform(-1.0, 1.0, size=60)  # many events per bin on both sides of the cut
        times = [np.sort(np.concatenate([rng.uniform(0, end, 30), crowd])) for _ in range(2)]
        sequences.append(from_arrays(times, end_time=end).sequences[0])
    events = dataclasses.replace(random_events(0), sequences=tuple(sequences))
    cuts = validation_cuts(events.sequences, width, share)
    for end, cut in zip(ends, cuts, strict=True):
        assert cut / width == pytest.approx(round(cut / width), abs=1e-9)
        assert (1 - share) * end - width < cut <= (1 - share) * end
    for cap in (1, 2, 3):
        _, _, counts = block_pieces(events, cuts, width, 4, cap)
        _, whole = grid_free_pieces(events, width, 4, cap)
        assert (counts["kept"], counts["clipped"]) == (whole["kept"], whole["clipped"]) and whole["clipped"] > 0


def test_the_contrast_is_the_least_squares_contrast_of_theta():
    events = random_events(6, d=1, sequences=1)
    width, lags = 0.5, 4
    pieces, _ = grid_free_pieces(events, width, lags, None)
    theta = np.array([[0.3, 0.2, 0.1, 0.05, 0.4]])  # steps a_b and the baseline μ
    seq, s = events.sequences[0], lags * width
    x = seq.times[0]

    def intensity(at):  # μ + Σ_b a_b #{u : at − u ∈ (b·w, (b+1)·w]}
        lam = np.full(at.shape, theta[0, -1])
        for b in range(lags):
            lam += theta[0, b] * (np.searchsorted(x, at - b * width, "left")
                                  - np.searchsorted(x, at - (b + 1) * width, "left"))
        return lam

    # λ is constant between the points x + b·w: the integral of λ² over [s, T] exactly, at the midpoints
    cuts = np.unique(np.concatenate([[s, seq.end_time], (x[:, None] + width * np.arange(lags + 1)).ravel()]))
    cuts = cuts[(cuts >= s) & (cuts <= seq.end_time)]
    integral = float(np.sum(intensity((cuts[1:] + cuts[:-1]) / 2) ** 2 * np.diff(cuts)))
    expected = integral - 2 * float(np.sum(intensity(x[x >= s])))
    assert contrast(width * theta, pieces, width) == pytest.approx(expected, rel=1e-9)


def test_the_grid_is_public_and_within_the_release():
    grid = candidate_grid(40)
    assert (1, 40) in grid and (8, 5) in grid and all(k * b <= 40 for k, b in grid)
    assert all(40 % k == 0 for k, _ in grid)


# --- the release of the two blocks: its sensitivity through the code that runs ---------------------------------

def _join(first, second, gap_events=()):
    """One window: ``first``'s events, then ``second``'s shifted by first's length (``gap_events``: extra events,
    absolute times, in dimension 0)."""
    T1 = float(first.sequences[0].end_time)
    times = [np.sort(np.concatenate([a, b + T1] + ([np.asarray(gap_events, float)] if j == 0 else [])))
             for j, (a, b) in enumerate(zip(first.sequences[0].times, second.sequences[0].times, strict=True))]
    return from_arrays(times, end_time=T1 + float(second.sequences[0].end_time)), T1


def _moved(pair, split, width, lags, cap, rho=3.0):
    sens = split_sensitivity(pair[0].dim, lags, cap, 0.01, rho)
    vectors = [split_vector(*block_pieces(events, split, width, lags, cap)[:2], sens.kappa, sens.rho)
               for events in pair]
    return float(np.linalg.norm(vectors[1] - vectors[0]) / sens.total)


@pytest.mark.parametrize(("d", "lags", "cap"), [(1, 20, 2), (2, 20, 2), (2, 24, 3), (3, 20, 1)])
@pytest.mark.parametrize("block", ["train", "validation"])
def test_adversarial_neighbours_reach_the_split_release_bound_in_either_block(d, lags, cap, block):
    """The family's worst-case neighbours (the larger of its two kinds) placed in one block, ordinary events in
    the other: the concatenated release moves by ≥ 0.8 of the bound (the family's own fraction at B ≥ 20), never
    more."""
    width = 0.25
    other = random_events(7, d=d, sequences=1, T=30.0)
    fractions = []
    for kind in ("swap", "insert"):
        pair, split = [], None
        for events in worst_case_events(d, lags, cap, width, kind):
            joined, split = _join(events, other) if block == "train" else _join(other, events)
            pair.append(joined)
        fractions.append(_moved(pair, split, width, lags, cap))
    assert 0.8 <= max(fractions) and max(fractions) <= 1.0


def test_random_neighbours_near_and_across_the_split_never_exceed_the_bound():
    rng = np.random.default_rng(12)
    worst = 0.0
    for _ in range(40):
        d, lags, cap, width = int(rng.integers(1, 3)), int(rng.integers(2, 8)), int(rng.integers(1, 4)), 0.5
        base = random_events(int(rng.integers(1000)), d=d, n=80, T=20.0, sequences=1)
        split = float(rng.uniform(5.0, 15.0))
        z = split + float(rng.uniform(-lags * width, lags * width))  # within s of the split: both blocks' edges
        times = list(base.sequences[0].times)
        times[0] = np.sort(np.append(times[0], z))
        neighbour = from_arrays(times, end_time=base.sequences[0].end_time)
        worst = max(worst, _moved((base, neighbour), split, width, lags, cap))
    assert 0.05 < worst <= 1.0


def test_the_release_has_the_stated_noise_and_is_exact_without_it():
    events = random_events(8, sequences=1, T=60.0)
    exact = release_split(events, 30.0, 0.5, 6, 3, 0.0, 3.0, np.random.default_rng(0))
    train, validation, _ = block_pieces(events, 30.0, 0.5, 6, 3)
    assert_same(exact.train, train) and assert_same(exact.validation, validation)
    noisy = release_split(events, 30.0, 0.5, 6, 3, 2.0, 3.0, np.random.default_rng(1))
    bound = split_sensitivity(2, 6, 3, default_edge_share(add_pieces(train, validation)), 3.0).total
    assert noisy.raw_sigma == pytest.approx(2.0 * bound)
    residual = (noisy.train.pairs - train.pairs).ravel() / noisy.raw_sigma  # the pair counts' scale is 1
    assert residual.std() == pytest.approx(1.0, rel=0.35)


def test_every_candidates_score_is_its_direct_fit_scored_directly_without_noise():
    """σ = 0: each candidate's score from the one release at (w0, s_max) equals the exact least-squares fit at its
    own (k·w0, s) on the training block, computed there directly, scored on the validation block computed directly
    (both with the first s_max of each block as history)."""
    from dphawkes_core.estimators import FitConfig
    from dphawkes_core.estimators.grid_free.width_choice import choose_width
    from dphawkes_core.statistics.exact_times import stats_from_pieces

    events = random_events(9, d=2, n=150, T=80.0, sequences=1)
    width, lags, split = 0.25, 16, 50.0
    release = release_split(events, split, width, lags, 1000, 0.0, 3.0, np.random.default_rng(0))  # none clipped
    config = FitConfig(method="ctls", bin_size=width, lags=lags, sigma2=0.0, calibration="formal", ctls_ridge=0.0,
                       ctls_smoothing=0.0, ctls_nonnegative=False)
    grid = [(1, 16), (2, 8), (2, 4), (4, 2), (4, 4)]
    choice = choose_width(release, config, grid)
    train_events, validation_events = (dataclasses.replace(events, sequences=tuple(b))
                                       for b in split_sequences(events.sequences, split))
    direct = {}
    for k, b in grid:
        coarse = k * width
        train = truncate_pieces(grid_free_pieces(train_events, coarse, lags // k, None)[0], b)
        validation = truncate_pieces(grid_free_pieces(validation_events, coarse, lags // k, None)[0], b)
        stats = stats_from_pieces(train, coarse)
        U = np.linalg.solve(stats.A.T, stats.b.T).T  # θ A = b, exactly
        direct[(k, b)] = contrast(U, validation, coarse)
    for candidate in choice.candidates:
        assert candidate.score == pytest.approx(direct[(candidate.factor, candidate.lags)], rel=1e-7)
    best = min(direct, key=direct.get)
    assert (choice.chosen.factor, choice.chosen.lags) == best
    assert choice.U.shape == (2, 2 * best[1] + 1)
