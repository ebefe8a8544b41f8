"""One group of a sweep's cells — one (seed, Δ): its data simulated once, the statistics of each kind its
families fit computed once, and one row per cell with its parameters, privacy columns and errors
(:func:`run_group`, what an executor runs). The grid: :mod:`dphawkes_experiments.sweep_spec`; the loop over
groups: :mod:`dphawkes_experiments.sweep`.
"""

from __future__ import annotations

import functools
import math
import time
from collections.abc import Iterable
from dataclasses import dataclass, field, replace

from dphawkes_core.data.io import Events
from dphawkes_core.data.kernels import Scenario
from dphawkes_core.data.simulate import simulate
from dphawkes_core.estimators import (
    FitConfig,
    FitResult,
    fit_stats,
    get_family,
    prepare_stats,
    register,
    release_status,
)
from dphawkes_core.estimators.binned import domain_info
from dphawkes_core.evaluation.lag_average import fit_steps
from dphawkes_core.evaluation.metrics import SHRINK_WARNING_RATIO, compare, constraint_scale, kernel_function_error
from dphawkes_core.privacy.calibration import CALIBRATIONS
from dphawkes_core.privacy.count_cap import AUTO
from dphawkes_core.statistics.binning import lags_from_support
from dphawkes_core.threads import blas_threads

from .prediction import evaluate_prediction, heldout_split, score_fit
from .sweep_spec import SweepSpec, cell_config, cell_key

SHRINK_RATIO = SHRINK_WARNING_RATIO  # constraint radius below this fraction of the truth's norm: shrunk to zero


@dataclass(frozen=True)
class _Group:
    spec: SweepSpec
    seed: int | None
    bin_size: float
    cells: tuple = field(default_factory=tuple)
    families: tuple = ()  # the families the cells run, so a worker process knows a family registered at run time


def groups(spec: SweepSpec, done: Iterable[str] = ()) -> list[_Group]:
    """Cells not in ``done``, grouped by (seed, Δ) — by Δ only for fixed data (one statistics set)."""
    done = set(done)
    grouped: dict = {}
    for cell in spec.cells():
        if cell_key(spec, cell) in done:
            continue
        seed = cell["seed"] if spec.source.simulated else None
        grouped.setdefault((cell["bin_size"], seed), []).append(cell)
    families = tuple(get_family(m) for m in spec.methods)
    return [_Group(spec, seed, dt, tuple(cells), families) for (dt, seed), cells in grouped.items()]


@functools.lru_cache(maxsize=4)
def _simulated(scenario: Scenario, n_events, end_time, seed: int) -> tuple[Events, float]:
    start = time.perf_counter()
    events = simulate(scenario, n_events=n_events, end_time=end_time, seed=seed)
    return events, time.perf_counter() - start


def run_group(group: _Group) -> list[dict]:
    """Run every cell of one group on one shared data set and one set of statistics.

    BLAS is limited to one thread meanwhile: the iterative methods multiply small matrices, where
    multithreaded BLAS is about ten times slower on this workload, and the executor already runs one
    group per core. Returns one row (dict) per cell; see :func:`run_sweep` for the columns.
    """
    for family in group.families:  # a no-op for the package's own; a plug-in's, registered in this worker too
        register(family)
    with blas_threads():  # the one BLAS threading policy: dphawkes_core/threads.py
        return _run_group(group)


