"""Lag averaging: a fit's kernels on a fine Δ grid averaged into step kernels on bins of width w = mΔ.

Fitting at a fine Δ keeps the discretisation bias small (least squares converges to the kernel
smoothed over ±Δ), but every per-lag coefficient is noisy; averaging blocks of m consecutive lags
keeps the small bias and divides the variance (``docs/accuracy.md``). The kernel estimate ``H_k``
(k = 1..p) is read as the step function ``H_k`` on ``((k−1)Δ, kΔ]``; block b (lags ``bm+1 … (b+1)m``)
then covers ``(bmΔ, (b+1)mΔ]``.

It is post-processing of the estimate alone: it reads no data, so it costs no privacy, and the averaged
kernels of a private fit are exactly as private as the fit.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from dphawkes_core.errors import ConfigError
from dphawkes_core.evaluation.metrics import kernel_function_error
from dphawkes_core.evaluation.step_kernels import StepKernels

if TYPE_CHECKING:
    from dphawkes_core.data.kernels import Scenario
    from dphawkes_core.estimators import FitResult

WIDTH_TOLERANCE = 1e-9  # relative: a width w is a multiple mΔ when |w − mΔ| <= 1e-9·w


def block_for_width(width: float, bin_size: float, lags: int) -> int:
    """m = w/Δ for a bin width ``w`` that is a whole multiple of Δ (within float tolerance) and at most pΔ.

    Raises
    ------
    ConfigError
        When ``w`` is not positive, not a multiple of Δ, or wider than the support pΔ.
    """
    if not (math.isfinite(width) and width > 0):
        raise ConfigError(f"the averaging width w must be a positive number, got {width!r}")
    block = round(width / bin_size)
    if block < 1 or not math.isclose(width, block * bin_size, rel_tol=WIDTH_TOLERANCE, abs_tol=0.0):
        raise ConfigError(
            f"the averaging width w = {width:g} must be a whole multiple of the bin size Δ = {bin_size:g}"
        )
    if block > lags:
        raise ConfigError(f"the averaging width w = {width:g} is wider than the support pΔ = {lags * bin_size:g}")
    return block


def average_lags(kernels: np.ndarray, baseline: np.ndarray, bin_size: float, block: int) -> StepKernels:
    """Means of the kernel coefficients over blocks of ``block`` consecutive lags, as step kernels.

    Post-processing of the estimate only: it costs no privacy, and on a private fit the averaged kernels
    are as private as the fit.

    Parameters
    ----------
    kernels : numpy.ndarray
        ``(d, d, p)``: ``kernels[i, j, k]`` estimates ``h_ij`` on ``(kΔ, (k+1)Δ]`` (``FitResult.kernels``).
    baseline : numpy.ndarray
        ``(d,)`` baseline, passed through.
    bin_size : float
        Δ.
    block : int
        m >= 1. When m does not divide p, the last bin averages the remaining ``p mod m`` lags and is
        shorter (it ends at pΔ): every lag of the fit is kept, none is dropped.

    Returns
    -------
    StepKernels
        ``n = ⌈p/m⌉`` bins with edges ``0, mΔ, 2mΔ, …, pΔ``.
    """
    kernels = np.asarray(kernels, dtype=float)
    p = kernels.shape[2]
    if int(block) != block or not 1 <= block <= p:
        raise ConfigError(f"the number of lags per bin m must be a whole number from 1 to p = {p}, got {block!r}")
    starts = np.arange(0, p, block)
    sizes = np.diff(np.append(starts, p))
    values = np.add.reduceat(kernels, starts, axis=2) / sizes
    return StepKernels(values=values, edges=bin_size * np.append(starts, p).astype(float),
                       baseline=np.asarray(baseline, dtype=float), bin_size=float(bin_size), block=int(block))


def average_fit(result: FitResult, width: float) -> StepKernels:
    """:func:`average_lags` of a fit (``FitResult``) into bins of width ``w`` (a multiple of its Δ).

    Post-processing: no privacy cost; a private fit's averaged kernels are as private as the fit.
    """
    block = block_for_width(width, result.bin_size, result.lags)
    return average_lags(result.kernels, result.baseline, result.bin_size, block)


def fit_steps(result: FitResult) -> StepKernels:
    """A fit's own kernels as step functions (H_k on ((k−1)Δ, kΔ]): the plain estimate, m = 1."""
    return average_lags(result.kernels, result.baseline, result.bin_size, 1)


def add_lag_average(payload: dict, result: FitResult, steps: StepKernels, scenario: Scenario | None = None) -> None:
    """Add ``steps`` (the fit averaged over lags) to an export payload, and with a known truth the grid-free
    kernel error of the plain fit, of the average and of the all-zero estimate (1) to its metrics.

    Parameters
    ----------
    payload : dict
        :func:`~dphawkes_core.release.export.fit_payload` of ``result`` (changed in place): ``lag_average`` is
        added, and listed among the ``private_fields`` of a private fit (post-processing of its estimate).
    result : FitResult
        The fit ``steps`` were averaged from.
    steps : StepKernels
        :func:`average_fit` of ``result``.
    scenario : Scenario, optional
        The true process (simulated data).
    """
    payload["lag_average"] = steps.to_dict()
    if "private_fields" in payload:
        payload["private_fields"] = [*payload["private_fields"], "lag_average"]
    if scenario is not None:
        payload.setdefault("metrics", {}).update(
            kernel_function_error=kernel_function_error(fit_steps(result), scenario),
            averaged_kernel_function_error=kernel_function_error(steps, scenario),
            zero_estimate_kernel_function_error=1.0)
