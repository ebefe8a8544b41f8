"""The Estimate page's comparison of methods at the same ε: its table (with a verdict against the all-zero
estimate and, with a known process, the grid-free kernel error) and the sentences naming the formal estimator
and the non-private reference measured best on the data (:func:`~dphawkes_experiments.compare.best_formal`,
:func:`~dphawkes_experiments.compare.best_reference`)."""

from __future__ import annotations

import math

import pandas as pd
import streamlit as st

from dphawkes_core.estimators import get_family
from dphawkes_experiments.compare import best_formal, best_reference

from ..guidance import no_better_than_zero, zero_reason
from ..layout import method_label


def say_best_formal(rows, config) -> None:
    """Name the formal method measured best on these data (the grid-free error against the known process),
    and whether it is the chosen one; nothing without a known process."""
    best = best_formal(rows)
    if best is None:
        return
    st.caption("The plain relative error compares each step with the truth at the end of its bin, h((k+1)Δ); the "
               "grid-free error compares the whole kernel functions over [0, s] — the fair one between an estimate "
               "on exact times (the average of the kernel over each step) and the binned ones.")
    if best.method == config.method:
        st.caption(f"Measured here, against the true kernel functions: {method_label(best.method)}, the chosen "
                   f"method, is the best formal estimator (grid-free error {best.function_error:.3g}).")
    else:
        st.caption(f"Measured here, against the true kernel functions: **{method_label(best.method)}** is the "
                   f"best formal estimator (grid-free error {best.function_error:.3g}, the chosen method's "
                   f"{rows[0].function_error:.3g}).")
    reference = best_reference(rows)
    if reference is not None:
        st.caption(f"The best non-private reference measured here: {method_label(reference.method)} (grid-free "
                   f"error {reference.function_error:.3g}), what no private estimate is expected to beat.")


def comparison_table(rows, has_truth: bool, reference_label: str, chosen) -> pd.DataFrame:
    """The comparison's rows with a verdict against the all-zero estimate (never "formal: yes" alone beside an
    estimate no better than zero), and the grid-free kernel error when the process is known (the metric on
    which the binned and exact-time estimators compare)."""
    error = "relative error ‖Ĥ−H‖/‖H‖" if has_truth else f"relative difference from {reference_label}"
    grid_free = "grid-free kernel error" if any(math.isfinite(r.function_error) for r in rows) else None

    def verdict(r) -> str:
        if not r.ran or not math.isfinite(r.relative_error):
            return ""
        if get_family(r.method).private and no_better_than_zero(r.relative_error):
            return f"no better than outputting zero: {zero_reason(get_family(r.method))}"
        return "better than zero" if r.relative_error < 1 else "no better than zero"

    def columns(r) -> dict:
        return {error: r.relative_error, **({grid_free: r.function_error} if grid_free else {})}

    zero = {error: 1.0, **({grid_free: 1.0} if grid_free else {})}
    return pd.DataFrame([{"method": method_label(r.method) + (" — chosen" if r is chosen else ""),
                          **columns(r), "ε": r.epsilon, "formal guarantee": r.guarantee,
                          "against Ĥ = 0": verdict(r)} for r in rows]
                        + [{"method": "all-zero reference Ĥ = 0", **zero, "ε": 0.0,
                            "formal guarantee": "yes: a constant reveals nothing", "against Ĥ = 0": "—"}])
