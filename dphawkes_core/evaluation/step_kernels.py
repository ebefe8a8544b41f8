"""Kernels estimated as step functions of the lag (a fit's own per-lag values, or averaged over lags)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class StepKernels:
    """Kernels as step functions of the lag: ``values[i, j, b]`` on ``(edges[b], edges[b+1]]``, 0 beyond.

    Attributes
    ----------
    values : numpy.ndarray
        ``(d, d, n)`` kernel values per bin; ``values[i, j]`` is ``h_ij``, the effect of j on i.
    edges : numpy.ndarray
        ``(n+1,)`` bin edges ``0 = edges[0] < … < edges[n] = pΔ``.
    baseline : numpy.ndarray
        ``(d,)`` baseline η, unchanged by the averaging.
    bin_size : float
        Δ of the fit the kernels come from.
    block : int
        m, the number of Δ-lags averaged per bin (1: the fit's own step kernels).
    """

    values: np.ndarray
    edges: np.ndarray
    baseline: np.ndarray
    bin_size: float
    block: int

    @property
    def width(self) -> float:
        """w = mΔ, the width of every bin but possibly the last (shorter when m does not divide p)."""
        return self.block * self.bin_size

    @property
    def support(self) -> float:
        """pΔ, the end of the last bin."""
        return float(self.edges[-1])

    def values_at(self, t: np.ndarray) -> np.ndarray:
        """The step kernels at lags ``t``: array ``(d, d, len(t))``, 0 outside ``(0, pΔ]``."""
        t = np.asarray(t, dtype=float)
        index = np.searchsorted(self.edges, t, side="left") - 1  # t in (edges[b], edges[b+1]] → b
        inside = (index >= 0) & (index < self.values.shape[2])
        out = np.zeros(self.values.shape[:2] + t.shape)
        out[:, :, inside] = self.values[:, :, index[inside]]
        return out

    def to_dict(self) -> dict:
        """Plain dict for the JSON export (the privacy note: the averaging is post-processing)."""
        return {"width": self.width, "block": self.block, "bin_size": self.bin_size, "edges": self.edges,
                "kernels": self.values, "baseline": self.baseline,
                "note": "post-processing of 'kernels' (means over blocks of lags): no privacy cost, as private "
                        "as the fit"}
