"""Is ``mle``'s error above EM's at 10⁴ events beyond the noise of the simulations? (``docs/accuracy.md``)

The held-out suite (:mod:`benchmarks.heldout_suite`) reports three seeds; this runs more seeds of the same processes
(seeds 1001 … 1000 + S, the suite's own first), with EM as the suite runs it (100 iterations, tol 1e-10, steps of
width w = 0.25 over s = 5) and ``mle`` at its default tolerance, and reports per process the mean of the paired
ratios ``mle error ÷ EM error`` with its standard error, and the ratio of the mean errors with a standard error by the
delta method. Nothing is tuned here: ``mle`` runs as shipped.

Usage: ``nice .venv/bin/python -m benchmarks.mle_seeds [--seeds 20] [--events 10000] [--processes ...]``
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

from benchmarks.heldout_suite import PROCESSES, SUPPORT, WIDTH, em_error
from dphawkes_core.data.simulate import simulate
from dphawkes_core.estimators import FitConfig, fit
from dphawkes_core.evaluation.lag_average import fit_steps
from dphawkes_core.evaluation.metrics import kernel_function_error
from dphawkes_core.threads import set_blas_threads

FIRST_SEED = 1001


def paired_errors(name: str, n_events: int, seeds: int) -> np.ndarray:
    """``(seeds, 2)``: EM's and ``mle``'s errors on each simulation of the process."""
    scenario = PROCESSES[name]()
    config = FitConfig(method="mle", bin_size=WIDTH, lags=int(round(SUPPORT / WIDTH)))
    rows = []
    for seed in range(FIRST_SEED, FIRST_SEED + seeds):
        events = simulate(scenario, n_events=n_events, seed=seed)
        rows.append((em_error(events, scenario), kernel_function_error(fit_steps(fit(events, config)[0]), scenario)))
        print(f"{name} seed {seed}: EM {rows[-1][0]:.4f}  mle {rows[-1][1]:.4f}", file=sys.stderr, flush=True)
    return np.array(rows)


def summary(errors: np.ndarray) -> dict:
    """Mean paired ratio ± its standard error, and the ratio of mean errors ± its delta-method standard error."""
    em, mle = errors[:, 0], errors[:, 1]
    n = em.size
    ratios = mle / em
    r = mle.mean() / em.mean()
    # delta method: var(m̄/ē) ≈ r² (var(m)/m̄² + var(e)/ē² − 2 cov(m, e)/(m̄ ē)) / n
    cov = np.cov(mle, em)
    var = r**2 * (cov[0, 0] / mle.mean()**2 + cov[1, 1] / em.mean()**2 - 2 * cov[0, 1] / (mle.mean() * em.mean()))
    return {"seeds": n, "em": em.mean(), "mle": mle.mean(), "paired": ratios.mean(),
            "paired_se": ratios.std(ddof=1) / np.sqrt(n), "ratio": r, "ratio_se": float(np.sqrt(var / n)),
            "above": int(np.sum(ratios > 1.0))}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--events", type=int, default=10_000)
    parser.add_argument("--processes", nargs="+", choices=list(PROCESSES), default=list(PROCESSES))
    args = parser.parse_args(argv)
    set_blas_threads()
    print("| process | events | seeds | EM mean error | mle mean error | mean of mle ÷ EM (± s.e.) | "
          "ratio of means (± s.e.) | seeds with mle > EM |")
    print("|---|---|---|---|---|---|---|---|")
    for name in args.processes:
        s = summary(paired_errors(name, args.events, args.seeds))
        print(f"| {name} | {args.events:,} | {s['seeds']} | {s['em']:.4f} | {s['mle']:.4f} | "
              f"{s['paired']:.3f} ± {s['paired_se']:.3f} | {s['ratio']:.3f} ± {s['ratio_se']:.3f} | "
              f"{s['above']} of {s['seeds']} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
