"""Estimate page: start from a preset, fit the kernels with any method, compare with the truth, the
non-private fit and the other methods at the same ε.

On public (simulated) data everything re-runs live, with fresh noise per draw in this session; on private
data nothing is computed by opening the page or moving a widget: an estimate is released on request, through
the data set's privacy session (:mod:`dphawkes_app.estimate.release`).

The page is a frame: it gathers its context once (:func:`page_context`), reads its controls, calls one helper
per section of :mod:`dphawkes_app.estimate` and draws; every function takes what it reads as arguments."""

from types import MappingProxyType

import streamlit as st

from dphawkes_app.budget import budget_state, rows_key, show_budget
from dphawkes_app.controls import sequence_families
from dphawkes_app.estimate.comparison import show_comparison
from dphawkes_app.estimate.context import PageContext
from dphawkes_app.estimate.downloads import show_export
from dphawkes_app.estimate.errors import averaged_kernels, show_function_errors, show_metrics, show_shrinkage
from dphawkes_app.estimate.follow import sequence_unit_ready, show_note, show_unit_note
from dphawkes_app.estimate.new_data import removed_share_note
from dphawkes_app.estimate.person import ask_person, default_to_sequence_unit, keep_promise
from dphawkes_app.estimate.privacy import show_privacy
from dphawkes_app.estimate.references import references
from dphawkes_app.estimate.release import Shown, live_fit, private_fit
from dphawkes_app.estimate.sidebar import (
    choose_preset,
    private_scale_share,
    read_averaging,
    read_controls,
    widget_values,
)
from dphawkes_app.estimate.view import band_controls, fit_caption, show_baselines_and_loss, show_kernels
from dphawkes_app.guidance import PRIVATE_SCALE_NOTE, support_note, time_scale
from dphawkes_app.layout import dataset_caption, friendly_error, sidebar_dataset
from dphawkes_app.state import current_dataset, dataset_to_url, ignored_link_settings
from dphawkes_core.errors import DPHawkesError
from dphawkes_core.estimators import FitConfig, fit_cost, is_sequence_unit

ONE_SEQUENCE = ("One sequence: under the sequence unit it is the whole data set (one person), so the release may "
                "reveal almost nothing about it — and it keeps only its first M events. The sequence unit is meant "
                "for many sequences, one per person (e.g. the taxi shifts on the Data page).")


def page_context() -> PageContext:
    """The top of the page: the preset, the data set and its budget, and the widgets' defaults (a preset's, or Δ
    and s proposed from public real data's time scale, never from private data), with the notes on what followed a
    change of data."""
    preset, defaults_from = choose_preset()
    defaults = widget_values(defaults_from)
    dataset, fingerprint = current_dataset()
    link = st.query_params.to_dict()  # before the widgets read (and drop) what they cannot use
    rows = rows_key(dataset, fingerprint)
    default_to_sequence_unit(rows)  # one sequence declared one person: the sequence unit, unless chosen
    sidebar_dataset(dataset)
    dataset_to_url(dataset, preset)
    st.caption("Data: " + dataset_caption(dataset) + " — change it on the Data page.")
    budget = budget_state(dataset, fingerprint, st.session_state.get("unit", "event"))  # the ledger seen by the unit
    ask_person(rows, dataset.events.n_sequences,
               None if budget.private else "simulated" if budget.simulated else "public")
    if keep_promise(rows, budget):  # a "yes" on private data is the ledger's per-person promise
        budget = budget_state(dataset, fingerprint, st.session_state.get("unit", "event"))
    show_budget(budget)  # the remaining privacy budget of private data ("public — no budget" for a simulation)
    scale = time_scale(dataset.events) if preset is None and dataset.scenario is None and not budget.private else None
    if scale is not None:  # public real data: Δ and s proposed from their time scale
        defaults.update(dt=scale.bin_size, s=scale.support)
        st.caption(scale.describe())
    elif budget.private and preset is None:
        st.expander("Why Δ and s are not proposed from these data").caption(PRIVATE_SCALE_NOTE)
    show_note(fingerprint)
    sequence_unit_ready(defaults)  # the sequence unit never dead-ends: a method or C it cannot use is switched
    show_unit_note()
    return PageContext(dataset, fingerprint, budget, preset, defaults_from, MappingProxyType(defaults),
                       MappingProxyType(link))


