"""Build a custom :class:`~dphawkes_core.data.kernels.Scenario` from plain values (the app's form widgets).

Each kernel family has named parameters with defaults and lower bounds, so a user interface can
render one input per parameter without knowing the kernel classes; :func:`build_scenario` turns
the chosen values into a validated scenario (kernel classes raise :class:`ConfigError` on bad values).
"""

from __future__ import annotations

from dataclasses import dataclass

from dphawkes_core.data.kernels import BoxKernel, ExponentialKernel, PowerLawKernel, Scenario, ZeroKernel
from dphawkes_core.errors import ConfigError

MAX_CUSTOM_DIM = 6


@dataclass(frozen=True)
class ParamSpec:
    """One numeric kernel parameter: name, label, default and the smallest allowed value."""

    name: str
    label: str
    default: float
    minimum: float


FAMILIES: dict[str, tuple[ParamSpec, ...]] = {
    "zero": (),
    "exponential": (
        ParamSpec("alpha", "norm α", 0.2, 0.0),
        ParamSpec("beta", "decay β", 1.0, 1e-6),
    ),
    "power law": (
        ParamSpec("multiplier", "multiplier", 0.1, 0.0),
        ParamSpec("cutoff", "cutoff c", 1.0, 1e-6),
        ParamSpec("exponent", "exponent (> 1)", 2.0, 1.0 + 1e-6),
    ),
    "box": (
        ParamSpec("height", "height", 0.1, 0.0),
        ParamSpec("start", "start", 0.0, 0.0),
        ParamSpec("stop", "stop", 1.0, 1e-6),
    ),
}


def make_kernel(family: str, params: dict):
    """Kernel of the named family with the given parameters (missing ones take their defaults).

    Parameters
    ----------
    family : str
        One of :data:`FAMILIES`.
    params : dict
        Parameter name -> value.

    Returns
    -------
    Kernel

    Raises
    ------
    ConfigError
        Unknown family or invalid parameter values.
    """
    if family not in FAMILIES:
        raise ConfigError(f"unknown kernel family {family!r}; choose one of {', '.join(FAMILIES)}")
    values = {p.name: float(params.get(p.name, p.default)) for p in FAMILIES[family]}
    if family == "zero":
        return ZeroKernel()
    if family == "exponential":
        return ExponentialKernel(**values)
    if family == "power law":
        return PowerLawKernel(**values)
    return BoxKernel(**values)


def build_scenario(baselines, families, params, name: str = "custom") -> Scenario:
    """Scenario from per-dimension baselines and per-pair kernel choices.

    Parameters
    ----------
    baselines : sequence of float
        ``η_i`` for ``i = 1..d`` (1 <= d <= :data:`MAX_CUSTOM_DIM`).
    families : sequence of sequence of str
        ``families[i][j]``: family of ``h_ij`` (effect of dimension j on dimension i).
    params : sequence of sequence of dict
        ``params[i][j]``: parameters of ``h_ij``.
    name : str
        Scenario name.

    Returns
    -------
    Scenario
        Validated (but possibly explosive: call ``check_stationary``).
    """
    d = len(baselines)
    if not 1 <= d <= MAX_CUSTOM_DIM:
        raise ConfigError(f"a custom scenario has 1 to {MAX_CUSTOM_DIM} dimensions, got {d}")
    if len(families) != d or len(params) != d or any(len(r) != d for r in families) or any(
        len(r) != d for r in params
    ):
        raise ConfigError(f"need a {d}×{d} table of kernel families and parameters")
    kernels = tuple(
        tuple(make_kernel(families[i][j], params[i][j]) for j in range(d)) for i in range(d)
    )
    return Scenario(name=name, baseline=tuple(float(b) for b in baselines), kernels=kernels)
