"""Reproduce the paper: one click per experiment, the paper's claim beside what we measure."""

import re
import time

import streamlit as st

from dphawkes_app.bounded_input import FieldChecks
from dphawkes_app.budget import budget_state
from dphawkes_app.caches import RunStore
from dphawkes_app.figures.sweep import boxplot_figure, kernel_figure
from dphawkes_app.layout import friendly_error, sidebar_dataset
from dphawkes_app.ledger_rows import ledger_label
from dphawkes_app.state import current_dataset, fingerprint
from dphawkes_core.data.datasets import list_samples, load_sample
from dphawkes_core.errors import DPHawkesError
from dphawkes_experiments import reproduce
from dphawkes_experiments.prediction import __doc__ as PREDICTION_DOC
from dphawkes_experiments.sweep import default_executor, run_sweep

RESULTS, REFUSED = "repro_results", "repro_table1_refused"
VERDICT_ICONS = {"supported": ":material/check_circle:", "partly supported": ":material/contrast:",
                 "not supported": ":material/cancel:"}

st.set_page_config(page_title="Reproduce the paper · dphawkes", page_icon=":material/lock:", layout="wide")
st.title("Reproduce the paper")
st.caption("Each experiment of the paper's §5 in one click, the paper's claim printed beside our measurement "
           "and a plain verdict. The figures run on simulations (public: nothing is metered); Table 1 runs on a "
           "real data set only when it is marked public, as the other pages treat real data as private.")
sidebar_dataset(current_dataset()[0])


KEPT_RUNS = 12  # finished runs kept for every session of this server
SPHINX_ROLE = re.compile(r":(?:func|data|mod|class|meth):`~?([^`]+)`")  # the docstring's cross-references, as names
PREDICTION_WORDS = (
    "Each method is fitted on the first part of the data (the training part) and predicts the rest. **The held-out "
    "score** says how probable the fitted model finds the events it never saw, per event, against a plain model "
    "with constant rates (above 0: the fit predicts better). **The RMSE** is the paper's measure: at every event of "
    "the test part the model predicts how long until the next event, and the RMSE is the typical error of that "
    "prediction, in the data's time unit — a constant-rate model's is the one to beat. The paper does not say how "
    "it computed its RMSE; this is our definition, in the details below.")


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


def draw_kernels(result):
    st.plotly_chart(kernel_figure(result.data), key=f"fig_{result.name}")
    st.dataframe(reproduce.display_table(result.table), hide_index=True)


def draw_boxplots(result):
    frame = result.data["sweep"]
    st.plotly_chart(boxplot_figure(frame, "relative_error_paper"), key=f"box_paper_{result.name}")
    st.caption("The same runs with the plain relative error (the all-zero estimate scores 1):")
    st.plotly_chart(boxplot_figure(frame, "relative_error"), key=f"box_plain_{result.name}")
    st.dataframe(reproduce.display_table(result.table), hide_index=True)


c1, c2 = st.columns(2)
figure_checks = FieldChecks()
seed = figure_checks.number(c1, "simulation seed (first seed for the boxplots)", 0, 10_000, 1, "repro_seed")
runs = figure_checks.number(c2, "runs per boxplot, Figures 2 and 4 (the paper: 10; fewer is faster)", 1, 50, 10,
                            "repro_runs")
figures_runnable = refused_or_fine(figure_checks)
st.caption("Figure 2 is 150 private fits plus 30 non-private ones with their simulations; Figure 4 likewise on "
           "4000-event simulations. Both run in parallel on this machine's cores.")
section("fig1", "Figure 1: kernel h₁₂ under DP-PGD (paper-2d, B = 0.2, K = 1000)",
        lambda: kernels_with_progress("1", int(seed)), draw_kernels, runnable=figures_runnable)
section("fig2", "Figure 2: relative error vs σ² and Δ, DP-PGD",
        lambda: boxplots_with_progress("2", int(runs), int(seed)), draw_boxplots, runnable=figures_runnable)
section("fig3", "Figure 3: kernel h₂₂ under DP-CG (paper-4d, K = 100)",
        lambda: kernels_with_progress("3", int(seed)), draw_kernels, runnable=figures_runnable)
section("fig4", "Figure 4: relative error vs σ² and Δ, DP-CG",
        lambda: boxplots_with_progress("4", int(runs), int(seed)), draw_boxplots, runnable=figures_runnable)

st.header("Table 1 analogue: next-event-time RMSE on real data")
samples = {s.name: s for s in list_samples()}
if not samples:
    st.info("No real data set is installed on this server.", icon=":material/info:")
else:
    default = reproduce.TABLE1
    names = list(samples)
    c1, c2, c3, c4, c5 = st.columns(5)
    name = c1.selectbox("data set", names, key="t1_data",
                        index=names.index(default["dataset"]) if default["dataset"] in names else 0)
    table_checks = FieldChecks()
    bin_size = table_checks.number(c2, "Δ (data time unit)", 1e-4, 1e4, default["bin_size"], "t1_dt", format="%.4g")
    support = table_checks.number(c3, "support s", 1e-4, 1e6, default["support"], "t1_s", format="%.4g")
    t1_runs = table_checks.number(c5, "noise seeds", 1, 20, 5, "t1_runs")
    table_runnable = refused_or_fine(table_checks)
    fraction = c4.slider("training part", 0.3, 0.9, default["train_fraction"], 0.05, key="t1_frac")
    with st.expander("What is computed"):
        st.markdown(PREDICTION_WORDS)
        if st.toggle("details: the formulas", key="t1_formulas"):
            st.markdown(SPHINX_ROLE.sub(r"\1", PREDICTION_DOC))
    st.caption("Table 1 is an experiment (seeded noise, errors against the raw data): on real data it runs only "
               "when the data set is marked public — a published catalogue — as it would be refused on any other "
               "page.")
    section("table1", "Table 1: RMSE of CLS, DP-PGD and DP-CG at σ² = 0.1",
            lambda: table1_with_progress(name, float(bin_size), float(support), float(fraction), int(t1_runs)),
            lambda r: st.dataframe(reproduce.display_table(r.table), hide_index=True), header=False,
            runnable=table_runnable, allowed=lambda: table1_allowed(samples[name]))
    if st.session_state.get(REFUSED) == name:
        offer_public_mark(samples[name])