def show_preset(ctx: PageContext, config: FitConfig) -> None:
    """The preset's sentence, and which settings were changed from it (the sentence describes the preset)."""
    preset = ctx.preset
    if preset is None:
        st.caption("Your own data or settings: choose a preset above to start again from a known setting.")
        return
    st.info(f"**{preset.title}.** {preset.summary}", icon=":material/lightbulb:")
    changed = preset.changed_settings(config) + (() if preset.matches_data(ctx.dataset.params) else ("the data",))
    if changed:
        st.caption(f"You changed {', '.join(changed)}: the sentence above describes the preset as given.")


def cost_allowed(ctx: PageContext, config: FitConfig):
    """The fit's predicted cost when it may run: refused, or a heavy one not confirmed, stops the page
    (``None``)."""
    if is_sequence_unit(config) and ctx.events.n_sequences == 1:
        st.warning(ONE_SEQUENCE)
    cost = fit_cost(ctx.events, config)
    if cost.refused:
        st.error(f"Not started: {cost.reason}.", icon=":material/block:")
        return None
    if cost.level == "warn":
        st.warning(f"Heavy fit: {cost.reason}.")
        if not st.checkbox("Run it anyway", key="confirm_heavy"):
            return None
    return cost


def main(ctx: PageContext) -> None:
    """Read the sidebar, fit (live on public data, a release on request on private data) and show it."""
    try:
        config = read_controls(ctx)
        block = read_averaging(config.bin_size)
    except DPHawkesError as exc:
        friendly_error(exc)
        return
    ignored_link_settings(ctx.link)
    show_preset(ctx, config)
    if st.session_state.get("lagmode") == "support s" and (
        note := support_note(st.session_state["s"], config.bin_size)
    ):
        (st.warning if st.session_state["s"] < config.bin_size else st.caption)(note)
    cost = cost_allowed(ctx, config)
    if cost is None:
        return
    try:
        shown = private_fit(ctx.budget, ctx.dataset, ctx.fingerprint, config, private_scale_share(ctx)) if ctx.private \
            else live_fit(ctx.fingerprint, ctx.events, config)
        if shown is None:
            return
        reference, noiseless = references(ctx, shown)
    except DPHawkesError as exc:
        friendly_error(exc)
        return
    show_estimate(ctx, shown, reference, noiseless, block, cost)


def show_estimate(ctx: PageContext, shown: Shown, reference, noiseless, block, cost) -> None:
    """Everything about the estimate shown: figures, errors, comparison, privacy and export."""
    result, config = shown.result, shown.config
    truth = ctx.scenario.true_H(config.bin_size, config.lags) if ctx.scenario is not None else None
    st.expander("How this fit ran: bins, memory, time").caption(fit_caption(shown, cost))
    draws = band_controls(shown)
    averaged = averaged_kernels(result, block)
    baselines, colors, errors = show_kernels(ctx, shown, reference, noiseless, draws, averaged)
    st.subheader("Errors")
    if removed := removed_share_note(shown.data_info, ctx.private):
        st.warning(removed, icon=":material/content_cut:")
    show_metrics(ctx, shown, reference, noiseless, truth)
    if averaged is not None and ctx.scenario is not None:
        show_function_errors(result, averaged, ctx.scenario)
    show_shrinkage(ctx, config, truth if truth is not None else (reference.H if reference is not None else None))
    show_baselines_and_loss(ctx, shown, baselines, colors, errors)
    if config.privacy_unit == "event":
        show_comparison(ctx, shown, truth if truth is not None else (reference or result).H, truth is not None)
    else:
        st.caption("The comparison with the other methods is for the event unit: with one sequence as the unit, "
                   f"only {sequence_families()} offer it.")
    if result.privacy is not None:
        show_privacy(shown, ctx.budget)
    st.subheader("Export")
    show_export(ctx, shown, truth, averaged)


st.set_page_config(page_title="Estimate · dphawkes", page_icon=":material/lock:", layout="wide")
st.title("Estimate")
main(page_context())
