"""Estimators of ``H = [H_1 … H_p, η] = U/Δ``, one module per family, one registry.

* :mod:`.family` — the :class:`Family` interface; :mod:`.settings` — the option metadata;
  :mod:`.units` — the privacy units; :mod:`.registry` — :data:`FAMILIES`, the one name lookup;
* the families: :mod:`.least_squares` (CLS), :mod:`.gradient` (DP-PGD, DP-CG), :mod:`.ssp` (DP-SSP),
  :mod:`.clipped` (clipped DP-PGD), :mod:`.grid_free` (ctls), :mod:`.exp` (exp), :mod:`.mle` (mle);
  :data:`FAMILIES` is the list that counts;
* :mod:`.checks` — the contract suite; :mod:`.neighbour_search` — the family-blind adversary it runs;
* :mod:`.binned` — the binned statistics most families fit; :mod:`.sequence_unit` — the sequence unit's
  statistics and calibration; :mod:`.releases` — the one-release families' base (:class:`SingleRelease`) and the
  releases several families share;
* :mod:`.config` — :class:`FitConfig`; :mod:`.result` — :class:`FitResult`; :mod:`.pipeline` — statistics,
  calibration and fit, each asked of the family.

The names below are imported on first use (PEP 562's module ``__getattr__``): ``from dphawkes_core.estimators import
FitConfig`` imports the configuration and the registry, not every family (a family's module is imported when the
family is first asked for: :mod:`.registry`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the same names, for readers, type checkers and the import-graph test
    from dphawkes_core.estimators.binned import BinnedStats, bin_with_cap, binned_stats, pieces_stats
    from dphawkes_core.estimators.clipped import clipped_gradient, per_bin_design, run_pgd_clip
    from dphawkes_core.estimators.config import UNIT_KEYWORDS, FitConfig
    from dphawkes_core.estimators.family import (
        AuditHints,
        CostTags,
        Family,
        InputTags,
        NoisedQuery,
        PrivacyTags,
        StateSpace,
        Statistics,
    )
    from dphawkes_core.estimators.gradient import (
        FW_STEP_RULES,
        STEP_RULES,
        run_dp_cg,
        run_dp_pgd,
        theorem_step_scale,
    )
    from dphawkes_core.estimators.pipeline import (
        fit,
        fit_cls,
        fit_cost,
        fit_partitions,
        fit_private,
        fit_stats,
        is_sequence_unit,
        iterations,
        prepare_partitioned,
        prepare_stats,
        privacy_report,
        release_status,
        run_private,
    )
    from dphawkes_core.estimators.registry import (
        FAMILIES,
        get_family,
        method_labels,
        method_names,
        register,
        unregister,
    )
    from dphawkes_core.estimators.releases import SingleRelease, noisy_statistics
    from dphawkes_core.estimators.result import FitResult
    from dphawkes_core.estimators.settings import Setting
    from dphawkes_core.estimators.solvers import paper_gradient, paper_loss, solve_cls
    from dphawkes_core.estimators.ssp import SSP_RELEASES, SSP_STABILISERS, run_ssp, ssp_ridge
    from dphawkes_core.estimators.units import EventUnit, SequenceUnit

#: Each submodule and the names this package exports from it (the names of the block above: a test compares them).
_EXPORTS = {
    "binned": ("BinnedStats", "bin_with_cap", "binned_stats", "pieces_stats"),
    "clipped": ("clipped_gradient", "per_bin_design", "run_pgd_clip"),
    "config": ("UNIT_KEYWORDS", "FitConfig"),
    "family": ("AuditHints", "CostTags", "Family", "InputTags", "NoisedQuery", "PrivacyTags", "StateSpace",
               "Statistics"),
    "gradient": ("FW_STEP_RULES", "STEP_RULES", "run_dp_cg", "run_dp_pgd", "theorem_step_scale"),
    "pipeline": ("fit", "fit_cls", "fit_cost", "fit_partitions", "fit_private", "fit_stats", "is_sequence_unit",
                 "iterations", "prepare_partitioned", "prepare_stats", "privacy_report", "release_status",
                 "run_private"),
    "registry": ("FAMILIES", "get_family", "method_labels", "method_names", "register", "unregister"),
    "releases": ("SingleRelease", "noisy_statistics"),
    "result": ("FitResult",),
    "settings": ("Setting",),
    "solvers": ("paper_gradient", "paper_loss", "solve_cls"),
    "ssp": ("SSP_RELEASES", "SSP_STABILISERS", "run_ssp", "ssp_ridge"),
    "units": ("EventUnit", "SequenceUnit"),
}
_MODULE_OF = {name: module for module, names in _EXPORTS.items() for name in names}


def __getattr__(name: str):
    """An exported name, its submodule imported on first use (then kept as an attribute of the package)."""
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(__import__(f"{__name__}.{module}", fromlist=[name]), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_MODULE_OF))


__all__ = [
    "AuditHints", "BinnedStats", "CostTags", "EventUnit", "FAMILIES", "FW_STEP_RULES", "Family", "FitConfig",
    "FitResult", "InputTags", "NoisedQuery", "PrivacyTags", "SSP_RELEASES", "SSP_STABILISERS", "STEP_RULES",
    "SequenceUnit", "Setting", "SingleRelease", "StateSpace", "Statistics", "UNIT_KEYWORDS", "bin_with_cap",
    "binned_stats", "clipped_gradient", "fit", "fit_cls", "fit_cost", "fit_partitions", "fit_private", "fit_stats",
    "get_family", "is_sequence_unit", "iterations", "method_labels", "method_names", "noisy_statistics",
    "paper_gradient", "paper_loss", "per_bin_design", "pieces_stats", "prepare_partitioned", "prepare_stats",
    "privacy_report", "register", "release_status", "run_dp_cg", "run_dp_pgd", "run_pgd_clip", "run_private",
    "run_ssp", "solve_cls", "ssp_ridge", "theorem_step_scale", "unregister",
]
