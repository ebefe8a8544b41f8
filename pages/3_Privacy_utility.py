"""Privacy–utility page: error against the privacy level (privacy level × Δ × method × runs), and error
against the number of events at one formal ε ("how much data does ε need")."""

import pandas as pd
import streamlit as st

from dphawkes_app.budget import BudgetState, budget_state, offer_simulated_copy, refuse_experiments, show_budget
from dphawkes_app.controls import privacy_unit_controls, sequence_families
from dphawkes_app.figures.sweep import boxplot_figure, data_size_figure, tradeoff_figure
from dphawkes_app.heldout import holdout_controls
from dphawkes_app.layout import friendly_error, sidebar_dataset
from dphawkes_app.presets import DEFAULT_PRESET, WORKS_COUNT_CAP, get_preset
from dphawkes_app.state import current_dataset
from dphawkes_core.data.datasets import Dataset
from dphawkes_core.data.kernels import SCENARIOS, get_scenario
from dphawkes_core.errors import DPHawkesError
from dphawkes_core.estimators import FAMILIES, get_family, method_labels, method_names
from dphawkes_core.estimators.registry import reference_method
from dphawkes_core.privacy.calibration import CALIBRATION_LABELS, CALIBRATIONS, NOT_RELEASED
from dphawkes_core.privacy.sequence import UNIT_LABELS
from dphawkes_experiments.sweep import (
    DataSource,
    SweepSpec,
    default_executor,
    merge_tables,
    run_size_sweep,
    run_sweep,
    select,
    size_specs,
)

STORE = "sweep_store"  # every finished cell of this session (the cache: widening a grid reuses them)
WORKS = get_preset(DEFAULT_PRESET).config  # the settings of "Privacy that works" are the defaults:
WORKS_PUBLIC = get_preset(DEFAULT_PRESET).public  # its fit, and its public B, r, G for the families that read them
DEFAULT_METHODS = tuple(dict.fromkeys(("cls", WORKS.method, "ssp", "pgd")))  # the reference, the preset's, DP-SSP,
# the paper's: first selected
MAX_SIZE_EVENTS = 500_000


def sequence_unit_note() -> str:
    """Which families and data the sequence unit applies to."""
    return (f"The sequence unit (one whole sequence — one person — replaced) applies to {sequence_families()} only "
            f"({get_family(reference_method()).label} stays the non-private reference) and to data with several "
            "sequences, e.g. nyc_taxi loaded on the Data page (and declared published on the Privacy budget page: a "
            "sweep is an experiment) and chosen here as the current data set.")


def readers(option: str) -> str:
    """Labels of the families that read ``option`` (e.g. "DP-PGD, clipped DP-PGD" for the bound B)."""
    return ", ".join(f.label for f in FAMILIES.values() if f.reads(option))


def method_choice(container, key: str, help: str) -> list[str]:
    """The methods of a sweep: every registered family, labelled by the registry."""
    names, labels = list(method_names()), method_labels()
    return container.multiselect("Methods", names, default=[m for m in DEFAULT_METHODS if m in names], key=key,
                                 format_func=labels.get,
                                 help=f"{get_family(reference_method()).label} is the non-private reference; {help}")


def check_calibration(methods, calibration: str) -> None:
    """Refuse a calibration some chosen private family does not have."""
    missing = [
        get_family(m) for m in methods
        if get_family(m).privacy.private and calibration not in get_family(m).privacy.calibrations
    ]
    if missing:
        only = (
            "only the formal calibration" if all(f.formal_only for f in missing) else f"no calibration '{calibration}'"
        )
        raise DPHawkesError(f"{' and '.join(f.label for f in missing)} {'has' if len(missing) == 1 else 'have'} "
                            f"{only}: choose one they have (the formal one needs a count cap)")


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


def family_options(methods, **values) -> tuple:
    """``values`` (e.g. the clip G) as a sweep's options, each only when a chosen family reads it."""
    return tuple((name, value) for name, value in values.items() if any(get_family(m).reads(name) for m in methods))

st.set_page_config(page_title="Privacy–utility · dphawkes", page_icon=":material/lock:", layout="wide")
st.title("Privacy–utility trade-off")
st.caption("How much accuracy each unit of privacy costs, per method and bin size Δ, and how much data a "
           "given ε needs. Every run of a simulated scenario is a fresh simulation with fresh noise, as in the "
           "paper's boxplots.")


