"""The real-data predictive table of ``docs/accuracy.md``: held-out gain over Poisson of every method.

Each data set's stated window is cut at 70 %: every method is fitted on the events before the cut and scored on the
rest by its log-likelihood per test event, conditioning on the whole history, minus the Poisson model's of the
training part (:func:`dphawkes_experiments.prediction.score_fit`). A fit whose intensity can be ≤ 0 is read as at
least 5 % of the training part's mean rate there (the count of test events where its own intensity is ≤ 0 is given);
the non-negative families keep every baseline at least that share of the released mean rate (``baseline_floor``).
Methods: tick's ``HawkesEM`` (support s, s/w steps, 100 iterations, tol 1e-10) as the anchor; the non-private
families (CLS, maximum likelihood), ctls and exp with σ² = 0 (exp without a ridge or a cap: its plain least
squares); every private family at ε = 1 and 8 (δ = 1e-5, formal calibration, C chosen privately where the family
can, else the public C = 5 of "Privacy that works" with its B, r, G and K; exp's decays by :func:`public_decays`
from s and w), 3 seeded noise draws each (an experiment, not a release): mean and range. An exp fit is scored with
its exponential sums, untruncated (:func:`~dphawkes_core.evaluation.exp_kernels.fit_functions`); every other fit
with its step kernels on [0, s].

Usage (the data directory: ``$DPHAWKES_DATA_DIR`` or ``../shared/data``)::

    nice .venv/bin/python -m benchmarks.heldout_real            # every data set and setting (a few minutes)
    nice .venv/bin/python -m benchmarks.heldout_real --only japan_quakes_zones
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from dataclasses import dataclass

import numpy as np

from dphawkes_core.data.datasets import default_data_dir
from dphawkes_core.data.io import load_csv
from dphawkes_core.errors import DPHawkesError
from dphawkes_core.estimators import FAMILIES, FitConfig, fit
from dphawkes_core.evaluation.step_kernels import StepKernels
from dphawkes_core.threads import set_blas_threads
from dphawkes_experiments.prediction import heldout_split, score_fit, score_heldout

TRAIN_SHARE = 0.7
EPSILONS = (1.0, 8.0)
DRAWS = 3
PUBLIC = {"bound": 1.0, "radius": 0.5, "clip": 1.0, "iters": 200}  # "Privacy that works" (dphawkes_app.presets)
FIXED_CAP = 5
SETTINGS = ((1.0, 0.05), (5.0, 0.25), (5.0, 0.5), (20.0, 1.0))  # (support s, width w) in days
EM_LABEL = "tick HawkesEM"
VALIDATION_LABEL = "ctls, w and s by validation"


@dataclass(frozen=True)
class RealData:
    """A shared data set and the window its PROVENANCE.md states (days)."""

    name: str
    start: str | None
    end: str


DATA = (RealData("japan_quakes_zones", None, "3652"),
        RealData("mat_quakes_magnitude", "8048.3546", "17532"))  # after the completeness change (PROVENANCE.md)


def em_steps(train, s: float, w: float) -> StepKernels:
    """tick's HawkesEM on the training part, as step kernels (its histogram bins of width w)."""
    from tick.hawkes import HawkesEM

    size = int(round(s / w))
    em = HawkesEM(kernel_support=s, kernel_size=size, max_iter=100, tol=1e-10, n_threads=1)
    em.fit([np.ascontiguousarray(t) for t in train.sequences[0].times], end_times=train.sequences[0].end_time)
    return StepKernels(np.asarray(em.kernel), np.linspace(0.0, s, size + 1), np.asarray(em.baseline), w, 1)


def public_decays(s: float, w: float) -> tuple[float, float, float]:
    """The exponential family's decays for support s and width w, a public rule fixed before any measurement:
    time constants from w to s, geometrically spaced (β = 1/s, 1/√(sw), 1/w)."""
    return (1.0 / s, 1.0 / math.sqrt(s * w), 1.0 / w)


