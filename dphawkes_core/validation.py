"""The one place for checks of public inputs: Δ, p, K, ε, δ, σ², caps and shares, and an option against its
declared :class:`~dphawkes_core.estimators.settings.Setting`.

Every check raises :class:`~dphawkes_core.errors.ConfigError` with one line that names the input; the CLI's
argument types, the configs' ``__post_init__``, the calibration and the ledger call these, never a copy.
"""

from __future__ import annotations

import math
from numbers import Integral, Real

from dphawkes_core.errors import ConfigError

#: The largest target ε the calibrations take. Above it the analytic Gaussian calibration (dp-accounting's
#: ``get_sigma_gaussian``) returns a σ whose ε exceeds the target (by 3·10⁻¹² of it at ε = 10⁴, 1.5 % at 10²⁰) and
#: fails from 10²⁰⁰, an automatic cap's PLD composition takes a minute at 10³; and e¹⁰⁰ protects nothing.
EPSILON_MAX = 100.0
#: The largest noise variance a fit computes with: the fits square noisy numbers (A², Gram matrices), so σ stays
#: far inside float64's range (σ² = 10³⁰⁸ overflowed them).
SIGMA2_MAX = 1e100
#: The smallest noise multiplier σ/(S√K) whose ε is computed: below it ε exceeds 10¹⁹⁹ (about 1/(2m²)) and the
#: accountants leave float64's range (dp-accounting's solver fails from 10⁻¹⁶⁰).
MULTIPLIER_MIN = 1e-100


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


def check_epsilon(epsilon) -> None:
    """ε must be a positive number at most :data:`EPSILON_MAX`."""
    if not (is_number(epsilon) and epsilon > 0):
        raise ConfigError(f"ε must be a positive number, got {epsilon!r}")
    if epsilon > EPSILON_MAX:
        raise ConfigError(f"ε = {epsilon:g} is above {EPSILON_MAX:g}, the largest ε the calibrations take (at that ε "
                          "the noise already protects nothing; σ² = 0 gives the non-private fit)")


def check_epsilon_delta(epsilon, delta) -> None:
    """ε must be a positive number at most :data:`EPSILON_MAX` and δ in (0, 1)."""
    check_epsilon(epsilon)
    check_delta(delta)


def check_sigma2(sigma2, what: str = "σ²") -> None:
    """σ² (given, or ``what`` a calibration asks for) must be a number in ``[0, SIGMA2_MAX]``."""
    if not (isinstance(sigma2, Real) and not isinstance(sigma2, bool) and sigma2 >= 0):
        raise ConfigError(f"σ² must be a number >= 0, got {sigma2!r}")
    if not sigma2 <= SIGMA2_MAX:
        raise ConfigError(f"{what} = {sigma2:g} is above {SIGMA2_MAX:g}, the largest noise variance a fit computes "
                          "with (its estimate would be noise alone)")


def check_multiplier(multiplier: float) -> None:
    """The noise multiplier ``σ/(S√K)`` of a release whose ε is asked must be at least :data:`MULTIPLIER_MIN`."""
    if multiplier < MULTIPLIER_MIN:
        raise ConfigError(
            f"the noise is {multiplier:.3g} of the release's sensitivity, below {MULTIPLIER_MIN:g}: its "
            "ε (about 1/(2·that²)) is beyond what the accountants compute; σ² = 0 gives the non-private fit"
        )


def check_privacy_settings(epsilon, sigma2, delta) -> None:
    """The privacy settings of a config, each checked when given: δ in (0, 1), an ε in ``(0, EPSILON_MAX]`` and a σ²
    in ``[0, SIGMA2_MAX]`` (which of them a fit targets is :func:`check_privacy_inputs`'s rule, at calibration)."""
    check_delta(delta)
    if epsilon is not None:
        check_epsilon(epsilon)
    if sigma2 is not None:
        check_sigma2(sigma2)


def check_privacy_inputs(epsilon, sigma2, delta) -> None:
    """Exactly one of ε or σ², a valid δ, an ε in ``(0, EPSILON_MAX]`` and a σ² in ``[0, SIGMA2_MAX]``."""
    if (epsilon is None) == (sigma2 is None):
        raise ConfigError("give exactly one of ε (with δ) or σ²")
    check_privacy_settings(epsilon, sigma2, delta)
