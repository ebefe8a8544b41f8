"""The event unit under an enforced cap M on events per sequence, as an adversary would test it: neighbour pairs of
the raw data built where the cap binds — one raw event added before a full sequence's M-th event (the cap then
drops that one: a swap), after it, in a short sequence, and a whole sequence replaced — pass through the code that
runs (:func:`~dphawkes_core.estimators.prepare_stats`, the family's release vector), and the measured change never
exceeds the stated sensitivity times the group the ledger charges
(:func:`~dphawkes_core.privacy.sequence.capped_event_group`: 2 per raw event, 2M per sequence)."""

from dataclasses import replace

import numpy as np
import pytest

from dphawkes_core.data.columns import from_arrays
from dphawkes_core.data.events import EventSequence
from dphawkes_core.errors import ConfigError
from dphawkes_core.estimators import FAMILIES, FitConfig, prepare_stats, privacy_report
from dphawkes_core.estimators.checks import config_for
from dphawkes_core.privacy.sequence import RAW_EVENT_GROUP, cap_events, capped_event_group

M, T, SEQUENCES = 8, 40.0, 3
PRIVATE = [name for name, family in FAMILIES.items() if family.privacy.private and "event" in family.privacy.units]
SLACK = 1e-9


def events_of(sequences) -> object:
    """Events of ``sequences`` (each a pair of per-dimension time arrays) on the public window [0, T]."""
    base = from_arrays([[1.0], [2.0]], end_time=T)
    return replace(base, sequences=tuple(
        EventSequence(tuple(np.sort(np.asarray(t, dtype=float)) for t in seq), T) for seq in sequences))


def packed(start: float, count: int, dim: int, per_bin: int = 2) -> list:
    """``count`` events ``per_bin`` to a bin of width 1 from ``start`` in dimension ``dim`` (at the count cap)."""
    times = np.repeat(np.arange(start, start + count) + 0.5, per_bin)[:count]
    out = [np.empty(0), np.empty(0)]
    out[dim] = times
    return out


