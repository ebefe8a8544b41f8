"""Table 1 on the Reproduce page runs on a real data set only when it is public: the refusal, and the button
that marks a published catalogue public in its ledger (undone on the *Privacy budget* page)."""

import streamlit as st

from dphawkes_app.budget import budget_state
from dphawkes_app.layout import friendly_error
from dphawkes_app.ledger_rows import ledger_label
from dphawkes_app.state import fingerprint
from dphawkes_core.data.datasets import load_sample
from dphawkes_core.errors import DPHawkesError

REFUSED = "repro_table1_refused"


def sample_state(info):
    """The real data set ``info`` and its ledger state (private unless marked public, as on every page)."""
    dataset = load_sample(info)
    return dataset, budget_state(dataset, fingerprint(dataset))


def table1_allowed(info) -> bool:
    """Table 1 may run on ``info`` only when the data set is public (marked published in the ledger); else say
    so and offer the mark."""
    dataset, state = sample_state(info)
    if state.metered or state.error:
        st.session_state[REFUSED] = info.name
        st.info(f"**{dataset.label}** is treated as private, as on every page of this app: Table 1 is an experiment "
                "and is not run on private data. If these data are published, mark them public (below, or on the "
                "*Privacy budget* page) and run again.", icon=":material/block:")
        return False
    st.session_state.pop(REFUSED, None)
    return True


def offer_public_mark(info) -> None:
    """A button stating that the data set is published: it marks it public in the ledger (undone on the
    *Privacy budget* page)."""
    if st.button(f"{info.name} is a published catalogue: mark it public", key="t1_mark_public",
                 icon=":material/public:"):
        dataset, state = sample_state(info)
        try:
            state.book.open(state.key, label=ledger_label(dataset), public=True, tool="app",
                            note="published catalogue, marked on the Reproduce page")
        except DPHawkesError as exc:
            friendly_error(exc)
            return
        st.session_state.pop(REFUSED, None)
        st.rerun()
