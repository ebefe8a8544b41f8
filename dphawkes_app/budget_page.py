"""The Privacy budget page's sections: the data set's metering and public mark, its budget setting, its releases
composed against naive summation, and every data set in the ledger (with where the ledger is kept).

The ledger as every page sees it is :mod:`dphawkes_app.budget`; who may change the settings is
:mod:`dphawkes_app.owner`."""

import pandas as pd
import streamlit as st

from dphawkes_app.bounded_input import bounded_number
from dphawkes_app.budget import BudgetState
from dphawkes_app.figures.budget import budget_figure
from dphawkes_app.layout import friendly_error
from dphawkes_app.ledger_rows import ledger_label, ledger_table
from dphawkes_app.owner import may_change_settings
from dphawkes_core.data.datasets import Dataset
from dphawkes_core.errors import DPHawkesError
from dphawkes_core.release.ledger import BUDGET_EPSILON_MAX, PUBLIC_MARK_REASON, Budget
from dphawkes_core.release.ledger_store import LEDGER_ENV


def privacy_setting(state: BudgetState, dataset: Dataset) -> None:
    """Simulations are public (no budget) and other data private, unless the user says otherwise (kept in the
    ledger): a simulation can be metered to see the budget at work, published data can be declared public."""
    if state.error:
        return
    st.session_state["meter_data"] = state.metered  # the ledger decides, not a stale widget value
    mark = state.ledger.public_mark if state.ledger is not None else None
    owner = may_change_settings()
    if state.metered and owner:
        st.text_input("Why these data are public (optional, kept with the mark)", key="public_note",
                      placeholder="e.g. the published USGS catalogue")
    st.toggle("Meter releases on this data set (private data)", key="meter_data", on_change=set_metering,
              args=(state, dataset), disabled=not owner,
              help="Simulated data contain nobody's events: public — no budget, unless you meter them to see the "
                   "budget at work. Uploaded and real data are private; turn metering off only for data that are "
                   "already published (e.g. a public catalogue) — that is your statement, and nothing is then "
                   "metered or refused.")
    if mark is not None:
        st.warning(f"**{mark.sentence()[:1].upper()}{mark.sentence()[1:]}.** {PUBLIC_MARK_REASON[:1].upper()}"
                   f"{PUBLIC_MARK_REASON[1:]}.", icon=":material/public:")
        st.button("Undo the public mark (meter releases on these data again)", key="undo_public",
                  on_click=withdraw_mark, args=(state, dataset), icon=":material/undo:", disabled=not owner)


def set_metering(state: BudgetState, dataset: Dataset) -> None:
    """Toggle callback: meter the data set's releases, or mark it public with the note given."""
    public = not st.session_state["meter_data"]
    try:
        state.book.open(state.key, label=ledger_label(dataset), public=public, tool="app",
                        note=st.session_state.get("public_note", "").strip() if public else "")
    except DPHawkesError as exc:
        friendly_error(exc)


def withdraw_mark(state: BudgetState, dataset: Dataset) -> None:
    """Button callback: withdraw the public mark, so releases are metered again."""
    try:
        state.book.open(state.key, label=ledger_label(dataset), public=False, tool="app")
    except DPHawkesError as exc:
        friendly_error(exc)


def budget_setting(state: BudgetState, dataset: Dataset) -> None:
    """The data set's total ε (the budget's δ stays the one every release is composed at); read-only, with who set
    it and when, unless this user may change it (:func:`~dphawkes_app.owner.may_change_settings`)."""
    ledger = state.current()
    if ledger.changes:
        st.caption("Last change of the settings: " + ledger.changes[-1].sentence() + ".")
    if not may_change_settings():
        st.markdown(f"**Total ε for this data set:** {ledger.budget.epsilon:.4g} (composed at δ = "
                    f"{ledger.budget.delta:.0e}) — set by the data owner.")
        return
    with st.form("budget_form"):
        c = st.columns([2, 1])
        try:
            epsilon = bounded_number(c[0], "total ε for this data set", 0.01, BUDGET_EPSILON_MAX,
                                     float(ledger.budget.epsilon), "budget_epsilon", format="%.4g")
        except DPHawkesError as exc:
            friendly_error(exc)  # the budget stays as it was
            epsilon = None
        c[1].caption(f"composed at δ = {ledger.budget.delta:.0e}")
        if st.form_submit_button("Set the budget") and epsilon is not None:
            try:
                state.book.open(state.key, Budget(float(epsilon), ledger.budget.delta), label=ledger_label(dataset),
                                tool="app")
            except DPHawkesError as exc:
                friendly_error(exc)
                return
            st.rerun()


