"""The Reproduce page's sections: the paper's claim, the Run button and the last result of one experiment, with
its verdict, checks and figures."""

import streamlit as st

from dphawkes_app.bounded_input import FieldChecks
from dphawkes_app.figures.sweep import boxplot_figure, kernel_figure
from dphawkes_app.layout import friendly_error
from dphawkes_core.errors import DPHawkesError
from dphawkes_experiments import reproduce

RESULTS = "repro_results"
VERDICT_ICONS = {"supported": ":material/check_circle:", "partly supported": ":material/contrast:",
                 "not supported": ":material/cancel:"}


def show(result) -> None:
    """What we ran, the verdict and the checks (the claim is printed once, above the Run button)."""
    icon = VERDICT_ICONS[result.verdict]
    st.markdown(f"**We ran:** {result.setup}.")
    st.markdown(f"**Verdict: {icon} {result.verdict}**")
    st.table([{"check": c.statement, "measured": c.measured, "supports the claim": "yes" if c.supported else "no"}
              for c in result.checks], hide_index=True)  # a table wraps the long checks a data frame would cut
    for warning in result.warnings:
        st.warning(warning)


def section(key: str, title: str, runner, draw=None, header: bool = True, runnable: bool = True,
            allowed=lambda: True) -> None:
    """The claim, the Run button and the last result of one experiment. ``runnable``: the settings were
    accepted (else the button is off and the last result stays); ``allowed()``: checked on the click, says
    itself why the run is refused when it returns False."""
    store = st.session_state.setdefault(RESULTS, {})
    if header:
        st.header(title)
    st.markdown(f"**The paper claims:** “{reproduce.CLAIMS[key.removeprefix('fig')]}.”")
    if st.button(f"Run {title.split(':')[0]}", key=f"run_{key}", disabled=not runnable) and allowed():
        try:
            store[key] = runner()
        except DPHawkesError as exc:
            friendly_error(exc)
    if key in store:
        show(store[key])
        if draw is not None:
            draw(store[key])


def refused_or_fine(checks: FieldChecks) -> bool:
    """False, with the message, when a field was refused (the Run buttons are then off, the last results stay)."""
    try:
        checks.check()
    except DPHawkesError as exc:
        friendly_error(exc)
        return False
    return True


def draw_kernels(result):
    """Figures 1 and 3: the kernel figure and its table."""
    st.plotly_chart(kernel_figure(result.data), key=f"fig_{result.name}")
    st.dataframe(reproduce.display_table(result.table), hide_index=True)


def draw_boxplots(result):
    """Figures 2 and 4: the boxplots with the paper's relative error and the plain one, and their table."""
    frame = result.data["sweep"]
    st.plotly_chart(boxplot_figure(frame, "relative_error_paper"), key=f"box_paper_{result.name}")
    st.caption("The same runs with the plain relative error (the all-zero estimate scores 1):")
    st.plotly_chart(boxplot_figure(frame, "relative_error"), key=f"box_plain_{result.name}")
    st.dataframe(reproduce.display_table(result.table), hide_index=True)
