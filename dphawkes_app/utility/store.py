"""The session's store of finished sweep cells: what a sweep adds to it and what a view reads from it.

Every finished cell of this session is kept (``st.session_state`` under :data:`STORE`, keyed by each cell's
``key``): widening a grid reuses the cells already computed, and a stopped run keeps what it finished. The store
is per session: each run is seeded (an experiment on public or published data), so nothing here is a release.
Views read it beside the precomputed cells of the default grids (:mod:`.ready`)."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from dphawkes_experiments.sweep import SweepSpec, default_executor, merge_tables, run_size_sweep, run_sweep, select

from .ready import ready_cells

STORE = "sweep_store"


def finished() -> pd.DataFrame:
    """Every finished cell this session can show: the precomputed ones (:mod:`.ready`) and its own."""
    return merge_tables(ready_cells(), st.session_state.get(STORE, pd.DataFrame()))


def stored(specs) -> pd.DataFrame:
    """The finished cells of ``specs`` (precomputed or this session's)."""
    store = finished()
    return merge_tables(*(select(store, spec) for spec in specs))


def run_cells(n_cells: int, n_stored: int, execute) -> None:
    """Run the cells not yet in the session's store with a progress bar; every finished group is stored at
    once, so a stopped run keeps its results. ``execute(pool, done, progress)`` runs the sweep."""
    store = finished()
    done = set(store["key"]) if not store.empty else set()
    todo = n_cells - n_stored
    if todo == 0:
        st.info("Every cell of this grid was already computed in this session; nothing to run.")
        return
    bar = st.progress(0, text=f"0 of {todo} new cells")

    def progress(finished, total, rows):
        st.session_state[STORE] = merge_tables(st.session_state.get(STORE, pd.DataFrame()), pd.DataFrame(rows))
        bar.progress(finished / total, text=f"{finished} of {total} new cells")

    with default_executor() as pool:
        execute(pool, done, progress)
    bar.progress(1.0, text=f"done: {todo} new cells, {n_cells - todo} reused")


def run_tradeoff(spec: SweepSpec) -> None:
    """Run the privacy-level sweep ``spec`` into the store (the cells not there yet)."""
    run_cells(spec.n_cells, len(stored([spec])),
              lambda pool, done, progress: run_sweep(spec, pool, done=done, progress=progress))


def run_data_sizes(spec: SweepSpec, sizes: tuple, specs) -> None:
    """Run the data-size sweep of ``spec`` over ``sizes`` (its per-size ``specs``) into the store."""
    run_cells(sum(s.n_cells for s in specs), len(stored(specs)),
              lambda pool, done, progress: run_size_sweep(spec, sizes, pool, done=done, progress=progress))
