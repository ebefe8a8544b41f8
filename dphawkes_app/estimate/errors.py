"""The Estimate page's errors: against the truth on simulated data (the paper's metric never alone), the held-out
score and the distance to the non-private fit on real data, and the notes an error calls for (no better than zero,
post-processing, shrinkage)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from dphawkes_core.errors import DPHawkesError
from dphawkes_core.estimators import get_family
from dphawkes_core.estimators.registry import reference_method
from dphawkes_core.evaluation.lag_average import average_lags, fit_steps
from dphawkes_core.evaluation.metrics import SHRINK_WARNING_RATIO, compare, constraint_ratio, kernel_function_error
from dphawkes_core.release.session import record_look

from ..guidance import no_better_than_zero, post_processing_note, zero_note
from ..heldout import HELDOUT_COLUMNS, eyes_only, heldout_table, holdout_controls, scores, verdict_lines
from ..layout import method_label
from .context import PageContext
from .references import noiseless_config, noiseless_label, reference_config
from .release import Shown

ERROR = "relative error ‖Ĥ−H‖/‖H‖"
PAPER_ERROR = "paper's relative error (÷ d(dp+1))"
GRID_FREE = "grid-free kernel error"
HELDOUT_LOOK = "the Estimate page's held-out table (held-out scores of fits on the test part)"
ERROR_COLUMNS = {  # short headers (the full name in the help) so that the table fits the page at 1100 px
    "estimate": st.column_config.TextColumn("estimate", width=250, help="the full names are listed under the table"),
    ERROR: st.column_config.NumberColumn("plain error", help=f"plain {ERROR}, kernels and baselines together",
                                         width="small", format="%.3g"),
    GRID_FREE: st.column_config.NumberColumn("grid-free", help="grid-free kernel error: the whole kernel functions "
                                             "over [0, s] compared", width="small", format="%.3g"),
    PAPER_ERROR: st.column_config.NumberColumn("paper's", help=PAPER_ERROR, width="small", format="%.3g"),
    "kernels only": st.column_config.NumberColumn("kernels", help="relative error of the kernels only",
                                                  width="small", format="%.3g"),
    "baselines only": st.column_config.NumberColumn("baselines", help="relative error of the baselines only",
                                                    width="small", format="%.3g"),
}


def error_table(fits: dict, truth, scenario) -> tuple[pd.DataFrame, dict]:
    """Each fit's errors against the true ``H`` (with the grid-free kernel error when the process is known) and
    the all-zero reference's last; returns the table and ``{label: ErrorReport}``."""
    rows = {label: compare(fit.H, truth) for label, fit in fits.items()}
    grid_free = {label: kernel_function_error(fit_steps(fit), scenario) for label, fit in fits.items()} \
        if scenario is not None else None
    table = pd.DataFrame([{
        "estimate": label, ERROR: r.relative_error, **({GRID_FREE: grid_free[label]} if grid_free else {}),
        PAPER_ERROR: r.relative_error_paper, "kernels only": r.kernel_relative_error,
        "baselines only": r.baseline_relative_error,
    } for label, r in rows.items()])
    any_report = next(iter(rows.values()))
    zero = pd.DataFrame([{
        "estimate": "all-zero reference Ĥ = 0", ERROR: any_report.zero_estimate_relative_error,
        **({GRID_FREE: 1.0} if grid_free else {}), PAPER_ERROR: any_report.zero_estimate_relative_error_paper,
        "kernels only": 1.0, "baselines only": 1.0,
    }])
    return pd.concat([table, zero], ignore_index=True), rows


def show_metrics(ctx: PageContext, shown: Shown, reference, noiseless, truth) -> None:
    """Error table or, without a truth, the held-out score and the distance to the non-private fit; the private
    fit beating the plain non-private one is explained by the post-processing; an estimate no better than zero
    says so, and why."""
    result, config = shown.result, shown.config
    if truth is None:
        _without_truth(ctx, shown, reference, noiseless)
        return
    fits = {method_label(result.method): result}
    if reference is not None:
        fits[method_label(reference.method)] = reference
    if noiseless is not None:
        fits[noiseless_label(config)] = noiseless
    table, rows = error_table(fits, truth, ctx.scenario)
    st.dataframe(table, hide_index=True, key="metrics", column_config=ERROR_COLUMNS)
    st.caption("Rows in full: " + "; ".join(f"**{label}**" for label in table["estimate"]) + ". "
               f"The paper's metric divides the relative error by d(dp+1) = {truth.size:,}, so it shrinks as p grows "
               "whatever the estimate; an estimate is only useful if its plain relative error is below the "
               "all-zero reference's 1."
               + (" The plain error compares each step with the kernel at the end of its bin; the grid-free error "
                  "compares the whole kernel functions over [0, s] (the all-zero estimate scores 1 on both): the "
                  "fair one between an estimate on exact times and a binned one." if ctx.scenario is not None else ""))
    private_error = rows[method_label(result.method)].relative_error
    # the note explains a private fit beating a reference without its post-processing (CLS); the maximum likelihood
    # beside a fit on exact times is already non-negative, and the plain error favours neither of them
    if reference is not None and noiseless is not None and not get_family(reference.method).fits_event_times:
        note = post_processing_note(config.family.label, private_error, rows[noiseless_label(config)].relative_error,
                                    get_family(reference.method).label,
                                    rows[method_label(reference.method)].relative_error)
        if note:
            st.info(note, icon=":material/balance:")
    zero_warning(shown, private_error, truth)


