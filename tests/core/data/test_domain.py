"""The declared public domain closes the leaks of a domain read from the data: a neighbour with one extra row
in a new dimension or a new sequence (inside or outside the window) gets the same output shape and σ²; rows
outside the domain are dropped and counted, never refused; without a declaration the release is not formal.
Also: σ² = 0 is never formal."""

from __future__ import annotations

import json

import numpy as np
import pytest

from dphawkes_cli.main import main
from dphawkes_core.data.domain import Domain, dimension_codes, parse_dimensions, read_sequences
from dphawkes_core.data.io import load_csv
from dphawkes_core.errors import DataError

ROWS = [(0.5, 0), (1.2, 1), (2.0, 0), (2.7, 1), (3.1, 0), (4.4, 1), (5.0, 0), (6.3, 1), (7.7, 0), (8.1, 1)]
END = 10


def _csv(path, rows, sequence=False):
    header = "time,dimension,sequence" if sequence else "time,dimension"
    path.write_text(header + "\n" + "\n".join(",".join(str(v) for v in row) for row in rows) + "\n")
    return path


def _fit(path, out, *extra):
    argv = ["fit", str(path), "--method", "ssp", "--bin-size", "1", "--lags", "2", "--sigma2", "1e-3",
            "--calibration", "formal", "--count-cap", "2", "--end-time", str(END), "--json", str(out), *extra]
    assert main(argv) == 0
    return json.loads(out.read_text())


@pytest.mark.parametrize("extra_time", [3.5, 12.0])  # inside and outside the window [0, 10]
def test_a_row_in_a_new_dimension_changes_neither_shape_nor_noise(tmp_path, extra_time):
    base = _fit(_csv(tmp_path / "d.csv", ROWS), tmp_path / "d.json", "--dimensions", "2")
    neighbour = _fit(_csv(tmp_path / "n.csv", ROWS + [(extra_time, 2)]), tmp_path / "n.json", "--dimensions", "2")
    assert np.shape(neighbour["kernels"]) == np.shape(base["kernels"]) == (2, 2, 2)
    assert neighbour["sigma2"] == base["sigma2"] and neighbour["n_bins"] == base["n_bins"]
    assert neighbour["outside_domain"] == 1 and base["formal_settings"]  # the domain is applied before the window
    assert neighbour["formal_settings"]


def test_without_declared_dimensions_the_release_is_not_formal(tmp_path):
    payload = _fit(_csv(tmp_path / "d.csv", ROWS), tmp_path / "d.json")
    assert not payload["formal_settings"]
    assert any("number of dimensions" in reason for reason in payload["formal_reasons"])


def test_a_row_with_a_new_sequence_outside_the_window_changes_nothing(tmp_path):
    rows = [(t, j, s) for s in range(2) for t, j in ROWS]
    base = _fit(_csv(tmp_path / "d.csv", rows, True), tmp_path / "d.json", "--dimensions", "2", "--sequences", "2")
    neighbour = _fit(_csv(tmp_path / "n.csv", rows + [(15.0, 0, 7)], True), tmp_path / "n.json",
                     "--dimensions", "2", "--sequences", "2")
    assert neighbour["n_bins"] == base["n_bins"] == 2 * END and neighbour["sigma2"] == base["sigma2"]
    assert np.shape(neighbour["kernels"]) == np.shape(base["kernels"])
    assert neighbour["formal_settings"] and neighbour["outside_domain"] == 1


def test_undeclared_sequences_are_not_formal_and_a_missing_declared_one_still_counts(tmp_path):
    rows = [(t, j, s) for s in range(2) for t, j in ROWS]
    path = _csv(tmp_path / "d.csv", rows, True)
    undeclared = _fit(path, tmp_path / "u.json", "--dimensions", "2")
    assert not undeclared["formal_settings"]
    assert any("set of sequences" in reason for reason in undeclared["formal_reasons"])
    three = _fit(path, tmp_path / "t.json", "--dimensions", "2", "--sequences", "3")  # key 2 has no rows
    assert three["n_bins"] == 3 * END and three["formal_settings"]


def test_no_noise_is_never_formal(tmp_path):
    out = tmp_path / "z.json"
    argv = ["fit", str(_csv(tmp_path / "d.csv", ROWS)), "--method", "ssp", "--bin-size", "1", "--lags", "2",
            "--sigma2", "0", "--calibration", "formal", "--count-cap", "5", "--end-time", str(END),
            "--dimensions", "2", "--json", str(out)]
    assert main(argv) == 0
    payload = json.loads(out.read_text())
    assert payload["formal_settings"] is False and any("σ² = 0" in r for r in payload["formal_reasons"])


