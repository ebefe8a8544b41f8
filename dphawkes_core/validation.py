"""The one place for checks of public inputs: Δ, p, K, ε, δ, σ², caps and shares, and an option against its
declared :class:`~dphawkes_core.estimators.settings.Setting`.

Every check raises :class:`~dphawkes_core.errors.ConfigError` with one line that names the input; the CLI's
argument types, the configs' ``__post_init__``, the calibration and the ledger call these, never a copy.
"""

from __future__ import annotations

import math
from numbers import Integral, Real

from dphawkes_core.errors import ConfigError


def is_number(value) -> bool:
    """A finite real number (bools are not numbers here)."""
    return isinstance(value, Real) and not isinstance(value, bool) and math.isfinite(value)


def is_whole(value) -> bool:
    """A finite whole number (``3`` or ``3.0``)."""
    return is_number(value) and (isinstance(value, Integral) or float(value).is_integer())


def check_bin_size(bin_size) -> None:
    """Δ must be a positive finite number."""
    if not (is_number(bin_size) and bin_size > 0):
        raise ConfigError(f"bin size Δ must be a positive number, got {bin_size!r}")


def check_positive_whole(value, what: str) -> None:
    """``value`` must be a whole number >= 1 (``what`` names it in the message)."""
    if not (is_whole(value) and value >= 1):
        raise ConfigError(f"{what} must be a positive whole number, got {value!r}")


def check_lags(lags) -> None:
    """p must be a positive whole number."""
    if not (is_whole(lags) and lags >= 1):
        raise ConfigError(f"the number of lags p must be a positive integer, got {lags!r}")


def check_count_cap(count_cap) -> None:
    """C must be ``None`` (no clipping) or a positive whole number."""
    if count_cap is not None and not (is_whole(count_cap) and count_cap >= 1):
        raise ConfigError(f"count cap C must be a positive integer, got {count_cap!r}")


def check_share(share, what: str = "the count cap") -> None:
    """A share of ε spent on a private selection must lie strictly between 0 and 1."""
    if not (is_number(share) and 0 < share < 1):
        raise ConfigError(f"the share of ε spent on {what} must be in (0, 1), got {share!r}")


def check_delta(delta) -> None:
    """δ must lie in (0, 1)."""
    if not (is_number(delta) and 0 < delta < 1):
        raise ConfigError(f"δ must be in (0, 1), got {delta!r}")


def check_epsilon_delta(epsilon, delta) -> None:
    """ε must be a positive finite number and δ in (0, 1)."""
    if not (is_number(epsilon) and epsilon > 0):
        raise ConfigError(f"ε must be a positive number, got {epsilon!r}")
    check_delta(delta)


def check_privacy_inputs(epsilon, sigma2, delta) -> None:
    """Exactly one of ε or σ², a valid δ, and a σ² that is a number >= 0."""
    if (epsilon is None) == (sigma2 is None):
        raise ConfigError("give exactly one of ε (with δ) or σ²")
    check_delta(delta)
    if sigma2 is not None and not (is_number(sigma2) and sigma2 >= 0):
        raise ConfigError(f"σ² must be a number >= 0, got {sigma2!r}")
