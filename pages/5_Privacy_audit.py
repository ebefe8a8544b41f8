"""Privacy audit page: check a mechanism's ε claim from the outside, on the current data set."""

import math

import streamlit as st

from dphawkes_app.bounded_input import FieldChecks
from dphawkes_app.budget import budget_state, offer_simulated_copy, refuse_experiments
from dphawkes_app.controls import calibration_words, family_controls
from dphawkes_app.figures.audit import audit_distributions, audit_epsilons
from dphawkes_app.layout import dataset_caption, friendly_error, sidebar_dataset
from dphawkes_app.state import current_dataset
from dphawkes_core.data.datasets import Dataset
from dphawkes_core.errors import DPHawkesError
from dphawkes_core.estimators import FitConfig, get_family, method_names
from dphawkes_core.evaluation.metrics import constraint_scale
from dphawkes_core.statistics.binning import lags_from_support
from dphawkes_experiments.audit import AuditConfig, default_count_cap, prepare_audit

SESSION, RESULT, STOPPED = "audit_session", "audit_result", "audit_stopped"
SUPERSCRIPTS = str.maketrans("0123456789-", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻")


def power_of_ten(value: float) -> str:
    """``1000000.0`` as ``10⁶`` (and ``2.0`` as ``2``)."""
    exponent = math.log10(value)
    if value >= 100 and exponent == int(exponent):
        return "10" + str(int(exponent)).translate(SUPERSCRIPTS)
    return f"{value:g}"
CHUNK = 50

st.set_page_config(page_title="Privacy audit · dphawkes", page_icon=":material/lock:", layout="wide")
st.title("Empirical privacy audit")
st.caption("Run the private estimator many times on two data sets that differ by one event (placed where it "
           "moves the output most), try to tell them apart, and turn the test's error rates into a lower bound on "
           "the ε the mechanism really has (Clopper–Pearson, as in Jagielski et al. 2020 / Nasr et al. 2021). "
           "A bound above the claim refutes the claim; a bound below it proves nothing more.")


def read_controls(dataset: Dataset) -> AuditConfig:
    """Widgets -> AuditConfig for ``dataset`` (raises DPHawkesError on bad values)."""
    events = dataset.events
    checks = FieldChecks()
    c = st.columns(4)
    private = [name for name in method_names() if get_family(name).privacy.private]  # the audit needs noise
    family = get_family(c[0].selectbox("method", private, key="au_method", format_func=lambda m: get_family(m).label))
    bin_size = checks.number(c[1], "bin size Δ", 1e-3, math.inf, 0.5, "au_dt", format="%.4g")
    support = checks.number(c[2], "support s", 1e-3, math.inf, 5.0, "au_s", format="%.4g")
    lags = lags_from_support(support, bin_size)
    calibrations = list(family.privacy.calibrations)
    calibration = c[3].selectbox("calibration", calibrations, key="au_calib", format_func=calibration_words,
                                 index=calibrations.index("formal") if "formal" in calibrations else 0,
                                 help="formal: the guarantee from public bounds (what a release claims); the paper's "
                                      "calibrations compute R from the data and are no guarantee")
    c = st.columns(4)
    epsilon = checks.number(c[0], "claimed ε", 1e-3, 100.0, 1.0, "au_eps", format="%.4g")
    delta = checks.number(c[1], "δ", 1e-12, 0.1, 1e-5, "au_delta", format="%.1e")
    cap = int(checks.number(c[2], "count cap C", 1, math.inf, default_count_cap(events, bin_size), "au_cap",
                             help="default: the data's largest bin count, so that nothing is clipped"))
    truth = dataset.scenario.true_H(bin_size, lags) if dataset.scenario is not None else None
    oracle_b, oracle_r = constraint_scale(truth, bin_size) if truth is not None else (1.0, 0.5)
    # the family's options from its settings; B and r start at the truth's norms, K at 100 (an audit runs it often)
    kwargs = family_controls(st, family, {"B": oracle_b, "r": oracle_r, "G": 1.0, "K": 100}, key_prefix="au_",
                             columns=4)
    c = st.columns(4)
    trials = int(checks.number(c[0], "trials per data set", 20, 100_000, 1000, "au_trials", step=100))
    confidence = c[1].select_slider("confidence", [0.9, 0.95, 0.99], value=0.95, key="au_conf")
    broken = st.toggle("Broken mechanism (for teaching): divide the noise std by a factor but keep claiming ε",
                       key="au_broken")
    factor = st.select_slider("noise divided by", [2.0, 4.0, 1e2, 1e4, 1e6, 1e8], value=1e6, key="au_factor",
                              format_func=power_of_ten, disabled=not broken,
                              help="a correct mechanism keeps the noise; dividing it by this factor while still "
                                   "claiming ε is the bug the audit should catch (large factors are caught with few "
                                   "trials, 2× needs the worst-case neighbours and thousands)") if broken else None
    pair = ("the family's adversarial events for the public d, B = p, C and w = Δ" if family.fits_event_times
            else "every count at C")
    worst = st.toggle(f"Worst-case neighbours: {pair}, built from the public bounds (where a sensitivity bug shows; "
                      "natural data rarely come near it)", key="au_worst")
    best_lags = family.audit_hints.worst_case_lags
    if worst and best_lags and lags != best_lags:
        st.caption(f"{family.label} reaches most of its bound at p = {best_lags} (the CLI's worst-case "
                   f"default); here p = {lags} from s and Δ — the result says how much of the bound the pair reaches.")
    checks.check()
    fit = FitConfig(method=family.name, bin_size=float(bin_size), lags=lags, epsilon=float(epsilon),
                    dp_delta=float(delta), calibration=calibration, count_cap=cap, **kwargs)
    return AuditConfig(fit, trials=trials, confidence=float(confidence), broken_factor=factor,
                       neighbours="worst-case" if worst else "natural")


def run(config: AuditConfig, events) -> None:
    """Run the audit in chunks with a progress bar; a click on Stop interrupts the run (Streamlit reruns
    the page) and the flag keeps it from continuing."""
    st.session_state[STOPPED] = False
    st.session_state.pop(RESULT, None)
    with st.spinner("Searching the most revealing neighbour…"):
        session = prepare_audit(events, config)
    st.session_state[SESSION] = session
    bar = st.progress(0, text="running…")
    while not session.done:
        if st.session_state.get(STOPPED):
            return
        session.run_chunk(CHUNK)
        bar.progress(session.completed / config.trials,
                     text=f"{session.completed:,} / {config.trials:,} trials per data set")
    st.session_state[RESULT] = session.result()


def audited_help(result) -> str:
    """Which of the audit's two tests gave the headline bound."""
    if result.mu_claimed is None:
        return "from the error rates of the best test between the two data sets (pointwise (ε, δ))"
    return (f"the larger of two bounds: the test's error rates give ε ≥ {result.epsilon_lower_bound:.3g}; the "
            f"second test, which uses that the noise is Gaussian, gives ε ≥ {result.epsilon_lower_bound_gdp:.3g}")


def show(result) -> None:
    """Verdict, numbers and the two figures."""
    (st.error if result.violated else st.success)(result.verdict())
    c = st.columns(4)
    c[0].metric(f"claimed ε ({calibration_words(result.calibration)})", f"{result.epsilon_claimed:.3g}")
    c[1].metric(f"audited lower bound ({result.confidence:.0%})", f"{result.epsilon_audited:.3g}",
                help=audited_help(result))
    c[2].metric("false positive rate", f"{result.fpr:.3f}", help=f"upper bound {result.fpr_upper:.3f}")
    c[3].metric("false negative rate", f"{result.fnr:.3f}", help=f"upper bound {result.fnr_upper:.3f}")
    n = result.neighbour
    st.caption(f"Neighbour: one event added to dimension {n.dim + 1}, bin {n.bin} of sequence {n.sequence + 1} "
               f"(best of {n.candidates_tried} candidates; output moved by {n.output_shift:.3g} under equal noise). "
               f"Count cap C = {result.count_cap}, δ = {result.dp_delta:g}, σ² used {result.sigma2_used:.4g}"
               + (f" (calibrated {result.sigma2_claimed:.4g}, divided by {result.broken_factor:g}²: BROKEN)"
                  if result.broken_factor else "") + f"; {result.elapsed_s:.1f} s of trials.")
    reached = (result.extra or {}).get("worst_case_reached")
    if reached is not None:
        st.caption(f"Worst-case pair: the release moves by {reached:.2f} of the claimed sensitivity "
                   f"(d = {result.extra['worst_case_dim']}, {result.extra['worst_case_events']} events in D').")
    if result.mu_claimed is not None:
        st.caption(
            f"A second test, which uses that the noise is Gaussian, gives ε ≥ {result.epsilon_lower_bound_gdp:.3g} "
            f"({result.confidence:.0%} confidence). The audit's noise is seeded: an experiment, not a release."
        )
        if st.toggle("details: the Gaussian test's figures (μ)", key="audit_mu"):
            st.caption(f"In Gaussian differential privacy (μ: sensitivity over noise std, composed over the K "
                       f"noisy steps): the formal claim is μ = √K·S/σ = {result.mu_claimed:.3g}; the trials give "
                       f"μ ≥ {result.mu_lower_bound:.3g} ({result.confidence:.0%}), which is ε ≥ "
                       f"{result.epsilon_lower_bound_gdp:.3g} at this δ.")
    st.caption("Only the formal calibration is a guarantee; the paper calibrations' ε are shown for comparison "
               "and depend on the private data. An audit can only certify ε up to about log(trials).")
    c = st.columns(2)
    c[0].plotly_chart(audit_distributions(result), key="audit_dist")
    c[1].plotly_chart(audit_epsilons(result), key="audit_eps")


def main() -> None:
    """The current data set (refused when private: an audit is an experiment), the controls, the run and its
    result."""
    dataset, dataset_fp = current_dataset()
    sidebar_dataset(dataset)
    st.caption("Data: " + dataset_caption(dataset))
    if refuse_experiments(budget_state(dataset, dataset_fp)):  # an audit is an experiment: not on private data
        offer_simulated_copy(dataset, "au_simulate", "Audit a simulation with the same shape")
        return
    try:
        config = read_controls(dataset)
    except DPHawkesError as exc:
        friendly_error(exc)
        if RESULT in st.session_state:  # a refused setting keeps the last result on screen
            st.caption("The last audit, with the settings it ran with:")
            show(st.session_state[RESULT])
        return
    c = st.columns([1, 1, 4])
    start = c[0].button("Run audit", type="primary", key="au_run")
    if c[1].button("Stop", key="au_stop"):
        st.session_state[STOPPED] = True
        session = st.session_state.get(SESSION)
        if session is not None and not session.done:
            st.warning(f"Audit stopped after {session.completed:,} of {session.config.trials:,} trials.")
    if start:
        try:
            run(config, dataset.events)
        except DPHawkesError as exc:
            friendly_error(exc)
            return
    if RESULT in st.session_state:
        show(st.session_state[RESULT])


main()
