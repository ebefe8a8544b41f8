"""The Privacy audit page's run: the audit's trials in chunks with a progress bar, stopped by the Stop button;
the session and the result kept in the session state."""

import streamlit as st

from dphawkes_experiments.audit import AuditConfig, prepare_audit

SESSION, RESULT, STOPPED = "audit_session", "audit_result", "audit_stopped"
CHUNK = 50


def run(config: AuditConfig, events) -> None:
    """Run the audit in chunks with a progress bar; a click on Stop interrupts the run (Streamlit reruns
    the page) and the flag keeps it from continuing."""
    st.session_state[STOPPED] = False
    st.session_state.pop(RESULT, None)
    with st.spinner("Searching the most revealing neighbour…"):
        session = prepare_audit(events, config)
    st.session_state[SESSION] = session
    bar = st.progress(0, text="running…")
    while not session.done:
        if st.session_state.get(STOPPED):
            return
        session.run_chunk(CHUNK)
        bar.progress(session.completed / config.trials,
                     text=f"{session.completed:,} / {config.trials:,} trials per data set")
    st.session_state[RESULT] = session.result()
