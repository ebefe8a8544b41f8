"""Home page of the dphawkes app: what privacy costs in accuracy first (one sentence and a curve precomputed by
scripts/privacy_cost_table.py: nothing runs), then the pages, what ε means (with a picture), and the privacy unit."""

import json
from pathlib import Path

import numpy as np
import pandas as pd
import streamlit as st

from dphawkes_app.cost_story import cost_sentence
from dphawkes_app.figures.palette import HIGHLIGHT_COLOR
from dphawkes_app.figures.privacy import epsilon_caption, epsilon_picture, odds_text, privacy_cost_figure
from dphawkes_app.layout import app_pages, sidebar_dataset
from dphawkes_app.state import current_dataset
from dphawkes_app.words import ADMIN
from dphawkes_core.estimators import FAMILIES, method_labels

COST_TABLE = Path(__file__).resolve().parent / "sample_data" / "privacy_cost.json"
COST_HEIGHT = 380  # the first screen at 1400 × 1000 holds the sentence and the whole chart

st.set_page_config(page_title="dphawkes: private Hawkes estimation", page_icon=":material/lock:", layout="wide")

st.title("Differentially private Hawkes process estimation")
st.markdown(
    "Events that trigger further events — an earthquake its aftershocks, a message its replies — follow a "
    "**Hawkes process**. This app estimates **who excites whom, and for how long**, with **differential privacy**: "
    "the result says almost nothing about any single event in the data.")


@st.cache_data(show_spinner=False)
def cost_table() -> dict | None:
    """The precomputed "what privacy costs" table (``None`` when the file is missing)."""
    try:
        return json.loads(COST_TABLE.read_text())
    except (OSError, ValueError):
        return None


def privacy_cost_section(table: dict | None) -> None:
    """The first screen: what privacy costs in accuracy, in one sentence and one chart, precomputed (nothing runs)."""
    st.subheader("What privacy costs")
    if table is None:
        st.info("The precomputed curve is not installed with this copy of the app: sweep ε on the *Privacy utility* "
                "page to draw it for your own settings.", icon=":material/info:")
        return
    st.markdown(cost_sentence(table))
    st.plotly_chart(privacy_cost_figure(table["rows"], title="Kernel error against ε, per method",
                                        metric=table.get("metric", "relative_error"), height=COST_HEIGHT),
                    key="privacy_cost")
    st.caption(f"Each method at each formal ε (δ = 10⁻⁵), {table['runs']} simulations of {table['scenario']} with "
               "their own noise, precomputed once — not your data: sweep your own settings on the *Privacy utility* "
               "page.")
    with st.expander(f"{ADMIN}: how this curve was made"):
        st.code(f"python {table['made_by']}  # at commit {table.get('commit') or '—'}", language="bash")
        st.caption(f"Δ = {table['bin_size']:g}, p = {table['lags']}, public C = {table['count_cap']}, public "
                   f"options {table.get('public_options', {})}, data seeds {table.get('data_seeds', '—')}, noise "
                   f"seeds {table.get('noise_seeds', '—')}.")


privacy_cost_section(cost_table())

_LABELS = list(method_labels().values())  # every registered method
_PAGE_HELP = {
    "1_Data.py": "simulate the paper's processes or your own, upload a CSV or Parquet file or open a real data set, "
                 "and look at its events and bin counts",
    "2_Estimate.py": f"fit the kernels with {', '.join(_LABELS[:-1])} or {_LABELS[-1]} and compare with the "
                     "truth and the non-private fit; on private data each release is made on request",
    "3_Privacy_utility.py": "sweep privacy levels, bin sizes and methods over many runs: how much accuracy "
                            "each ε costs",
    "4_Reproduce_paper.py": "rerun the paper's Figures 1–4 and Table 1 with one click each, its claim beside "
                            "our measurement",
    "5_Privacy_audit.py": "check a privacy claim from the outside: run a mechanism on two neighbouring data "
                          "sets many times and bound its real ε from below",
    "6_Privacy_budget.py": "every release on a data set counts: its ledger, each release's ε, the total composed "
                           "exactly against naive summation, and the budget that refuses one release too many",
}
st.subheader("Pages")
page_columns = st.columns(2)
for n, (path, label) in enumerate(app_pages()):
    with page_columns[n % 2]:
        st.page_link(path, label=label, icon=":material/arrow_forward:")
        st.caption(_PAGE_HELP.get(Path(path).name, ""))


