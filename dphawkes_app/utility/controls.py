"""The Privacy–utility page's controls: where every run's data come from, the grid of a privacy-level sweep and the
settings of the data-size sweep, read into a :class:`~dphawkes_experiments.sweep.SweepSpec`; a setting a chosen
family cannot use raises :class:`~dphawkes_core.errors.DPHawkesError` (the page shows it as a friendly message).

Their defaults are the settings of the default preset ("Privacy that works") and its public B, r and G."""

from __future__ import annotations

import streamlit as st

from dphawkes_core.data.datasets import Dataset
from dphawkes_core.data.kernels import SCENARIOS, get_scenario
from dphawkes_core.errors import DPHawkesError
from dphawkes_core.estimators import FAMILIES, get_family, method_labels, method_names
from dphawkes_core.estimators.registry import reference_method
from dphawkes_core.privacy.calibration import CALIBRATIONS
from dphawkes_experiments.sweep import DataSource, SweepSpec

from ..budget import BudgetState, offer_simulated_copy, refuse_experiments
from ..controls import calibration_words, privacy_unit_controls, sequence_families
from ..heldout import holdout_controls
from ..presets import DEFAULT_PRESET, WORKS_COUNT_CAP, get_preset

WORKS = get_preset(DEFAULT_PRESET).config  # the settings of "Privacy that works" are the defaults:
WORKS_PUBLIC = get_preset(DEFAULT_PRESET).public  # its fit, and its public B, r, G for the families that read them
WORKS_SUPPORT = get_preset(DEFAULT_PRESET).support
DEFAULT_METHODS = tuple(dict.fromkeys(("cls", WORKS.method, "ssp", "pgd")))  # the reference, the preset's, DP-SSP,
# the paper's: first selected
MAX_SIZE_EVENTS = 500_000
DEFAULT_EVENTS = 20_000  # per simulation of the privacy-level sweep
DEFAULT_LEVELS = {"sigma2": "0, 0.01, 1, 10", "epsilon": "0.1, 0.3, 1, 3, 10"}
DEFAULT_RUNS = 3
DEFAULT_ITERS = 200
DEFAULT_SIZES = "1000, 3000, 10000, 30000, 100000"
SUPPORT_HELP = "how far back an event can excite; the fit uses p = ⌈s/Δ⌉ lags of width Δ"


def sequence_unit_note() -> str:
    """Which families and data the sequence unit applies to."""
    return (f"The sequence unit (one whole sequence — one person — replaced) applies to {sequence_families()} only "
            "(a non-private method chosen here is fitted as usual, whatever the unit) and to data with several "
            "sequences, e.g. nyc_taxi loaded on the Data page (and declared published on the Privacy budget page: a "
            "sweep is an experiment) and chosen here as the current data set.")


def readers(option: str) -> str:
    """Labels of the families that read ``option`` (e.g. "DP-PGD, clipped DP-PGD" for the bound B)."""
    return ", ".join(f.label for f in FAMILIES.values() if f.reads(option))


def non_private_note() -> str:
    """What the sweep's non-private lines are: each non-private method chosen, the reference of binned fits by
    default and the one of fits on exact event times beside them."""
    exact = next(f for f in FAMILIES.values() if f.fits_event_times)
    return (f"each non-private method chosen is drawn as a dashed line (the reference beside binned fits: "
            f"{get_family(reference_method()).label}, chosen by default; beside fits on exact event times: "
            f"{get_family(reference_method(exact)).label})")


def method_choice(container, key: str, help: str) -> list[str]:
    """The methods of a sweep: every registered family, labelled by the registry."""
    names, labels = list(method_names()), method_labels()
    return container.multiselect("Methods", names, default=[m for m in DEFAULT_METHODS if m in names], key=key,
                                 format_func=labels.get,
                                 help=f"{non_private_note()}; {help}")


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


