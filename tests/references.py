"""Independent references the tests compare the product's numbers with (imported as ``tests.references``)."""

from __future__ import annotations


def zcdp_epsilon_reference(rho: float, delta: float) -> float:
    """ε at δ of ρ-zCDP by dp-accounting's RDP conversion (Rényi ε(α) = αρ) on a fine grid of orders α: an
    independent check of the discrete Gaussian's calibration (``dphawkes_core.privacy.noise`` computes it its own
    way)."""
    import numpy as np
    from dp_accounting.rdp.rdp_privacy_accountant import compute_epsilon

    orders = 1 + np.exp(np.linspace(-8, 8, 4001))
    return float(compute_epsilon(orders, orders * rho, delta)[0])