def releases(state: BudgetState) -> None:
    """Each metered release with its ε, the composed total and the naive sum; then what was not metered."""
    ledger = state.current()
    history = ledger.history()
    st.subheader("Releases on this data set")
    if not history:
        st.caption("No formal release yet.")
    else:
        st.dataframe(pd.DataFrame([{
            "#": i, "released (UTC)": entry.created[:19].replace("T", " "), "release": entry.label,
            "unit": entry.unit + (f", first {entry.max_events} events per sequence" if entry.max_events else ""),
            "ε alone": alone,
            "composed ε so far": composed, "naive Σε so far": naive,
        } for i, (entry, alone, composed, naive) in enumerate(history, start=1)]), hide_index=True, key="releases")
        _, _, composed, naive = history[-1]
        st.plotly_chart(budget_figure([row[2] for row in history], [row[3] for row in history],
                                      ledger.budget.epsilon), key="budget_chart")
        st.markdown(
            f"**Composition, with your releases.** Summing gives ε = {naive:.3g} (and would add the δ's too); "
            f"composing exactly gives ε = {composed:.3g} at δ = {ledger.budget.delta:.0e}. Releases with Gaussian "
            "noise together act like one Gaussian release whose noise is smaller than each one's, and ε is read off "
            "that one release: the costs do not simply add up. That is why the remaining budget "
            f"(one more release of ε ≤ {ledger.remaining():.3g}) is more than budget − spent.")
        with st.expander("Details: the formula"):
            st.markdown("With noise multipliers z₁, z₂, … (noise std over sensitivity, per noisy step) the total is "
                        "μ-GDP with μ = √(Σ 1/zᵢ²) — the squares add, not the ε's — and ε is read off that one "
                        "mechanism (Google's `dp-accounting`; other mechanisms are composed through their privacy "
                        "loss distributions).")
    if ledger.unmetered:
        st.subheader("Shown without a formal guarantee (not metered)")
        st.dataframe(pd.DataFrame([{"shown (UTC)": e.created[:19].replace("T", " "), "output": e.label,
                                    "why it is not a formal release": "; ".join(e.reasons)}
                                   for e in ledger.unmetered]), hide_index=True, key="unmetered")
        st.caption("These outputs carry no guarantee to compose (seeded noise, a calibration or window read from "
                   "the data, or no noise at all), so the budget does not count them — and the composed ε above "
                   "covers the formal releases only. Do not publish them.")


def all_data_sets(state: BudgetState) -> None:
    """Every data set in the ledger file."""
    st.subheader("Every data set in the ledger file")
    try:
        ledgers = state.book.ledgers()
    except DPHawkesError as exc:
        friendly_error(exc)
        return
    if not ledgers:
        st.caption("The ledger file holds no data set yet.")
    else:
        st.dataframe(ledger_table(ledgers, state.key.fingerprint), hide_index=True, key="ledgers")
    st.caption("Each data set is named by its file or source, its events and window, and the start of its "
               "fingerprint (a hash of its events: the same rows give the same fingerprint, whatever the file's "
               "name). The ledger file holds these hashes: keep it with the data, do not publish it.")
    administrators(state)


def administrators(state: BudgetState) -> None:
    """Where the ledger is kept and how the command line shares it: advice for whoever runs the server."""
    with st.expander("For administrators: where the ledger is kept", icon=":material/admin_panel_settings:"):
        st.markdown("The server keeps the ledger " + ("in this PostgreSQL database:" if state.book.shared
                                                       else "in this file:"))
        st.code(state.book.address, language=None)
        st.markdown("To keep it elsewhere — a file, or a team's PostgreSQL database (no password in the address: "
                    "libpq's PGPASSWORD or ~/.pgpass) — set this environment variable before starting the app:")
        st.code(f"{LEDGER_ENV}=/path/to/ledger.json\n{LEDGER_ENV}=postgresql://analyst@db.example/ledger",
                language="bash")
        st.markdown("The command line meters its releases in the same ledger when given it and prints it as JSON; "
                    "the data owner sets the budgets there:")
        st.code(f"dphawkes fit EVENTS.csv … --ledger {state.book.address}\ndphawkes ledger show "
                f"{state.book.address}\ndphawkes ledger budget {state.book.address} EVENTS.csv --epsilon E",
                language="bash")
