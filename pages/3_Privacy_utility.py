"""Privacy–utility page: sweep privacy level × Δ × method × runs and plot the trade-off."""

import pandas as pd
import streamlit as st

from dphawkes_core.errors import DPHawkesError
from dphawkes_core.estimators import FORMAL_ONLY_METHODS, METHODS
from dphawkes_core.kernels import SCENARIOS, get_scenario
from dphawkes_core.plots_sweep import boxplot_figure, tradeoff_figure
from dphawkes_core.privacy import CALIBRATION_LABELS, CALIBRATIONS
from dphawkes_core.sweep import DataSource, SweepSpec, default_executor, merge_tables, run_sweep, select
from ui_common import current_dataset, friendly_error, sidebar_dataset

STORE = "sweep_store"  # every finished cell of this session (the cache: widening a grid reuses them)

st.set_page_config(page_title="Privacy–utility · dphawkes", page_icon="🔒", layout="wide")
st.title("Privacy–utility trade-off")
st.caption("How much accuracy each unit of privacy costs, per method and bin size Δ. Every run of a "
           "simulated scenario is a fresh simulation with fresh noise, as in the paper's boxplots.")

dataset, _ = current_dataset()
sidebar_dataset(dataset)


def parse_numbers(text: str, label: str) -> tuple:
    """Comma-separated numbers, or a ConfigError-like message."""
    try:
        values = tuple(float(x) for x in text.replace(";", ",").split(",") if x.strip())
    except ValueError:
        raise DPHawkesError(f"{label}: write numbers separated by commas, e.g. 0, 0.01, 1") from None
    if not values:
        raise DPHawkesError(f"{label}: give at least one value")
    return values


def source_widgets() -> DataSource:
    options = ["Simulate a scenario (fresh simulation per run)", f"Current data set: {dataset.label}"]
    choice = st.radio("Data", options, key="pu_source")
    if choice == options[0]:
        c1, c2 = st.columns(2)
        name = c1.selectbox("Scenario", list(SCENARIOS), key="pu_scenario")
        n_events = c2.number_input("events per simulation", 50, 200_000, 1000, step=100, key="pu_events")
        return DataSource(scenario=get_scenario(name), n_events=int(n_events), label=name)
    if dataset.scenario is not None:
        st.caption("Fixed data with known truth: every run changes only the noise; errors are against the truth.")
        return DataSource(scenario=dataset.scenario, events=dataset.events, label=dataset.label)
    frac = st.slider("training part (the rest is predicted)", 0.3, 0.9, 0.7, 0.05, key="pu_train")
    st.caption("No ground truth: the metric is the held-out next-event-time RMSE (see the Reproduce page "
               "for what exactly is computed); every run changes only the noise.")
    return DataSource(events=dataset.events, label=dataset.label, train_fraction=frac)


def spec_widgets(source: DataSource) -> SweepSpec:
    c1, c2, c3 = st.columns(3)
    methods = c1.multiselect("Methods", list(METHODS), default=["cls", "pgd"], key="pu_methods",
                             help="cls is the non-private reference; ssp and pgd-clip need the formal calibration")
    privacy = c2.radio("Privacy level given as", ["σ² (noise variance)", "ε (target)"], key="pu_kind")
    kind = "sigma2" if privacy.startswith("σ²") else "epsilon"
    levels = c2.text_input("levels", "0, 0.01, 1, 10" if kind == "sigma2" else "0.5, 1, 2, 8", key=f"pu_levels_{kind}")
    bins = c3.text_input("bin sizes Δ", "0.05, 0.5", key="pu_bins")
    runs = c3.number_input("runs (seeds)", 1, 100, 3, key="pu_runs")
    with st.expander("Estimator settings"):
        d1, d2, d3, d4 = st.columns(4)
        support = d1.number_input("kernel support s (p = ⌈s/Δ⌉)", 0.01, 1e6, 4.0, key="pu_support")
        iters = d1.number_input("iterations K", 1, 5000, 200, key="pu_iters")
        auto_b = d2.checkbox("B from the truth's ||H||_F (or the non-private fit's)", False, key="pu_auto_b")
        bound = None if auto_b else d2.number_input("PGD bound B (paper: 0.2)", 1e-6, 1e6, 0.2, format="%.4g", key="pu_b")
        auto_r = d3.checkbox("r from the truth's ||ΔH||_* (or the non-private fit's)", True, key="pu_auto_r")
        radius = None if auto_r else d3.number_input("CG radius r", 1e-6, 1e6, 0.3, format="%.4g", key="pu_r")
        calibration = d4.selectbox("calibration", list(CALIBRATIONS), key="pu_cal",
                                   format_func=lambda c: CALIBRATION_LABELS[c])
        cap = d4.number_input("count cap C (formal; 0 = none)", 0, 10_000, 0, key="pu_cap")
        clip = d4.number_input("pgd-clip clip norm G", 1e-6, 1e6, 1.0, format="%.4g", key="pu_clip")
    if any(m in FORMAL_ONLY_METHODS for m in methods) and calibration != "formal":
        raise DPHawkesError("ssp and pgd-clip have only the formal calibration: choose 'formal' and a count cap")
    return SweepSpec(
        source, methods=tuple(methods), bin_sizes=parse_numbers(bins, "bin sizes"), privacy=kind,
        levels=parse_numbers(levels, "levels"), runs=int(runs), support=float(support), bound=bound,
        radius=radius, iters=int(iters), calibration=calibration, count_cap=int(cap) or None,
        options=(("clip", float(clip)),) if "pgd-clip" in methods else (),
    )