def parse_numbers(text: str, label: str) -> tuple:
    """Comma-separated numbers, or a ConfigError-like message."""
    try:
        values = tuple(float(x) for x in text.replace(";", ",").split(",") if x.strip())
    except ValueError:
        raise DPHawkesError(f"{label}: write numbers separated by commas, e.g. 0, 0.01, 1") from None
    if not values:
        raise DPHawkesError(f"{label}: give at least one value")
    return values


def source_widgets(dataset: Dataset, budget: BudgetState) -> DataSource | None:
    """Where every run's data come from; ``None`` when the current data set is private (no experiments)."""
    options = ["Simulate a scenario (fresh simulation per run)", f"Current data set: {dataset.label}"]
    choice = st.radio("Data", options, key="pu_source")
    if choice == options[0]:
        c1, c2 = st.columns(2)
        name = c1.selectbox("Scenario", list(SCENARIOS), key="pu_scenario")
        n_events = c2.number_input("events per simulation", 50, 200_000, 20_000, step=1000, key="pu_events")
        return DataSource(scenario=get_scenario(name), n_events=int(n_events), label=name)
    if refuse_experiments(budget):  # a sweep is an experiment: not on private data (docs/privacy.md)
        offer_simulated_copy(dataset, "pu_simulate", "Sweep a simulation with the same shape")
        return None
    if dataset.scenario is not None:
        st.caption("Fixed data with known truth: every run changes only the noise; errors are against the truth.")
        return DataSource(scenario=dataset.scenario, events=dataset.events, label=dataset.label)
    start, share = holdout_controls(dataset.events, prefix="pu_")
    st.caption("No ground truth: the headline metric is the held-out gain over Poisson (log-likelihood per test "
               "event, each run fitted on the training part), beside the next-event-time RMSE (see the Reproduce "
               "page); every run changes only the noise.")
    return DataSource(events=dataset.events, label=dataset.label, train_fraction=share, holdout_start=start)


def spec_widgets(source: DataSource) -> SweepSpec:
    c1, c2, c3 = st.columns(3)
    formal_only = " and ".join(f.label for f in FAMILIES.values() if f.formal_only)
    methods = method_choice(c1, "pu_methods", f"{formal_only} need the formal calibration")
    privacy = c2.radio("Privacy level given as", ["σ² (noise variance)", "ε (target)"], index=1, key="pu_kind")
    kind = "sigma2" if privacy.startswith("σ²") else "epsilon"
    levels = c2.text_input(
        "levels", "0, 0.01, 1, 10" if kind == "sigma2" else "0.1, 0.3, 1, 3, 10", key=f"pu_levels_{kind}"
    )
    unit = {name: value for name, value in privacy_unit_controls(c2, "pu_").items() if value is not None}
    if unit:
        c2.caption(sequence_unit_note())
        refuse_single_sequence(source)
    bins = c3.text_input("bin sizes Δ", f"{WORKS.bin_size:g}", key="pu_bins")
    runs = c3.number_input("runs (seeds)", 1, 100, 3, key="pu_runs")
    with st.expander("Estimator settings"):
        d1, d2, d3, d4 = st.columns(4)
        support = d1.number_input("kernel support s (p = ⌈s/Δ⌉)", 0.01, 1e6, get_preset(DEFAULT_PRESET).support,
                                  key="pu_support")
        iters = d1.number_input("iterations K", 1, 5000, 200, key="pu_iters")
        auto_b = d2.checkbox(
            "B from the truth's $\\lVert H \\rVert_F$ (or the non-private fit's)", False, key="pu_auto_b"
        )
        bound = None if auto_b else d2.number_input(f"bound B of {readers('bound')} (paper: 0.2)", 1e-6, 1e6,
                                                    WORKS_PUBLIC["bound"], format="%.4g", key="pu_b")
        auto_r = d3.checkbox("r from the truth's $\\lVert \\Delta H \\rVert_*$ (or the non-private fit's)", False,
                             key="pu_auto_r", help="without a truth, r comes from the data: not a formal guarantee")
        radius = None if auto_r else d3.number_input(f"radius r of {readers('radius')}", 1e-6, 1e6,
                                                     WORKS_PUBLIC["radius"], format="%.4g", key="pu_r")
        calibration = d4.selectbox("calibration", list(CALIBRATIONS), index=CALIBRATIONS.index("formal"), key="pu_cal",
                                   format_func=lambda c: CALIBRATION_LABELS[c])
        cap = d4.number_input("count cap C (formal; 0 = none)", 0, 10_000, WORKS_COUNT_CAP, key="pu_cap")
        clip = d4.number_input(f"{readers('clip')}: clip norm G", 1e-6, 1e6, WORKS_PUBLIC["clip"], format="%.4g",
                               key="pu_clip")
    check_calibration(methods, calibration)
    return SweepSpec(
        source, methods=tuple(methods), bin_sizes=parse_numbers(bins, "bin sizes"), privacy=kind,
        levels=parse_numbers(levels, "levels"), runs=int(runs), support=float(support), bound=bound,
        radius=radius, iters=int(iters), calibration=calibration, count_cap=int(cap) or None,
        options=tuple(unit.items()) + family_options(methods, clip=float(clip)),
    )


