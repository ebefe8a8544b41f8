"""CSV loading and validation of event data."""

import numpy as np
import pytest

from dphawkes_core.data.io import MAX_DIMENSIONS, from_arrays, load_csv, save_csv
from dphawkes_core.errors import DataError


def test_round_trip_single_sequence(tmp_path):
    events = from_arrays([[0.5, 0.1, 2.0], [1.5]], end_time=3.0)
    path = tmp_path / "e.csv"
    save_csv(events, path)
    back = load_csv(path, end_time=3.0)
    assert back.dim == 2 and back.n_events == 4 and back.n_sequences == 1
    np.testing.assert_allclose(back.sequences[0].times[0], [0.1, 0.5, 2.0])
    np.testing.assert_allclose(back.sequences[0].times[1], [1.5])


def test_sequences_and_default_end_time():
    raw = b"sequence,time,dimension\na,1.0,0\na,2.5,1\nb,0.2,1\n"
    events = load_csv(raw)
    assert events.n_sequences == 2
    assert [s.end_time for s in events.sequences] == [2.5, 0.2]
    assert events.sequences[1].times[0].size == 0


def test_numeric_sequence_ids_keep_their_order_of_first_appearance():
    """Numeric ids (typed column) and the same ids as text labels give the same sequences in the same order."""
    rows = "7,1.0,0\n7,2.5,1\n3,0.2,1\n3,0.4,0\n7,3.0,0\n"
    numeric = load_csv(("sequence,time,dimension\n" + rows).encode())
    text = load_csv(("sequence,time,dimension\n" + rows.replace("7,", "s7,").replace("3,", "s3,")).encode())
    assert [s.end_time for s in numeric.sequences] == [s.end_time for s in text.sequences] == [3.0, 0.4]
    for a, b in zip(numeric.sequences, text.sequences):
        assert [t.tolist() for t in a.times] == [t.tolist() for t in b.times]


def test_nan_sequence_id_gives_one_line_error():
    with pytest.raises(DataError, match="row 3, column 'sequence': empty or NaN value"):
        load_csv(b"sequence,time,dimension\n1,1.0,0\nnan,2.0,1\n")


def test_labels_are_mapped_in_sorted_order():
    events = load_csv(b"time,dimension\n1,sell\n2,buy\n3,sell\n")
    assert events.names == ("buy", "sell")
    assert events.sequences[0].times[1].tolist() == [1.0, 3.0]


def test_integer_dimension_names_from_labels_and_empty_dimension_warns():
    events = load_csv(b"time,dimension\n1,0\n2,0\n", names=["a", "b"])
    assert events.names == ("a", "b")
    assert any("'b' has no events" in w for w in events.warnings)


@pytest.mark.parametrize(
    "content, fragment",
    [
        (b"", "empty"),
        (b"time,dimension\n", "no event rows"),
        (b"time\n1\n", "missing column 'dimension'"),
        (b"time,dimension,colour\n1,0,red\n", "unexpected column 'colour'"),
        (b"time,dimension\n1,0\nabc,1\n", "row 3, column 'time'"),
        (b"time,dimension\n1,0\nnan,1\n", "row 3, column 'time'"),
        (b"time,dimension\n1,0\ninf,1\n", "not a finite number"),
        (b"time,dimension\n-1,0\n", "negative time"),
        (b"time,dimension\n1,0.5\n", "not a non-negative integer"),
        (b"time,dimension\n1,\n", "row 2, column 'dimension': empty"),
        (b"time,dimension\n1,0\n2,0,3\n", "not a readable CSV"),
    ],
)
def test_malformed_csv_gives_one_line_error(content, fragment):
    with pytest.raises(DataError) as info:
        load_csv(content)
    message = str(info.value)
    assert fragment in message
    assert "\n" not in message


def test_too_many_dimensions_and_size_limit():
    rows = "\n".join(f"{i},{i}" for i in range(MAX_DIMENSIONS + 1))
    with pytest.raises(DataError, match="at most 50"):
        load_csv(("time,dimension\n" + rows + "\n").encode())
    with pytest.raises(DataError, match="limit"):
        load_csv(b"time,dimension\n1,0\n" * 10, max_bytes=20)


def test_events_after_a_stated_end_time_are_dropped_and_counted():
    events = load_csv(b"time,dimension\n1,0\n5,0\n4,1\n", end_time=4.0)
    assert events.outside_window == 1 and events.window_stated
    assert events.n_events == 2 and events.end_time == 4.0
    assert any("1 event outside" in w for w in events.warnings)
    with pytest.raises(DataError, match="no events inside the window"):
        load_csv(b"time,dimension\n5,0\n", end_time=4.0)