def _run_group(group: _Group) -> list[dict]:
    spec, src, dt = group.spec, group.spec.source, group.bin_size
    sim_s = 0.0
    if src.simulated:
        events, sim_s = _simulated(src.scenario, src.n_events, src.end_time, group.seed)
    else:
        events = src.events
    lags = lags_from_support(spec.support, dt)
    split = None if src.has_truth else heldout_split(events, src.holdout_start, src.train_fraction)
    fit_events = events if split is None else split.train
    start = time.perf_counter()
    stats, data_info = prepare_stats(fit_events, FitConfig(bin_size=dt, lags=lags, count_cap=spec.count_cap))
    stats_s = time.perf_counter() - start
    if src.has_truth:
        truth = src.scenario.true_H(dt, lags)
        reference, constraint_source = truth, "truth"
    else:
        truth = None
        reference = fit_stats(stats, FitConfig(bin_size=dt, lags=lags)).H
        constraint_source = "non-private fit (data-dependent, not private)"
    ref_fro, ref_nuc = constraint_scale(reference, dt)
    bound = spec.bound if spec.bound is not None else ref_fro
    radius = spec.radius if spec.radius is not None else ref_nuc
    data_derived = () if truth is not None else tuple(
        name for name, given in (("B", spec.bound), ("r", spec.radius)) if given is None)
    public_info = {"window_stated": bool(events.window_stated), **domain_info(events)}
    base = {
        "source": src.label,
        "scenario": src.scenario.name if src.scenario is not None else "",
        "simulated": src.simulated,
        "n_events_requested": _num(src.n_events),
        "end_time_requested": _num(src.end_time),
        "data_events": events.n_events,
        "binned_events": data_info["binned_events"],
        "support": spec.support,
        "lags": lags,
        "privacy": spec.privacy,
        "calibration": spec.calibration,
        "dp_delta": spec.dp_delta,
        "iters": spec.iters,
        "count_cap": _num(spec.count_cap),
        "step": spec.step,
        "fw_step": spec.fw_step,
        "truth_fro": ref_fro if truth is not None else math.nan,
        "truth_nuclear_scaled": ref_nuc if truth is not None else math.nan,
        "stats_s": stats_s,
        "sim_s": sim_s,
    }
    rows = []
    shared = {("binned", False): stats}  # statistics by (kind, sequence unit): the same for every cell of the group
    for cell in group.cells:
        config = cell_config(spec, cell, lags, bound, radius)
        result = fit_stats(_cell_stats(shared, fit_events, config), config)
        row = dict(base, **cell, key=cell_key(spec, cell), noise_seed=config.seed, elapsed_s=result.elapsed_s)
        row.update(_constraint_columns(cell["method"], bound, radius, ref_fro, ref_nuc, spec, constraint_source))
        row.update(_privacy_columns(result, config, public_info, data_derived))
        row.update(_utility_columns(result, truth, split, src.scenario))
        rows.append(row)
    return rows


def _cell_stats(shared: dict, events: Events, config: FitConfig):
    """The statistics a cell's family fits: the group's binned moments, or the family's own (its statistics of
    the exact times, the sequence unit's clipped sums), computed once per group and kind (and per family for
    statistics of the exact times: two such families share nothing). A private choice of C
    (``count_cap="auto"``) depends on the cell's ε and seed, so it is never shared."""
    key = config.statistics_key()
    if config.count_cap == AUTO:
        return prepare_stats(events, config)[0]
    if key not in shared:
        shared[key] = prepare_stats(events, config)[0]
    return shared[key]


def _num(value) -> float:
    """``None`` as NaN, so that optional parameters make numeric columns."""
    return math.nan if value is None else float(value)


def _constraint_columns(method, bound, radius, ref_fro, ref_nuc, spec, source) -> dict:
    """Which constraint the method used and how it compares with the reference (truth) scale.

    ``constraint_ratio`` is B/||H_true||_F (PGD-type: the ball ||U||_F <= ΔB against ||ΔH_true||_F)
    or r/||ΔH_true||_* (CG). Below :data:`SHRINK_RATIO` the true model lies far outside the
    constraint set and every estimate is pulled toward zero (``shrunk``).
    """
    constraint = get_family(method).privacy.constraint
    if constraint is None:
        return {"bound": math.nan, "radius": math.nan, "constraint_ratio": math.nan, "shrunk": False,
                "constraint_source": ""}
    uses_radius = constraint == "radius"
    value, scale = (radius, ref_nuc) if uses_radius else (bound, ref_fro)
    given = spec.radius if uses_radius else spec.bound
    ratio = value / scale if scale > 0 else math.inf
    return {
        "bound": math.nan if uses_radius else bound, "radius": radius if uses_radius else math.nan,
        "constraint_ratio": ratio, "shrunk": bool(ratio < SHRINK_RATIO),
        "constraint_source": "given" if given is not None else source,
    }


