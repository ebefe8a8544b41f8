"""Shared by the partitioned-store tests of the exact-time families (ctls, exp): Parquet stores of the same events
cut in several layouts, and events crowded where the cuts and the cap bite."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from dphawkes_core.data.kernels import get_scenario
from dphawkes_core.data.simulate import simulate


def write_events(path, times, dims, seqs) -> None:
    """One Parquet file of ``time``, ``dimension`` and ``sequence`` columns."""
    pq.write_table(pa.table({"time": np.asarray(times, float), "dimension": np.asarray(dims, np.int64),
                             "sequence": np.asarray(seqs, np.int64)}), path)


def write_layouts(root, t, d, s, cuts, name: str = "") -> None:
    """``whole``, ``by_seq``, ``by_time`` (at ``cuts``, an event on a cut in the later partition) and ``mixed``
    (by sequence, then by time) stores; ``on_edge``: as ``by_time``, but the events exactly on a cut split between
    the two partitions (the earlier one holds dimension 0's), so two partitions touch at that instant."""
    write_events(root / f"whole{name}.parquet", t, d, s)
    edges = [-np.inf, *cuts, np.inf]
    for layout in ("by_seq", "by_time", "mixed", "on_edge"):
        (root / f"{layout}{name}").mkdir()
    for k in np.unique(s):
        write_events(root / f"by_seq{name}" / f"part-{k}.parquet", t[s == k], d[s == k], s[s == k])
    for k in range(len(edges) - 1):
        part = (t >= edges[k]) & (t < edges[k + 1])
        write_events(root / f"by_time{name}" / f"part-{k:02d}.parquet", t[part], d[part], s[part])
        touching = (t > edges[k]) & (t < edges[k + 1]) | (t == edges[k]) & (d != 0) | (t == edges[k + 1]) & (d == 0)
        write_events(root / f"on_edge{name}" / f"part-{k:02d}.parquet", t[touching], d[touching], s[touching])
        for q in np.unique(s):
            both = part & (s == q)
            if both.any():
                write_events(root / f"mixed{name}" / f"part-{q}-{k:02d}.parquet", t[both], d[both], s[both])


def crowded_events(end: float, first_seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(times, dimensions, sequences)``: three paper-2d sequences (seeds ``first_seed`` …) on ``[0, end)``, plus
    crowded w-bins (w = 0.5) that cuts at 100.27 and 150.1–150.3 split, and events on bin edges and on the cuts
    199.5–203."""
    rows = []
    for q in range(3):
        seq = simulate(get_scenario("paper-2d"), end_time=end, seed=first_seed + q).sequences[0]
        for j, t in enumerate(seq.times):
            rows += [(x, j, q) for x in t]
    rows += [(100.26, 0, 1), (100.26, 0, 1), (100.28, 0, 1), (100.29, 0, 1), (100.3, 1, 1)]  # bin cut at 100.27
    rows += [(150.05, 1, 0), (150.15, 1, 0), (150.2, 1, 0), (150.25, 1, 0), (150.35, 1, 0), (150.4, 1, 0)]
    rows += [(150.12, 0, 0), (150.31, 0, 0)]  # a partition [150.1, 150.3) inside the bin [150, 150.5)
    rows += [(x, j, 2) for x in (199.5, 200.0, 200.0, 200.0, 200.5, 201.0, 203.0) for j in (0, 1)]  # on edges, cuts
    return tuple(np.array(c) for c in zip(*rows))
