"""What an (ε, δ) guarantee means for someone who sees one output and must tell two neighbouring data sets apart.

An (ε, δ)-DP mechanism M satisfies, for every pair of neighbours D, D′ and every set S of outputs,
``P[M(D′) ∈ S] ≤ e^ε P[M(D) ∈ S] + δ``, and the same with D and D′ swapped. Read as a hypothesis test
(H₀: the data are D, H₁: they are D′) whose rejection region is S, with level α = P[M(D) ∈ S] and power
β = P[M(D′) ∈ S], this is the trade-off of Kairouz, Oh & Viswanath (2015) and Dong, Roth & Su (2022)::

    β ≤ min(1, e^ε α + δ, 1 − e^(−ε) (1 − δ − α)).

Both bounds are reached by one four-point mechanism (:func:`extremal_pair`), so they are the best any (ε, δ)
statement allows — a particular mechanism (e.g. the Gaussian one calibrated to (ε, δ)) can be harder to
tell apart. Pure functions of (ε, δ), no data.
"""

from __future__ import annotations

import math

from dphawkes_core.errors import ConfigError


def _check(epsilon: float, delta: float) -> None:
    if not (math.isfinite(epsilon) and epsilon >= 0):
        raise ConfigError(f"ε must be a finite number ≥ 0, got {epsilon}")
    if not (0.0 <= delta <= 1.0):
        raise ConfigError(f"δ must lie in [0, 1], got {delta}")


def best_test_power(epsilon: float, delta: float, level: float) -> float:
    """The largest power any test can have at false-alarm rate ``level`` against an (ε, δ)-DP mechanism.

    Parameters
    ----------
    epsilon, delta : float
        The guarantee.
    level : float
        α in [0, 1]: how often the test may say "D′" when the data are D.

    Returns
    -------
    float
        ``min(1, e^ε α + δ, 1 − e^(−ε)(1 − δ − α))``: how often it can say "D′" when they are D′, at most.
    """
    _check(epsilon, delta)
    if not (0.0 <= level <= 1.0):
        raise ConfigError(f"the level must lie in [0, 1], got {level}")
    grow = math.exp(min(epsilon, 700.0))
    return min(1.0, grow * level + delta, 1.0 - (1.0 - delta - level) / grow)


def total_variation_bound(epsilon: float, delta: float) -> float:
    """The largest total-variation distance between the outputs on two neighbours: ``(e^ε − 1 + 2δ)/(e^ε + 1)``
    (the largest β − α over the trade-off; reached by :func:`extremal_pair`), at most 1."""
    _check(epsilon, delta)
    return 1.0 - 2.0 * (1.0 - delta) / (math.exp(min(epsilon, 700.0)) + 1.0)  # the same, without overflow


def best_guess_accuracy(epsilon: float, delta: float) -> float:
    """How often, at most, one output lets anyone guess right between D and D′ when both were equally likely
    beforehand (a coin flip: 1/2): ``(1 + TV)/2 = (e^ε + δ)/(e^ε + 1)``."""
    return 0.5 * (1.0 + total_variation_bound(epsilon, delta))


def extremal_pair(epsilon: float, delta: float) -> tuple[tuple[float, ...], tuple[float, ...]]:
    """The output distributions (P on D, Q on D′) over four outputs of the mechanism that is exactly (ε, δ)-DP
    and no better (Kairouz, Oh & Viswanath 2015, Theorem 2.1): with q = (1 − δ)/(1 + e^ε),
    ``P = (δ, e^ε q, q, 0)`` and ``Q = (0, q, e^ε q, δ)``."""
    _check(epsilon, delta)
    q = (1.0 - delta) / (1.0 + math.exp(epsilon))
    return (delta, math.exp(epsilon) * q, q, 0.0), (0.0, q, math.exp(epsilon) * q, delta)
