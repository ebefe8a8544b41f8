"""The Estimate page's comparison of methods at the same ε: its table (with a verdict against the all-zero
estimate and, with a known process, the grid-free kernel error) and the sentences naming the formal estimator
and the non-private reference measured best on the data (:func:`~dphawkes_experiments.compare.best_formal`,
:func:`~dphawkes_experiments.compare.best_reference`).

The comparison runs on demand (a toggle): every other method fitted at the same ε is the page's heaviest work, so
opening the page never pays for it. On private data each formal method's fit is a release, made only on request
(one button for all of them)."""

from __future__ import annotations

import math

import pandas as pd
import streamlit as st

from dphawkes_core.errors import DPHawkesError
from dphawkes_core.estimators import get_family, method_names
from dphawkes_core.estimators.registry import reference_method
from dphawkes_experiments.compare import (
    COMPARISON_BUDGET_S,
    best_formal,
    best_reference,
    compare_methods,
    comparison_epsilon,
    method_row,
)

from ..caches import compare_cached, config_items, public_items
from ..guidance import no_better_than_zero, zero_reason
from ..heldout import GAIN, gain_column, scores
from ..layout import friendly_error, method_label
from .context import PageContext
from .errors import HEADLINE, LAG_GRID, ZERO_ROW
from .release import (
    Shown,
    after_comparison_release,
    app_session,
    comparison_flash,
    comparison_release,
    noise_key,
    release_fitter,
    replay_fitter,
)

COMPARE_KEY = "cmp_on"


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


def comparison_table(rows, has_truth: bool, reference_label: str, chosen, private_data: bool) -> pd.DataFrame:
    """The comparison's rows with a verdict against the all-zero estimate (never "formal: yes" alone beside an
    estimate no better than zero), and the grid-free kernel error when the process is known (the metric on
    which the binned and exact-time estimators compare). On public data the formal column says what a release
    with the row's settings would be on private data (nothing is released there)."""
    error = LAG_GRID if has_truth else f"relative difference from {reference_label}"
    grid_free = HEADLINE if any(math.isfinite(r.function_error) for r in rows) else None

    def verdict(r) -> str:
        if not r.ran or not math.isfinite(r.relative_error):
            return ""
        if get_family(r.method).privacy.private and no_better_than_zero(r.relative_error):
            return f"no better than outputting zero: {zero_reason(get_family(r.method))}"
        return "better than zero" if r.relative_error < 1 else "no better than zero"

    def columns(r) -> dict:
        return {**({grid_free: r.function_error} if grid_free else {}), error: r.relative_error}

    zero = {**({grid_free: 1.0} if grid_free else {}), error: 1.0}
    return pd.DataFrame([{"method": method_label(r.method) + (" — chosen" if r is chosen else ""),
                          **columns(r), "ε": r.epsilon if math.isfinite(r.epsilon) else math.nan,  # "—": no ε
                          "formal guarantee": r.formal_column(private_data),
                          "against Ĥ = 0": verdict(r)} for r in rows]
                        + [{"method": ZERO_ROW, **zero, "ε": 0.0,
                            "formal guarantee": "yes: a constant reveals nothing", "against Ĥ = 0": "—"}])


