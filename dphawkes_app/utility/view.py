"""What the Privacy–utility page draws from a sweep's finished cells: the measure shown (with what to read into it),
the boxplots per Δ, the median error against ε with its formal status, the error against the number of events, the
tables and their downloads."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from dphawkes_core.estimators import get_family
from dphawkes_core.privacy.calibration import CALIBRATION_LABELS
from dphawkes_core.privacy.report import NOT_RELEASED
from dphawkes_core.privacy.sequence import UNIT_LABELS
from dphawkes_experiments.sweep import SweepSpec

from ..figures.sweep import boxplot_figure, data_size_figure, tradeoff_figure
from ..guidance import count_noun


def metric_choice(view: pd.DataFrame, key: str, with_paper: bool = False) -> str:
    """The error shown against a truth: the plain relative error on the lag grid, the grid-free kernel error
    (first when a family fitting exact event times is in the table: a binned fit's error on its own grid leaves
    out its discretisation bias, so the two compare only grid-free) and, with ``with_paper``, the paper's metric."""
    exact = any(get_family(m).fits_event_times for m in view["method"].unique())
    metrics = ["relative_error", "kernel_function_error"] + (["relative_error_paper"] if with_paper else [])
    if exact:
        metrics.insert(0, metrics.pop(1))
    labels = {"relative_error": "plain relative error", "kernel_function_error": "grid-free kernel error",
              "relative_error_paper": "paper's metric (÷ d(dp+1))"}
    metric = st.radio("Error shown", metrics, horizontal=True, key=key, format_func=labels.get)
    if exact:
        st.caption("Grid-free error first: the exact-time estimator is compared with the binned ones on the kernel "
                   "functions themselves (a binned fit's error on its own lag grid does not count its "
                   "discretisation bias).")
    return metric


def say_infinite(view: pd.DataFrame) -> None:
    """The runs whose fitted intensity is ≤ 0 at a test event — they say those events could not happen — counted
    here: their gain is read with the intensity at least 5 % of the mean rate there (it would be −∞)."""
    infinite = view[view["heldout_nonpositive"] > 0]
    if len(infinite):
        by_method = infinite.groupby("method").size()
        st.warning(f"{len(infinite)} of {len(view)} runs say some test events could not happen (their fitted "
                   "intensity is ≤ 0 there; read as 5 % of the mean rate there, else their gain would be −∞): "
                   + ", ".join(f"{get_family(m).label} {n}" for m, n in by_method.items())
                   + ". The gain is > 0 when a fit predicts better than the Poisson model (dotted line at 0).",
                   icon=":material/warning:")
    else:
        st.caption("The gain is > 0 when a fit predicts better than the Poisson model (dotted line at 0).")


def show_tradeoff(spec: SweepSpec, view: pd.DataFrame) -> None:
    """Boxplots per Δ, the median error against ε (formal by default) and the table of ``view``."""
    metric = tradeoff_measure(spec, view)
    st.subheader("Error per privacy level, one panel per Δ")
    st.plotly_chart(boxplot_figure(view, metric), key="pu_box")
    epsilon_curve(spec, view, metric)
    st.subheader("Table")
    st.dataframe(readable_table(view), hide_index=True)
    st.caption("The download holds every column of the sweep (seeds, timings, each calibration's ε, the "
               "constraint's radius, …) under its machine name.")
    st.download_button("Download the table (CSV)", view.to_csv(index=False).encode(), "sweep.csv", "text/csv",
                       key="pu_download")


TABLE_COLUMNS = {
    "method": "method", "bin_size": "Δ", "seed": "run (seed)", "sigma2": "noise variance σ²",
    "epsilon": "ε (chosen calibration)", "formal_settings": "formal settings", "data_events": "events",
    "relative_error": "plain relative error", "kernel_function_error": "grid-free kernel error",
    "relative_error_paper": "paper's metric", "heldout_gain": "held-out gain over Poisson",
    "heldout_gain_se": "its standard error", "rmse": "next-event-time RMSE",
}


def readable_table(view: pd.DataFrame) -> pd.DataFrame:
    """The sweep's table for reading: the columns of :data:`TABLE_COLUMNS` that hold a value, under their
    readable names, and each method under its registry label."""
    kept = [c for c in TABLE_COLUMNS if c in view.columns and view[c].notna().any()]
    table = view[kept].rename(columns=TABLE_COLUMNS)
    table["method"] = [get_family(m).label for m in view["method"]]
    return table


