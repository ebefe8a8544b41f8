"""The Privacy audit page's result: the verdict, the claimed and audited ε, the error rates, the neighbour and the
two figures."""

import streamlit as st

from dphawkes_app.controls import calibration_words
from dphawkes_app.figures.audit import audit_distributions, audit_epsilons


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