def _without_truth(ctx: PageContext, shown: Shown, reference, noiseless) -> None:
    """Real data: the held-out score first, then the distance to the non-private estimate."""
    reference_label = get_family(reference_method(shown.config.family)).label
    show_heldout(ctx, shown, reference is not None, noiseless is not None)
    if reference is None:
        return
    diff = compare(shown.result.H, reference.H)
    box = st.expander(f"Distance to the non-private {reference_label} estimate")
    box.caption("No ground truth for this data set (it was not simulated): the held-out score above is the measure "
                f"of prediction; these differences only compare with the non-private {reference_label} estimate.")
    box.dataframe(pd.DataFrame([{
        f"relative difference from {reference_label}": diff.relative_error,
        "kernels": diff.kernel_relative_error, "baselines": diff.baseline_relative_error,
    }]), hide_index=True)
    zero_warning(shown, diff.relative_error, reference.H)


def show_heldout(ctx: PageContext, shown: Shown, with_reference: bool, with_noiseless: bool) -> None:
    """The headline on data without a truth: each estimate's held-out gain over Poisson (its settings fitted on the
    training part), with its standard error and the test events where its intensity is ≤ 0."""
    st.markdown("**Held-out prediction** — does the estimate predict the events it was not fitted on?")
    start, share = holdout_controls(ctx.events)
    configs = {method_label(shown.config.method): shown.config}
    if with_reference:
        reference = reference_config(shown)
        configs[method_label(reference.method)] = reference
    if with_noiseless:
        configs[noiseless_label(shown.config)] = noiseless_config(shown)
    st.session_state["heldout"] = (start, share)  # the comparison below scores its rows on the same split
    results = scores(ctx.fingerprint, ctx.events, start, share, configs)
    st.dataframe(heldout_table(results), hide_index=True, key="heldout", placeholder="—",
                 column_config=HELDOUT_COLUMNS)
    st.markdown(verdict_lines(results))
    if ctx.budget.metered and not any(look.what == HELDOUT_LOOK for look in ctx.budget.current().looks):
        record_look(ctx.budget.book, ctx.budget.key, HELDOUT_LOOK, "app")  # later releases on the rows name it
    st.caption(eyes_only(shown.private_data))


def zero_warning(shown: Shown, error: float, reference_H) -> None:
    """Say when a private estimate is no better than outputting zero, and why."""
    if shown.result.privacy is None or not no_better_than_zero(error):
        return
    scale = float(np.sqrt(np.mean(np.square(reference_H))))
    st.warning(zero_note(shown.result, shown.config, shown.data_info, error, scale), icon=":material/exposure_zero:")


def show_shrinkage(ctx: PageContext, config, reference) -> None:
    """Warn when the constraint ball is far smaller than the truth (or the CLS fit, without a truth)."""
    if reference is None:
        return
    constraint = config.family.privacy.constraint
    ratio = constraint_ratio(
        constraint, reference, config.bin_size, getattr(config, constraint) if constraint else None
    )
    if ratio is not None and ratio < SHRINK_WARNING_RATIO:
        what = "the true H" if ctx.scenario is not None else "the non-private estimate"
        st.info(f"**Shrinkage:** the constraint is {ratio:.2f}× the size of {what}, so every estimate is pulled "
                "toward zero. Private and non-private estimates then look alike because both are shrunk — "
                "not because the noise is harmless. Compare with the all-zero reference above.", icon=":material/info:")


def averaged_kernels(result, block: int | None):
    """The estimate averaged over blocks of ``block`` lags, or ``None`` (off, or m > p: said on the page)."""
    if block is None:
        return None
    try:
        return average_lags(result.kernels, result.baseline, result.bin_size, block)
    except DPHawkesError as exc:
        st.warning(f"Lag averaging skipped: {exc}.")
        return None


def show_function_errors(result, averaged, scenario) -> None:
    """The grid-free kernel error (relative L2 over [0, pΔ]) of the plain and the averaged estimate."""
    table = pd.DataFrame([
        {"estimate": f"{method_label(result.method)}, per lag (steps of Δ = {result.bin_size:g})",
         "kernel L2 error over [0, s]": kernel_function_error(fit_steps(result), scenario)},
        {"estimate": f"the same, averaged over lags (steps of w = {averaged.width:g})",
         "kernel L2 error over [0, s]": kernel_function_error(averaged, scenario)},
        {"estimate": "all-zero reference", "kernel L2 error over [0, s]": 1.0}])
    st.dataframe(table, hide_index=True, key="function_errors")
    st.caption("Both estimates read as step functions and compared with the true kernel functions on a fine grid: "
               "a metric that does not depend on the lag grid, so the two can be compared.")
