"""Data-loading speed targets: typed, vectorised parsing.

* ``load_csv`` of 10⁶ events (``time,dimension``, times with 6 decimals, 2 dimensions) under 0.4 s.
* The same events as Parquet (row groups of 10⁵) under 0.4 s.
* The same events shifted by 1.7·10⁹ s with a stated ``start_time`` (exact decimal subtraction, in
  integer ticks recovered from the parsed floats) under 1.5 s.

Each time is the best of three runs, file on local disk, so it measures parsing and validation, not disk.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from dphawkes_core.data.io import load_csv, load_parquet

N_EVENTS = 1_000_000
EPOCH = 1_700_000_000
REPEATS = 3


def _row(name, measured, target, met):
    return {"benchmark": name, "measured": measured, "target": target, "met": bool(met)}


def _best_of(load) -> tuple[float, object]:
    best, result = np.inf, None
    for _ in range(REPEATS):
        start = time.perf_counter()
        result = load()
        best = min(best, time.perf_counter() - start)
    return best, result


def _frame() -> pd.DataFrame:
    rng = np.random.default_rng(0)
    return pd.DataFrame({"time": np.sort(rng.uniform(0, 1e5, N_EVENTS)).round(6),
                         "dimension": rng.integers(0, 2, N_EVENTS)})


def rows() -> list[dict]:
    """All rows of this benchmark."""
    frame = _frame()
    with tempfile.TemporaryDirectory() as tmp:
        csv_path, shifted_path, parquet_path = (Path(tmp) / n for n in ("e.csv", "shifted.csv", "e.parquet"))
        frame.to_csv(csv_path, index=False, float_format="%.6f")
        frame.assign(time=frame["time"] + EPOCH).to_csv(shifted_path, index=False, float_format="%.6f")
        frame.to_parquet(parquet_path, row_group_size=100_000)
        csv_s, events = _best_of(lambda: load_csv(csv_path))
        parquet_s, _ = _best_of(lambda: load_parquet(parquet_path))
        shifted_s, shifted = _best_of(lambda: load_csv(shifted_path, start_time=EPOCH))
    same = events.n_events == shifted.n_events == N_EVENTS
    return [
        _row("load_csv 1e6 events (2 dims)", f"{csv_s:.3f} s", "< 0.4 s", csv_s < 0.4 and same),
        _row("load_parquet 1e6 events (10 row groups)", f"{parquet_s:.3f} s", "< 0.4 s", parquet_s < 0.4),
        _row("load_csv 1e6 epoch-shifted events, start_time stated (exact)", f"{shifted_s:.3f} s", "< 1.5 s",
             shifted_s < 1.5 and same),
    ]
