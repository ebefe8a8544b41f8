"""Privacy–utility sweeps: a grid over privacy level, bin size Δ, method and seeds, run in parallel.

A sweep is a :class:`SweepSpec`: a data source (a scenario simulated afresh for every seed, or fixed
data), the methods, the bin sizes, the privacy levels (σ² values or ε values) and the number of runs.
Every cell — one (method, Δ, privacy level, seed) — becomes one row of a tidy table with all its
parameters, σ², ε under every calibration, the paper's and the plain relative error, the grid-free kernel
error (``kernel_function_error``: the estimate's steps against the kernel functions; or, for data
without ground truth, the held-out next-event-time RMSE of :mod:`dphawkes_experiments.prediction`) and timings.

Work is grouped by (seed, Δ) — every cell of a group shares one simulation and one set of sufficient
statistics of each kind its families fit (the binned moments; a family's own statistics of the exact times;
the sequence unit's clipped sums), computed once and reused across methods and privacy levels — and groups run on any
``concurrent.futures.Executor`` (default: a process pool sized to the machine; a Dask cluster through
:func:`dask_executor`). Rows stream back as groups finish, so a caller can show progress and keep the
finished rows of a cancelled run. Finished cells are identified by :func:`cell_key`; passing them as
``done`` skips them, so widening a grid only runs the new cells.

Seeds: repetition ``r`` uses seed ``spec.seed + r`` for the simulation (a fresh realisation per
repetition); the noise seed of each cell is a hash of (seed, Δ, method, level), so every cell gets
fresh, reproducible noise whatever the executor or the order of completion. Seeded noise makes every
cell an experiment, not a private release (``formal_guarantee`` is false); the ``formal_settings`` column
says whether the same settings, released unseeded through a privacy session, would be one (``formal_reasons``
says what else is missing: calibration, a window or domain read from the data, B or r taken from the
non-private fit, σ² = 0).
"""

from __future__ import annotations

import concurrent.futures as cf
import contextlib
import functools
import hashlib
import json
import math
import time
import zlib
from dataclasses import dataclass, field, replace
from typing import Callable, Iterable, Iterator, Mapping

import numpy as np
import pandas as pd

from dphawkes_core.binning import lags_from_support
from dphawkes_core.count_cap import AUTO
from dphawkes_core.errors import ConfigError
from dphawkes_core.estimators import (UNIT_KEYWORDS, FitConfig, FitResult, fit_stats, get_family, is_sequence_unit,
                                      method_names, prepare_stats, register, release_status)
from dphawkes_core.estimators.binned import domain_info
from dphawkes_core.events import Events
from dphawkes_core.kernels import Scenario
from dphawkes_core.lag_average import fit_steps
from dphawkes_core.metrics import SHRINK_WARNING_RATIO, compare, constraint_scale, kernel_function_error
from dphawkes_core.privacy import CALIBRATIONS
from dphawkes_core.simulate import simulate
from dphawkes_core.threads import blas_threads

from .executors import _main_script_kept_from_workers, dask_executor, default_executor
from .prediction import evaluate_prediction, split_events
from .tables import load_table, merge_tables, save_table, sidecar_path, tidy

__all__ = [  # the sweep engine, with its executors and tables (executors.py, tables.py)
    "DataSource", "SweepSpec", "cell_key", "dask_executor", "default_executor", "groups", "iter_sweep", "load_table",
    "merge_tables", "noise_seed", "run_group", "run_size_sweep", "run_sweep", "save_table", "select", "sidecar_path",
    "size_specs", "tidy",
]

PRIVACY_KINDS = ("sigma2", "epsilon")
SHRINK_RATIO = SHRINK_WARNING_RATIO  # constraint radius below this fraction of the truth's norm: shrunk to zero
MAX_CELLS = 20_000