def refuse_single_sequence(source: DataSource) -> None:
    """The sequence unit protects one sequence among several: refuse data that are a single sequence."""
    if source.simulated:
        raise DPHawkesError("the sequence unit needs data with several sequences, and each simulation here is one "
                            "sequence: choose the event unit, or a multi-sequence current data set")
    if source.events.n_sequences < 2:
        raise DPHawkesError(f"the sequence unit needs data with several sequences, and {source.label} is one "
                            "sequence: choose the event unit, or load multi-sequence data (e.g. nyc_taxi)")


def run_cells(n_cells: int, n_stored: int, execute) -> None:
    """Run the cells not yet in the session's store with a progress bar; every finished group is stored at
    once, so a stopped run keeps its results. ``execute(pool, done, progress)`` runs the sweep."""
    store = st.session_state.get(STORE, pd.DataFrame())
    done = set(store["key"]) if not store.empty else set()
    todo = n_cells - n_stored
    if todo == 0:
        st.info("Every cell of this grid was already computed in this session; nothing to run.")
        return
    bar = st.progress(0, text=f"0 of {todo} new cells")

    def progress(finished, total, rows):
        st.session_state[STORE] = merge_tables(st.session_state.get(STORE, pd.DataFrame()), pd.DataFrame(rows))
        bar.progress(finished / total, text=f"{finished} of {total} new cells")

    with default_executor() as pool:
        execute(pool, done, progress)
    bar.progress(1.0, text=f"done: {todo} new cells, {n_cells - todo} reused")


def stored(specs) -> pd.DataFrame:
    """The session's finished cells of ``specs``."""
    store = st.session_state.get(STORE, pd.DataFrame())
    return merge_tables(*(select(store, spec) for spec in specs))


def tradeoff_section(dataset: Dataset, budget: BudgetState) -> None:
    """The privacy-level sweep: settings, run, boxplots, the ε curve and the table."""
    source = source_widgets(dataset, budget)
    if source is None:
        return
    try:
        spec = spec_widgets(source)
    except DPHawkesError as exc:
        friendly_error(exc)
        return
    st.caption(f"{spec.n_cells} cells (runs × Δ × levels per private method, one per run and Δ for cls).")
    if st.button("Run sweep", type="primary", key="pu_run"):
        try:
            run_cells(spec.n_cells, len(stored([spec])),
                      lambda pool, done, progress: run_sweep(spec, pool, done=done, progress=progress))
        except DPHawkesError as exc:
            friendly_error(exc)
    view = stored([spec])
    if view.empty:
        st.info("Press **Run sweep** to compute the grid.")
        return
    show_tradeoff(spec, view)


def say_infinite(view: pd.DataFrame) -> None:
    """The runs whose intensity is ≤ 0 at a test event score −∞: counted here, since a figure cannot draw them."""
    infinite = view[view["heldout_nonpositive"] > 0]
    if len(infinite):
        by_method = infinite.groupby("method").size()
        st.warning(f"{len(infinite)} of {len(view)} runs score −∞ (the fitted intensity is ≤ 0 at some test events) "
                   "and are not drawn: " + ", ".join(f"{get_family(m).label} {n}" for m, n in by_method.items())
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
    st.dataframe(view, hide_index=True)
    st.download_button("Download the table (CSV)", view.to_csv(index=False).encode(), "sweep.csv", "text/csv",
                       key="pu_download")


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
               "seeded noise (an experiment, not a private release); `formal_settings` says whether the same "
               "settings, released with fresh noise through a ledger, would be one.")
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


