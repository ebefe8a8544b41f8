"""Privacy budget page: the current data set's ledger — each release, its ε, the composed total against
naive summation — the budget setting, and every data set in the ledger file.

The page is a frame: its sections are :mod:`dphawkes_app.budget_page`."""

import streamlit as st

from dphawkes_app.budget import budget_state, show_budget
from dphawkes_app.budget_page import all_data_sets, budget_setting, privacy_setting, releases
from dphawkes_app.layout import dataset_caption, sidebar_dataset
from dphawkes_app.owner import sign_in_box
from dphawkes_app.state import current_dataset


def main() -> None:
    """The current data set's budget: its metering, its releases composed, and every data set in the file."""
    dataset, fingerprint = current_dataset()
    sidebar_dataset(dataset)
    st.caption("Data: " + dataset_caption(dataset))
    st.markdown(
        "Every private estimate released on a data set reveals a little about it, and the losses add up: a user "
        "who re-runs a fit fifty times with fresh noise and averages the estimates has spent fifty releases, "
        "whatever each one says. So each data set has a **ledger** (kept in a file, so it survives a restart) and "
        "a **budget**: every formal release is recorded with its noise, the total ε is **composed exactly**, and "
        "a release that would take the total over the budget is refused. Asking again for a release already made "
        "(same data, same settings) shows the stored estimate — no new noise, nothing spent.")
    state = budget_state(dataset, fingerprint)
    show_budget(state, details=False)
    sign_in_box()
    privacy_setting(state, dataset)
    if state.error:
        return
    if state.metered:
        budget_setting(state, dataset)
    releases(state)
    st.subheader("What is metered")
    st.markdown(
        "* **Metered:** every formal release of an estimate on private data — a fit on the Estimate page, each "
        "method of its comparison table, and the share of ε a fit spends choosing its own count cap.\n"
        "* **Not metered, but listed:** fits that are not formal releases — seeded noise (reproducible by anyone "
        "with the seed), the paper's calibrations (R from the data), a window or setting read from the data, the "
        "non-private CLS. They carry no guarantee to compose; the ledger shows them apart.\n"
        "* **Refused on private data:** sweeps (*Privacy utility*), audits (*Privacy audit*) and the paper's Table 1 "
        "(*Reproduce paper*) are experiments: their results (errors against the raw data, thousands of seeded runs) "
        "are not private releases, and settings tuned on them would be taken from the data. Run them on a "
        "simulation, or, if these data are published, turn metering off above.\n"
        "* **Public data:** simulations are public by default — no budget, nothing metered; other data only when "
        "you turn metering off above, stating that they are published.")
    all_data_sets(state)


st.set_page_config(page_title="Privacy budget · dphawkes", page_icon=":material/lock:", layout="wide")
st.title("Privacy budget")
main()