@dataclass(frozen=True)
class DataSource:
    """Where the data of every run come from.

    Attributes
    ----------
    scenario : Scenario, optional
        The true process. Without ``events`` it is simulated afresh for every seed; with ``events``
        it is the ground truth of those fixed data.
    n_events, end_time : optional
        Size of each simulation (exactly one, when simulating).
    events : Events, optional
        Fixed data (every seed then only changes the noise). Without a scenario the metric is the
        held-out next-event-time RMSE (train on a ``train_fraction`` part, predict the rest).
    label : str
        Short description for tables.
    train_fraction : float
        Training part for the prediction metric.
    """

    scenario: Scenario | None = None
    n_events: int | None = None
    end_time: float | None = None
    events: Events | None = None
    label: str = ""
    train_fraction: float = 0.7

    def __post_init__(self):
        if self.events is None:
            if self.scenario is None:
                raise ConfigError("a sweep needs a scenario to simulate or a data set")
            if (self.n_events is None) == (self.end_time is None):
                raise ConfigError("give exactly one of the number of events or the horizon of each simulation")
        if not 0 < self.train_fraction < 1:
            raise ConfigError(f"the training fraction must be between 0 and 1, got {self.train_fraction!r}")

    @property
    def simulated(self) -> bool:
        """True when every seed gets a fresh simulation."""
        return self.events is None

    @property
    def has_truth(self) -> bool:
        """True when the true process is known (relative errors), else the prediction metric is used."""
        return self.scenario is not None

    @functools.cached_property
    def fingerprint(self) -> str:
        """Short hash identifying the data (scenario and size, or the fixed events)."""
        h = hashlib.sha1()
        if self.scenario is not None:
            h.update(repr(self.scenario).encode())
        h.update(repr((self.n_events, self.end_time, self.train_fraction)).encode())
        if self.events is not None:
            h.update(repr(self.events.names).encode())
            for seq in self.events.sequences:
                h.update(np.float64(seq.end_time).tobytes())
                for t in seq.times:
                    h.update(np.asarray(t, float).tobytes() + b"|")
        return h.hexdigest()[:12]

    def describe(self) -> dict:
        """JSON-able description (the fixed events are represented by their fingerprint)."""
        return {
            "label": self.label,
            "scenario": self.scenario.name if self.scenario is not None else None,
            "simulated": self.simulated,
            "n_events": self.n_events,
            "end_time": self.end_time,
            "train_fraction": None if self.has_truth else self.train_fraction,
            "data_fingerprint": self.fingerprint,
        }


@dataclass(frozen=True)
class SweepSpec:
    """A privacy–utility grid.

    Attributes
    ----------
    source : DataSource
        The data.
    methods : tuple of str
        Estimators (names from :func:`dphawkes_core.estimators.method_names`). Non-private methods get one
        cell per (seed, Δ), private ones one per privacy level.
    bin_sizes : tuple of float
        Δ values.
    privacy : str
        ``sigma2`` (levels are noise variances, ε is reported) or ``epsilon`` (levels are targets).
    levels : tuple of float
        Privacy levels.
    runs : int
        Independent repetitions (seeds ``seed .. seed+runs-1``).
    seed : int
        First seed.
    support : float
        Kernel support s; ``p = ⌈s/Δ⌉``.
    bound : float, optional
        B for PGD-type methods; ``None``: the truth's ``||H_true||_F`` (or the non-private fit's when
        there is no truth — data-dependent, not private).
    radius : float, optional
        r for CG; ``None``: the truth's ``||ΔH_true||_*`` (or the non-private fit's).
    iters, calibration, dp_delta, count_cap, step, fw_step :
        As in :class:`~dphawkes_core.estimators.FitConfig`.
    options : tuple of (str, value) pairs
        Further :class:`~dphawkes_core.estimators.FitConfig` fields for every fit (e.g. ``("clip", 1.0)``).
    """

    source: DataSource
    methods: tuple = ("pgd",)
    bin_sizes: tuple = (0.1,)
    privacy: str = "sigma2"
    levels: tuple = (0.0,)
    runs: int = 1
    seed: int = 0
    support: float = 4.0
    bound: float | None = None
    radius: float | None = None
    iters: int = 1000
    calibration: str = "paper"
    dp_delta: float = 1e-5
    count_cap: int | None = None
    step: str = "theorem"
    fw_step: str = "paper"
    options: tuple = ()

    def __post_init__(self):
        object.__setattr__(self, "methods", tuple(self.methods))
        object.__setattr__(self, "options", tuple(sorted((str(k), v) for k, v in dict(self.options).items())))
        object.__setattr__(self, "bin_sizes", tuple(float(x) for x in self.bin_sizes))
        object.__setattr__(self, "levels", tuple(float(x) for x in self.levels))
        unknown = [m for m in self.methods if m not in method_names()]
        if unknown or not self.methods:
            raise ConfigError(f"unknown or no method {unknown}; choose from {', '.join(method_names())}")
        if self.privacy not in PRIVACY_KINDS:
            raise ConfigError(f"privacy level must be one of {PRIVACY_KINDS}, got {self.privacy!r}")
        if not self.bin_sizes or not self.levels:
            raise ConfigError("give at least one bin size and one privacy level")
        for level in self.levels:
            ok = level > 0 if self.privacy == "epsilon" else level >= 0
            if not (math.isfinite(level) and ok):
                raise ConfigError(f"privacy level {level!r} is not a valid {'ε > 0' if self.privacy == 'epsilon' else 'σ² >= 0'}")
        if int(self.runs) != self.runs or self.runs < 1:
            raise ConfigError(f"the number of runs must be a positive integer, got {self.runs!r}")
        if self.calibration not in CALIBRATIONS:
            raise ConfigError(f"unknown calibration {self.calibration!r}")
        for dt in self.bin_sizes:
            lags = lags_from_support(self.support, dt)
            for method in self.methods:  # FitConfig's own checks, before any work starts
                _cell_config(self, {"method": method, "bin_size": dt, "level": self.levels[-1], "seed": 0},
                             lags, self.bound or 1.0, self.radius or 1.0)
        if self.n_cells > MAX_CELLS:
            raise ConfigError(f"the grid has {self.n_cells:,} cells, over the {MAX_CELLS:,} limit")

    @property
    def seeds(self) -> tuple:
        """Repetition seeds."""
        return tuple(range(self.seed, self.seed + int(self.runs)))

    def cells(self) -> list[dict]:
        """Every cell's own parameters (method, bin_size, level, seed), in a fixed order."""
        out = []
        for dt in self.bin_sizes:
            for method in self.methods:
                levels = self.levels if get_family(method).private else (math.nan,)
                for level in levels:
                    for seed in self.seeds:
                        out.append({"method": method, "bin_size": dt, "level": level, "seed": seed})
        return out

    @property
    def n_cells(self) -> int:
        """Number of cells of the grid."""
        per_seed = sum(len(self.levels) if get_family(m).private else 1 for m in self.methods)
        return per_seed * len(self.bin_sizes) * int(self.runs)

    def to_dict(self) -> dict:
        """JSON-able parameters of the whole sweep (saved with the table)."""
        out = {k: v for k, v in vars(self).items() if k != "source"}
        out["methods"], out["bin_sizes"], out["levels"] = list(self.methods), list(self.bin_sizes), list(self.levels)
        out["source"] = self.source.describe()
        out["options"] = dict(self.options)
        return out