def _privacy_columns(result: FitResult, config: FitConfig, public_info: dict, data_derived: tuple) -> dict:
    """σ², ε under every calibration, and whether these settings give a formal release.

    No cell is a release (its noise is seeded, and no session meters it), so ``formal_guarantee`` is false;
    ``formal_settings`` says whether the same settings, released unseeded through a privacy session, would be
    formal (calibration, noise, window and domain declared, B and r not taken from the data), and
    ``formal_reasons`` lists what else is missing.
    """
    used = {"bound": "B", "radius": "r"}.get(config.family.privacy.constraint)
    status = release_status(replace(config, seed=None), public_info,
                            tuple(name for name in data_derived if name == used))
    labels = {"formal_guarantee": status.formal, "formal_reasons": "; ".join(status.reasons),
              "formal_settings": status.settings_formal, "privacy_unit": config.privacy_unit}
    report = result.privacy
    if report is None:
        return {"sigma2": 0.0, "epsilon": math.inf, **labels,
                **{f"epsilon_{c.replace('-', '_')}": math.inf for c in CALIBRATIONS}}
    eps = {f"epsilon_{c.replace('-', '_')}": (math.nan if report.epsilon_by_calibration.get(c) is None
                                              else float(report.epsilon_by_calibration[c])) for c in CALIBRATIONS}
    return {"sigma2": report.sigma2, "epsilon": report.epsilon, **labels, **eps}


_NO_SCORE = {"heldout_loglik": math.nan, "heldout_poisson_loglik": math.nan, "heldout_gain": math.nan,
             "heldout_gain_se": math.nan, "heldout_events": 0, "heldout_nonpositive": 0}  # with a known truth


def _utility_columns(result: FitResult, truth, split, scenario: Scenario | None) -> dict:
    """Errors against the truth — on the lag grid (the paper's metric) and grid-free, the estimate's steps
    against the kernel functions over [0, s] (the metric on which binned and exact-time families compare,
    ``docs/accuracy.md``) — or, without a truth, the held-out prediction error and log-likelihood score
    (``heldout_gain``: nats per test event over the Poisson model; a fit whose intensity can be ≤ 0 is read as at
    least a floor there, ``heldout_nonpositive`` the test events where its own intensity is ≤ 0)."""
    nan = math.nan
    if truth is not None:
        err = compare(result.H, truth).to_dict()
        return {**err, "kernel_function_error": kernel_function_error(fit_steps(result), scenario),
                "rmse": nan, "poisson_rmse": nan, "n_predictions": 0, **_NO_SCORE}
    pred = evaluate_prediction(result.kernels, result.baseline, result.bin_size, split)
    score = score_fit(result, split)
    return {"relative_error_paper": nan, "relative_error": nan, "kernel_relative_error": nan,
            "kernel_function_error": nan,
            "baseline_relative_error": nan, "zero_estimate_relative_error": nan,
            "zero_estimate_relative_error_paper": nan, "rmse": pred.rmse,
            "poisson_rmse": pred.poisson_rmse, "n_predictions": pred.n_predictions,
            "heldout_loglik": score.loglik_per_event, "heldout_poisson_loglik": score.poisson_loglik_per_event,
            "heldout_gain": score.gain_over_poisson, "heldout_gain_se": score.gain_standard_error,
            "heldout_events": score.n_test_events, "heldout_nonpositive": score.nonpositive_intensity_events}

