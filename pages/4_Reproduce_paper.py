"""Reproduce the paper: one click per experiment, the paper's claim beside what we measure.

The page is a frame: the runs are :mod:`dphawkes_app.reproduce.runs`, each experiment's section
:mod:`dphawkes_app.reproduce.sections`, Table 1's public data :mod:`dphawkes_app.reproduce.public_data`."""

import re

import streamlit as st

from dphawkes_app.bounded_input import FieldChecks
from dphawkes_app.layout import sidebar_dataset
from dphawkes_app.reproduce.public_data import REFUSED, offer_public_mark, table1_allowed
from dphawkes_app.reproduce.runs import boxplots_with_progress, kernels_with_progress, table1_with_progress
from dphawkes_app.reproduce.sections import draw_boxplots, draw_kernels, refused_or_fine, section
from dphawkes_app.state import current_dataset
from dphawkes_core.data.datasets import list_samples
from dphawkes_experiments import reproduce
from dphawkes_experiments.prediction import __doc__ as PREDICTION_DOC

st.set_page_config(page_title="Reproduce the paper · dphawkes", page_icon=":material/lock:", layout="wide")
st.title("Reproduce the paper")
st.caption("Each experiment of the paper's §5 in one click, the paper's claim printed beside our measurement "
           "and a plain verdict. The figures run on simulations (public: nothing is metered); Table 1 runs on a "
           "real data set only when it is marked public, as the other pages treat real data as private.")
sidebar_dataset(current_dataset()[0])

SPHINX_ROLE = re.compile(r":(?:func|data|mod|class|meth):`~?([^`]+)`")  # the docstring's cross-references, as names
PREDICTION_WORDS = (
    "Each method is fitted on the first part of the data (the training part) and predicts the rest. **The held-out "
    "score** says how probable the fitted model finds the events it never saw, per event, against a plain model "
    "with constant rates (above 0: the fit predicts better). **The RMSE** is the paper's measure: at every event of "
    "the test part the model predicts how long until the next event, and the RMSE is the typical error of that "
    "prediction, in the data's time unit — a constant-rate model's is the one to beat. The paper does not say how "
    "it computed its RMSE; this is our definition, in the details below.")

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
