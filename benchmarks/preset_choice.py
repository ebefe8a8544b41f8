"""Which formal estimator the app's presets use: ctls against DP-SSP at the presets' own settings.

The app's default preset ("Privacy that works": 50,000 events of paper-2d, s = 4, formal ε = 1, δ = 1e-5,
C chosen privately) and its small twin (1,000 events) fit the formal estimator measured better there.
This script is that measurement: per method and bin size, the grid-free kernel error
(``kernel_function_error`` over [0, s], ``docs/accuracy.md``) over ``--sims`` simulations (seeds 1 … S) ×
``--draws`` seeded noise draws (experiments, not releases), median and quartiles.

Usage (a few minutes; the numbers are quoted in ``dphawkes_app/presets.py`` and ``docs/accuracy.md``)::

    nice .venv/bin/python -m benchmarks.preset_choice [--events 50000 1000] [--sims 5] [--draws 3]
"""

from __future__ import annotations

import argparse
import json

import numpy as np

from dphawkes_core.data.kernels import get_scenario
from dphawkes_core.data.simulate import simulate
from dphawkes_core.estimators import FitConfig, fit
from dphawkes_core.evaluation.lag_average import fit_steps
from dphawkes_core.evaluation.metrics import kernel_function_error
from dphawkes_core.statistics.binning import lags_from_support

SUPPORT = 4.0
CANDIDATES = (("ssp", 0.25), ("ssp", 0.5), ("ssp", 1.0), ("ctls", 0.25), ("ctls", 0.5), ("ctls", 1.0))


def formal_config(method: str, bin_size: float, seed: int) -> FitConfig:
    """The presets' formal fit with another method or bin size (C chosen privately, ε = 1, δ = 1e-5)."""
    return FitConfig(method=method, bin_size=bin_size, lags=lags_from_support(SUPPORT, bin_size), count_cap="auto",
                     epsilon=1.0, dp_delta=1e-5, calibration="formal", seed=seed)


def measure(n_events: int, sims: int, draws: int, scenario: str = "paper-2d") -> dict:
    """``{"<method> Δ=<w>": [median, q25, q75]}`` of the grid-free error at ``n_events``."""
    process = get_scenario(scenario)
    errors: dict[str, list[float]] = {}
    for sim in range(1, sims + 1):
        events = simulate(process, n_events=n_events, seed=sim)
        for method, width in CANDIDATES:
            for draw in range(draws):
                result, _ = fit(events, formal_config(method, width, 1000 * sim + draw))
                errors.setdefault(f"{method} Δ={width:g}", []).append(kernel_function_error(fit_steps(result), process))
    return {key: [float(np.median(v)), float(np.percentile(v, 25)), float(np.percentile(v, 75))]
            for key, v in errors.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, nargs="+", default=[50_000, 1_000])
    parser.add_argument("--sims", type=int, default=5)
    parser.add_argument("--draws", type=int, default=3)
    args = parser.parse_args()
    for n in args.events:
        table = measure(n, args.sims, args.draws)
        best = {m: min((v[0], k) for k, v in table.items() if k.startswith(m)) for m in ("ssp", "ctls")}
        print(json.dumps({"events": n, "errors": table, "best": best}))


if __name__ == "__main__":
    main()
