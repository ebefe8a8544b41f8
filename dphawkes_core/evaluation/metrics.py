"""Error metrics for an estimate ``Ĥ`` against the discretised truth ``H_true``.

The paper's relative error divides by ``d(dp+1)`` and therefore shrinks as p grows, whatever the
estimate; it is never reported alone. Next to it: the plain relative error, kernel-only and
baseline-only errors, and the same errors of the all-zero estimate (a reference any useful
estimate must beat: its plain relative error is exactly 1).

Those errors live on one lag grid. :func:`kernel_function_error` compares the kernel *functions*
instead (relative L2 over ``[0, s]``), so estimates on different grids — a fine fit averaged over lags,
the plain fit, another package's histogram — are compared on the same metric.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from dphawkes_core.data.kernels import Scenario
    from dphawkes_core.evaluation.step_kernels import StepKernels

FUNCTION_GRID_STEP = 1e-3  # midpoint-rule step of the grid-free error (finer changes it in the 4th digit)
FUNCTION_GRID_MAX_POINTS = 200_000  # beyond, the step grows with the support (memory d²·points)


@dataclass(frozen=True)
class ErrorReport:
    """Errors of an estimate and of the all-zero reference estimate.

    Attributes
    ----------
    relative_error_paper : float
        ``||Ĥ − H||_F / (d(dp+1) ||H||_F)`` (the paper's Figures 2 and 4).
    relative_error : float
        ``||Ĥ − H||_F / ||H||_F``.
    kernel_relative_error : float
        Plain relative error of the kernel part ``[H_1 … H_p]`` only.
    baseline_relative_error : float
        Plain relative error of the baseline ``η`` only.
    zero_estimate_relative_error : float
        Plain relative error of ``Ĥ = 0`` (always 1).
    zero_estimate_relative_error_paper : float
        The paper's metric for ``Ĥ = 0``: ``1 / (d(dp+1))``.
    """

    relative_error_paper: float
    relative_error: float
    kernel_relative_error: float
    baseline_relative_error: float
    zero_estimate_relative_error: float
    zero_estimate_relative_error_paper: float

    def to_dict(self) -> dict:
        """Plain dict for JSON/CSV export."""
        return asdict(self)


def _relative(diff: np.ndarray, ref: np.ndarray) -> float:
    norm = float(np.linalg.norm(ref))
    return float(np.linalg.norm(diff)) / norm if norm > 0 else float("nan")


def compare(estimate: np.ndarray, truth: np.ndarray) -> ErrorReport:
    """Compute every error metric of ``estimate`` against ``truth`` (both ``(d, dp+1)``).

    Parameters
    ----------
    estimate, truth : numpy.ndarray
        ``H = [H_1 … H_p, η]`` layouts of the same shape.

    Returns
    -------
    ErrorReport
    """
    estimate = np.asarray(estimate, dtype=float)
    truth = np.asarray(truth, dtype=float)
    if estimate.shape != truth.shape:
        raise ValueError(f"estimate has shape {estimate.shape}, truth {truth.shape}")
    size = truth.size  # d(dp+1)
    plain = _relative(estimate - truth, truth)
    return ErrorReport(
        relative_error_paper=plain / size,
        relative_error=plain,
        kernel_relative_error=_relative(estimate[:, :-1] - truth[:, :-1], truth[:, :-1]),
        baseline_relative_error=_relative(estimate[:, -1] - truth[:, -1], truth[:, -1]),
        zero_estimate_relative_error=1.0 if np.linalg.norm(truth) > 0 else float("nan"),
        zero_estimate_relative_error_paper=(1.0 / size) if np.linalg.norm(truth) > 0 else float("nan"),
    )


SHRINK_WARNING_RATIO = 0.5


def constraint_scale(H: np.ndarray, bin_size: float) -> tuple[float, float]:
    """``(||H||_F, ||Δ H||_*)``: the natural sizes of DP-PGD's bound B and DP-CG's radius r for ``H``.

    With ``H = H_true`` these are the "oracle" constraint sizes (the truth on the boundary).
    """
    H = np.asarray(H, dtype=float)
    return float(np.linalg.norm(H)), float(bin_size * np.linalg.norm(H, "nuc"))


def constraint_ratio(constraint: str | None, reference: np.ndarray, bin_size: float,
                     value: float | None) -> float | None:
    """How large the constraint set is compared with a reference estimate (truth, or the CLS fit).

    ``constraint`` names the family's constraint (:attr:`~dphawkes_core.estimators.family.PrivacyTags.constraint`):
    ``B / ||H_ref||_F`` for ``bound`` (the ball ``||H||_F <= B``), ``r / ||Δ H_ref||_*`` for ``radius`` (the
    ball ``||U||_* <= r``); ``None`` for an unconstrained family. Well below 1 (see ``SHRINK_WARNING_RATIO``),
    every estimate is pulled toward zero, so private and non-private estimates look alike because both are
    shrunk — not because the noise is harmless.
    """
    if constraint is None or value is None:
        return None
    fro, nuclear = constraint_scale(reference, bin_size)
    scale = fro if constraint == "bound" else nuclear
    return value / scale if scale > 0 else float("inf")


def midpoint_grid(support: float, step: float = FUNCTION_GRID_STEP,
                  max_points: int = FUNCTION_GRID_MAX_POINTS) -> np.ndarray:
    """Midpoints of ``n = min(⌈s/step⌉, max_points)`` equal cells over ``[0, s]`` (the midpoint rule's nodes)."""
    n = min(max(math.ceil(support / step - 1e-9), 1), max_points)
    return (np.arange(n) + 0.5) * (support / n)


def function_relative_error(estimate: np.ndarray, truth: np.ndarray) -> float:
    """``sqrt(Σ_ij ∫(ĥ_ij − h_ij)²) / sqrt(Σ_ij ∫h_ij²)`` from kernel values ``(d, d, n)`` on one uniform
    midpoint grid (the cell width cancels). The all-zero estimate has error 1."""
    estimate = np.asarray(estimate, dtype=float)
    truth = np.asarray(truth, dtype=float)
    norm = float(np.sum(truth**2))
    return float(np.sqrt(np.sum((estimate - truth) ** 2) / norm)) if norm > 0 else float("nan")


def kernel_function_error(steps: StepKernels, scenario: Scenario, support: float | None = None) -> float:
    """Grid-free relative L2 error of step kernels against a scenario's kernel functions over ``[0, s]``.

    Parameters
    ----------
    steps : StepKernels
        The estimate as step functions (:func:`~dphawkes_core.evaluation.lag_average.fit_steps` for a plain fit,
        :func:`~dphawkes_core.evaluation.lag_average.average_fit` for one averaged over lags).
    scenario : Scenario
        The true process.
    support : float, optional
        s (default: the estimate's own support pΔ).

    Returns
    -------
    float
        ``sqrt(Σ_ij ∫_0^s (ĥ_ij − h_ij)² dt) / sqrt(Σ_ij ∫_0^s h_ij² dt)``, both integrals by the midpoint
        rule on :func:`midpoint_grid`; 1 for the all-zero estimate, whatever the grid.
    """
    t = midpoint_grid(steps.support if support is None else support)
    return function_relative_error(steps.values_at(t), scenario.kernel_values(t))
