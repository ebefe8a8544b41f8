"""Sweep tables: tidy rows, merged runs, saved with their parameters (CSV with a header line, Parquet with
metadata, and a JSON sidecar) and loaded back."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pandas as pd

from dphawkes_core.errors import ConfigError

_HEADER = "# dphawkes-sweep "
_PARQUET_KEY = b"dphawkes_sweep"


def tidy(rows: list[dict]) -> pd.DataFrame:
    """Rows to a table in a fixed order (Δ, method, level, seed), parameters first."""
    frame = pd.DataFrame(rows)
    if frame.empty:
        return frame
    first = ["source", "scenario", "method", "bin_size", "lags", "privacy", "level", "seed", "noise_seed",
             "sigma2", "epsilon"]
    cols = first + [c for c in frame.columns if c not in first]
    frame = frame[cols].sort_values(["bin_size", "method", "level", "seed"], na_position="first", kind="stable")
    return frame.reset_index(drop=True)


def merge_tables(*frames: pd.DataFrame) -> pd.DataFrame:
    """Concatenate sweep tables, keeping the last row of each cell key."""
    frames = [f for f in frames if f is not None and not f.empty]
    if not frames:
        return pd.DataFrame()
    joined = pd.concat(frames, ignore_index=True).drop_duplicates("key", keep="last")
    return tidy(joined.to_dict("records"))


def save_table(frame: pd.DataFrame, path: str | os.PathLike, params: dict | None = None) -> Path:
    """Write a sweep table to ``.parquet`` (parameters in its metadata) or a plain ``.csv`` (header first,
    readable by ``pandas.read_csv`` with no options) with the parameters in a sidecar ``<name>.csv.json``."""
    path = Path(path)
    meta = json.dumps(params or {}, default=_json_default)
    if path.suffix.lower() == ".parquet":
        import pyarrow as pa
        import pyarrow.parquet as pq

        table = pa.Table.from_pandas(frame, preserve_index=False)
        table = table.replace_schema_metadata({**(table.schema.metadata or {}), _PARQUET_KEY: meta.encode()})
        pq.write_table(table, path)
    elif path.suffix.lower() == ".csv":
        frame.to_csv(path, index=False)
        sidecar_path(path).write_text(meta + "\n")
    else:
        raise ConfigError(f"save the table as .csv or .parquet, not {path.suffix or 'no extension'!r}")
    return path


def sidecar_path(path: str | os.PathLike) -> Path:
    """Where the parameters of a CSV sweep table go: ``x.csv`` -> ``x.csv.json``."""
    path = Path(path)
    return path.with_name(path.name + ".json")


def load_table(path: str | os.PathLike) -> tuple[pd.DataFrame, dict]:
    """Read a table written by :func:`save_table`; returns the frame and its parameters."""
    path = Path(path)
    if path.suffix.lower() == ".parquet":
        import pyarrow.parquet as pq

        table = pq.read_table(path)
        meta = (table.schema.metadata or {}).get(_PARQUET_KEY, b"{}")
        return table.to_pandas(), json.loads(meta)
    with path.open() as fh:
        first = fh.readline()
        params = json.loads(first[len(_HEADER):]) if first.startswith(_HEADER) else {}  # tables before the sidecar
        if not first.startswith(_HEADER):
            fh.seek(0)
        frame = pd.read_csv(fh)
    if sidecar_path(path).is_file():
        params = json.loads(sidecar_path(path).read_text())
    text = frame.select_dtypes(include=["object", "string"]).columns
    frame[text] = frame[text].fillna("")  # CSV cannot tell an empty text from a missing one
    return frame, params


def _json_default(obj):
    if isinstance(obj, (np.floating, np.integer)):
        return obj.item()
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    return str(obj)