def configs(s: float, w: float):
    """``(label, ε, [FitConfig per draw])`` of every method but EM."""
    lags = int(round(s / w))
    public = {**PUBLIC, "decays": public_decays(s, w)}
    for family in FAMILIES.values():
        if not family.privacy.private:
            yield f"{family.name} (non-private)", math.inf, [FitConfig(method=family.name, bin_size=w, lags=lags)]
    yield "ctls, σ² = 0", math.inf, [FitConfig(method="ctls", bin_size=w, lags=lags, sigma2=0.0,
                                              calibration="formal")]
    yield "exp, σ² = 0", math.inf, [FitConfig(method="exp", bin_size=w, lags=lags, sigma2=0.0, calibration="formal",
                                             exp_ridge=0.0, **{"decays": public["decays"]})]
    for family in FAMILIES.values():
        if not family.privacy.private or "formal" not in family.privacy.calibrations:
            continue
        cap = "auto" if family.privacy.auto_count_cap else FIXED_CAP
        for epsilon in EPSILONS:
            yield family.name, epsilon, [
                FitConfig(method=family.name, bin_size=w, lags=lags, epsilon=epsilon, calibration="formal",
                          count_cap=cap, seed=draw, **family.own_options(public)) for draw in range(DRAWS)]
    for epsilon in EPSILONS:  # Δ = w the finest width, s the longest support: w and s chosen inside the release
        yield VALIDATION_LABEL, epsilon, [
            FitConfig(method="ctls", bin_size=w, lags=lags, epsilon=epsilon, calibration="formal", count_cap="auto",
                      seed=draw, ctls_width_choice="validation") for draw in range(DRAWS)]


def present(data_sets, only=None):
    """The data sets of ``data_sets`` (only those named in ``only``, when given) whose events are on this machine;
    each absent one said on standard error."""
    for data in data_sets:
        if only and data.name not in only:
            continue
        if (default_data_dir() / data.name / "events.csv").exists():
            yield data
        else:
            print(f"skipped {data.name}: not in {default_data_dir()}", file=sys.stderr)


def load(data: RealData):
    """The data set's events in its stated window and their 70/30 split."""
    events = load_csv(default_data_dir() / data.name / "events.csv", end_time=data.end, start_time=data.start)
    return events, heldout_split(events, TRAIN_SHARE * events.sequences[0].end_time)


def measure(split, settings=SETTINGS, methods=None):
    """``(s, w, label, ε, scores or the reason a method did not run, seconds)`` of EM and every method (those of
    ``methods`` when given, by label) at each setting."""
    for s, w in settings:
        start = time.perf_counter()
        steps = em_steps(split.train, s, w)
        yield s, w, EM_LABEL, math.inf, [score_heldout(steps, steps.baseline, split)], time.perf_counter() - start
        for label, epsilon, draws in configs(s, w):
            if methods is not None and label not in methods:
                continue
            start = time.perf_counter()
            scores = []
            for config in draws:
                try:
                    result, _ = fit(split.train, config)
                except DPHawkesError as exc:
                    scores = f"not run: {exc}"
                    break
                scores.append(score_fit(result, split))
            yield s, w, label, epsilon, scores, time.perf_counter() - start


def table(data: RealData) -> list[str]:
    """Markdown rows of one data set: every setting and method."""
    events, split = load(data)
    lines = [f"### {data.name}: window [{data.start or 0}, {data.end}) days, test part from "
             f"{split.eval_from[0] + events.sequences[0].start_time:.6g} ({split.train.n_events:,} training, "
             f"{events.n_events - split.train.n_events:,} test events)", "",
             "| s, w (days) | method | ε | gain over Poisson (nats/event): mean (min–max) | SE (draw 1) | "
             "test events with λ ≤ 0 | time |", "|---|---|---|---|---|---|---|"]
    for record in measure(split):
        lines.append(_row(*record))
        print(lines[-1], file=sys.stderr, flush=True)
    return lines


def _row(s, w, label, epsilon, scores, seconds) -> str:
    eps = "—" if math.isinf(epsilon) else f"{epsilon:g}"
    if isinstance(scores, str):
        return f"| {s:g}, {w:g} | {label} | {eps} | {scores} | | | |"
    gains = np.array([x.gain_over_poisson for x in scores])
    bad = [x.nonpositive_intensity_events for x in scores]
    if np.all(np.isfinite(gains)):
        text = f"{gains.mean():+.3f}" + (f" ({gains.min():+.3f} – {gains.max():+.3f})" if len(gains) > 1 else "")
    else:
        finite = gains[np.isfinite(gains)]
        text = f"−∞ in {np.count_nonzero(~np.isfinite(gains))} of {len(gains)}" + (
            f"; finite {finite.mean():+.3f}" if finite.size else "")
    se = scores[0].gain_standard_error
    n = scores[0].n_test_events
    return (f"| {s:g}, {w:g} | {label} | {eps} | {text} | {'—' if math.isnan(se) else f'{se:.3f}'} | "
            f"{' / '.join(str(b) for b in bad)} of {n:,} | {seconds / len(scores):.1f} s |")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", nargs="+", metavar="NAME", help="only these data sets")
    args = parser.parse_args(argv)
    set_blas_threads()
    for data in present(DATA, args.only):
        print("\n".join(table(data)) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