def test_names_map_through_the_declared_list_whatever_their_sort_order(tmp_path):
    text = "time,dimension\n" + "\n".join(f"{t},{'zeta' if j else 'alpha'}" for t, j in ROWS) + "\n"
    renamed = text.replace("zeta", "aaa")
    a = load_csv(text.encode(), end_time=END, domain=Domain(dimensions=("alpha", "zeta")))
    b = load_csv(renamed.encode(), end_time=END, domain=Domain(dimensions=("alpha", "aaa")))
    assert [len(t) for t in a.sequences[0].times] == [len(t) for t in b.sequences[0].times] == [5, 5]
    assert a.sequences[0].times[1].tolist() == b.sequences[0].times[1].tolist()


def test_parsing_the_declarations():
    assert parse_dimensions("3") == ("0", "1", "2")
    assert parse_dimensions("login, purchase") == ("login", "purchase")
    assert read_sequences("4") == (("0", "1", "2", "3"), None)
    codes, inside = dimension_codes(np.array([0, 1, 2, 7]), ("a", "b", "c"))
    assert codes[:3].tolist() == [0, 1, 2] and inside.tolist() == [True, True, True, False]
    with pytest.raises(DataError):
        Domain(dimensions=("a", "a"))


def test_a_key_file_declares_keys_and_their_windows(tmp_path):
    keys = tmp_path / "keys.csv"
    keys.write_text("sequence,start,end\nbob,0,10\nann,5,20\n")
    assert read_sequences(str(keys)) == (("bob", "ann"), (("0", "10"), ("5", "20")))
    data = "time,dimension,sequence\n1,0,bob\n6,1,ann\n7,0,carl\n"
    events = load_csv(data.encode(), domain=Domain(dimensions=("0", "1"), sequences=("bob", "ann"),
                                                   windows=(("0", "10"), ("5", "20"))))
    assert events.window_stated and events.outside_domain == 1 and events.n_sequences == 2
    assert [s.end_time for s in events.sequences] == [10.0, 15.0]


def _partitions(folder, rows):
    import pyarrow as pa
    import pyarrow.parquet as pq

    folder.mkdir()
    half = len(rows) // 2
    for k, part in enumerate((rows[:half], rows[half:])):
        t, j, s = zip(*part)
        pq.write_table(pa.table({"time": list(t), "dimension": list(j), "sequence": list(s)}), folder / f"{k}.parquet")
    return folder


def test_the_partitioned_path_keeps_shape_and_noise_for_the_same_neighbours(tmp_path):
    rows = [(t, j, s) for s in range(2) for t, j in ROWS]
    declared = ("--dimensions", "2", "--sequences", "2")
    base = _fit(_partitions(tmp_path / "d", rows), tmp_path / "d.json", *declared)
    for name, extra in (("dim", (3.5, 2, 0)), ("seq", (15.0, 0, 7))):
        neighbour = _fit(_partitions(tmp_path / name, rows + [extra]), tmp_path / f"{name}.json", *declared)
        assert neighbour["n_bins"] == base["n_bins"] and neighbour["sigma2"] == base["sigma2"]
        assert np.shape(neighbour["kernels"]) == np.shape(base["kernels"]) and neighbour["formal_settings"]
        assert neighbour["outside_domain"] == 1
    assert not _fit(tmp_path / "d", tmp_path / "u.json", "--dimensions", "2")["formal_settings"]


def test_with_a_declared_domain_a_malformed_row_is_dropped_and_counted_not_refused():
    good = "time,dimension\n" + "".join(f"{t},{j}\n" for t, j in ROWS)
    for bad_row in ("nan,0\n", ",1\n", "soon,0\n", "inf,1\n"):
        events = load_csv((good + bad_row).encode(), end_time=END, domain=Domain(dimensions=("0", "1")))
        assert events.outside_domain == 1 and events.n_events == len(ROWS), bad_row
        with pytest.raises(DataError):  # without a declared domain it is still refused, with its row
            load_csv((good + bad_row).encode(), end_time=END)


def test_with_a_declared_domain_a_time_before_the_window_is_dropped_not_refused():
    good = "time,dimension\n" + "".join(f"{t},{j}\n" for t, j in ROWS)
    events = load_csv((good + "-3,0\n").encode(), end_time=END, domain=Domain(dimensions=("0", "1")))
    assert events.outside_window == 1 and events.n_events == len(ROWS)
    with pytest.raises(DataError, match="negative time"):
        load_csv((good + "-3,0\n").encode(), end_time=END)
