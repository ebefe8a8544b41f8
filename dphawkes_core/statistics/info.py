"""The one typed record of what statistics were computed from: :class:`DataInfo`.

Every way of computing statistics (binned events, the sequence unit, Parquet partitions) returns one, so the
CLI, the app, the export and the ledger read the same fields. It is also a read-only mapping of the fields
that are set (``info["n_bins"]``, ``info.get("auto_count_cap")``, ``{**info}``), and its :meth:`to_dict`
is what the JSON export writes. Several fields (``n_events``, ``clipped_events``, ``outside_domain`` …) are
computed from the private data: they describe it to its holder and are not covered by ε.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class DataInfo(Mapping):
    """What the statistics of a fit were computed from.

    Attributes
    ----------
    n_bins : int
        Number of bins N over all sequences (public: the windows and Δ fix it).
    n_events : int
        Events in the data (after the window and domain), before binning.
    binned_events, dropped_events, clipped_events : int
        Events in the bins, dropped at the window edges, removed by the count cap.
    skipped_sequences : int
        Sequences too short for p lags.
    window_stated, dimensions_declared, sequences_declared : bool
        Which parts of the domain are public (a formal release needs all three).
    outside_domain : int
        Rows dropped as outside the declared domain.
    count_cap : int or None
        The C the counts were clipped at.
    auto_count_cap : dict, optional
        An automatic C's release (:meth:`~dphawkes_core.privacy.count_cap.AutoCap.to_dict`).
    privacy_unit, sequence_clip, max_events, events_over_cap, clipped_sequences, sequences, auto_sequence_clip
        The sequence unit's: the G used, the public M, events dropped by M, sequences clipped, their number,
        an automatic G's release.
    outside_window, partitions : int, optional
        Partitioned statistics: rows outside the window, number of partitions.
    """

    n_bins: int
    n_events: int
    binned_events: int
    dropped_events: int
    clipped_events: int
    skipped_sequences: int
    window_stated: bool
    dimensions_declared: bool = False
    sequences_declared: bool = False
    outside_domain: int = 0
    count_cap: int | None = None
    auto_count_cap: dict | None = None
    privacy_unit: str | None = None
    sequence_clip: float | None = None
    max_events: int | None = None
    events_over_cap: int | None = None
    clipped_sequences: int | None = None
    sequences: int | None = None
    auto_sequence_clip: dict | None = None
    outside_window: int | None = None
    partitions: int | None = None

    def __getitem__(self, key: str):
        if key not in self._set_fields():
            raise KeyError(key)
        return getattr(self, key)

    def __iter__(self):
        return iter(self._set_fields())

    def __len__(self) -> int:
        return len(self._set_fields())

    def _set_fields(self) -> tuple[str, ...]:
        required = ("count_cap",)  # part of every record, even when None (no clipping)
        return tuple(f.name for f in dataclasses.fields(self)
                     if getattr(self, f.name) is not None or f.name in required)

    def to_dict(self) -> dict:
        """The set fields as a plain dict (JSON export, the ledger's stored release)."""
        return {key: self[key] for key in self}

    def updated(self, **changes) -> DataInfo:
        """A copy with ``changes``."""
        return dataclasses.replace(self, **changes)


def domain_info(events) -> dict:
    """What of the data's domain was declared (public) and what the declaration dropped: the :class:`DataInfo` fields
    ``dimensions_declared``, ``sequences_declared`` and ``outside_domain`` of ``events``."""
    return {"dimensions_declared": bool(events.dimensions_declared),
            "sequences_declared": bool(events.sequences_declared), "outside_domain": int(events.outside_domain)}
