"""How the baseline floor's share was chosen (``docs/accuracy.md``, "Held-out verdicts on the four shared data
sets"): on the tuning processes (paper-2d, paper-4d, exp-2d; seeds 1–2, 5,000 events, 70/30 split, w = 0.25, s = 5),
the held-out gain over the constant-rate model and the grid-free kernel error of ``mle`` (non-private), ctls and
DP-SSP at ε = 1 (C chosen privately), exp at ε = 1 (C = 5; decays 1/s, 1/√(sw), 1/w), 3 seeded draws, at each share
of :data:`SHARES` (the ``baseline_floor`` option); each fit scored as it is (−∞ where its intensity is 0 at a test
event: no reading at a floor). Never run on the real data sets.

Usage::

    nice .venv/bin/python -m benchmarks.heldout_floor
"""

from __future__ import annotations

import sys

import numpy as np

from benchmarks.bench_grid_free import cached_events, exp_2d
from benchmarks.heldout_real import public_decays
from dphawkes_core.data.kernels import get_scenario
from dphawkes_core.estimators import FitConfig, fit
from dphawkes_core.evaluation.exp_kernels import fit_functions
from dphawkes_core.evaluation.lag_average import fit_steps
from dphawkes_core.evaluation.metrics import kernel_function_error
from dphawkes_experiments.prediction import heldout_split, score_heldout

SHARES = (0.0, 0.02, 0.05, 0.1, 0.2, 0.3)
SUPPORT, WIDTH, EVENTS, DRAWS = 5.0, 0.25, 5000, 3


def config(method: str, share: float, draw: int | None) -> FitConfig:
    """The fit of ``method`` at ``share`` (``draw``: the seed of a formal fit's noise)."""
    lags = int(round(SUPPORT / WIDTH))
    if draw is None:
        return FitConfig(method=method, bin_size=WIDTH, lags=lags, baseline_floor=share)
    options = {"decays": public_decays(SUPPORT, WIDTH)} if method == "exp" else {}
    return FitConfig(method=method, bin_size=WIDTH, lags=lags, epsilon=1.0, calibration="formal",
                     count_cap=5 if method == "exp" else "auto", seed=draw, baseline_floor=share, **options)


def main() -> int:
    for scenario in (get_scenario("paper-2d"), get_scenario("paper-4d"), exp_2d()):
        for seed in (1, 2):
            split = heldout_split(cached_events(scenario, EVENTS, seed), None, 0.7)
            for method in ("mle", "ctls", "ssp", "exp"):
                draws = [None] if method == "mle" else range(DRAWS)
                gains, errors = [], []
                for share in SHARES:
                    results = [fit(split.train, config(method, share, draw))[0] for draw in draws]
                    gains.append(np.mean([score_heldout(fit_functions(r), r.baseline, split, rectify=False)
                                          .gain_over_poisson for r in results]))  # as fitted: −∞ at a 0
                    errors.append(np.mean([kernel_function_error(fit_steps(r), scenario) for r in results]))
                print(f"| {scenario.name} | {seed} | {method} | " + " | ".join(f"{g:+.3f}" for g in gains)
                      + f" | {errors[0]:.3f} → {errors[SHARES.index(0.05)]:.3f} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
