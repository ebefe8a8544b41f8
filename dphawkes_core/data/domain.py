"""The declared public domain of a data set: its dimensions (count and names), its sequence keys and their
windows. A formal release is computed over the domain, never over what the data happen to contain.

Rows outside a declared domain (an unknown dimension, an unknown sequence key) are dropped and counted, never
refused — a refusal would tell neighbouring data sets apart too — and never change the release's shape or
noise: d is the number of declared dimensions and every declared sequence is present (empty if it has no
rows), so the number of bins comes from the declared windows alone. Without a declaration the dimensions and
sequences are read from the data, and :func:`~dphawkes_core.privacy.report.formal_status` says the output is not a
formal release.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from dphawkes_core.errors import DataError

MAX_DECLARED_DIMENSIONS = 50


@dataclass(frozen=True)
class Domain:
    """A declared domain.

    Attributes
    ----------
    dimensions : tuple of str, optional
        The dimension names, in index order (``d = len(dimensions)``); ``None``: read from the data.
    sequences : tuple of str, optional
        The sequence keys, in index order; ``None``: read from the data (a file without a ``sequence`` column
        holds one sequence, whatever its rows).
    windows : tuple of (str, str), optional
        Per declared key, its public window ``(start, end)`` on the time column's axis (from a key file);
        ``None``: the window options apply to every sequence.
    """

    dimensions: tuple[str, ...] | None = None
    sequences: tuple[str, ...] | None = None
    windows: tuple[tuple[str, str], ...] | None = None

    def __post_init__(self):
        if self.dimensions is not None:
            if not self.dimensions or len(set(self.dimensions)) != len(self.dimensions):
                raise DataError("the declared dimensions must be distinct names, at least one")
            if len(self.dimensions) > MAX_DECLARED_DIMENSIONS:
                raise DataError(f"{len(self.dimensions)} dimensions declared; at most {MAX_DECLARED_DIMENSIONS}")
        if self.sequences is not None and (not self.sequences or len(set(self.sequences)) != len(self.sequences)):
            raise DataError("the declared sequence keys must be distinct, at least one")
        if self.windows is not None and (self.sequences is None or len(self.windows) != len(self.sequences)):
            raise DataError("declared windows need one (start, end) per declared sequence key")


def parse_dimensions(text: str) -> tuple[str, ...]:
    """``--dimensions``: a count ``N`` (names ``0 … N−1``) or comma-separated names."""
    text = text.strip()
    if text.isdigit():
        count = int(text)
        if not 1 <= count <= MAX_DECLARED_DIMENSIONS:
            raise DataError(f"the number of dimensions must be 1 … {MAX_DECLARED_DIMENSIONS}, got {count}")
        return tuple(str(j) for j in range(count))
    names = tuple(name.strip() for name in text.split(","))
    if any(not name for name in names):
        raise DataError(f"--dimensions {text!r}: empty name")
    return names


def read_sequences(text: str) -> tuple[tuple[str, ...], tuple[tuple[str, str], ...] | None]:
    """``--sequences``: a number ``N`` (keys ``0 … N−1``) or a key file, one key a line or a CSV with a
    ``sequence`` column and optional ``start,end`` columns (each key's public window)."""
    text = text.strip()
    if text.isdigit() and not Path(text).is_file():
        count = int(text)
        if count < 1:
            raise DataError("the number of sequences must be at least 1")
        return tuple(str(k) for k in range(count)), None
    path = Path(text)
    if not path.is_file():
        raise DataError(f"--sequences {text!r}: not a number and no such key file")
    lines = [line.strip() for line in path.read_text().splitlines() if line.strip()]
    header = [c.strip().lower() for c in lines[0].split(",")] if lines else []
    if "sequence" not in header:
        return tuple(lines), None
    column = {name: i for i, name in enumerate(header)}
    rows = [[cell.strip() for cell in line.split(",")] for line in lines[1:]]
    keys = tuple(row[column["sequence"]] for row in rows)
    if {"start", "end"} <= set(column):
        return keys, tuple((row[column["start"]], row[column["end"]]) for row in rows)
    return keys, None


def key_text(values) -> np.ndarray:
    """Keys as text, the way a key file writes them: whole numbers without a decimal point, booleans as ``1``/``0``
    (:func:`~dphawkes_core.data.cells.typed_key_text`)."""
    from dphawkes_core.data.cells import typed_key_text

    return typed_key_text(values)


def codes_in(values, declared: tuple[str, ...]) -> tuple[np.ndarray, np.ndarray]:
    """``(codes, inside)``: each cell's index in ``declared`` and which cells are declared, each cell matched on its
    own (:func:`~dphawkes_core.data.cells.key_codes`)."""
    from dphawkes_core.data.cells import key_codes

    return key_codes(values, declared)


def dimension_codes(values, declared: tuple[str, ...]) -> tuple[np.ndarray, np.ndarray]:
    """Codes of a dimension column against declared names: a name matches its index; a whole number that is not a
    declared name matches the one declared name of its value, else is an index when it is below d (files write
    dimensions as integers beside a labels file) (:func:`~dphawkes_core.data.cells.key_codes`)."""
    from dphawkes_core.data.cells import key_codes

    return key_codes(values, declared, indices=True)
