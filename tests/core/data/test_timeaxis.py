"""Time columns: numbers or datetimes, units, stated and data-derived windows, dimension labels."""

import datetime as dt

import numpy as np
import pytest

from dphawkes_core.data.io import from_arrays, load_csv
from dphawkes_core.errors import DataError
from dphawkes_core.statistics.binning import bin_events

EPOCH = 1_700_000_000


def _csv(rows, header="time,dimension"):
    return (header + "\n" + "".join(",".join(map(str, r)) + "\n" for r in rows)).encode()


def _relative_rows(seed=3, n=3000):
    """Times with 6 decimals, many of them exactly on bin edges of Δ = 0.1 and 0.03."""
    rng = np.random.default_rng(seed)
    micro = np.sort(rng.integers(0, 2_000_000_000, n))  # up to 2000 s, in microseconds
    micro[: n // 3] = np.sort(rng.integers(0, 20_000, n // 3) * 300_000 // 3)  # multiples of 0.1 s and 0.03 s
    micro = np.sort(micro)
    return micro, rng.integers(0, 2, n)


def _decimal(micro, offset=0):
    return [f"{offset + m // 1_000_000}.{m % 1_000_000:06d}" for m in micro]


@pytest.mark.parametrize("unit", [None, "min"])
def test_epoch_shifted_data_with_its_window_give_exactly_the_unshifted_times_and_bins(unit):
    micro, dims = _relative_rows()
    plain = load_csv(_csv(zip(_decimal(micro), dims)), end_time=2000, time_unit=unit)
    shifted = load_csv(_csv(zip(_decimal(micro, EPOCH), dims)), start_time=EPOCH, end_time=f"{EPOCH + 2000}",
                       time_unit=unit)
    assert shifted.window_stated and plain.window_stated
    assert shifted.end_time == plain.end_time == 2000.0 / (60 if unit else 1)
    assert shifted.sequences[0].start_time == EPOCH / (60 if unit else 1)
    for a, b in zip(plain.sequences[0].times, shifted.sequences[0].times):
        np.testing.assert_array_equal(a, b)  # exact, not approximately equal
    for delta in (0.1, 0.03):
        np.testing.assert_array_equal(bin_events(plain, delta).counts[0], bin_events(shifted, delta).counts[0])


def test_relative_times_are_the_correctly_rounded_decimal_differences():
    micro, dims = _relative_rows(seed=4, n=500)
    events = load_csv(_csv(zip(_decimal(micro, EPOCH), dims)), start_time=f"{EPOCH}.5", end_time=EPOCH + 2001)
    expected = np.sort((micro[micro >= 500_000] - 500_000) / 1e6)  # one rounding of the exact difference
    got = np.sort(np.concatenate(events.sequences[0].times))
    np.testing.assert_array_equal(got, expected)
    assert events.outside_window == int(np.sum(micro < 500_000))


def test_datetimes_become_hours_since_the_window_start():
    stamps = ["2024-03-01T00:00:00Z", "2024-03-01T01:30:00Z", "2024-03-02T06:00:00+02:00", "2024-03-03 12:00:00"]
    events = load_csv(_csv(zip(stamps, [0, 1, 0, 1])), time_unit="h", start_time="2024-03-01",
                      end_time="2024-03-04T00:00:00Z")
    origin = dt.datetime(2024, 3, 1, tzinfo=dt.UTC)
    hours = [(dt.datetime.fromisoformat(s.replace("Z", "+00:00")).replace(
        tzinfo=dt.datetime.fromisoformat(s.replace("Z", "+00:00")).tzinfo or dt.UTC) - origin)
        / dt.timedelta(hours=1) for s in stamps]
    assert events.sequences[0].times[0].tolist() == [hours[0], hours[2]]
    assert events.sequences[0].times[1].tolist() == [hours[1], hours[3]]
    assert events.end_time == 72.0 and events.window_stated and events.time_unit == "h"
    assert events.time_kind == "datetime"
    assert "2024-03-01 UTC" in events.describe() and "(stated)" in events.describe()


def test_without_a_stated_window_datetimes_start_at_the_first_event_and_the_window_is_not_stated():
    events = load_csv(_csv([("2024-01-01T00:00:10", 0), ("2024-01-01T00:01:10", 0)]))
    assert events.sequences[0].times[0].tolist() == [0.0, 60.0]
    assert events.time_unit == "s" and not events.window_stated
    only_end = load_csv(_csv([("2024-01-01T00:00:10", 0)]), end_time="2024-01-02")
    assert not only_end.window_stated  # the start is still read from the data
    assert "not a formal guarantee" in events.describe()


@pytest.mark.parametrize("end_time, start_time, stated", [(None, None, False), (10, None, True), (10, 0, True),
                                                          (None, 0, False)])
def test_numbers_start_at_zero_and_stating_the_end_states_the_window(end_time, start_time, stated):
    events = load_csv(_csv([(1, 0), (2.5, 1)]), end_time=end_time, start_time=start_time)
    assert events.window_stated is stated
    assert events.sequences[0].start_time == 0.0
    assert events.end_time == (10.0 if end_time else 2.5)


def test_from_arrays_states_the_window_only_with_an_end_time():
    assert from_arrays([[1.0, 2.0]], end_time=3.0).window_stated
    assert not from_arrays([[1.0, 2.0]]).window_stated
    dropped = from_arrays([[1.0, 4.0]], end_time=3.0)
    assert dropped.outside_window == 1 and dropped.n_events == 1


def test_epoch_like_numbers_without_a_start_start_at_the_first_event():
    events = load_csv(_csv([(EPOCH + 5, 0), (EPOCH + 65, 1)]), time_unit="min")
    assert events.sequences[0].times[1].tolist() == [1.0]
    assert not events.window_stated and events.time_unit == "min"
    assert any("look like timestamps" in w for w in events.warnings)


def test_numbers_in_seconds_convert_to_the_time_unit():
    events = load_csv(_csv([(7200, 0), (9000, 0)]), time_unit="h", end_time=36000)
    assert events.sequences[0].times[0].tolist() == [2.0, 2.5]
    assert events.end_time == 10.0


def test_per_sequence_windows_from_start_and_end_columns_are_for_exploration_only():
    """start/end columns set each sequence's window (events outside dropped and counted), but a window read from
    private rows is never a stated one; rows that disagree never refuse the data."""
    rows = [("a", 5, 0, 0, 10), ("a", 12, 1, 0, 10), ("b", 103, 0, 100, 104), ("b", 99, 0, 100, 104)]
    events = load_csv(_csv(rows, "sequence,time,dimension,start,end"))
    a, b = events.sequences
    assert (a.start_time, a.end_time, b.start_time, b.end_time) == (0.0, 10.0, 100.0, 4.0)
    assert a.times[0].tolist() == [5.0] and b.times[0].tolist() == [3.0]
    assert events.outside_window == 2 and not events.window_stated
    assert any("not declared" in w and "key file" in w for w in events.warnings)
    differing = load_csv(_csv([("a", 5, 0, 10), ("a", 6, 1, 11)], "sequence,time,dimension,end"))
    assert differing.sequences[0].end_time == 11.0 and differing.n_events == 2  # the widest: no row cut off
    assert any("row 2: '10'" in w for w in differing.warnings) and not differing.window_stated
    declared = load_csv(_csv([("a", 5, 0, 10), ("a", 6, 1, 11)], "sequence,time,dimension,end"), end_time=12)
    assert declared.window_stated and declared.sequences[0].end_time == 12.0  # the options win, the column unread
    assert any("column was not read" in w for w in declared.warnings)


@pytest.mark.parametrize(
    "content, kwargs, fragment",
    [
        (_csv([(1, 0), ("2024-01-01", 1)]), {}, "row 3, column 'time': '2024-01-01' is a datetime, but row 2"),
        (_csv([("2024-01-01", 0), (3, 1)]), {}, "row 3, column 'time': '3' is a number, but row 2"),
        (_csv([("2024-01-01", 0), ("soon", 1)]), {}, "row 3, column 'time': 'soon' is not an ISO-8601"),
        (_csv([(1, 0)]), {"start_time": "2024-01-01"}, "holds numbers"),
        (_csv([("2024-01-01", 0)]), {"end_time": 5.0}, "holds datetimes"),
        (_csv([(1, 0)]), {"time_unit": "weeks"}, "unknown time unit"),
        (_csv([(1, 0)]), {"start_time": 2, "end_time": 2}, "after its start"),
        (b"\xb8\x9f\x00\x01\x02random", {}, "not a text CSV file"),
        (b"time,dimension\n1,0\n\x00\x00", {}, "not a text CSV file"),
        (b"time,dimension\n" + b"1.5,0\n" * 20000 + b"2,\xb8\n", {}, "not a text CSV file: byte 0xb8 at position"),
    ],
)
def test_bad_time_input_gives_one_line_errors(content, kwargs, fragment):
    with pytest.raises(DataError) as info:
        load_csv(content, **kwargs)
    assert fragment in str(info.value) and "\n" not in str(info.value)


def test_dimension_labels_rule_and_the_note_on_mixed_columns():
    integers = load_csv(_csv([(1, 0), (2, 2)]))
    assert integers.names == ("0", "1", "2") and not integers.warnings[:-1]
    assert integers.describe().startswith("3 dimensions: 0, 1, 2")
    mixed = load_csv(_csv([(1, 0), (2, 1), (3, "x"), (4, 1)]))
    assert mixed.names == ("0", "1", "x") and mixed.describe().startswith("3 dimensions: 0, 1, x")
    assert any("'x' on row 4" in w and "mixes integers and labels" in w for w in mixed.warnings)
    labels = load_csv(_csv([(1, "buy"), (2, "sell"), (3, "7")]))
    assert any("'7' on row 4 is an integer among labels" in w for w in labels.warnings)
    pure = load_csv(_csv([(1, "buy"), (2, "sell")]))
    assert pure.warnings == ()


@pytest.mark.parametrize("decimals, magnitude", [(0, 1e12), (3, 1.7e9), (6, 1.7e9), (9, 1e5)])
def test_decimal_ticks_recover_the_written_decimals_exactly(decimals, magnitude):
    from decimal import Decimal

    from dphawkes_core.data.timeaxis import decimal_ticks

    rng = np.random.default_rng(decimals)
    text = [f"{v:.{decimals}f}" for v in rng.uniform(0, magnitude, 2000)]
    ticks, scale = decimal_ticks(np.array(text, dtype=float))
    assert scale == 10**decimals or all(t.endswith("0") for t in text)
    expected = [int(Decimal(t) * scale) for t in text]  # exact decimal arithmetic, independent of floats
    assert ticks.tolist() == expected
    assert decimal_ticks(np.array([1.7e9 + 1 / 3])) is None  # 17 significant digits: no exact decimal form


@pytest.mark.parametrize(("end", "start", "expected"), [
    (73288.52745954, None, "[0, 73288.5], length 73288.5"),
    (0.012345678, None, "[0, 0.0123457], length 0.0123457"),
    (86400.0, EPOCH, f"[{EPOCH}, {EPOCH + 86400}], length 86400"),
])
def test_the_window_is_written_to_six_significant_digits_of_its_length(end, start, expected):
    """A window bound shows as many digits as the length's six significant ones resolve: no float noise
    (``73288.52745954``), and an epoch start keeps its whole seconds."""
    kwargs = {} if start is None else {"start_time": start}
    events = load_csv(_csv([(end / 2 + (start or 0), 0)]), end_time=end + (start or 0), **kwargs)
    assert events.window_text().startswith(expected)
