"""Privacy audit page: check a mechanism's ε claim from the outside, on the current data set.

The page is a frame: its controls are :mod:`dphawkes_app.audit.controls`, the run :mod:`dphawkes_app.audit.trials`,
the result :mod:`dphawkes_app.audit.view`."""

import streamlit as st

from dphawkes_app.audit.controls import read_controls
from dphawkes_app.audit.trials import RESULT, SESSION, STOPPED, run
from dphawkes_app.audit.view import show
from dphawkes_app.budget import budget_state, offer_simulated_copy, refuse_experiments
from dphawkes_app.layout import dataset_caption, friendly_error, sidebar_dataset
from dphawkes_app.state import current_dataset
from dphawkes_core.errors import DPHawkesError

st.set_page_config(page_title="Privacy audit · dphawkes", page_icon=":material/lock:", layout="wide")
st.title("Empirical privacy audit")
st.caption("Run the private estimator many times on two data sets that differ by one event (placed where it "
           "moves the output most), try to tell them apart, and turn the test's error rates into a lower bound on "
           "the ε the mechanism really has (Clopper–Pearson, as in Jagielski et al. 2020 / Nasr et al. 2021). "
           "A bound above the claim refutes the claim; a bound below it proves nothing more.")


def main() -> None:
    """The current data set (refused when private: an audit is an experiment), the controls, the run and its
    result."""
    dataset, dataset_fp = current_dataset()
    sidebar_dataset(dataset)
    st.caption("Data: " + dataset_caption(dataset))
    if refuse_experiments(budget_state(dataset, dataset_fp)):  # an audit is an experiment: not on private data
        offer_simulated_copy(dataset, "au_simulate", "Audit a simulation with the same shape")
        return
    try:
        config = read_controls(dataset)
    except DPHawkesError as exc:
        friendly_error(exc)
        if RESULT in st.session_state:  # a refused setting keeps the last result on screen
            st.caption("The last audit, with the settings it ran with:")
            show(st.session_state[RESULT])
        return
    c = st.columns([1, 1, 4])
    start = c[0].button("Run audit", type="primary", key="au_run")
    if c[1].button("Stop", key="au_stop"):
        st.session_state[STOPPED] = True
        session = st.session_state.get(SESSION)
        if session is not None and not session.done:
            st.warning(f"Audit stopped after {session.completed:,} of {session.config.trials:,} trials.")
    if start:
        try:
            run(config, dataset.events)
        except DPHawkesError as exc:
            friendly_error(exc)
            return
    if RESULT in st.session_state:
        show(st.session_state[RESULT])


main()
