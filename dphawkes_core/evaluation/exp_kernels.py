"""Kernels that are sums of exponentials (the ``exp`` family's model) as smooth functions of the lag.

``h_ij(t) = Σ_u a_iju β_u e^{−β_u t}`` for ``t > 0``: :class:`ExponentialKernels` evaluates it and its primitive
exactly, and lists it on ``[0, s]`` at a step of at most s/1000 for the exported ``kernel_functions``.
:func:`fit_functions` reads any fit as kernel functions: the exponential sums of a fit that reports its decays
and their coefficients (``info["decays"]``, ``info["adjacency"]``), else the fit's own step kernels.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from dphawkes_core.data.baseline_bins import BaselineBins, BaselineProfile
from dphawkes_core.evaluation.lag_average import fit_steps
from dphawkes_core.evaluation.step_kernels import StepKernels

if TYPE_CHECKING:
    from dphawkes_core.estimators import FitResult

TABLE_POINTS = 1001  # the exported table's points on [0, s]: a step of s/1000
TAIL_TOLERANCE = 1e-12  # the kernels are read as 0 from where every e^{−βt} is below this (the scoring horizon)


@dataclass(frozen=True)
class ExponentialKernels:
    """Sums of exponentials ``h_ij(t) = Σ_u adjacency[i, j, u] β_u e^{−β_u t}`` (``t > 0``; 0 for ``t <= 0``).

    Attributes
    ----------
    adjacency : numpy.ndarray
        ``(d, d, U)``: ``a_iju``, the integral of ``h_ij`` carried by decay u (the effect of j on i).
    decays : numpy.ndarray
        ``(U,)`` the decays β_u (> 0).
    baseline : numpy.ndarray
        ``(d,)`` baseline μ.
    window : float
        s, the interval ``[0, s]`` the exported table covers (the fit's support pΔ).
    """

    adjacency: np.ndarray
    decays: np.ndarray
    baseline: np.ndarray
    window: float

    @property
    def support(self) -> float:
        """The lag from which every ``e^{−β t}`` is below :data:`TAIL_TOLERANCE` (at least s): pairs further apart
        add less than that share of a kernel's mass, so a score conditioning on the history reads them as 0."""
        return max(float(self.window), math.log(1.0 / TAIL_TOLERANCE) / float(np.min(self.decays)))

    def values_at(self, t: np.ndarray) -> np.ndarray:
        """``h_ij(t)``: array ``(d, d, len(t))``, 0 for ``t <= 0``."""
        t = np.asarray(t, dtype=float)
        positive = t > 0
        waves = self.decays[:, None] * np.exp(-np.outer(self.decays, np.where(positive, t, 0.0)))  # (U, n)
        return np.einsum("iju,un->ijn", self.adjacency, waves * positive)

    def primitive_at(self, t: np.ndarray) -> np.ndarray:
        """``∫_0^t h_ij = Σ_u a_iju (1 − e^{−β_u t})``: array ``(d, d, len(t))``, 0 for ``t <= 0``."""
        t = np.maximum(np.asarray(t, dtype=float), 0.0)
        return np.einsum("iju,un->ijn", self.adjacency, -np.expm1(-np.outer(self.decays, t)))

    def function_table(self) -> dict:
        """The kernels on ``[0, s]`` at :data:`TABLE_POINTS` equally spaced lags (a step of s/1000): ``t`` and
        ``values[i][j]`` (``d × d × len(t)``, the effect of j on i; at ``t = 0`` the limit from the right, ``Σ_u a
        β_u``). Loaded into tick: ``TimeFunction((t, values[i][j]))`` (linear interpolation)."""
        t = np.linspace(0.0, float(self.window), TABLE_POINTS)
        values = self.values_at(t)
        values[:, :, 0] = self.adjacency @ self.decays
        return {"t": t, "values": values, "kind": "smooth",
                "note": f"sums of exponentials on [0, s] at {TABLE_POINTS} equally spaced lags (read between them "
                        f"linearly); values[i][j] is the effect of dimension j on dimension i"}


def fit_functions(result: FitResult) -> ExponentialKernels | StepKernels:
    """A fit's kernels as functions: its exponential sums when it reports decays and their coefficients (the
    ``exp`` family), else its own step kernels (:func:`~dphawkes_core.evaluation.lag_average.fit_steps`)."""
    info = result.info or {}
    if "decays" in info and "adjacency" in info:
        return ExponentialKernels(adjacency=np.asarray(info["adjacency"], dtype=float),
                                  decays=np.asarray(info["decays"], dtype=float),
                                  baseline=np.asarray(result.baseline, dtype=float),
                                  window=float(result.bin_size * result.lags))
    return fit_steps(result)


def fit_baseline(baseline, info: dict | None) -> BaselineProfile:
    """A fit's baseline as a :class:`~dphawkes_core.data.baseline_bins.BaselineProfile`: the parts it reports
    (``info["baseline_profile"]``, ``baseline_bins``, ``baseline_period``: a baseline that follows the clock), else
    the constant ``baseline`` (``(d,)``)."""
    info = info or {}
    if "baseline_profile" not in info:
        return BaselineProfile.constant(baseline)
    period = info.get("baseline_period")
    bins = BaselineBins(int(info["baseline_bins"]), None if period is None else float(period))
    return BaselineProfile(np.asarray(info["baseline_profile"], dtype=float), bins)
