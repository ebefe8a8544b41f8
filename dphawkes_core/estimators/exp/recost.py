"""Releases of the exponential family recorded under its short bound: how much that bound understated their
sensitivity (:meth:`Exp.bound_correction <dphawkes_core.estimators.exp.Exp.bound_correction>`, read by the ledger's
re-costing, :mod:`~dphawkes_core.release.recost`).

Version 1 of the family's bounds (every ledger written before issue 40) took the event unit's L2 sensitivity as the
largest of the four insertion corners (:func:`short_exp_sensitivity`) and missed a swap — an inserted event evicting
the kept event at the end of its full w-bin —, which mixes two corners (``docs/privacy.md``, "Exponential kernels",
"The swap"). Version 2 (:func:`~dphawkes_core.estimators.exp.release.exp_sensitivity`) is the largest of the four
corners and the swap. A release recorded under version 1 drew noise σ = z·S₁ (z its recorded multiplier), so its true
multiplier is ``z·S₁/S₂``. The sequence unit's bound (√2·G over the clipped sums) did not change.

Every setting S depends on — d, the decays, w, C, ρ — is in what a released entry stores (the estimate's rows, its
``bin_size``, its info's ``decays`` and ``gram_scale``, its data info's ``count_cap``: the C chosen, under
``--count-cap auto``; the w chosen, under ``--bin-size auto``). Where one is missing (an entry charged but never
released, a damaged record) the factor is :data:`SWAP_CEILING`, the largest S₂/S₁ over every setting.

Two kinds of release main never made carry no version only in files of this round's development builds: one in the
differences basis (``info["basis"]``), whose bound covered the swap from the start — not corrected —, and one with a
baseline that follows the clock, whose S adds its parts' bound P in quadrature — corrected by S₂/S₁ all the same,
at least the true ``hypot(S₂, P)/hypot(S₁, P)``: never less than it spent.
"""

from __future__ import annotations

import math

from dphawkes_core.estimators.exp.basis import DECAYS_BASIS
from dphawkes_core.estimators.exp.release import corner_bounds, exp_sensitivity
from dphawkes_core.estimators.family import BoundCorrection

SHORT_BOUND_VERSION = 1  # the family's bounds before issue 40 (insertions only)

#: The largest S₂/S₁ over every setting: √(5/4). The Gram and integral rows of the swap are those of an insertion
#: (their bounds are equal at both ends of the bin), and the rest of the swap is at most 5/4 of the insertion corner
#: (z at the start of its bin, its bin's other events before it) term by term: ``1 + (2 − q)² <= 5 <= (5/4)(1 + 1/(1 −
#: q))²`` per other dimension and decay, ``(2C − 1)² <=`` the own dimension's, no total (proof: ``docs/privacy.md``,
#: "Releases made under a bound found short"). Reached as q → 0, d → ∞, ρ → ∞.
SWAP_CEILING = math.sqrt(5.0 / 4.0)


def short_exp_sensitivity(dim: int, decays, width: float, count_cap: int, gram_scale: float = 1.0) -> float:
    """The exponential family's short bound, version 1, as ledgers written before issue 40 charged it: the largest
    ``sqrt(gram/ρ² + rest)`` over the four insertion corners (:func:`~.release.corner_bounds`), in the pieces' units.
    Kept only to re-cost those ledgers' releases; no release is calibrated to it."""
    return max(math.sqrt(parts["gram"] / gram_scale**2 + parts["rest"])
               for parts in (corner_bounds(dim, decays, width, count_cap, end, after)
                             for end in (0, 1) for after in (True, False)))


def short_bound_correction(unit: str, result: dict) -> BoundCorrection | None:
    """How far version 1 understated the sensitivity of a release of ``unit`` whose entry stores ``result``:
    ``S₂/S₁`` at its settings, ``None`` where an insertion binds (S unchanged), for the sequence unit and in the
    differences basis; :data:`SWAP_CEILING` where a setting is not stored."""
    if unit == "sequence" or (result.get("info") or {}).get("basis", DECAYS_BASIS) != DECAYS_BASIS:
        return None
    settings = stored_settings(result)
    if settings is None:
        return BoundCorrection(SWAP_CEILING, (
            "exp's bound before issue 40 missed a swap (an inserted event evicting the kept event at the end of its "
            "w-bin); this entry does not store all the settings the bound depends on (d, the decays, w, C, ρ), so it "
            f"is charged at the largest correction any setting can need, √(5/4) = {SWAP_CEILING:.4f}× the "
            "sensitivity"))
    corrected = exp_sensitivity(*settings).total
    factor = corrected / short_exp_sensitivity(*settings)
    if not factor > 1.0:
        return None
    dim, decays, width, cap, rho = settings
    return BoundCorrection(factor, (
        "exp's bound before issue 40 missed a swap (an inserted event evicting the kept event at the end of its "
        f"w-bin): at this release's settings (d = {dim}, decays {', '.join(f'{b:g}' for b in decays)}, w = "
        f"{width:g}, C = {cap}, ρ = {rho:g}) the corrected bound is {factor:.4f}× the one it was charged at"))


def stored_settings(result: dict) -> tuple | None:
    """``(d, decays, w, C, ρ)`` of a released exp fit as its ledger entry stores them, or ``None`` when one is
    missing or not a valid setting."""
    try:
        info, data = result["info"], result["data_info"]
        settings = (len(result["H"]), tuple(float(b) for b in info["decays"]), float(result["bin_size"]),
                    int(data["count_cap"]), float(info["gram_scale"]))
    except (KeyError, TypeError, ValueError):
        return None
    dim, decays, width, cap, rho = settings
    valid = (dim >= 1 and decays and all(math.isfinite(b) and b > 0 for b in decays) and math.isfinite(width)
             and width > 0 and cap >= 1 and math.isfinite(rho) and rho > 0)
    return settings if valid else None
