"""How much a formal fit's held-out gain on real data moves from one noise draw to the next (``docs/accuracy.md``,
"Where each formal method wins"): the real-data table's split and score (:mod:`benchmarks.heldout_real`: fit on the
first 70 % of the stated window, the gain over Poisson per test event on the rest), ten seeded noise draws per
formal fit (noise seeds 100–109, none used before), at ε = 1 and 8, δ = 1e-5.

The formal fits: DP-SSP and ctls with C chosen privately (5 % of ε), exp in the decays basis at the table's public
C = 5 per w-bin (its configuration there) and in the differences basis at the same C, all at the table's settings
(s, w) and, for exp, its public decays (:func:`benchmarks.heldout_real.public_decays`).

Usage (the data directory: ``$DPHAWKES_DATA_DIR`` or ``../shared/data``; a few minutes)::

    DPHAWKES_DATA_DIR=/work/shared/data nice .venv/bin/python -m benchmarks.realdata_spread
    DPHAWKES_DATA_DIR=/work/shared/data nice .venv/bin/python -m benchmarks.realdata_spread --round-2

``--round-2``: the recommended formal fit on the quake catalogues (:func:`recommended`: exp in the decays basis, ρ = 1,
C = 3, chosen on Japan only; ``docs/accuracy.md``, "The recommended formal fit on the quake catalogues") beside the
table's exp configuration and ρ = 3 at C = 3, at (s, w) = (20, 1) and (5, 0.5), ε = 1, 20 draws (seeds 100–109 and
200–209). ``make bench`` runs its target through :mod:`benchmarks.bench_realdata_spread`.
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
ROUND_2_DRAWS = tuple(range(100, 110)) + tuple(range(200, 210))
ROUND_2_SETTINGS = ((20.0, 1.0), (5.0, 0.5))
RECOMMENDED_SCALE, RECOMMENDED_CAP = 1.0, 3  # ρ and the public C per w-bin, chosen on Japan quakes only


def recommended(s: float, w: float, seed: int | None, epsilon: float = 1.0, gram_scale: float = RECOMMENDED_SCALE,
                cap: int = RECOMMENDED_CAP) -> FitConfig:
    """The recommended formal fit on the quake catalogues: exp in the decays basis at the held-out table's public
    decays, ρ = 1 (``exp_gram_scale``) and a public C = 3 per w-bin (other ρ and C for the comparison)."""
    return FitConfig(method="exp", bin_size=w, lags=int(round(s / w)), epsilon=epsilon, calibration="formal",
                     count_cap=cap, decays=public_decays(s, w), exp_gram_scale=gram_scale, seed=seed)


def gains(split, make, draws) -> np.ndarray:
    """The held-out gain over Poisson of each draw's fit."""
    out = []
    for draw in draws:
        result, _ = fit(split.train, make(draw))
        out.append(score_heldout(fit_functions(result), result.baseline, split).gain_over_poisson)
    return np.array(out)


def round_2(name: str) -> list[dict]:
    """The recommended fit beside the table's configuration (ρ = 3, C = 5) and ρ = 3 at C = 3 (``--round-2``)."""
    data = next(d for d in DATA if d.name == name)
    _, split = load(data)
    rows = []
    for s, w in ROUND_2_SETTINGS:
        for label, scale, cap in (("recommended (ρ = 1, C = 3)", 1.0, 3), ("table's (ρ = 3, C = 5)", 3.0, FIXED_CAP),
                                  ("ρ = 3, C = 3", 3.0, 3)):
            values = gains(split, lambda draw, s=s, w=w, scale=scale, cap=cap: recommended(s, w, draw, 1.0, scale, cap),
                           ROUND_2_DRAWS)
            row = {"data": name, "s": s, "w": w, "fit": label, "mean": float(values.mean()),
                   "spread": float(np.ptp(values)), "spread_first_ten": float(np.ptp(values[:10])),
                   "spread_last_ten": float(np.ptp(values[10:])), "std": float(values.std(ddof=1))}
            rows.append(row)
            print(json.dumps(row), flush=True)
    return rows


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
    parser.add_argument("--round-2", action="store_true", help="the recommended fit's 20-draw spreads instead")
    args = parser.parse_args(argv)
    set_blas_threads()
    for name in args.only:
        (round_2 if args.round_2 else measure)(name)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
