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
from collections.abc import Callable, Iterable, Iterator
from dataclasses import replace

import pandas as pd

from dphawkes_core.errors import ConfigError

from .executors import _main_script_kept_from_workers, dask_executor, default_executor
from .sweep_cells import SHRINK_RATIO, groups, run_group
from .sweep_spec import DataSource, SweepSpec, cell_key, noise_seed
from .tables import load_table, merge_tables, save_table, sidecar_path, tidy

__all__ = [  # the sweep engine, with its grid (sweep_spec.py), its groups (sweep_cells.py), executors and tables
    "DataSource", "SHRINK_RATIO", "SweepSpec", "cell_key", "dask_executor", "default_executor", "groups",
    "iter_sweep", "load_table", "merge_tables", "noise_seed", "run_group", "run_size_sweep", "run_sweep", "save_table",
    "select", "sidecar_path", "size_specs", "tidy",
]


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
        ``relative_error_paper``, ``relative_error`` and the other
        :class:`~dphawkes_core.evaluation.metrics.ErrorReport`
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