def size_widgets() -> tuple[SweepSpec, tuple]:
    """Settings of the data-size view: one ε, the formal calibration, public B, r, G and C."""
    c1, c2, c3 = st.columns(3)
    name = c1.selectbox("Scenario", list(SCENARIOS), key="hd_scenario")
    sizes = parse_numbers(c1.text_input("numbers of events", "1000, 3000, 10000, 30000, 100000", key="hd_sizes"),
                          "numbers of events")
    if min(sizes) < 50 or max(sizes) > MAX_SIZE_EVENTS:
        raise DPHawkesError(f"numbers of events: give sizes between 50 and {MAX_SIZE_EVENTS:,}")
    epsilon = c2.number_input("ε (formal)", 0.01, 100.0, WORKS.epsilon, format="%.4g", key="hd_eps")
    methods = method_choice(c2, "hd_methods", "every other method at the formal ε")
    bin_size = c3.number_input("bin size Δ", 1e-3, 1e3, WORKS.bin_size, format="%.4g", key="hd_dt")
    runs = c3.number_input("runs (seeds)", 1, 20, 3, key="hd_runs")
    with st.expander("Estimator settings (public)"):
        d1, d2, d3 = st.columns(3)
        support = d1.number_input("kernel support s (p = ⌈s/Δ⌉)", 0.01, 1e6, get_preset(DEFAULT_PRESET).support,
                                  key="hd_support")
        iters = d1.number_input("iterations K", 1, 5000, 200, key="hd_iters")
        cap = d2.number_input("count cap C", 1, 10_000, WORKS_COUNT_CAP, key="hd_cap")
        bound = d2.number_input(f"bound B of {readers('bound')}", 1e-6, 1e6, WORKS_PUBLIC["bound"], format="%.4g",
                                key="hd_b")
        radius = d3.number_input(f"radius r of {readers('radius')}", 1e-6, 1e6, WORKS_PUBLIC["radius"], format="%.4g",
                                 key="hd_r")
        clip = d3.number_input(f"{readers('clip')}: clip norm G", 1e-6, 1e6, WORKS_PUBLIC["clip"], format="%.4g",
                               key="hd_clip")
    source = DataSource(scenario=get_scenario(name), n_events=int(sizes[0]), label=name)
    spec = SweepSpec(source, methods=tuple(methods), bin_sizes=(bin_size,), privacy="epsilon", levels=(epsilon,),
                     runs=int(runs), support=float(support), bound=bound, radius=radius, iters=int(iters),
                     calibration="formal", count_cap=int(cap), options=family_options(methods, clip=float(clip)))
    return spec, tuple(int(n) for n in sizes)


def data_size_section() -> None:
    """How much data does ε need: error against the number of events at one formal ε, per method."""
    st.caption("The error of each method against the number of simulated events, at one formal ε (count cap C, "
               "B, r and G public): where the private curve meets the non-private one, ε costs little.")
    try:
        spec, sizes = size_widgets()
        specs = size_specs(spec, sizes)
    except DPHawkesError as exc:
        friendly_error(exc)
        return
    n_cells = sum(s.n_cells for s in specs)
    st.caption(f"{n_cells} cells ({len(sizes)} sizes × runs × methods); every run is a fresh simulation.")
    if st.button("Run the data-size sweep", type="primary", key="hd_run"):
        try:
            run_cells(n_cells, len(stored(specs)),
                      lambda pool, done, progress: run_size_sweep(spec, sizes, pool, done=done, progress=progress))
        except DPHawkesError as exc:
            friendly_error(exc)
    view = stored(specs)
    if view.empty:
        st.info("Press **Run the data-size sweep** to compute it.")
        return
    if len(view) < n_cells:
        st.warning(f"Partial results: {len(view)} of {n_cells} cells finished.")
    metric = metric_choice(view, "hd_metric")
    st.plotly_chart(data_size_figure(view, metric), key="hd_figure")
    st.caption(f"Median error over {spec.runs} run(s), interquartile band shaded; dashed: "
               "non-private; dotted: the all-zero estimate (error 1). Runs use seeded noise: experiments, not "
               "private releases.")
    st.download_button("Download the table (CSV)", view.to_csv(index=False).encode(), "data_size_sweep.csv",
                       "text/csv", key="hd_download")


def main() -> None:
    """The current data set and its budget, then the two sweeps in their tabs."""
    dataset, dataset_fp = current_dataset()
    sidebar_dataset(dataset)
    budget = budget_state(dataset, dataset_fp)
    show_budget(budget)  # the remaining privacy budget of private data ("public — no budget" for a simulation)
    tradeoff_tab, size_tab = st.tabs(["Error against ε", "How much data does ε need?"])
    with tradeoff_tab:
        tradeoff_section(dataset, budget)
    with size_tab:
        data_size_section()


main()
