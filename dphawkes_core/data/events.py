"""The validated event data set: :class:`Events` (one or more :class:`EventSequence`), with what of its
domain and window is public. Read from files by :mod:`dphawkes_core.data.io`, validated and assembled by
:mod:`dphawkes_core.data.columns`."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from dphawkes_core.data import timeaxis

if TYPE_CHECKING:
    import pandas as pd


@dataclass(frozen=True)
class EventSequence:
    """One realisation of a d-variate point process on its window ``[0, end_time]`` (relative times).

    Attributes
    ----------
    times : tuple of numpy.ndarray
        ``times[j]`` holds the sorted event times of dimension ``j``, relative to the window start.
    end_time : float
        Length ``T`` of the observation window.
    start_time : float
        The window start on the input's own time axis (after unit conversion), for display and export.
    """

    times: tuple[np.ndarray, ...]
    end_time: float
    start_time: float = 0.0

    @property
    def n_events(self) -> int:
        """Total number of events over all dimensions."""
        return int(sum(len(t) for t in self.times))


@dataclass(frozen=True)
class Events:
    """A validated multivariate event data set: one or more independent sequences.

    Attributes
    ----------
    sequences : tuple of EventSequence
        Independent sequences, all with the same number of dimensions.
    names : tuple of str
        One name per dimension.
    warnings : tuple of str
        Non-fatal findings of validation (e.g. a dimension without events, dropped events).
    window_stated : bool
        True only when the user stated every observation window (a public window).
    outside_window : int
        Events dropped because they lie outside a stated window.
    time_unit : str
        Unit of the time axis (``"s"``, ``"min"``, ``"h"``, ``"d"``), ``""`` when unknown.
    time_kind : str
        ``"number"`` or ``"datetime"``: what the input's time column held.
    dimensions_declared : bool
        True when d and the names come from a declared domain (:mod:`~dphawkes_core.data.domain`), not the data.
    sequences_declared : bool
        True when the set of sequences is declared (or the input has no sequence column: one sequence).
    outside_domain : int
        Rows dropped because their dimension or sequence key is outside the declared domain.
    source_key : str
        The key of the source's rows, before any declaration or window (:mod:`~dphawkes_core.data.row_key`); ``""``
        for events not read from a source (then the key is computed from the events themselves).
    """

    sequences: tuple[EventSequence, ...]
    names: tuple[str, ...]
    warnings: tuple[str, ...] = field(default=())
    window_stated: bool = False
    outside_window: int = 0
    time_unit: str = ""
    time_kind: str = "number"
    dimensions_declared: bool = False
    sequences_declared: bool = True
    outside_domain: int = 0
    source_key: str = ""

    @property
    def domain_declared(self) -> bool:
        """The dimensions, the sequences and the window are all public (stated, not read from the data)."""
        return self.dimensions_declared and self.sequences_declared and self.window_stated

    @property
    def dim(self) -> int:
        """Number of dimensions d."""
        return len(self.names)

    @property
    def n_events(self) -> int:
        """Total number of events over all sequences."""
        return int(sum(s.n_events for s in self.sequences))

    @property
    def n_sequences(self) -> int:
        """Number of independent sequences."""
        return len(self.sequences)

    @property
    def end_time(self) -> float:
        """Total observed time (sum of the sequences' window lengths)."""
        return float(sum(s.end_time for s in self.sequences))

    def counts_per_dimension(self) -> np.ndarray:
        """Number of events in each dimension, summed over sequences."""
        return np.array(
            [sum(len(s.times[j]) for s in self.sequences) for j in range(self.dim)], dtype=np.int64
        )

    def window_text(self) -> str:
        """The observation window in words, e.g. ``[0, 3652 d] (stated)``."""
        unit = f" {self.time_unit}" if self.time_unit else ""
        how = "stated" if self.window_stated else "read from the data — not a formal guarantee"
        if self.n_sequences > 1:
            return f"{self.n_sequences:,} windows, {self.end_time:.6g}{unit} long in all ({how})"
        seq = self.sequences[0]
        start = timeaxis.format_instant(seq.start_time, self.time_kind, self.time_unit, scale=seq.end_time)
        end = timeaxis.format_instant(seq.start_time + seq.end_time, self.time_kind, self.time_unit,
                                      scale=seq.end_time)
        return f"[{start}, {end}], length {seq.end_time:.6g}{unit} ({how})"

    def describe(self) -> str:
        """What was read, in one line: dimensions, events, sequences, window and dropped events."""
        parts = [f"{self.dim} dimension{'s' if self.dim != 1 else ''}: {', '.join(self.names)}",
                 f"{self.n_events:,} event{'s' if self.n_events != 1 else ''}"]
        if self.n_sequences > 1:
            parts.append(f"{self.n_sequences:,} sequences")
        parts.append(("" if self.n_sequences > 1 else "window ") + self.window_text())
        if self.outside_window:
            parts.append(f"{self.outside_window:,} outside the window dropped")
        return "; ".join(parts)

    def to_frame(self) -> pd.DataFrame:
        """Tidy table with columns ``sequence, time, dimension`` sorted by sequence and time."""
        import pandas as pd

        frames = []
        for s_idx, seq in enumerate(self.sequences):
            for j, t in enumerate(seq.times):
                frames.append(pd.DataFrame({"sequence": s_idx, "time": t, "dimension": j}))
        if not frames:
            return pd.DataFrame(columns=["sequence", "time", "dimension"])
        frame = pd.concat(frames, ignore_index=True)
        return frame.sort_values(["sequence", "time", "dimension"], kind="stable").reset_index(drop=True)