def run(spec: SweepSpec) -> None:
    store = st.session_state.get(STORE, pd.DataFrame())
    done = set(store["key"]) if not store.empty else set()
    todo = spec.n_cells - len(select(store, spec))
    if todo == 0:
        st.info("Every cell of this grid was already computed in this session; nothing to run.")
        return
    bar = st.progress(0, text=f"0 of {todo} new cells")

    def progress(finished, total, rows):
        # Keep every finished group at once, so a stopped run keeps its results.
        st.session_state[STORE] = merge_tables(st.session_state.get(STORE, pd.DataFrame()), pd.DataFrame(rows))
        bar.progress(finished / total, text=f"{finished} of {total} new cells")

    with default_executor() as pool:
        run_sweep(spec, pool, done=done, progress=progress)
    bar.progress(1.0, text=f"done: {todo} new cells, {spec.n_cells - todo} reused")


try:
    spec = spec_widgets(source_widgets())
except DPHawkesError as exc:
    friendly_error(exc)
    st.stop()

st.caption(f"{spec.n_cells} cells (runs × Δ × levels per private method, one per run and Δ for cls).")
if st.button("Run sweep", type="primary", key="pu_run"):
    try:
        run(spec)
    except DPHawkesError as exc:
        friendly_error(exc)

view = select(st.session_state.get(STORE, pd.DataFrame()), spec)
if view.empty:
    st.info("Press **Run sweep** to compute the grid.")
    st.stop()

has_truth = view["relative_error"].notna().any()
metrics = ["relative_error", "relative_error_paper"] if has_truth else ["rmse"]
metric = st.radio("Error shown", metrics, horizontal=True, key="pu_metric",
                  format_func=lambda m: {"relative_error": "plain relative error", "rmse": "held-out RMSE",
                                         "relative_error_paper": "paper's metric (÷ d(dp+1))"}[m])
if has_truth:
    st.caption("The paper's metric divides by d(dp+1) and shrinks as p grows whatever the estimate; the "
               "all-zero estimate scores 1 on the plain relative error (dotted line).")
if view["shrunk"].any():
    bad = sorted(view.loc[view["shrunk"], "bin_size"].unique())
    st.warning("For Δ = " + ", ".join(f"{b:g}" for b in bad) + " the constraint radius (B or r) is less than half "
               "the truth's norm: every estimate is pulled toward zero, so noise can look harmless.")
if len(view) < spec.n_cells:
    st.warning(f"Partial results: {len(view)} of {spec.n_cells} cells finished.")

st.subheader("Error per privacy level, one panel per Δ")
st.plotly_chart(boxplot_figure(view, metric), key="pu_box")

st.subheader("Median error against ε")
eps_cols = [c for c in view.columns if c.startswith("epsilon_") and view[c].notna().any()]
eps_col = st.selectbox("ε under calibration", eps_cols, key="pu_eps_col",
                       format_func=lambda c: CALIBRATION_LABELS[c.removeprefix("epsilon_").replace("_", "-")])
finite = (pd.to_numeric(view[eps_col], errors="coerce").abs() < float("inf")).any() if eps_col else False
if eps_col and not eps_col.endswith("formal"):
    st.caption("⚠️ This ε uses R computed from the private data: NOT a formal guarantee.")
if finite:
    st.plotly_chart(tradeoff_figure(view, metric, eps_col), key="pu_tradeoff")
else:
    st.info("No finite ε in the table under this calibration, so there is no curve: σ² = 0 and the non-private "
            "fit are not private, and the formal ε needs a count cap C ≥ 1.")

st.subheader("Table")
st.dataframe(view, hide_index=True)
st.download_button("Download the table (CSV)", view.to_csv(index=False).encode(), "sweep.csv", "text/csv",
                   key="pu_download")