def cell_key(spec: SweepSpec, cell: Mapping) -> str:
    """Stable identifier of one cell: everything that determines its result."""
    private = get_family(cell["method"]).private
    params = {
        "data": spec.source.fingerprint, "support": spec.support, "iters": spec.iters,
        "bound": spec.bound, "radius": spec.radius, "count_cap": spec.count_cap,
        "step": spec.step, "fw_step": spec.fw_step, "options": repr(spec.options),
        "method": cell["method"], "bin_size": float(cell["bin_size"]), "seed": int(cell["seed"]),
        "privacy": spec.privacy if private else None,
        "level": float(cell["level"]) if private else None,
        "calibration": spec.calibration if private else None,
        "dp_delta": spec.dp_delta if private else None,
    }
    return hashlib.sha1(json.dumps(params, sort_keys=True).encode()).hexdigest()[:16]


def noise_seed(seed: int, bin_size: float, method: str, level: float) -> int:
    """Seed of a cell's noise generator: a stable hash of its coordinates."""
    return zlib.crc32(repr((int(seed), float(bin_size), method, float(level))).encode())


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
    split = None if src.has_truth else split_events(events, src.train_fraction)
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
        "source": src.label, "scenario": src.scenario.name if src.scenario is not None else "",
        "simulated": src.simulated, "n_events_requested": _num(src.n_events), "end_time_requested": _num(src.end_time), "data_events": events.n_events,
        "binned_events": data_info["binned_events"], "support": spec.support, "lags": lags,
        "privacy": spec.privacy, "calibration": spec.calibration, "dp_delta": spec.dp_delta,
        "iters": spec.iters, "count_cap": _num(spec.count_cap), "step": spec.step, "fw_step": spec.fw_step,
        "truth_fro": ref_fro if truth is not None else math.nan,
        "truth_nuclear_scaled": ref_nuc if truth is not None else math.nan,
        "stats_s": stats_s, "sim_s": sim_s,
    }
    rows = []
    shared = {("binned", False): stats}  # statistics by (kind, sequence unit): the same for every cell of the group
    for cell in group.cells:
        config = _cell_config(spec, cell, lags, bound, radius)
        result = fit_stats(_cell_stats(shared, fit_events, config), config)
        row = dict(base, **cell, key=cell_key(spec, cell), noise_seed=config.seed, elapsed_s=result.elapsed_s)
        row.update(_constraint_columns(cell["method"], bound, radius, ref_fro, ref_nuc, spec, constraint_source))
        row.update(_privacy_columns(result, config, public_info, data_derived))
        row.update(_utility_columns(result, truth, split, src.scenario))
        rows.append(row)
    return rows