def show_comparison(ctx: PageContext, shown: Shown, reference, has_truth: bool) -> None:
    """The chosen fit beside every other method at the same ε, on the same statistics, when asked for."""
    st.subheader("The same fit with the other methods")
    config = shown.config
    epsilon = comparison_epsilon(config, shown.result, fallback=ctx.defaults_from.config.epsilon)
    if epsilon is None:
        st.caption("No finite ε to compare the methods at: choose a private method with ε, or σ² > 0.")
        return
    if not st.toggle("compare with the other methods", key=COMPARE_KEY,
                     help="fit every other method at the same ε on the same statistics (on private data each "
                          "formal method's fit is a release: planned first, made only on request)"):
        st.caption("Off: turn it on to fit every other method at the same ε and see which does best here.")
        return
    include_slow = st.checkbox("also run methods predicted to take over a second", key="cmp_slow")
    others = tuple(m for m in method_names() if m != config.method)
    if shown.private_data:
        other_rows = _released_rows(ctx, shown, reference, epsilon, others, include_slow)
    else:
        other_rows = compare_cached(ctx.fingerprint, shown.stats, shown.data_info, config_items(config), epsilon,
                                    reference, public_items(ctx.defaults_from.public), others, include_slow,
                                    noise_key(config), ctx.events, ctx.scenario)
    rows = (method_row(shown.result, config, reference, shown.data_info, released=shown.private_data,
                       scenario=ctx.scenario),) + other_rows
    table = comparison_table(rows, has_truth, get_family(reference_method(config.family)).label, rows[0],
                             shown.private_data)
    if not has_truth:
        table.insert(1, GAIN, comparison_gains(ctx, shown, rows, epsilon, include_slow))
    st.dataframe(table, hide_index=True, key="comparison", placeholder="—")
    say_best_formal(rows, config)
    st.caption(_comparison_caption(ctx, shown, epsilon, has_truth))


def _released_rows(ctx: PageContext, shown: Shown, reference, epsilon: float, others: tuple,
                   include_slow: bool) -> tuple:
    """On private data: the other methods' rows as already released (replayed, nothing drawn) and, on the
    button's click, their release through the data set's privacy session."""
    session = app_session(ctx.budget, ctx.dataset, ctx.fingerprint, shown.config.privacy_unit)
    comparison_flash()
    pending = []
    args = (shown.stats, shown.data_info, shown.config, epsilon, reference, ctx.defaults_from.public, others,
            include_slow)
    extra = dict(released=True, events=ctx.events, scenario=ctx.scenario)
    other_rows = compare_methods(*args, fitter=replay_fitter(session, pending), **extra)
    if comparison_release(session, pending, "the other methods"):
        answers = []
        try:
            compare_methods(*args, fitter=release_fitter(session, answers), **extra)
        except DPHawkesError as exc:
            friendly_error(exc)
        after_comparison_release(session, answers)
    return other_rows


def _comparison_caption(ctx: PageContext, shown: Shown, epsilon: float, has_truth: bool) -> str:
    """What the comparison ran: the shared settings, which methods use the formal calibration, and where the
    other methods' public bounds come from."""
    config, data_info = shown.config, shown.data_info
    formal_only = " and ".join(get_family(m).label for m in method_names() if get_family(m).formal_only)
    return (f"Every private method at ε = {epsilon:.4g}, δ = {config.dp_delta:g}, on the same statistics "
            f"(Δ = {config.bin_size:g}, p = {config.lags}, C = {data_info['count_cap'] or 'none'}); {formal_only} "
            "use the formal calibration, the others the chosen one; B, r, G and K are the chosen "
            f"method's where it has them, else the public values of '{ctx.defaults_from.title}'."
            + ("" if shown.private_data else " On public data nothing is released: 'formal guarantee' says "
               "whether the same settings would be a formal release on private data.")
            + ("" if has_truth else " The held-out gain: each method's settings fitted on the training part "
               "chosen above and scored on the test part" + (" (for your eyes only: it reads the private test "
                                                              "events)." if shown.private_data else ".")))


def comparison_gains(ctx: PageContext, shown: Shown, rows, epsilon: float, include_slow: bool) -> list:
    """Each comparison row's held-out gain over Poisson on the split chosen above (its settings fitted on the
    training part; the all-zero row last, not scored: its intensity is 0)."""
    start, share = st.session_state.get("heldout", (None, 0.7))
    config = shown.config.with_selection(count_cap=shown.data_info["count_cap"])  # the others: clipped at the chosen C
    configs = {r.method: (shown.config if i == 0 else
                          config.for_method(r.method, epsilon, dict(ctx.defaults_from.public)))
               for i, r in enumerate(rows) if r.ran}
    results = scores(ctx.fingerprint, ctx.events, start, share, configs, None if include_slow else COMPARISON_BUDGET_S)
    return gain_column(results, [r.method for r in rows]) + [math.nan]
