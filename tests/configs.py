"""The one FitConfig builder of the tests (imported as ``tests.configs``): a formal config with the small public
settings most tests share, each changeable. A test module binds its own defaults once
(``_config = partial(fit_config, method="ssp", epsilon=1.0)``) instead of writing its own builder."""

from __future__ import annotations

from dphawkes_core.estimators import FitConfig

SHARED = {"bin_size": 1.0, "lags": 3, "count_cap": 3, "calibration": "formal"}  # Δ, p, C: small and public


def fit_config(method: str = "ssp", **settings) -> FitConfig:
    """``FitConfig`` of ``method`` with the formal calibration, Δ = 1, p = 3 and C = 3 unless ``settings`` give
    them; no privacy target unless given (ε or σ²)."""
    return FitConfig(method=method, **{**SHARED, **settings})
