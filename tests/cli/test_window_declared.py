"""A window is public only when declared, through the real CLI.

``start``/``end`` columns are private rows: they may set a window for exploration but never count as stated, and a
row whose value differs never makes a fit fail. For a formal release the window comes from the window options or a
key file — then the columns are not read, and a one-row neighbour whose ``end`` differs gives the same shape and σ².
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from dphawkes_cli.main import main

ROWS = [(s, 0.5 + 0.7 * k, k % 2) for s in ("ann", "bob") for k in range(30)]  # window [0, 30] per sequence
FORMAL = ["--method", "ssp", "--bin-size", "1", "--lags", "2", "--epsilon", "1", "--calibration", "formal",
          "--count-cap", "2", "--dimensions", "2"]


def _csv(path, rows, end_of=lambda s, k: 30):
    path.write_text("sequence,time,dimension,start,end\n"
                    + "".join(f"{s},{t},{j},0,{end_of(s, k)}\n" for k, (s, t, j) in enumerate(rows)))
    return path


def _fit(path, out, *argv) -> tuple[int, dict | None]:
    status = main(["fit", str(path), *argv, "--json", str(out)])
    return status, json.loads(out.read_text()) if status == 0 else None


def _keys(path, windows: bool) -> str:
    """A key file: the keys one a line, or with each key's window (``sequence,start,end``)."""
    path.write_text("sequence,start,end\nann,0,30\nbob,0,30\n" if windows else "ann\nbob\n")
    return str(path)


@pytest.mark.parametrize("declaration", ["options", "key file"])
def test_a_row_whose_end_differs_never_makes_a_formal_release_fail(tmp_path, declaration):
    declared = (["--end-time", "30", "--sequences", _keys(tmp_path / "keys.txt", windows=False)]
                if declaration == "options" else ["--sequences", _keys(tmp_path / "keys.csv", windows=True)])
    base = _csv(tmp_path / "base.csv", ROWS)
    neighbour = _csv(tmp_path / "neighbour.csv", ROWS + [("bob", 12.25, 1)],
                     end_of=lambda s, k: 31 if k == len(ROWS) else 30)  # its own end differs
    (status, ours), (status_n, theirs) = (_fit(p, tmp_path / f"{p.stem}.json", *FORMAL, *declared)
                                          for p in (base, neighbour))
    assert status == status_n == 0
    for payload in (ours, theirs):
        assert np.shape(payload["kernels"]) == (2, 2, 2) and payload["n_bins"] == 60
        assert payload["window_stated"] and payload["formal_settings"]
    assert theirs["sigma2"] == ours["sigma2"]


def _one_sequence(path, rows, ends):
    """A file without a sequence column (one sequence: its set of sequences needs no declaration)."""
    path.write_text("time,dimension,start,end\n" + "".join(f"{t},{j},0,{e}\n" for (_, t, j), e in zip(rows, ends)))
    return path


def test_start_end_columns_never_declare_the_window(tmp_path, capsys):
    """Without options or a key file the columns' window is read from the data: a formal fit is refused in one line
    that points to the declarations — the same for the data and their neighbour whose one row's end differs (it
    was a stated window, and the neighbour's release failed); with --end-time both are released alike."""
    rows = ROWS[:30]
    base = _one_sequence(tmp_path / "base.csv", rows, [30] * 30)
    neighbour = _one_sequence(tmp_path / "neighbour.csv", rows, [30] * 3 + [29] + [30] * 26)
    for path in (base, neighbour):
        status, _ = _fit(path, tmp_path / "f.json", *FORMAL)
        err = capsys.readouterr().err
        assert status == 2 and err.count("\n") == 1 and "key file" in err and "--end-time" in err
    released = [_fit(path, tmp_path / "r.json", *FORMAL, "--end-time", "30") for path in (base, neighbour)]
    assert [status for status, _ in released] == [0, 0]
    assert released[0][1]["sigma2"] == released[1][1]["sigma2"] and released[1][1]["formal_settings"]
    assert "column" in capsys.readouterr().err  # says the columns were not read
    status, payload = _fit(neighbour, tmp_path / "x.json", "--bin-size", "1", "--lags", "2")  # exploration
    err = capsys.readouterr().err
    assert status == 0 and not payload["window_stated"] and not payload["formal_settings"]
    assert "not declared" in err and "different end values" in err