def _cell_stats(shared: dict, events: Events, config: FitConfig):
    """The statistics a cell's family fits: the group's binned moments, or the family's own (its statistics of
    the exact times, the sequence unit's clipped sums), computed once per group and kind. A private choice of C
    (``count_cap="auto"``) depends on the cell's ε and seed, so it is never shared."""
    key = (get_family(config.method).statistics, is_sequence_unit(config))
    if config.count_cap == AUTO:
        return prepare_stats(events, config)[0]
    if key not in shared:
        shared[key] = prepare_stats(events, config)[0]
    return shared[key]


def _num(value) -> float:
    """``None`` as NaN, so that optional parameters make numeric columns."""
    return math.nan if value is None else float(value)


def _cell_config(spec: SweepSpec, cell: Mapping, lags: int, bound: float, radius: float) -> FitConfig:
    """A cell's config: the sweep's settings, each given to the families that read it."""
    family = get_family(cell["method"])
    private = family.private
    level = cell["level"]
    public = dict(bound=bound, radius=radius, iters=spec.iters, step=spec.step, fw_step=spec.fw_step)
    unit = {k: v for k, v in spec.options if k in UNIT_KEYWORDS}
    options = {k: v for k, v in spec.options if k not in UNIT_KEYWORDS}
    return FitConfig(
        method=cell["method"], bin_size=cell["bin_size"], lags=lags, calibration=spec.calibration,
        dp_delta=spec.dp_delta, count_cap=spec.count_cap, **unit, **family.own_options({**public, **options}),
        sigma2=level if private and spec.privacy == "sigma2" else None,
        epsilon=level if private and spec.privacy == "epsilon" else None,
        seed=noise_seed(cell["seed"], cell["bin_size"], cell["method"], level),
    )


def _constraint_columns(method, bound, radius, ref_fro, ref_nuc, spec, source) -> dict:
    """Which constraint the method used and how it compares with the reference (truth) scale.

    ``constraint_ratio`` is B/||H_true||_F (PGD-type: the ball ||U||_F <= ΔB against ||ΔH_true||_F)
    or r/||ΔH_true||_* (CG). Below :data:`SHRINK_RATIO` the true model lies far outside the
    constraint set and every estimate is pulled toward zero (``shrunk``).
    """
    constraint = get_family(method).constraint
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
    used = {"bound": "B", "radius": "r"}.get(config.family.constraint)
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


def _utility_columns(result: FitResult, truth, split, scenario: Scenario | None) -> dict:
    """Errors against the truth — on the lag grid (the paper's metric) and grid-free, the estimate's steps
    against the kernel functions over [0, s] (the metric on which binned and exact-time families compare,
    ``docs/accuracy.md``) — or, without a truth, the held-out prediction error."""
    nan = math.nan
    if truth is not None:
        err = compare(result.H, truth).to_dict()
        return {**err, "kernel_function_error": kernel_function_error(fit_steps(result), scenario),
                "rmse": nan, "poisson_rmse": nan, "n_predictions": 0}
    pred = evaluate_prediction(result.kernels, result.baseline, result.bin_size, split)
    return {"relative_error_paper": nan, "relative_error": nan, "kernel_relative_error": nan,
            "kernel_function_error": nan,
            "baseline_relative_error": nan, "zero_estimate_relative_error": nan,
            "zero_estimate_relative_error_paper": nan, "rmse": pred.rmse,
            "poisson_rmse": pred.poisson_rmse, "n_predictions": pred.n_predictions}


def iter_sweep(spec: SweepSpec, executor: cf.Executor | None = None, done: Iterable[str] = ()) -> Iterator[list[dict]]:
    """Run the sweep, yielding the rows of each (seed, Δ) group as soon as it finishes.

    Closing the generator early (or an exception in the caller) cancels the groups not yet started;
    the rows already yielded stay valid.
    """
    todo = groups(spec, done)
    own = executor is None
    pool = default_executor() if own else executor
    with _main_script_kept_from_workers():  # a process pool starts its workers during submit
        futures = [pool.submit(run_group, g) for g in todo]
    try:
        for fut in cf.as_completed(futures):
            yield fut.result()
    finally:
        for fut in futures:
            fut.cancel()
        if own:
            pool.shutdown(wait=True, cancel_futures=True)


