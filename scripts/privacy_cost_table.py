"""Write sample_data/privacy_cost.json: the "what privacy costs" curve the Home page draws without running
anything, and the Gaussian noise multipliers of its ε picture.

The default scenario (the "Privacy that works" preset: the paper's 2-d process, 50,000 events, Δ = 0.5,
s = 4) is simulated ``RUNS`` times; every registered private family with the formal calibration is fitted
at each ε of ``EPSILONS`` (δ = 1e-5, a public count cap C = 5 and the preset's public B, r, G, K) and the
non-private reference once per run. Each row is one fit's grid-free kernel error (its steps against the true
kernel functions over [0, s]: the fair metric between estimates on exact times and binned ones; the Home curve
draws it) and its plain relative error ‖Ĥ − H‖/‖H‖ on the lag grid. The noise is seeded: an experiment on
public simulated data, not a release.

``multipliers`` maps ε to z(ε, δ) = σ / sensitivity of one Gaussian release (the analytic Gaussian mechanism,
the same function the fits use), for the two-curves picture of what ε bounds.

Run: ``.venv/bin/python scripts/privacy_cost_table.py`` (about a minute on two cores).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from dphawkes_app.presets import DEFAULT_PRESET, WORKS_COUNT_CAP, get_preset  # noqa: E402
from dphawkes_core.estimators import FitConfig, fit_stats, get_family, method_names, prepare_stats  # noqa: E402
from dphawkes_core.evaluation.lag_average import fit_steps  # noqa: E402
from dphawkes_core.evaluation.metrics import compare, kernel_function_error  # noqa: E402
from dphawkes_core.privacy.calibration import gaussian_sigma  # noqa: E402

TARGET = ROOT / "sample_data" / "privacy_cost.json"
EPSILONS = (0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0)
PICTURE_EPSILONS = (0.1, 0.2, 0.5, 1.0, 2.0, 3.0, 5.0, 10.0)
RUNS = 5
DELTA = 1e-5


def formal_families() -> list[str]:
    """Every registered private family that has the formal calibration, in registry order."""
    return [name for name in method_names()
            if get_family(name).privacy.private and "formal" in get_family(name).privacy.calibrations]


def main() -> None:
    preset = get_preset(DEFAULT_PRESET)
    base = preset.config
    rows, start = [], time.perf_counter()
    for run in range(RUNS):
        dataset = get_preset(DEFAULT_PRESET).dataset() if run == 0 else _simulation(preset, run)
        truth = dataset.scenario.true_H(base.bin_size, base.lags)
        shared = dict(bin_size=base.bin_size, lags=base.lags, count_cap=WORKS_COUNT_CAP)
        reference = next(name for name in method_names() if not get_family(name).privacy.private)
        stats, _ = prepare_stats(dataset.events, FitConfig(method=reference, **shared))
        cls = fit_stats(stats, FitConfig(method=reference, **shared))
        rows.append({"method": reference, "epsilon": None, "run": run, **_errors(cls, truth, dataset.scenario)})
        for name in formal_families():
            family = get_family(name)
            options = dict(dp_delta=DELTA, calibration="formal", seed=run, **shared, **preset.options_for(family))
            own, _ = prepare_stats(dataset.events, FitConfig(method=name, epsilon=1.0, **options))  # its statistics
            for epsilon in EPSILONS:
                result = fit_stats(own, FitConfig(method=name, epsilon=epsilon, **options))
                rows.append({"method": name, "epsilon": epsilon, "run": run,
                             **_errors(result, truth, dataset.scenario)})
        print(f"run {run + 1}/{RUNS} done ({time.perf_counter() - start:.0f} s)", flush=True)
    payload = {
        "what": "grid-free kernel error and plain relative error of every formal family against ε on the default "
                "preset's scenario",
        "metric": "kernel_function_error",
        "scenario": preset.scenario, "n_events": preset.n_events, "bin_size": base.bin_size, "lags": base.lags,
        "support": preset.support, "count_cap": WORKS_COUNT_CAP, "delta": DELTA, "runs": RUNS,
        "public_options": dict(preset.public), "noise": "seeded (an experiment on public simulated data)",
        "made_by": "scripts/privacy_cost_table.py", "commit": _commit(),
        "rows": rows,
        "multipliers": {f"{e:g}": gaussian_sigma(e, DELTA, 1.0, 1) for e in PICTURE_EPSILONS},
    }
    TARGET.write_text(json.dumps(payload, indent=1) + "\n")
    print(f"wrote {TARGET.relative_to(ROOT)} ({TARGET.stat().st_size / 1024:.0f} KB, {len(rows)} rows)")


def _errors(result, truth, scenario) -> dict:
    """The grid-free kernel error (what the Home curve draws) and the plain relative error of one fit."""
    return {"kernel_function_error": kernel_function_error(fit_steps(result), scenario),
            "relative_error": compare(result.H, truth).relative_error}


def _simulation(preset, run: int):
    from dphawkes_core.data.datasets import simulate_dataset
    from dphawkes_core.data.kernels import get_scenario

    return simulate_dataset(get_scenario(preset.scenario), n_events=preset.n_events, seed=preset.data_seed + run)


def _commit() -> str:
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                              check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return ""


if __name__ == "__main__":
    main()
