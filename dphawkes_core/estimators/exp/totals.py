"""The public weight of the totals in a release whose Gram is derived from the values (``--exp-gram derived``; issue
42, round 4).

Such a release holds the values at the events ``c_i[(j, u)]`` and the totals ``n_j`` alone, with one noise std; the
fit derives the Gram from them (:func:`~dphawkes_core.estimators.exp.statistics.gram_from_values`), and the totals set
its diagonal (``κ_uu n_j``). A total moves by 1 under an insertion and not at all under a swap, against a values'
bound in the hundreds, so released as they are the totals carried as much noise as a value (~500 events on totals of
~20,000 at 10⁵ events). Released times :data:`TOTALS_SHARE` of the values' own bound, they carry a tenth of that
noise relative to the values, and the bound grows by at most ``√(1 + 0.1²)`` (0.5 %) where an insertion binds and not
at all where the swap does (the differences basis at d ≥ 2). The bound takes the weight number by number
(:func:`~dphawkes_core.estimators.exp.release.exp_sensitivity`,
:func:`~dphawkes_core.estimators.exp.basis.basis_sensitivity`); the fit divides it out (post-processing).

Measured in ``docs/accuracy.md``, "Weights of the derived release".
"""

from __future__ import annotations

from dphawkes_core.estimators.exp.basis import DECAYS_BASIS, basis_sensitivity
from dphawkes_core.estimators.exp.release import DERIVED, exp_sensitivity

TOTALS_SHARE = 0.1  # the totals are released times this share of the values' own bound


def values_bound(dim: int, decays, width: float, count_cap: int, basis: str) -> float:
    """The derived release's bound over the values alone (the totals weighed 0), from public numbers only."""
    if basis == DECAYS_BASIS:
        return exp_sensitivity(dim, decays, width, count_cap, DERIVED, totals_weight=0.0).total
    return basis_sensitivity(dim, decays, width, count_cap, DERIVED, basis, totals_weight=0.0).total


def totals_weight(dim: int, decays, width: float, count_cap: int, basis: str) -> float:
    """The weight the totals of a derived Gram's release are released with: :data:`TOTALS_SHARE` of
    :func:`values_bound`."""
    return TOTALS_SHARE * values_bound(dim, decays, width, count_cap, basis)