def run_sweep(spec: SweepSpec, executor: cf.Executor | None = None, done: Iterable[str] = (),
              progress: Callable[[int, int, list], None] | None = None,
              should_stop: Callable[[], bool] | None = None) -> pd.DataFrame:
    """Run a sweep and return its tidy table (only the cells not in ``done``).

    Parameters
    ----------
    spec : SweepSpec
    executor : concurrent.futures.Executor, optional
        Where groups run; default :func:`default_executor` (created and shut down here).
    done : iterable of str
        Keys (:func:`cell_key`) of finished cells to skip.
    progress : callable, optional
        ``progress(cells_finished, cells_to_run, new_rows)`` after every finished group.
    should_stop : callable, optional
        Checked after every group; when it returns True the run is cancelled and the finished
        rows are returned. ``KeyboardInterrupt`` also returns the finished rows.

    Returns
    -------
    pandas.DataFrame
        One row per cell: its parameters (``method``, ``bin_size``, ``level``, ``seed``,
        ``noise_seed``, ``lags``, ``support``, ``bound``/``radius``, ``iters``, ``calibration``, …),
        ``sigma2``, ``epsilon`` (chosen calibration) and ``epsilon_<calibration>`` for each,
        ``relative_error_paper``, ``relative_error`` and the other :class:`~dphawkes_core.metrics.ErrorReport`
        fields (simulated/known truth) or ``rmse``/``poisson_rmse`` (prediction), ``constraint_ratio``
        and ``shrunk``, and the timings ``elapsed_s``, ``stats_s``, ``sim_s``.
        ``frame.attrs["complete"]`` tells whether every requested cell finished.
    """
    done = set(done)
    total = sum(len(g.cells) for g in groups(spec, done))
    rows: list[dict] = []
    gen = iter_sweep(spec, executor, done)
    complete = True
    try:
        for new in gen:
            rows.extend(new)
            if progress is not None:
                progress(len(rows), total, new)
            if should_stop is not None and should_stop() and len(rows) < total:
                complete = False
                break
    except KeyboardInterrupt:
        complete = False
    finally:
        gen.close()
    frame = tidy(rows)
    frame.attrs["complete"] = complete and len(rows) == total
    return frame


def size_specs(spec: SweepSpec, sizes: Iterable[int]) -> tuple[SweepSpec, ...]:
    """``spec`` once per number of events, smallest first: the grid of "how much data does ε need".

    ``spec`` must simulate (its source a scenario); every other setting is kept, so each size is an
    ordinary sweep whose cells are cached under their own keys (the size is part of the data's
    fingerprint).
    """
    if not spec.source.simulated:
        raise ConfigError("the data-size sweep simulates every size: give a scenario, not fixed data")
    sizes = sorted({int(n) for n in sizes})
    if not sizes or sizes[0] < 1:
        raise ConfigError("give at least one number of events, each at least 1")
    return tuple(replace(spec, source=replace(spec.source, n_events=n, end_time=None))
                 for n in sizes)


def run_size_sweep(spec: SweepSpec, sizes: Iterable[int], executor: cf.Executor | None = None,
                   done: Iterable[str] = (), progress: Callable[[int, int, list], None] | None = None) -> pd.DataFrame:
    """Run :func:`run_sweep` for every size of :func:`size_specs` on one executor.

    Parameters
    ----------
    spec : SweepSpec
        Methods, Δ, privacy levels (typically one ε), runs and settings; its source's size is replaced.
    sizes : iterable of int
        Numbers of simulated events.
    executor, done :
        As in :func:`run_sweep`.
    progress : callable, optional
        ``progress(cells_finished, cells_to_run, new_rows)`` counted over all sizes.

    Returns
    -------
    pandas.DataFrame
        The rows of every size (``n_events_requested`` tells them apart), as :func:`run_sweep` returns them.
    """
    specs, done = size_specs(spec, sizes), set(done)
    total = sum(len(g.cells) for s in specs for g in groups(s, done))
    frames: list[pd.DataFrame] = []
    with contextlib.ExitStack() as stack:
        pool = executor if executor is not None else stack.enter_context(default_executor())
        for one in specs:
            before = sum(len(f) for f in frames)
            report = None if progress is None else (lambda n, _, rows, before=before: progress(before + n, total, rows))
            frames.append(run_sweep(one, pool, done, progress=report))
    return merge_tables(*frames)


def select(frame: pd.DataFrame, spec: SweepSpec) -> pd.DataFrame:
    """The rows of ``frame`` that belong to ``spec``'s grid (e.g. from a larger cache)."""
    keys = {cell_key(spec, c) for c in spec.cells()}
    if frame.empty:
        return frame
    return frame[frame["key"].isin(keys)].reset_index(drop=True)