def family_options(methods, **values) -> tuple:
    """``values`` (e.g. the clip G) as a sweep's options, each only when a chosen family reads it."""
    return tuple((name, value) for name, value in values.items() if any(get_family(m).reads(name) for m in methods))


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
        n_events = c2.number_input("events per simulation", 50, 200_000, DEFAULT_EVENTS, step=1000, key="pu_events")
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
    formal_only = " and ".join(f.label for f in FAMILIES.values() if f.formal_only)
    methods = method_choice(st, "pu_methods", f"{formal_only} need the formal calibration")  # full width: every
    c1, c2, c3 = st.columns(3)  # chosen method stays visible
    privacy = c1.radio("Privacy level given as", ["σ² (noise variance)", "ε (target)"], index=1, key="pu_kind")
    kind = "sigma2" if privacy.startswith("σ²") else "epsilon"
    levels = c1.text_input(
        "levels", DEFAULT_LEVELS[kind], key=f"pu_levels_{kind}"
    )
    unit = {name: value for name, value in privacy_unit_controls(c2, "pu_").items() if value is not None}
    if unit:
        c2.caption(sequence_unit_note())
        refuse_single_sequence(source)
    bins = c3.text_input("bin sizes Δ", f"{WORKS.bin_size:g}", key="pu_bins")
    runs = c3.number_input("runs (seeds)", 1, 100, DEFAULT_RUNS, key="pu_runs")
    with st.expander("Estimator settings"):
        d1, d2, d3, d4 = st.columns(4)
        support = d1.number_input("kernel support s", 0.01, 1e6, WORKS_SUPPORT, key="pu_support",
                                  help=SUPPORT_HELP)
        iters = d1.number_input("iterations K", 1, 5000, DEFAULT_ITERS, key="pu_iters")
        auto_b = d2.checkbox("B from the truth's size (or the non-private fit's)", False, key="pu_auto_b",
                             help="B = the Frobenius norm ‖H‖_F of the true kernels (or of the non-private fit's)")
        bound = None if auto_b else d2.number_input(f"bound B of {readers('bound')} (paper: 0.2)", 1e-6, 1e6,
                                                    WORKS_PUBLIC["bound"], format="%.4g", key="pu_b")
        auto_r = d3.checkbox("r from the truth's size (or the non-private fit's)", False, key="pu_auto_r",
                             help="r = the nuclear norm ‖ΔH‖_* of the true kernels (or of the non-private fit's); "
                                  "without a truth, r comes from the data: not a formal guarantee")
        radius = None if auto_r else d3.number_input(f"radius r of {readers('radius')}", 1e-6, 1e6,
                                                     WORKS_PUBLIC["radius"], format="%.4g", key="pu_r")
        calibration = d4.selectbox("calibration", list(CALIBRATIONS), index=CALIBRATIONS.index("formal"), key="pu_cal",
                                   format_func=calibration_words)
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


def size_widgets() -> tuple[SweepSpec, tuple]:
    """Settings of the data-size view: one ε, the formal calibration, public B, r, G and C."""
    methods = method_choice(st, "hd_methods", "every other method at the formal ε")  # full width, as above
    c1, c2, c3 = st.columns(3)
    name = c1.selectbox("Scenario", list(SCENARIOS), key="hd_scenario")
    sizes = parse_numbers(c1.text_input("numbers of events", DEFAULT_SIZES, key="hd_sizes"),
                          "numbers of events")
    if min(sizes) < 50 or max(sizes) > MAX_SIZE_EVENTS:
        raise DPHawkesError(f"numbers of events: give sizes between 50 and {MAX_SIZE_EVENTS:,}")
    epsilon = c2.number_input("ε (formal)", 0.01, 100.0, WORKS.epsilon, format="%.4g", key="hd_eps")
    bin_size = c3.number_input("bin size Δ", 1e-3, 1e3, WORKS.bin_size, format="%.4g", key="hd_dt")
    runs = c3.number_input("runs (seeds)", 1, 20, DEFAULT_RUNS, key="hd_runs")
    with st.expander("Estimator settings (public)"):
        d1, d2, d3 = st.columns(3)
        support = d1.number_input("kernel support s", 0.01, 1e6, WORKS_SUPPORT, key="hd_support",
                                  help=SUPPORT_HELP)
        iters = d1.number_input("iterations K", 1, 5000, DEFAULT_ITERS, key="hd_iters")
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


def default_tradeoff_spec() -> SweepSpec:
    """The privacy-level sweep the page's widgets give untouched (the first scenario, the preset's settings): the
    grid whose precomputed cells the page opens on (:mod:`dphawkes_app.utility.ready`)."""
    name = list(SCENARIOS)[0]
    methods = tuple(m for m in DEFAULT_METHODS if m in method_names())
    return SweepSpec(
        DataSource(scenario=get_scenario(name), n_events=DEFAULT_EVENTS, label=name), methods=methods,
        bin_sizes=(float(WORKS.bin_size),), privacy="epsilon", levels=parse_numbers(DEFAULT_LEVELS["epsilon"], ""),
        runs=DEFAULT_RUNS, support=float(WORKS_SUPPORT), bound=float(WORKS_PUBLIC["bound"]),
        radius=float(WORKS_PUBLIC["radius"]), iters=DEFAULT_ITERS, calibration="formal", count_cap=WORKS_COUNT_CAP,
        options=family_options(methods, clip=float(WORKS_PUBLIC["clip"])))


def default_size_spec() -> tuple[SweepSpec, tuple]:
    """The data-size sweep the page's widgets give untouched, and its sizes."""
    name = list(SCENARIOS)[0]
    methods = tuple(m for m in DEFAULT_METHODS if m in method_names())
    sizes = tuple(int(n) for n in parse_numbers(DEFAULT_SIZES, ""))
    spec = SweepSpec(DataSource(scenario=get_scenario(name), n_events=sizes[0], label=name), methods=methods,
                     bin_sizes=(float(WORKS.bin_size),), privacy="epsilon", levels=(float(WORKS.epsilon),),
                     runs=DEFAULT_RUNS, support=float(WORKS_SUPPORT), bound=float(WORKS_PUBLIC["bound"]),
                     radius=float(WORKS_PUBLIC["radius"]), iters=DEFAULT_ITERS, calibration="formal",
                     count_cap=WORKS_COUNT_CAP, options=family_options(methods, clip=float(WORKS_PUBLIC["clip"])))
    return spec, sizes
