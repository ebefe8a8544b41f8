"""Estimators of ``H = [H_1 … H_p, η] = U/Δ``, one module per family.

* :mod:`.least_squares` — non-private CLS and the paper's loss;
* :mod:`.gradient` — the paper's DP-PGD and DP-CG (noisy gradients);
* :mod:`.ssp` — DP-SSP (one noisy release of the statistics, then least squares);
* :mod:`.clipped` — clipped per-bin gradient DP-PGD;
* :mod:`.pipeline` — binning, statistics, calibration and dispatch shared by all;
* :mod:`.config` — :class:`FitConfig`, :class:`FitResult` and the option names.
"""

from .clipped import BinnedStats, clipped_gradient, per_bin_design, run_pgd_clip
from .config import (FORMAL_ONLY_METHODS, FW_STEP_RULES, METHOD_NAMES, METHODS, SSP_RELEASES, SSP_STABILISERS, STEP_RULES,
                     FitConfig, FitResult)
from .gradient import run_dp_cg, run_dp_pgd, theorem_step_scale
from .least_squares import fit_cls, paper_gradient, paper_loss, solve_cls
from .pipeline import (bin_with_cap, binned_stats, fit, fit_cost, fit_private, fit_stats, prepare_stats, privacy_report, release_status,
                       run_private, sequence_unit)
from .ssp import release_statistics, run_ssp, ssp_ridge

__all__ = [
    "BinnedStats", "FORMAL_ONLY_METHODS", "FW_STEP_RULES", "FitConfig", "FitResult", "METHOD_NAMES", "METHODS", "SSP_RELEASES", "SSP_STABILISERS",
    "STEP_RULES", "bin_with_cap", "binned_stats", "clipped_gradient", "fit", "fit_cls", "fit_cost", "fit_private", "fit_stats",
    "paper_gradient", "paper_loss", "per_bin_design", "prepare_stats", "privacy_report", "release_statistics",
    "release_status",
    "run_dp_cg", "run_dp_pgd", "run_pgd_clip", "run_private", "run_ssp", "sequence_unit", "solve_cls", "ssp_ridge",
    "theorem_step_scale",
]
