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
differences basis (``info["basis"]``), whose bound covered the swap from the start — corrected only as version 2 is,
below —, and one with a baseline that follows the clock, whose S adds its parts' bound P in quadrature — corrected by
S₂/S₁ all the same, at least the true ``hypot(S₂, P)/hypot(S₁, P)``: never less than it spent.

Version 3 (issue 42, round 5) changes the differences basis' bound only (:func:`gram_end_correction`). Version 2
bounded a swap's change of each Gram entry by its profiles' variation between the distances z and v can have; but the
Gram's integrals end at the window's end, which cuts z's and v's terms by different amounts, so near the end an
entry can move past that (1.1× by the adversary in ``tests``); version 3 bounds the Gram's entries in a swap by their
insertions alone, and the pair counts by the oscillation of their profiles between distances less than w apart
(tighter than the variation, and exact at the window's end). A release in that basis with its Gram released (not
derived: a derived release has no Gram) is re-costed by ``S₃/S₂`` where that is above 1 (ρ small and d large:
1.0175 at d = 5, C = 3, w = 0.5, ρ = 1; none at the default ρ = 3); one whose entry does not say its basis by
:data:`DIFFERENCE_CEILING`.
"""

from __future__ import annotations

import math

import numpy as np

import dphawkes_core.estimators.exp.basis as basis
from dphawkes_core.estimators.exp.basis import DECAYS_BASIS, DIFFERENCES, basis_sensitivity
from dphawkes_core.estimators.exp.release import corner_bounds, exp_sensitivity
from dphawkes_core.estimators.family import BoundCorrection

SHORT_BOUND_VERSION = 1  # the family's bounds before issue 40 (insertions only)
GRAM_END_VERSION = 2  # the differences basis' swap bounded the Gram by its profiles' variation (to issue 42, round 5)

#: The largest S₃/S₂ of a differences-basis release whatever its settings: √2. A swap changes every number by
#: ``F_z − F_v``, two insertions' non-negative changes, so by at most ``max(F_z, F_v)`` number by number and in all by
#: at most ``√(|F_z|² + |F_v|²) <= √2`` × the insertion bound, which S₂ is at least.
DIFFERENCE_CEILING = math.sqrt(2.0)

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


# --- version 2 of the differences basis' bound (kept only to re-cost its releases) ---------------------------------

def _variation(profile, lo, hi) -> np.ndarray:
    """The total variation of a profile on ``[lo, hi]``: the moves between its ends and its critical points."""
    lo, hi = np.asarray(lo, dtype=float), np.asarray(hi, dtype=float)
    points = [lo] + [np.clip(x, lo, hi) for x in profile.critical] + [hi]
    values = [profile(x) for x in points]
    return sum(np.abs(b - a) for a, b in zip(values[:-1], values[1:]))


def _variation_bins(profile, width: float, count: int) -> float:
    lo = np.arange(count) * width
    return float(np.sum(_variation(profile, lo, lo + 2 * width))) + profile.tail(count * width, width)


def _variation_swap(prof: dict, U: int, C: float, w: float, count: int) -> dict:
    """Version 2's per-number swap bounds: each number's profiles' variation over ``[(r−1)·w, (r+1)·w]`` per bin r,
    its own bin's events at the larger of their suprema and variations on ``[0, w]``."""
    def near(*profiles) -> float:
        return max(max(p.own(0.0, w), float(_variation(p, 0.0, w))) for p in profiles)

    cross, own = np.zeros((U, U)), np.zeros((U, U))
    for m in range(U):
        for m2 in range(U):
            after, before, both = prof["after"][m][m2], prof["before"][m][m2], prof["both"][m][m2]
            cross[m, m2] = C * (_variation_bins(after, w, count) + _variation_bins(before, w, count)
                                + near(after, before))
            own[m, m2] = C * 2 * _variation_bins(both, w, count) + (C - 1) * near(both) + prof["self"][m, m2]
    out, into, self_pairs = np.zeros(U), np.zeros(U), np.zeros(U)
    for m in range(U):
        f = prof["f"][m]
        far = _variation_bins(f, w, count)
        out[m] = into[m] = C * (far + near(f))
        self_pairs[m] = C * 2 * far + (C - 1) * near(f)
    return {"cross": cross, "own": own, "out": out, "in": into, "self_pairs": self_pairs}


def variation_era_sensitivity(dim: int, decays, width: float, count_cap: int, gram_scale: float) -> float:
    """S₂: the differences basis' bound with its Gram released, as version 2 charged it — the insertion's, or the
    swap's with every number at the smaller of its largest insertion and its variation bound."""
    beta = np.asarray(decays, dtype=float)
    prof = basis._profiles(basis.basis_matrix(beta, DIFFERENCES), beta)
    U, C, w = beta.size, float(count_cap), float(width)
    count = int(math.ceil(basis.TAIL / (float(beta.min()) * w))) + 1
    corners, _, integral = basis._corner_bounds(tuple(float(b) for b in decays), w, int(count_cap), DIFFERENCES)
    largest = {name: np.max([corner[name] for corner in corners], axis=0) for name in corners[0]}
    moves = _variation_swap(prof, U, C, w, count)
    swap = {name: np.minimum(largest[name], moves[name]) for name in largest}
    inserted = max(basis._scaled(basis._squared_parts(c, int(dim), integral, 1.0), gram_scale) for c in corners)
    return max(inserted, basis._scaled(basis._squared_parts(swap, int(dim), integral, 0.0), gram_scale))


def gram_end_correction(unit: str, result: dict) -> BoundCorrection | None:
    """How far version 2 understated a differences-basis release with its Gram released: ``S₃/S₂`` at its stored
    settings where that is above 1; ``None`` in the decays basis (unchanged), for a derived Gram (no Gram released:
    its ``gram_scale`` is stored as ``None``) and for the sequence unit (the differences basis refuses it);
    :data:`DIFFERENCE_CEILING` where the entry does not say its basis (one charged and never released)."""
    info = (result or {}).get("info")
    if unit == "sequence" or (isinstance(info, dict) and (info.get("basis", DECAYS_BASIS) != DIFFERENCES
                                                          or info.get("gram_scale", 0.0) is None)):
        return None
    settings = stored_settings(result) if isinstance(info, dict) else None
    if settings is None:
        return BoundCorrection(DIFFERENCE_CEILING, (
            "version 2 of exp's bound in the differences basis took a swap's change of the Gram from its profiles' "
            "variation, which the window's end can exceed; this entry does not store its basis or settings, so it "
            "is charged at the largest correction any setting can need, √2 = "
            f"{DIFFERENCE_CEILING:.4f}× the sensitivity"))
    dim, decays, width, cap, rho = settings
    factor = basis_sensitivity(dim, decays, width, cap, rho, DIFFERENCES).total / variation_era_sensitivity(*settings)
    if not factor > 1.0:
        return None
    return BoundCorrection(factor, (
        "version 2 of exp's bound in the differences basis took a swap's change of the Gram from its profiles' "
        f"variation, which the window's end can exceed: at this release's settings (d = {dim}, decays "
        f"{', '.join(f'{b:g}' for b in decays)}, w = {width:g}, C = {cap}, ρ = {rho:g}) the corrected bound is "
        f"{factor:.4f}× the one it was charged at"))
