"""Hawkes kernel specifications and named scenarios.

Conventions (the same as tick's kernels, so one spec serves simulation and the truth on a grid):

* exponential: ``h(t) = alpha * beta * exp(-beta t)``; its L1 norm (branching ratio) is ``alpha``.
* power law: ``h(t) = multiplier * (cutoff + t) ** (-exponent)``, exponent > 1;
  L1 norm ``multiplier * cutoff ** (1 - exponent) / (exponent - 1)``.
* box: ``h(t) = height * 1{start <= t <= stop}`` as in the paper; L1 norm ``height * (stop - start)``.
  (tick's piecewise-constant kernel used for simulation is half-open, ``[start, stop)``: a difference
  on a set of measure zero that does not change the process.)
* zero, and sums of any of these.

The ground truth compared with an estimate is the kernel evaluated on the lag grid
``Δ, 2Δ, …, pΔ``: ``H_true[i, k*d + j] = h_ij((k+1)Δ)`` and ``H_true[i, d*p] = η_i``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dphawkes_core.errors import ConfigError

TAIL_MASS = 1e-6  # kernels with unbounded support are truncated where this much L1 mass remains


@dataclass(frozen=True)
class ZeroKernel:
    """The kernel ``h(t) = 0``."""

    def value(self, t: np.ndarray) -> np.ndarray:
        """Kernel value at times ``t`` (0 for ``t < 0``)."""
        return np.zeros_like(np.asarray(t, dtype=float))

    def l1_norm(self) -> float:
        """Integral of the kernel over ``[0, inf)``."""
        return 0.0

    def support(self) -> float:
        """Time after which the kernel is (numerically) zero."""
        return 0.0

    def describe(self) -> str:
        """Short human-readable formula."""
        return "0"


@dataclass(frozen=True)
class ExponentialKernel:
    """``h(t) = alpha * beta * exp(-beta t)`` (tick's ``HawkesKernelExp(alpha, beta)``)."""

    alpha: float
    beta: float

    def __post_init__(self):
        if not (self.alpha >= 0 and np.isfinite(self.alpha)):
            raise ConfigError(f"exponential kernel: alpha must be >= 0, got {self.alpha}")
        if not (self.beta > 0 and np.isfinite(self.beta)):
            raise ConfigError(f"exponential kernel: beta must be > 0, got {self.beta}")

    def value(self, t: np.ndarray) -> np.ndarray:
        """Kernel value at times ``t`` (0 for ``t < 0``)."""
        t = np.asarray(t, dtype=float)
        return np.where(t >= 0, self.alpha * self.beta * np.exp(-self.beta * np.clip(t, 0, None)), 0.0)

    def l1_norm(self) -> float:
        """Integral of the kernel over ``[0, inf)``."""
        return float(self.alpha)

    def support(self) -> float:
        """Time after which at most ``TAIL_MASS`` of the L1 mass remains."""
        return float(-np.log(TAIL_MASS) / self.beta) if self.alpha > 0 else 0.0

    def describe(self) -> str:
        """Short human-readable formula."""
        return f"{self.alpha * self.beta:g}·exp(−{self.beta:g}t)"


@dataclass(frozen=True)
class PowerLawKernel:
    """``h(t) = multiplier * (cutoff + t) ** (-exponent)`` (tick's ``HawkesKernelPowerLaw``)."""

    multiplier: float
    cutoff: float
    exponent: float

    def __post_init__(self):
        if not (self.multiplier >= 0 and np.isfinite(self.multiplier)):
            raise ConfigError(f"power-law kernel: multiplier must be >= 0, got {self.multiplier}")
        if not (self.cutoff > 0 and np.isfinite(self.cutoff)):
            raise ConfigError(f"power-law kernel: cutoff must be > 0, got {self.cutoff}")
        if not (self.exponent > 1 and np.isfinite(self.exponent)):
            raise ConfigError(f"power-law kernel: exponent must be > 1 for a finite norm, got {self.exponent}")

    def value(self, t: np.ndarray) -> np.ndarray:
        """Kernel value at times ``t`` (0 for ``t < 0``)."""
        t = np.asarray(t, dtype=float)
        return np.where(t >= 0, self.multiplier * (self.cutoff + np.clip(t, 0, None)) ** (-self.exponent), 0.0)

    def l1_norm(self) -> float:
        """Integral of the kernel over ``[0, inf)``."""
        return float(self.multiplier * self.cutoff ** (1 - self.exponent) / (self.exponent - 1))

    def support(self) -> float:
        """Time after which at most ``TAIL_MASS`` of the L1 mass remains (relative)."""
        if self.multiplier == 0:
            return 0.0
        # tail mass beyond x is norm * (cutoff / (cutoff + x)) ** (exponent - 1)
        return float(self.cutoff * (TAIL_MASS ** (-1 / (self.exponent - 1)) - 1))

    def describe(self) -> str:
        """Short human-readable formula."""
        return f"{self.multiplier:g}·({self.cutoff:g}+t)^−{self.exponent:g}"


@dataclass(frozen=True)
class BoxKernel:
    """``h(t) = height * 1{start <= t <= stop}``."""

    height: float
    start: float
    stop: float

    def __post_init__(self):
        if not (self.height >= 0 and np.isfinite(self.height)):
            raise ConfigError(f"box kernel: height must be >= 0, got {self.height}")
        if not (0 <= self.start < self.stop and np.isfinite(self.stop)):
            raise ConfigError(f"box kernel: need 0 <= start < stop, got [{self.start}, {self.stop}]")

    def value(self, t: np.ndarray) -> np.ndarray:
        """Kernel value at times ``t``."""
        t = np.asarray(t, dtype=float)
        return np.where((t >= self.start) & (t <= self.stop), float(self.height), 0.0)

    def l1_norm(self) -> float:
        """Integral of the kernel over ``[0, inf)``."""
        return float(self.height * (self.stop - self.start))

    def support(self) -> float:
        """End of the box."""
        return float(self.stop) if self.height > 0 else 0.0

    def describe(self) -> str:
        """Short human-readable formula."""
        return f"{self.height:g}·1{{{self.start:g}≤t≤{self.stop:g}}}"


@dataclass(frozen=True)
class SumKernel:
    """Sum of kernels."""

    terms: tuple

    def value(self, t: np.ndarray) -> np.ndarray:
        """Kernel value at times ``t``."""
        t = np.asarray(t, dtype=float)
        return sum((k.value(t) for k in self.terms), np.zeros_like(t))

    def l1_norm(self) -> float:
        """Integral of the kernel over ``[0, inf)``."""
        return float(sum(k.l1_norm() for k in self.terms))

    def support(self) -> float:
        """Largest support of the terms."""
        return max((k.support() for k in self.terms), default=0.0)

    def describe(self) -> str:
        """Short human-readable formula."""
        return " + ".join(k.describe() for k in self.terms) or "0"


Kernel = ZeroKernel | ExponentialKernel | PowerLawKernel | BoxKernel | SumKernel


@dataclass(frozen=True)
class Scenario:
    """A d-variate Hawkes process: baseline ``eta`` and kernel matrix ``h[i][j]`` (effect of j on i).

    Attributes
    ----------
    name : str
        Identifier (``paper-2d``, ``paper-4d`` or ``custom``).
    baseline : tuple of float
        Baseline intensities ``eta_i >= 0``.
    kernels : tuple of tuple of Kernel
        ``kernels[i][j]`` is ``h_ij``: how an event of dimension j excites dimension i.
    """

    name: str
    baseline: tuple
    kernels: tuple

    def __post_init__(self):
        d = len(self.baseline)
        if d == 0:
            raise ConfigError("a scenario needs at least one dimension")
        if len(self.kernels) != d or any(len(row) != d for row in self.kernels):
            raise ConfigError(f"the kernel matrix must be {d}×{d} for {d} baselines")
        if any((not np.isfinite(b)) or b < 0 for b in self.baseline):
            raise ConfigError("baselines must be finite and >= 0")
        if sum(self.baseline) <= 0:
            raise ConfigError("at least one baseline must be positive, or no event ever happens")

    @property
    def dim(self) -> int:
        """Number of dimensions d."""
        return len(self.baseline)

    def l1_matrix(self) -> np.ndarray:
        """Matrix of kernel L1 norms (the branching matrix)."""
        return np.array([[k.l1_norm() for k in row] for row in self.kernels], dtype=float)

    def spectral_radius(self) -> float:
        """Spectral radius of the branching matrix; the process is stationary iff it is < 1."""
        return float(np.max(np.abs(np.linalg.eigvals(self.l1_matrix()))))

    def check_stationary(self) -> None:
        """Raise :class:`ConfigError` when the process is explosive (spectral radius >= 1)."""
        rho = self.spectral_radius()
        if rho >= 1:
            raise ConfigError(
                f"explosive process: the spectral radius of the kernel-norm matrix is {rho:.3f} >= 1, "
                "so events would multiply without bound; lower the kernel norms"
            )

    def stationary_rate(self) -> np.ndarray:
        """Mean event rate per dimension, ``(I - L1)^-1 eta`` (stationary processes only)."""
        self.check_stationary()
        return np.linalg.solve(np.eye(self.dim) - self.l1_matrix(), np.asarray(self.baseline, float))

    def kernel_values(self, t: np.ndarray) -> np.ndarray:
        """Kernel matrix on times ``t``: array of shape ``(d, d, len(t))``."""
        t = np.asarray(t, dtype=float)
        return np.array([[k.value(t) for k in row] for row in self.kernels])

    def true_H(self, bin_size: float, lags: int) -> np.ndarray:
        """The discretised truth ``H_true`` of shape ``(d, d*lags + 1)`` on the lag grid.

        ``H_true[i, k*d + j] = h_ij((k+1)Δ)`` and the last column is the baseline.
        """
        grid = bin_size * np.arange(1, lags + 1)
        values = self.kernel_values(grid)  # (i, j, k)
        kernel_part = values.transpose(0, 2, 1).reshape(self.dim, self.dim * lags)
        return np.concatenate([kernel_part, np.asarray(self.baseline, float)[:, None]], axis=1)


def paper_2d() -> Scenario:
    """The paper's §5.1 process: η = [0.25, 0.125], h12 = 0.125·1{1≤t≤3}, h21 = 0.2·1{2≤t≤4},
    h22 = 0.25·e^{−t}, h11 = 0."""
    return Scenario(
        name="paper-2d",
        baseline=(0.25, 0.125),
        kernels=(
            (ZeroKernel(), BoxKernel(0.125, 1.0, 3.0)),
            (BoxKernel(0.2, 2.0, 4.0), ExponentialKernel(alpha=0.25, beta=1.0)),
        ),
    )


def paper_4d() -> Scenario:
    """The paper's §5.2 low-rank process: η = 0.125·1, H = [[H0, H0ᵀ], [H0, H0ᵀ]],
    H0 = [[0, h12], [h21, h22]], h12 = 0.125·1{1≤t≤3}, h21 = 0.25·1{2≤t≤4}, h22 = 0.2·e^{−t}."""
    zero, h12 = ZeroKernel(), BoxKernel(0.125, 1.0, 3.0)
    h21, h22 = BoxKernel(0.25, 2.0, 4.0), ExponentialKernel(alpha=0.2, beta=1.0)
    h0 = ((zero, h12), (h21, h22))
    h0t = ((zero, h21), (h12, h22))
    rows = tuple(h0[i] + h0t[i] for i in range(2))
    return Scenario(name="paper-4d", baseline=(0.125,) * 4, kernels=rows + rows)


SCENARIOS = {"paper-2d": paper_2d, "paper-4d": paper_4d}


def get_scenario(name: str) -> Scenario:
    """Look up a named scenario (``paper-2d`` or ``paper-4d``)."""
    try:
        return SCENARIOS[name]()
    except KeyError:
        raise ConfigError(f"unknown scenario {name!r}; choose one of {', '.join(SCENARIOS)}") from None
