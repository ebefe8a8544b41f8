"""The Reproduce page's runs: each experiment once per settings on this server, under a status box with a
progress bar (a finished run is shown at once)."""

import time

import streamlit as st

from dphawkes_app.caches import RunStore
from dphawkes_experiments import reproduce
from dphawkes_experiments.sweep import default_executor, run_sweep

KEPT_RUNS = 12  # finished runs kept for every session of this server


@st.cache_resource
def finished_runs() -> RunStore:
    """The finished runs of this server by their settings (shared by its sessions, the oldest dropped first)."""
    return RunStore(KEPT_RUNS)


def run_once(key: tuple, compute, progress):
    """``compute(progress)`` once per ``key`` on this server; a finished run is returned at once.

    Not ``st.cache_data``: its replay of a cached result refuses the progress bar that ``compute`` fills, which is
    drawn outside the cached function.
    """
    return finished_runs().get_or_compute(key, lambda: compute(progress))


def with_progress(title: str, key: tuple, compute, unit: str = "steps"):
    """:func:`run_once` under a status box with a progress bar of its ``unit``, left closed with the time it took
    (a finished run fills the bar at once). ``compute(progress)`` calls ``progress(done, total, what)``, ``what``
    naming the next step."""
    start = time.perf_counter()
    with st.status(f"{title}: running…", expanded=True) as box:
        bar = st.progress(0.0, text="starting")

        def progress(done: int, total: int, what: str = "") -> None:
            now = f": now {what}" if what and done < total else ""
            bar.progress(done / max(total, 1), text=f"{done:,} of {total:,} {unit} done{now}")

        result = run_once(key, compute, progress)
        bar.progress(1.0, text="done")
        box.update(label=f"{title}: done in {time.perf_counter() - start:.1f} s", state="complete", expanded=False)
    return result


def kernels_with_progress(figure: str, seed: int):
    """Figures 1 and 3, with a progress bar of their steps (the simulation, every fit)."""
    return with_progress(f"Figure {figure}", ("kernels", figure, seed),
                         lambda progress: reproduce.figure_kernels(figure, seed, progress=progress))


def boxplots_with_progress(figure: str, runs: int, seed: int):
    """Figures 2 and 4, with a progress bar of their fits."""
    def compute(progress):
        with default_executor() as pool:
            table = run_sweep(reproduce.figure_sweep_spec(figure, runs, seed), pool,
                              progress=lambda done, total, _rows: progress(done, total))
        return reproduce.figure_boxplots(figure, runs, seed, table=table)
    return with_progress(f"Figure {figure}", ("boxplots", figure, runs, seed), compute, unit="fits")


def table1_with_progress(dataset: str, bin_size: float, support: float, fraction: float, runs: int):
    """Table 1, with a progress bar of its fits."""
    return with_progress("Table 1", ("table1", dataset, bin_size, support, fraction, runs),
                         lambda progress: reproduce.table1(dataset, bin_size, support, fraction, 0.1, runs,
                                                           progress=progress), unit="fits")
