"""How much a formal fit's held-out gain on real data moves from one noise draw to the next (``docs/accuracy.md``,
"Where each formal method wins"): the real-data table's split and score (:mod:`benchmarks.heldout_real`: fit on the
first 70 % of the stated window, the gain over Poisson per test event on the rest), ten seeded noise draws per
formal fit (noise seeds 100–109, none used before), at ε = 1 and 8, δ = 1e-5.

The formal fits: DP-SSP and ctls with C chosen privately (5 % of ε), exp in the decays basis at the table's public
C = 5 per w-bin (its configuration there) and in the differences basis at the same C, all at the table's settings
(s, w) and, for exp, its public decays (:func:`benchmarks.heldout_real.public_decays`).

Usage (the data directory: ``$DPHAWKES_DATA_DIR`` or ``../shared/data``; a few minutes)::

    DPHAWKES_DATA_DIR=/work/shared/data nice .venv/bin/python -m benchmarks.realdata_spread

A script, not a ``bench_*`` module: it has no target (the issue's spread target is for the recommended fit, which
this table decides), so ``make bench`` leaves it out.
"""

from __future__ import annotations

import argparse
import json
import math

import numpy as np

from benchmarks.heldout_real import DATA, FIXED_CAP, SETTINGS, load, public_decays
from dphawkes_core.estimators import FitConfig, fit
from dphawkes_core.evaluation.exp_kernels import fit_functions
from dphawkes_core.threads import set_blas_threads
from dphawkes_experiments.prediction import score_heldout

EPSILONS = (1.0, 8.0)
DRAWS = range(100, 110)


def configs(s: float, w: float, epsilon: float):
    """``(label, config of a draw)`` of every formal fit measured."""
    lags = int(round(s / w))
    shared = dict(bin_size=w, lags=lags, epsilon=epsilon, calibration="formal")
    decays = public_decays(s, w)
    yield "ssp", lambda draw: FitConfig(method="ssp", count_cap="auto", seed=draw, **shared)
    yield "ctls", lambda draw: FitConfig(method="ctls", count_cap="auto", seed=draw, **shared)
    yield "exp, decays basis", lambda draw: FitConfig(method="exp", count_cap=FIXED_CAP, decays=decays, seed=draw,
                                                      **shared)
    yield "exp, differences basis", lambda draw: FitConfig(method="exp", count_cap=FIXED_CAP, decays=decays,
                                                           exp_basis="differences", seed=draw, **shared)


def measure(name: str) -> list[dict]:
    data = next(d for d in DATA if d.name == name)
    _, split = load(data)
    rows = []
    for s, w in SETTINGS:
        for epsilon in EPSILONS:
            for label, make in configs(s, w, epsilon):
                gains = []
                for draw in DRAWS:
                    result, _ = fit(split.train, make(draw))
                    gains.append(score_heldout(fit_functions(result), result.baseline, split).gain_over_poisson)
                gains = np.array(gains)
                finite = gains[np.isfinite(gains)]
                row = {"data": name, "s": s, "w": w, "method": label, "epsilon": epsilon,
                       "infinite": int(np.count_nonzero(~np.isfinite(gains))),
                       "mean": float(finite.mean()) if finite.size else -math.inf,
                       "min": float(gains.min()), "max": float(gains.max()),
                       "spread": float(gains.max() - gains.min())}
                rows.append(row)
                print(json.dumps(row), flush=True)
    return rows


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", nargs="+", metavar="NAME", default=[d.name for d in DATA])
    args = parser.parse_args(argv)
    set_blas_threads()
    for name in args.only:
        measure(name)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
