"""Reproduce the paper: one click per experiment, the paper's claim beside what we measure."""

import streamlit as st

from dphawkes_app.figures.sweep import boxplot_figure, kernel_figure
from dphawkes_app.layout import friendly_error, sidebar_dataset
from dphawkes_app.state import current_dataset
from dphawkes_core.data.datasets import list_samples
from dphawkes_core.errors import DPHawkesError
from dphawkes_experiments import reproduce
from dphawkes_experiments.prediction import __doc__ as PREDICTION_DOC
from dphawkes_experiments.sweep import default_executor

RESULTS = "repro_results"

st.set_page_config(page_title="Reproduce the paper · dphawkes", page_icon="🔒", layout="wide")
st.title("Reproduce the paper")
st.caption("Each experiment of the paper's §5 in one click, the paper's claim printed beside our measurement "
           "and a plain verdict. Numbers saved from a full run (and the command that made them) are in "
           "`docs/reproduction.md`.")
sidebar_dataset(current_dataset()[0])


@st.cache_data(show_spinner="Fitting…", max_entries=4)
def kernels_cached(figure: str, seed: int):
    return reproduce.figure_kernels(figure, seed)


@st.cache_data(show_spinner=False, max_entries=8)
def boxplots_cached(figure: str, runs: int, seed: int):
    with default_executor() as pool:
        return reproduce.figure_boxplots(figure, runs, seed, executor=pool)


@st.cache_data(show_spinner="Fitting and predicting…", max_entries=8)
def table1_cached(dataset: str, bin_size: float, support: float, fraction: float, runs: int):
    return reproduce.table1(dataset, bin_size, support, fraction, 0.1, runs)


def show(result) -> None:
    """What we ran, the verdict and the checks (the claim is printed once, above the Run button)."""
    icon = {"supported": "✅", "partly supported": "🟡", "not supported": "❌"}[result.verdict]
    st.markdown(f"**We ran:** {result.setup}.")
    st.markdown(f"**Verdict: {icon} {result.verdict}**")
    st.dataframe([{"check": c.statement, "measured": c.measured, "supports the claim": "yes" if c.supported else "no"}
                  for c in result.checks], hide_index=True)
    for warning in result.warnings:
        st.warning(warning)


def section(key: str, title: str, runner, draw=None, header: bool = True) -> None:
    store = st.session_state.setdefault(RESULTS, {})
    if header:
        st.header(title)
    st.markdown(f"**The paper claims:** “{reproduce.CLAIMS[key.removeprefix('fig')]}.”")
    if st.button(f"Run {title.split(':')[0]}", key=f"run_{key}"):
        try:
            store[key] = runner()
        except DPHawkesError as exc:
            friendly_error(exc)
    if key in store:
        show(store[key])
        if draw is not None:
            draw(store[key])


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
seed = c1.number_input("simulation seed (first seed for the boxplots)", 0, 10_000, 1, key="repro_seed")
runs = c2.number_input("runs per boxplot, Figures 2 and 4 (the paper: 10; fewer is faster)", 1, 50, 10,
                       key="repro_runs")
st.caption("Figure 2 is 150 private fits plus 30 non-private ones with their simulations; Figure 4 likewise on "
           "4000-event simulations. Both run in parallel on this machine's cores.")
section("fig1", "Figure 1: kernel h₁₂ under DP-PGD (paper-2d, B = 0.2, K = 1000)",
        lambda: kernels_cached("1", int(seed)), draw_kernels)
section("fig2", "Figure 2: relative error vs σ² and Δ, DP-PGD",
        lambda: boxplots_cached("2", int(runs), int(seed)), draw_boxplots)
section("fig3", "Figure 3: kernel h₂₂ under DP-CG (paper-4d, K = 100)",
        lambda: kernels_cached("3", int(seed)), draw_kernels)
section("fig4", "Figure 4: relative error vs σ² and Δ, DP-CG",
        lambda: boxplots_cached("4", int(runs), int(seed)), draw_boxplots)

st.header("Table 1 analogue: next-event-time RMSE on real data")
samples = [s.name for s in list_samples()]
if not samples:
    st.info("No real data set found in the data directory (set DPHAWKES_DATA_DIR).")
else:
    default = reproduce.TABLE1
    c1, c2, c3, c4, c5 = st.columns(5)
    name = c1.selectbox(
        "data set",
        samples,
        index=samples.index(default["dataset"]) if default["dataset"] in samples else 0,
        key="t1_data",
    )
    bin_size = c2.number_input("Δ (data time unit)", 1e-4, 1e4, default["bin_size"], format="%.4g", key="t1_dt")
    support = c3.number_input("support s", 1e-4, 1e6, default["support"], format="%.4g", key="t1_s")
    fraction = c4.slider("training part", 0.3, 0.9, default["train_fraction"], 0.05, key="t1_frac")
    t1_runs = c5.number_input("noise seeds", 1, 20, 5, key="t1_runs")
    with st.expander("What is computed"):
        st.markdown(PREDICTION_DOC)
    section("table1", "Table 1: RMSE of CLS, DP-PGD and DP-CG at σ² = 0.1",
            lambda: table1_cached(name, float(bin_size), float(support), float(fraction), int(t1_runs)),
            lambda r: st.dataframe(reproduce.display_table(r.table), hide_index=True), header=False)