st.subheader("What ε means")
table = cost_table()
explain, picture = st.columns([2, 3])
with explain:
    st.markdown(
        "A private estimate comes with two numbers, **ε** and **δ**. Take any one event (the *privacy unit*) and "
        "anyone who sees the result — whatever they knew before. Comparing the data **with** and **without** that "
        "event, the result is almost equally likely either way: the probabilities differ by a factor of at most "
        "**e^ε**. So their odds that the event is in the data can move by at most that factor:\n\n"
        "| ε | odds move by at most |\n|---|---|\n"
        + "".join(f"| {e:g} | × {odds_text(e)} |\n" for e in (0.1, 0.5, 1.0, 3.0, 10.0))
        + "\nSo at ε = 1 someone who thought it a coin flip (50\u00a0%) that the event is in the data can be at "
        "most 73\u00a0% sure afterwards (and at least 27\u00a0%). "
        "**δ** is the small probability mass of outputs on which this factor may be exceeded (the shaded bands of "
        "the picture): keep it far below one over the number of people in the data, e.g. δ = 10⁻⁵. "
        "Smaller ε means more noise: more privacy, "
        "less accuracy.")
with picture:
    if table is not None:
        choices = sorted(float(e) for e in table["multipliers"])
        epsilon = st.select_slider("ε in the picture", choices, value=1.0 if 1.0 in choices else choices[0],
                                   key="home_eps", format_func=lambda e: f"{e:g}",
                                   help="the noise that gives this ε at δ = 1e-5 for one release that one event "
                                        "moves by at most 1")
        z = float(table["multipliers"][f"{epsilon:g}"])
        st.plotly_chart(epsilon_picture(epsilon, z, float(table["delta"])), key="epsilon_picture")
        verdict, details = epsilon_caption(epsilon, z, float(table["delta"])).split(". ", 1)
        st.caption(f"{verdict} — one release with Gaussian noise σ = {z:.3g}; the axes stay the same at every ε.")
        if st.toggle("details: what the picture shows", key="home_eps_details"):
            st.caption(f"A number that one event moves by at most 1, released with the noise that ε = {epsilon:g}, "
                       "δ = 10⁻⁵ needs; the densities on a log scale, where the vertical gap between the curves is "
                       f"their ratio. {details}")

st.subheader("What is protected: one event in one bin")
st.markdown(
    "Two data sets are *neighbouring* when they differ by **one event**, i.e. by 1 in one bin of one "
    "dimension. Differential privacy (ε, δ) bounds how much the released estimate can change "
    "between any two neighbours, and so how well anyone can tell whether that one event was in the data "
    "(the picture above).")
counts = np.array([[0, 2, 1, 0, 1, 3], [1, 0, 0, 2, 0, 1]])
neighbour = counts.copy()
neighbour[0, 3] += 1
cols = st.columns(2)
cols[0].caption("Bin counts X (2 dimensions × 6 bins of width Δ)")
cols[0].dataframe(pd.DataFrame(counts, index=["dim 1", "dim 2"], columns=[f"bin {k}" for k in range(1, 7)]))
cols[1].caption("A neighbour X′: one more event in bin 4 of dim 1")
changed = pd.DataFrame(neighbour, index=["dim 1", "dim 2"], columns=[f"bin {k}" for k in range(1, 7)])
highlight = pd.DataFrame(np.where(neighbour != counts, f"background-color: {HIGHLIGHT_COLOR}", ""),
                         index=changed.index, columns=changed.columns)
cols[1].dataframe(changed.style.apply(lambda _: highlight, axis=None))
st.caption(
    "The noise needed depends on how much one such change can move the gradient (its sensitivity). "
    "The paper computes that bound from the private data itself, so its calibration is **not a "
    "formal guarantee**; the app always shows it next to a formal calibration that uses only public "
    "bounds (a cap C on each bin count).")

with st.expander("The methods"):
    formal = [f.label for f in FAMILIES.values() if f.privacy.private and f.formal_only]
    paper = [f.label for f in FAMILIES.values() if f.privacy.private and not f.formal_only]
    reference = [f.label for f in FAMILIES.values() if not f.privacy.private]
    st.markdown(
        "The events are counted in bins of width Δ and the kernels h(t) and baseline rates η fitted by least "
        f"squares, as in Zuo et al., *Differentially Private Estimation of Hawkes Process*: exactly "
        f"({', '.join(reference)}, not private), or with differential privacy. The paper's "
        f"{' and '.join(paper)} add Gaussian noise to every gradient step; "
        f"{', '.join(formal)} have a formal guarantee from public bounds alone.\n\n"
        + "\n".join(f"- **{f.label}**: {f.summary}" for f in FAMILIES.values()))

dataset, _ = current_dataset()
sidebar_dataset(dataset)
