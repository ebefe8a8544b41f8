"""The four shared data sets in ``docs/accuracy.md`` ("Held-out verdicts on the four shared data sets"): the default
non-private fits and the formal ε = 1 fits, their held-out gain over the constant-rate model, standard errors and
verdicts, at four (s, w) settings, 10 noise draws for every formal fit.

* **Data and split.** Japan quakes (window [0, 3652) d) and MAT quakes ([8048.3546, 17532) d), one sequence each,
  cut at 70 % of the window; the e-mail dyad (hours; the provenance states no end: [0, 12360) h, the day after the
  last event), cut at 70 %; the taxi shifts (hours, 2,000 sequences whose windows end at their last event, as read),
  the first 70 % of the sequences train. Scored by :func:`dphawkes_experiments.prediction.score_fit`.
* **Settings.** The quakes: the four (s, w) of the earlier real-data table, (1, 0.05), (5, 0.25), (5, 0.5), (20, 1)
  days. The e-mail and the taxis: the same pattern around the product's automatic time scale of their training part
  (:func:`~dphawkes_core.privacy.time_scale.time_scale_from_count`, ``(s0, w0)``): (s0/5, w0/5), (s0, w0),
  (s0, 2·w0), (4·s0, 4·w0) — (40, 2), (200, 10), (200, 20), (800, 40) h and (0.4, 0.01), (2, 0.05), (2, 0.1),
  (8, 0.2) h.
* **Fits.** tick's HawkesEM (100 iterations, tol 1e-10) as the anchor; ``mle`` (the non-private reference on exact
  times) and exp's maximum likelihood (non-private) on the decays 1/s, 1/√(sw), 1/w; a baseline that follows the
  clock where the data have one (the e-mail: the day in 8 parts, ``mle``; the taxis: 4 bins of each shift);
  ctls, DP-SSP and exp formal at ε = 1, δ = 10⁻⁵ (C chosen privately with 5 % of ε for ctls and DP-SSP, public
  C = 5 for exp), :data:`DRAWS` seeded draws each (experiments, not releases; seeds 1000 on, never used before).
* **Columns.** The gain's mean (min–max over the draws), the mean of the draws' standard errors, the verdicts
  (better / cannot tell / worse: how many draws), the most test events where a draw's own intensity is ≤ 0.

Usage (heavy: run it with low priority; the data directory: ``$DPHAWKES_DATA_DIR`` or ``../shared/data``)::

    nice -n 19 .venv/bin/python -m benchmarks.heldout_verdicts > /tmp/verdicts.md
    nice -n 19 .venv/bin/python -m benchmarks.heldout_verdicts --only japan_quakes_zones --draws 10
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections import Counter
from dataclasses import dataclass, field

import numpy as np

from benchmarks.heldout_real import present, public_decays
from dphawkes_core.data.datasets import default_data_dir
from dphawkes_core.data.io import load_csv
from dphawkes_core.errors import DPHawkesError
from dphawkes_core.estimators import FitConfig, fit
from dphawkes_core.evaluation.step_kernels import StepKernels
from dphawkes_core.privacy.time_scale import time_scale_from_count
from dphawkes_core.threads import set_blas_threads
from dphawkes_experiments.prediction import heldout_split, score_fit, score_heldout

TRAIN_SHARE = 0.7
DRAWS = 10
FIRST_SEED = 1000
QUAKE_SETTINGS = ((1.0, 0.05), (5.0, 0.25), (5.0, 0.5), (20.0, 1.0))
FORMAL = ("ctls", "ssp", "exp")
EXP_CAP = 5
EM = "tick HawkesEM"


@dataclass(frozen=True)
class SharedData:
    """A shared data set: its stated window, how it is split, its unit and a baseline that follows its clock."""

    name: str
    start: str | None
    end: str | None
    unit: str
    settings: tuple = ()
    clock: dict = field(default_factory=dict)
    clock_label: str = ""


DATA = (
    SharedData("japan_quakes_zones", None, "3652", "d", QUAKE_SETTINGS),
    SharedData("mat_quakes_magnitude", "8048.3546", "17532", "d", QUAKE_SETTINGS),
    SharedData("email_dyad", None, "12360", "h", (), {"baseline_period": 24.0, "baseline_bins": 8},
               "mle, the day in 8 parts"),
    SharedData("nyc_taxi", None, None, "h", (), {"baseline_bins": 4}, "mle, 4 bins of each shift"),
)


def load(data: SharedData):
    """The events in the stated window and their split (70 % of the window, or of the sequences)."""
    events = load_csv(default_data_dir() / data.name / "events.csv", end_time=data.end, start_time=data.start)
    return events, heldout_split(events, None, TRAIN_SHARE)


def settings(data: SharedData, train) -> tuple:
    """The four (s, w): the quakes' own, or the pattern around the automatic time scale of the training part."""
    if data.settings:
        return data.settings
    scale = time_scale_from_count(train.end_time, train.n_events)
    s0, w0 = scale.support, scale.bin_size
    return ((s0 / 5, w0 / 5), (s0, w0), (s0, 2 * w0), (4 * s0, 4 * w0))