def adversarial_bases(rng) -> list:
    """Data where the cap binds: a full sequence packed at the count cap with events over M, one whose kept events
    are far apart from its dropped ones, a short one, and random ones."""
    bases = [[packed(5, M + 4, 0), packed(3, 6, 1), [np.empty(0), np.empty(0)]],
             [[np.concatenate([packed(2, M // 2, 0)[0], packed(20, M, 0)[0]]), np.empty(0)], packed(30, 3, 1),
              packed(1, 2 * M, 1)]]
    for _ in range(1):
        bases.append([[rng.uniform(0, T, int(rng.integers(0, 2 * M))) for _ in range(2)] for _ in range(SEQUENCES)])
    return bases


def with_event(sequences, s: int, dim: int, time: float) -> list:
    out = [[times.copy() for times in seq] for seq in sequences]
    out[s][dim] = np.append(out[s][dim], time)
    return out


def raw_event_pairs(rng):
    """``(D, D')``: one raw event added every 1.5 time units in every dimension of every sequence of each base."""
    for base in adversarial_bases(rng):
        for s in range(len(base)):
            for dim in (0, 1):
                for time in np.arange(0.25, T, 1.5):
                    yield base, with_event(base, s, dim, float(time))


def sequence_pairs(rng):
    """``(D, D')``: one sequence replaced by a packed burst, a far-apart one, an empty one or a random one."""
    others = [packed(0, 3 * M, 0), packed(10, 2 * M, 1), [np.empty(0), np.empty(0)],
              [np.concatenate([packed(0, M, 0)[0], packed(30, M, 0)[0]]), packed(15, M, 1)[1]]]
    for base in adversarial_bases(rng):
        for s in range(len(base)):
            for other in others + [[rng.uniform(0, T, 2 * M) for _ in range(2)]]:
                yield base, [other if k == s else seq for k, seq in enumerate(base)]


def moved_fractions(family_name: str, pairs, max_events: int | None = M) -> np.ndarray:
    """``‖v(D') − v(D)‖ / S`` of every pair through the code that runs, under the cap ``max_events`` (S: the stated
    sensitivity, the same on both sides)."""
    family = FAMILIES[family_name]
    config = config_for(family, 2, count_cap=2, max_events=max_events)
    fractions = []
    for base, neighbour in pairs:
        (s_d, _), (s_n, _) = (prepare_stats(events_of(data), config) for data in (base, neighbour))
        bound = privacy_report(s_d, config).sensitivity
        assert privacy_report(s_n, config).sensitivity == pytest.approx(bound, rel=1e-12)
        moved = np.linalg.norm(family.query_vector(s_n, config) - family.query_vector(s_d, config))
        fractions.append(moved / bound)
    return np.array(fractions)


@pytest.mark.slow
@pytest.mark.parametrize("family_name", PRIVATE)
def test_one_raw_event_under_the_cap_moves_at_most_the_swap_group(family_name):
    """Adding one raw event before a full sequence's M-th event pushes that one out: a swap of two capped events,
    so the bound charged per raw event is 2·S."""
    fractions = moved_fractions(family_name, raw_event_pairs(np.random.default_rng(3)))
    assert fractions.max() <= RAW_EVENT_GROUP * (1 + SLACK)
    assert fractions.max() > 0  # the pairs do move the release


@pytest.mark.parametrize("family_name", PRIVATE)
def test_one_sequence_replaced_under_the_cap_moves_at_most_two_m_events(family_name):
    """A whole sequence replaced removes at most M capped events and adds at most M: 2M·S."""
    fractions = moved_fractions(family_name, sequence_pairs(np.random.default_rng(4)))
    assert fractions.max() <= capped_event_group("sequence", M) * (1 + SLACK)
    assert fractions.max() > 0


def test_a_swap_moves_the_release_further_than_one_capped_event_can():
    """Where the cap binds, one raw event moves DP-SSP's and exp's releases further than any one event added to the
    capped data (no cap applied): the group of 2 is needed, the capped event's own bound would be the wrong one."""
    base = [packed(5, M + 4, 0), packed(3, 6, 1)]
    capped = [list(seq.times) for seq in cap_events(events_of(base), M)[0].sequences]
    times = np.arange(0.25, 20, 1.0)
    for family_name in ("ssp", "exp"):
        single = moved_fractions(family_name, ((capped, with_event(capped, 0, dim, float(t)))
                                               for t in times for dim in (0, 1)), max_events=None)
        swap = moved_fractions(family_name, ((base, with_event(base, 0, dim, float(t)))
                                             for t in times for dim in (0, 1)))
        assert swap.max() > 1.1 * single.max()


def test_the_cap_is_enforced_on_the_data_the_release_reads():
    """Events after each sequence's M-th change nothing: the statistics of the raw data equal those of the data
    with every sequence cut to its first M events (by time), and the data info counts what the cap dropped."""
    rng = np.random.default_rng(9)
    sequences = [[np.sort(rng.uniform(0, T / 2, 10)), np.sort(rng.uniform(0, T / 2, 4))] for _ in range(SEQUENCES)]
    late = [[np.append(t, rng.uniform(T / 2, T, 5)) for t in seq] for seq in sequences]  # after every M-th event
    config = FitConfig(method="ssp", bin_size=1.0, lags=2, epsilon=1.0, count_cap=2, calibration="formal",
                       max_events=M)
    (stats, info), (stats_late, info_late) = (prepare_stats(events_of(data), config) for data in (sequences, late))
    reference = prepare_stats(cap_events(events_of(sequences), M)[0], config.with_changes(max_events=None))[0]
    for field in ("lagged", "totals", "A", "b"):
        if hasattr(stats, field):
            np.testing.assert_array_equal(getattr(stats, field), getattr(stats_late, field))
            np.testing.assert_array_equal(getattr(stats, field), getattr(reference, field))
    assert info["max_events"] == M and info["privacy_unit"] == "event"
    assert info["events_over_cap"] == SEQUENCES * (14 - M)
    assert info_late["events_over_cap"] == SEQUENCES * (24 - M) and info_late["n_events"] == SEQUENCES * 24


def test_the_cap_is_part_of_the_statistics_key_and_the_request():
    capped = FitConfig(method="ssp", bin_size=1.0, lags=2, epsilon=1.0, count_cap=2, calibration="formal",
                       max_events=M)
    plain = capped.with_changes(max_events=None)
    assert capped.statistics_key() != plain.statistics_key()
    assert capped.to_dict()["max_events"] == M and "max_events" not in plain.to_dict()
    with pytest.raises(ConfigError, match="sequence unit"):
        FitConfig(method="ssp", bin_size=1.0, lags=2, epsilon=1.0, count_cap=2, calibration="formal",
                  sequence_clip=1.0)


def test_the_group_factors():
    assert capped_event_group("event", 7) == 2
    assert capped_event_group("sequence", 7) == 14
    with pytest.raises(ConfigError):
        capped_event_group("sequence", 0)