def tradeoff_measure(spec: SweepSpec, view: pd.DataFrame) -> str:
    """The measure shown (against the truth, or held out without one), with what to read into it; returns its
    column."""
    has_truth = view["relative_error"].notna().any()
    if has_truth:
        metric = metric_choice(view, "pu_metric", with_paper=True)
    else:
        metric = st.radio("Measure shown", ["heldout_gain", "rmse"], key="pu_metric", horizontal=True,
                          format_func={"heldout_gain": "held-out gain over Poisson (nats per test event)",
                                       "rmse": "held-out next-event-time RMSE"}.get)
        if metric == "heldout_gain":
            say_infinite(view)
    if has_truth:
        st.caption("The paper's metric divides by d(dp+1) and shrinks as p grows whatever the estimate; the "
                   "all-zero estimate scores 1 on the plain relative error and on the grid-free one (dotted line).")
    if view["shrunk"].any():
        bad = sorted(view.loc[view["shrunk"], "bin_size"].unique())
        st.warning("For Δ = " + ", ".join(f"{b:g}" for b in bad) + " the constraint radius (B or r) is less than half "
                   "the truth's norm: every estimate is pulled toward zero, so noise can look harmless.")
    if len(view) < spec.n_cells:
        st.warning(f"Partial results: {len(view)} of {spec.n_cells} cells finished.")
    return metric


def epsilon_curve(spec: SweepSpec, view: pd.DataFrame, metric: str) -> None:
    """The median error against ε under the chosen calibration (formal by default), with its formal status."""
    st.subheader("Median error against ε")
    eps_cols = [c for c in view.columns if c.startswith("epsilon_") and view[c].notna().any()]
    eps_col = st.selectbox("ε under calibration", eps_cols, key="pu_eps_col",
                           index=eps_cols.index("epsilon_formal") if "epsilon_formal" in eps_cols else 0,
                           format_func=lambda c: CALIBRATION_LABELS[c.removeprefix("epsilon_").replace("_", "-")])
    finite = (pd.to_numeric(view[eps_col], errors="coerce").abs() < float("inf")).any() if eps_col else False
    if eps_col and not eps_col.endswith("formal"):
        st.caption(":material/warning: This ε uses R computed from the private data: NOT a formal guarantee.")
    private_rows = view[[get_family(m).privacy.private for m in view["method"]]]
    if eps_col and eps_col.endswith("formal") and not private_rows["formal_settings"].astype(bool).all():
        reasons = sorted({r for text in private_rows["formal_reasons"] for r in str(text).split("; ")
                          if r and r != NOT_RELEASED})
        st.warning("Not a formal guarantee for every row: " + "; ".join(reasons) + ".", icon=":material/warning:")
    st.caption(f"Privacy unit: {UNIT_LABELS[dict(spec.options).get('privacy_unit', 'event')]}. Every run here uses "
               "seeded noise (an experiment, not a private release); the column *formal settings* says whether "
               "the same settings, released with fresh noise through a ledger, would be one.")
    if finite:
        st.plotly_chart(tradeoff_figure(view, metric, eps_col), key="pu_tradeoff")
        reference = view.loc[[not get_family(m).privacy.private for m in view["method"]], metric].median()
        private_medians = private_rows.groupby(["method", "level"])[metric].median()
        if pd.notna(reference) and (private_medians < reference).any():
            st.caption("Some private medians lie below the non-private one: their post-processing (non-negativity, "
                       "smoothing across lags, a constraint) costs no privacy and the plain non-private fit does not "
                       "get it — the Estimate page shows the same post-processing without noise (σ² = 0) beside each "
                       "private fit.")
    else:
        st.info("No finite ε in the table under this calibration, so there is no curve: σ² = 0 and the non-private "
                "fit are not private, and the formal ε needs a count cap C ≥ 1.")


def show_data_sizes(spec: SweepSpec, view: pd.DataFrame, n_cells: int) -> None:
    """The error against the number of events (median over the runs, interquartile band) and its table."""
    if len(view) < n_cells:
        st.warning(f"Partial results: {len(view)} of {n_cells} cells finished.")
    metric = metric_choice(view, "hd_metric")
    st.plotly_chart(data_size_figure(view, metric), key="hd_figure")
    st.caption(f"Median error over {count_noun(spec.runs, 'run')}, interquartile band shaded; dashed: "
               "non-private; dotted: the all-zero estimate (error 1). Runs use seeded noise: experiments, not "
               "private releases.")
    st.download_button("Download the table (CSV)", view.to_csv(index=False).encode(), "data_size_sweep.csv",
                       "text/csv", key="hd_download")
