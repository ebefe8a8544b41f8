"""Home page of the dphawkes app: what it does, the privacy unit, and links to the pages."""

from pathlib import Path

import numpy as np
import pandas as pd
import streamlit as st

from dphawkes_app.common import app_pages, current_dataset, sidebar_dataset
from dphawkes_core.estimators import method_labels

st.set_page_config(page_title="dphawkes: private Hawkes estimation", page_icon="🔒", layout="wide")

st.title("Differentially private Hawkes process estimation")
st.markdown(
    "A Hawkes process models events that trigger further events: an earthquake its aftershocks, a "
    "message its replies. This app estimates **who excites whom, and how long for** — the kernels "
    "h(t) and the baseline rates η — from event times, as in Zuo et al., *Differentially Private "
    "Estimation of Hawkes Process*. The events are counted in bins of width Δ and fitted by least "
    "squares, either exactly (CLS) or with **differential privacy**: the paper's DP-PGD and DP-CG add "
    "Gaussian noise to every gradient step, and two methods beyond the paper have a formal guarantee "
    "from public bounds alone — **DP-SSP** (one noisy release of the least-squares statistics) and "
    "**clipped DP-PGD** (gradients clipped per bin). No single event can then be told from the result. "
    "You can simulate the paper's processes or your own, upload a CSV or open real data, and see "
    "how much accuracy each level of privacy costs, next to the true kernels when they are known."
)

st.subheader("What is protected: one event in one bin")
st.markdown(
    "Two data sets are *neighbours* when they differ by **one event**, i.e. by 1 in one bin of one "
    "dimension. Differential privacy (ε, δ) bounds how much the released estimate can change "
    "between any two neighbours, so nobody can tell whether that one event was in the data."
)
counts = np.array([[0, 2, 1, 0, 1, 3], [1, 0, 0, 2, 0, 1]])
neighbour = counts.copy()
neighbour[0, 3] += 1
cols = st.columns(2)
cols[0].caption("Bin counts X (2 dimensions × 6 bins of width Δ)")
cols[0].dataframe(pd.DataFrame(counts, index=["dim 1", "dim 2"], columns=[f"bin {k}" for k in range(1, 7)]))
cols[1].caption("A neighbour X′: one more event in bin 4 of dim 1")
changed = pd.DataFrame(neighbour, index=["dim 1", "dim 2"], columns=[f"bin {k}" for k in range(1, 7)])
highlight = pd.DataFrame(np.where(neighbour != counts, "background-color: #ffd54f", ""),
                         index=changed.index, columns=changed.columns)
cols[1].dataframe(changed.style.apply(lambda _: highlight, axis=None))
st.caption(
    "The noise needed depends on how much one such change can move the gradient (its sensitivity). "
    "The paper computes that bound from the private data itself, so its calibration is **not a "
    "formal guarantee**; the app always shows it next to a formal calibration that uses only public "
    "bounds (a cap C on each bin count)."
)

st.subheader("Pages")
_LABELS = list(method_labels().values())  # every registered method
_PAGE_HELP = {
    "1_Data.py": "simulate the paper's processes or your own, upload a CSV or open a real data set, and look at "
                 "its events and bin counts",
    "2_Estimate.py": f"fit the kernels with {', '.join(_LABELS[:-1])} or {_LABELS[-1]} and compare with the "
                     "truth and the non-private fit; the link reproduces the view",
    "3_Privacy_utility.py": "sweep privacy levels, bin sizes and methods over many runs: how much accuracy "
                            "each ε costs",
    "4_Reproduce_paper.py": "rerun the paper's Figures 1–4 and Table 1 with one click each, its claim beside "
                            "our measurement",
    "5_Privacy_audit.py": "check a privacy claim from the outside: run a mechanism on two neighbouring data "
                          "sets many times and bound its real ε from below",
    "6_Privacy_budget.py": "every release on a data set counts: its ledger, each release's ε, the total composed "
                           "exactly against naive summation, and the budget that refuses one release too many",
}
for path, label in app_pages():
    st.page_link(path, label=label, icon="➡️")
    st.caption(_PAGE_HELP.get(Path(path).name, ""))

dataset, _ = current_dataset()
sidebar_dataset(dataset)
