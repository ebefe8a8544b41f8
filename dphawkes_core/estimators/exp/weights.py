"""The public weights of a release whose Gram is derived from the values (``--exp-gram derived``; issue 42, round 4).

Such a release holds the values at the events ``c_i[(j, m)]`` and the totals ``n_j`` alone, with one noise std; the
fit derives the Gram from them (:func:`~dphawkes_core.estimators.exp.statistics.gram_from_values`). Two public
weights shape where that noise lands (each number released times its weight carries 1/weight of the noise; every bound
takes each number's own bound times its weight, :class:`~dphawkes_core.estimators.exp.release.ReleaseWeights`):

* **The totals** enter the derived Gram's diagonal (``κ_uu n_j``) and move by 1 under an insertion, nothing under a
  swap, against a values' bound in the hundreds: released times :data:`TOTALS_SHARE` of the values' bound they cost
  at most ``√(1 + 0.1²)`` (0.5 %) of the bound, nothing where the swap's bound is the larger (the differences basis at
  d ≥ 2), and carry a tenth of the noise they carried relative to the values.
* **The differences basis' functions** ``f_m`` (the slower decay ``β_(m)`` of the pair, the fastest alone) are
  released times ``(β_max/β_(m))^{1/2}`` (:data:`FUNCTION_POWER`): the slow functions, whose values are smaller
  and whose bounds are smaller, carry less of the noise. The decays basis is released unweighted (not tuned there).

Chosen on the tuning networks only (docs/accuracy.md, "Weights of the derived release"): at 10⁵ events, ε = 1, the
error 0.119 → 0.106 with the totals weighted, → 0.096 with the functions too; 10⁴ and 10⁶ measured there as well.
"""

from __future__ import annotations

import numpy as np

from dphawkes_core.estimators.exp.basis import DECAYS_BASIS, basis_sensitivity
from dphawkes_core.estimators.exp.release import DERIVED, ReleaseWeights, exp_sensitivity

TOTALS_SHARE = 0.1  # the totals are released times this share of the values' own bound
FUNCTION_POWER = 0.5  # the differences basis' function m times (β_max / β_(m)) to this power


def function_weights(decays, basis: str) -> tuple:
    """The values' weight per function of ``basis``: ones in the decays basis; in the differences basis function m
    (in the order of the sorted decays, its slower decay ``β_(m)``) times ``(β_max/β_(m))^FUNCTION_POWER`` — the
    fastest function alone weighs 1, slower ones more."""
    beta = np.sort(np.asarray(decays, dtype=float))
    if basis == DECAYS_BASIS:
        return tuple(1.0 for _ in beta)
    return tuple(float(w) for w in (beta[-1] / beta) ** FUNCTION_POWER)


def values_bound(dim: int, decays, width: float, count_cap: int, basis: str, functions: tuple) -> float:
    """The derived release's bound over the values alone (the totals weighed 0), the functions weighted."""
    unit = ReleaseWeights(functions, totals=0.0)
    if basis == DECAYS_BASIS:
        return exp_sensitivity(dim, decays, width, count_cap, DERIVED, unit).total
    return basis_sensitivity(dim, decays, width, count_cap, DERIVED, basis, unit).total


def derived_weights(dim: int, decays, width: float, count_cap: int, basis: str) -> ReleaseWeights:
    """The weights of a derived Gram's release at these public numbers: :func:`function_weights`, and the totals
    times :data:`TOTALS_SHARE` of :func:`values_bound`."""
    functions = function_weights(decays, basis)
    return ReleaseWeights(functions, TOTALS_SHARE * values_bound(dim, decays, width, count_cap, basis, functions))
