"""Write sample_data/privacy_cost.json: the "what privacy costs" curve the Home page draws without running
anything, and the Gaussian noise multipliers of its ε picture.

The default scenario (the "Privacy that works" preset: the paper's 2-d process, 50,000 events, Δ = 0.5,
s = 4) is simulated ``RUNS`` times (data seed: the preset's + the run); every registered private family with the
formal calibration is fitted at each ε of ``EPSILONS`` (δ = 1e-5, a public count cap C = 5, the preset's public B,
r, G, K, noise seed = the run) and every non-private family (the references: CLS on the counts, the maximum
likelihood on the exact times) once per run, on every event (no cap: the same at every ε). Each row is one fit's
grid-free kernel error (its steps against the true kernel functions over [0, s]: the fair metric between estimates
on exact times and binned ones; the Home curve draws it) and its plain relative error ‖Ĥ − H‖/‖H‖ on the lag grid,
with its data and noise seeds. The noise is seeded: an experiment on public simulated data, not a release.

``multipliers`` maps ε to z(ε, δ) = σ / sensitivity of one Gaussian release (the analytic Gaussian mechanism,
the same function the fits use), for the two-curves picture of what ε bounds.

Any cell can be recomputed alone (:func:`cell`): ``tests/app/test_precomputed_results.py`` checks that one does.

Run: ``.venv/bin/python scripts/privacy_cost_table.py`` (a few minutes on two cores).
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


def references() -> list[str]:
    """Every registered non-private family (CLS, the maximum likelihood on exact times), in registry order."""
    return [name for name in method_names() if not get_family(name).privacy.private]


def data_seed(run: int) -> int:
    """The simulation seed of run ``run``: the preset's seed plus the run."""
    return get_preset(DEFAULT_PRESET).data_seed + run


def simulation(run: int):
    """The data of run ``run``: the preset's scenario and size at :func:`data_seed`."""
    from dphawkes_core.data.datasets import simulate_dataset
    from dphawkes_core.data.kernels import get_scenario

    preset = get_preset(DEFAULT_PRESET)
    return simulate_dataset(get_scenario(preset.scenario), n_events=preset.n_events, seed=data_seed(run))


def config(method: str, epsilon: float | None, run: int) -> FitConfig:
    """The fit of one cell: a reference on every event, or a formal family at ``epsilon`` with a public C and noise
    seed ``run``."""
    preset = get_preset(DEFAULT_PRESET)
    base = preset.config
    if epsilon is None:
        return FitConfig(method=method, bin_size=base.bin_size, lags=base.lags)
    return FitConfig(method=method, bin_size=base.bin_size, lags=base.lags, count_cap=WORKS_COUNT_CAP,
                     epsilon=epsilon, dp_delta=DELTA, calibration="formal", seed=run,
                     **preset.options_for(get_family(method)))


def row(method: str, epsilon: float | None, run: int, result, scenario) -> dict:
    """One row of the table: the cell, its seeds and its two errors."""
    truth = scenario.true_H(result.bin_size, result.lags)
    return {"method": method, "epsilon": epsilon, "run": run, "data_seed": data_seed(run),
            "noise_seed": None if epsilon is None else run,
            "kernel_function_error": kernel_function_error(fit_steps(result), scenario),
            "relative_error": compare(result.H, truth).relative_error}


def cell(method: str, epsilon: float | None, run: int, dataset=None) -> dict:
    """One cell recomputed from scratch (its simulation, statistics and fit)."""
    dataset = dataset or simulation(run)
    settings = config(method, epsilon, run)
    stats, _ = prepare_stats(dataset.events, settings)
    return row(method, epsilon, run, fit_stats(stats, settings), dataset.scenario)


def run_rows(run: int) -> list[dict]:
    """Every cell of run ``run``, each family's statistics computed once for all its ε."""
    dataset = simulation(run)
    rows = [cell(name, None, run, dataset) for name in references()]
    for name in formal_families():
        stats, _ = prepare_stats(dataset.events, config(name, 1.0, run))  # its statistics: the same at every ε
        rows += [row(name, epsilon, run, fit_stats(stats, config(name, epsilon, run)), dataset.scenario)
                 for epsilon in EPSILONS]
    return rows


def main() -> None:
    preset = get_preset(DEFAULT_PRESET)
    rows, start = [], time.perf_counter()
    for run in range(RUNS):
        rows += run_rows(run)
        print(f"run {run + 1}/{RUNS} done ({time.perf_counter() - start:.0f} s)", flush=True)
    payload = {
        "what": "grid-free kernel error and plain relative error of every formal family against ε, and of every "
                "non-private reference on every event, on the default preset's scenario",
        "metric": "kernel_function_error",
        "scenario": preset.scenario, "n_events": preset.n_events, "bin_size": preset.config.bin_size,
        "lags": preset.config.lags, "support": preset.support, "count_cap": WORKS_COUNT_CAP, "delta": DELTA,
        "runs": RUNS, "epsilons": list(EPSILONS), "families": formal_families(), "references": references(),
        "data_seeds": [data_seed(run) for run in range(RUNS)], "noise_seeds": list(range(RUNS)),
        "public_options": dict(preset.public), "noise": "seeded (an experiment on public simulated data)",
        "made_by": "scripts/privacy_cost_table.py", "commit": _commit(),
        "rows": rows,
        "multipliers": {f"{e:g}": gaussian_sigma(e, DELTA, 1.0, 1) for e in PICTURE_EPSILONS},
    }
    TARGET.write_text(json.dumps(payload, indent=1) + "\n")
    print(f"wrote {TARGET.relative_to(ROOT)} ({TARGET.stat().st_size / 1024:.0f} KB, {len(rows)} rows)")


def _commit() -> str:
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                              check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return ""


if __name__ == "__main__":
    main()
