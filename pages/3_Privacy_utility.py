"""Privacy–utility page: error against the privacy level (privacy level × Δ × method × runs), and error
against the number of events at one formal ε ("how much data does ε need").

The page is a frame: each tab reads its controls (:mod:`dphawkes_app.utility.controls`), runs the sweep on a
press with one call (:mod:`dphawkes_app.utility.store`: the session's finished cells, reused when a grid widens)
and draws what is stored (:mod:`dphawkes_app.utility.view`); every function takes what it reads as arguments. The
sweeps are experiments (:mod:`dphawkes_experiments.sweep`): seeded, never on private data."""

import streamlit as st

from dphawkes_app.budget import BudgetState, budget_state, show_budget
from dphawkes_app.layout import friendly_error, sidebar_dataset
from dphawkes_app.state import current_dataset
from dphawkes_app.utility.controls import size_widgets, source_widgets, spec_widgets
from dphawkes_app.utility.ready import ready_note
from dphawkes_app.utility.store import run_data_sizes, run_tradeoff, stored
from dphawkes_app.utility.view import show_data_sizes, show_tradeoff
from dphawkes_core.data.datasets import Dataset
from dphawkes_core.errors import DPHawkesError
from dphawkes_experiments.sweep import size_specs


def tradeoff_section(dataset: Dataset, budget: BudgetState) -> None:
    """The privacy-level sweep: settings, run, boxplots, the ε curve and the table."""
    source = source_widgets(dataset, budget)
    if source is None:
        return
    try:
        spec = spec_widgets(source)
    except DPHawkesError as exc:
        friendly_error(exc)
        return
    st.caption(f"{spec.n_cells} cells (runs × Δ × levels per private method, one per run and Δ for each "
               "non-private method).")
    if st.button("Run sweep", type="primary", key="pu_run"):
        try:
            run_tradeoff(spec)
        except DPHawkesError as exc:
            friendly_error(exc)
    view = stored([spec])
    if view.empty:
        st.info("Press **Run sweep** to compute the grid.")
        return
    if note := ready_note(view):
        st.info(note, icon=":material/bolt:")
    show_tradeoff(spec, view)


def data_size_section() -> None:
    """How much data does ε need: error against the number of events at one formal ε, per method."""
    st.caption("The error of each method against the number of simulated events, at one formal ε (count cap C, "
               "B, r and G public): where the private curve meets the non-private one, ε costs little.")
    try:
        spec, sizes = size_widgets()
        specs = size_specs(spec, sizes)
    except DPHawkesError as exc:
        friendly_error(exc)
        return
    n_cells = sum(s.n_cells for s in specs)
    st.caption(f"{n_cells} cells ({len(sizes)} sizes × runs × methods); every run is a fresh simulation.")
    if st.button("Run the data-size sweep", type="primary", key="hd_run"):
        try:
            run_data_sizes(spec, sizes, specs)
        except DPHawkesError as exc:
            friendly_error(exc)
    view = stored(specs)
    if view.empty:
        st.info("Press **Run the data-size sweep** to compute it.")
        return
    if note := ready_note(view):
        st.info(note, icon=":material/bolt:")
    show_data_sizes(spec, view, n_cells)


def main() -> None:
    """The current data set and its budget, then the two sweeps in their tabs."""
    dataset, dataset_fp = current_dataset()
    sidebar_dataset(dataset)
    budget = budget_state(dataset, dataset_fp)
    show_budget(budget)  # the remaining privacy budget of private data ("public — no budget" for a simulation)
    tradeoff_tab, size_tab = st.tabs(["Error against ε", "How much data does ε need?"])
    with tradeoff_tab:
        tradeoff_section(dataset, budget)
    with size_tab:
        data_size_section()


st.set_page_config(page_title="Privacy–utility · dphawkes", page_icon=":material/lock:", layout="wide")
st.title("Privacy–utility trade-off")
st.caption("How much accuracy each unit of privacy costs, per method and bin size Δ, and how much data a "
           "given ε needs. Every run of a simulated scenario is a fresh simulation with fresh noise, as in the "
           "paper's boxplots.")
main()