def em_steps(train, s: float, w: float) -> StepKernels:
    """tick's HawkesEM on every training sequence (its own window each), as step kernels."""
    from tick.hawkes import HawkesEM

    size = int(round(s / w))
    em = HawkesEM(kernel_support=s, kernel_size=size, max_iter=100, tol=1e-10, n_threads=1)
    em.fit([[np.ascontiguousarray(t) for t in seq.times] for seq in train.sequences],
           end_times=np.array([seq.end_time for seq in train.sequences]))
    return StepKernels(np.asarray(em.kernel), np.linspace(0.0, s, size + 1), np.asarray(em.baseline), w, 1)


def configs(data: SharedData, s: float, w: float, draws: int):
    """``(label, ε, [FitConfig per draw])`` of every fit but EM."""
    lags = int(round(s / w))
    decays = public_decays(s, w)
    yield "mle (non-private)", math.inf, [FitConfig(method="mle", bin_size=w, lags=lags)]
    if data.clock:
        yield data.clock_label, math.inf, [FitConfig(method="mle", bin_size=w, lags=lags, **data.clock)]
    yield "exp, maximum likelihood (non-private)", math.inf, [FitConfig(
        method="exp", bin_size=w, lags=lags, sigma2=0.0, calibration="formal", exp_likelihood=True, decays=decays)]
    for method in FORMAL:
        cap = EXP_CAP if method == "exp" else "auto"
        options = {"decays": decays} if method == "exp" else {}
        yield method, 1.0, [FitConfig(method=method, bin_size=w, lags=lags, epsilon=1.0, calibration="formal",
                                      count_cap=cap, seed=FIRST_SEED + k, **options) for k in range(draws)]


def measure(data: SharedData, split, draws: int):
    """``(s, w, label, ε, scores or why not, seconds per fit)`` of every fit at every setting."""
    for s, w in settings(data, split.train):
        start = time.perf_counter()
        steps = em_steps(split.train, s, w)
        yield s, w, EM, math.inf, [score_heldout(steps, steps.baseline, split)], time.perf_counter() - start
        for label, epsilon, runs in configs(data, s, w, draws):
            start, scores = time.perf_counter(), []
            for config in runs:
                try:
                    scores.append(score_fit(fit(split.train, config)[0], split))
                except DPHawkesError as exc:
                    scores = f"not run: {exc}"
                    break
            yield s, w, label, epsilon, scores, (time.perf_counter() - start) / len(runs)


def row(s, w, label, epsilon, scores, seconds) -> str:
    """One Markdown row."""
    eps = "—" if math.isinf(epsilon) else f"{epsilon:g}"
    if isinstance(scores, str):
        return f"| {s:g}, {w:g} | {label} | {eps} | {scores} | | | | |"
    gains = np.array([x.gain_over_poisson for x in scores])
    finite = gains[np.isfinite(gains)]
    text = (f"{gains.mean():+.3f}" if finite.size == gains.size else f"−∞ in {gains.size - finite.size} of "
            f"{gains.size}" + (f"; finite {finite.mean():+.3f}" if finite.size else ""))
    if gains.size > 1 and finite.size == gains.size:
        text += f" ({gains.min():+.3f} – {gains.max():+.3f})"
    errors = np.array([x.gain_standard_error for x in scores])
    se = f"{np.nanmean(errors):.3f}" if np.any(np.isfinite(errors)) else "—"
    words = Counter(x.verdict.word for x in scores)
    verdicts = ", ".join(f"{words[w_]} {w_}" for w_ in ("better", "cannot tell", "worse") if words[w_])
    bad = max(x.nonpositive_intensity_events for x in scores)
    return (f"| {s:g}, {w:g} | {label} | {eps} | {text} | {se} | {verdicts} | {bad:,} of {scores[0].n_test_events:,}"
            f" | {seconds:.1f} s |")


def table(data: SharedData, draws: int) -> list[str]:
    """Markdown lines of one data set."""
    events, split = load(data)
    seq = events.sequences[0]
    where = (f"window [{seq.start_time:g}, {seq.start_time + seq.end_time:g}) {data.unit}, test part from "
             f"{split.eval_from[0] + seq.start_time:.6g}" if split.mode == "timeline" else
             f"{events.n_sequences:,} sequences, the last {len(split.test):,} test")
    lines = [f"#### {data.name}: {where} ({split.train.n_events:,} training, "
             f"{events.n_events - split.train.n_events:,} test events)", "",
             f"| s, w ({data.unit}) | fit | ε | gain over a constant rate (nats/test event): mean (min – max) | SE | "
             "verdicts | test events with λ ≤ 0 | time per fit |", "|---|---|---|---|---|---|---|---|"]
    for record in measure(data, split, draws):
        lines.append(row(*record))
        print(lines[-1], file=sys.stderr, flush=True)
    return lines


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", nargs="+", metavar="NAME", help="only these data sets")
    parser.add_argument("--draws", type=int, default=DRAWS, help=f"noise draws per formal fit (default {DRAWS})")
    args = parser.parse_args(argv)
    set_blas_threads()
    for data in present(DATA, args.only):
        print("\n".join(table(data, args.draws)) + "\n", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
