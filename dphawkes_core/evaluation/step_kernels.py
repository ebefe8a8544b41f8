"""Kernels estimated as step functions of the lag (a fit's own per-lag values, or averaged over lags).

Every family's estimate is such a step function (``FitResult.kernels[i, j, k]`` on ``(kΔ, (k+1)Δ]``,
:func:`~dphawkes_core.evaluation.lag_average.fit_steps`), so :meth:`StepKernels.function_table` — the exported
``kernel_functions`` — lists the exact breakpoints, each twice (the value on its left, then on its right).
"""

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

    def primitive_at(self, t: np.ndarray) -> np.ndarray:
        """``∫_0^t h_ij``: array ``(d, d, len(t))``, 0 for ``t <= 0``, each kernel's mass from ``t = pΔ`` on."""
        t = np.clip(np.asarray(t, dtype=float), 0.0, self.support)
        d, _, n = self.values.shape
        mass = self.values * np.diff(self.edges)
        at_edges = np.concatenate([np.zeros((d, d, 1)), np.cumsum(mass, axis=2)], axis=2)
        index = np.clip(np.searchsorted(self.edges, t, side="right") - 1, 0, n - 1)  # edges[b] <= t
        return at_edges[:, :, index] + self.values[:, :, index] * (t - self.edges[index])

    def function_table(self) -> dict:
        """The kernels as functions on ``[0, pΔ]``, exactly: ``t`` lists every breakpoint twice and
        ``values[i][j]`` (``d × d × len(t)``, the effect of j on i) holds the value on its left, then on its right
        (0 left of 0 and right of pΔ). Loaded into tick: ``TimeFunction((t[::2], values[i][j][1::2]),
        inter_mode=TimeFunction.InterConstRight)`` (README, "Kernels as functions")."""
        d, _, n = self.values.shape
        padded = np.zeros((d, d, n + 2))
        padded[:, :, 1:-1] = self.values
        return {"t": np.repeat(self.edges, 2), "values": np.repeat(padded, 2, axis=2)[:, :, 1:-1], "kind": "step",
                "note": "step functions, constant on (t_b, t_b+1]: each breakpoint twice, the value on its left "
                        "then on its right; values[i][j] is the effect of dimension j on dimension i"}

    def to_dict(self) -> dict:
        """Plain dict for the JSON export (the privacy note: the averaging is post-processing)."""
        return {"width": self.width, "block": self.block, "bin_size": self.bin_size, "edges": self.edges,
                "kernels": self.values, "kernel_functions": self.function_table(), "baseline": self.baseline,
                "note": "post-processing of 'kernels' (means over blocks of lags): no privacy cost, as private "
                        "as the fit"}
