"""The Estimate page's figures: the kernels against their references (with a band of fresh noise draws and the
lag average), the baselines and the loss, each series in its method's colour."""

from __future__ import annotations

import streamlit as st

from dphawkes_core.estimators import get_family

from ..figures.kernels import baseline_chart, kernel_grid, loss_curve
from ..figures.palette import method_color
from ..guidance import count_noun, loss_note, negative_baseline_note
from ..layout import method_label
from .context import PageContext
from .release import Shown, band_of, draw_again, noise_band

BAND_DRAWS = (10, 20, 50)
NOISELESS = "σ² = 0, same post-processing"


def fit_caption(shown: Shown, cost) -> str:
    """One line on what the fit read and how long it took (and the clip norm G, Δ and s or the width and support,
    when chosen privately or inside the release)."""
    result, config, data_info = shown.result, shown.config, shown.data_info
    auto = data_info.get("auto_sequence_clip")
    chosen_privately = "" if auto is None else (
        f" Clip norm G = {auto['sequence_clip']:.4g} chosen privately with {auto['share']:.0%} of ε (a noisy "
        "histogram of the sequences' norms).")
    scale = (shown.entry.result.get("time_scale") if shown.entry is not None else None) or {}
    if scale:
        chosen_privately += (f" Δ and s chosen privately inside the release with {scale['share']:.0%} of ε (from a "
                             f"noisy count of {scale['noisy_count']:,.0f} events).")
    if chosen := result.info.get("chosen_in_release"):
        chosen_privately += f" {chosen[:1].upper()}{chosen[1:]}."
    if note := result.info.get("gram_note"):  # a derived Gram on windows too short for it
        chosen_privately += f" Note: {note}."
    grid = (f"the finest width Δ = {config.bin_size:g} and the longest support {config.bin_size * config.lags:.4g} "
            "it chose among" if "chosen_width" in result.info else
            f"Δ = {config.bin_size:g}, p = {config.lags} lags (support {config.bin_size * config.lags:.4g})")
    return (f"{data_info['n_bins']:,} bins of {grid}; {count_noun(data_info['dropped_events'], 'event')} "
            f"after the last full bin dropped, {data_info['clipped_events']:,} removed by the count cap; "
            f"fit took {result.elapsed_s * 1000:.0f} ms ({cost.summary()} predicted).{chosen_privately}")


def band_controls(shown: Shown) -> int | None:
    """On public data: "draw the noise again" and the band of several draws (number of draws, or ``None``)."""
    if shown.private_data or not shown.result.privacy or shown.config.seed is not None:
        return None
    c = st.columns([3, 2, 4])  # the button's label whole at 1100 px
    c[0].button("Draw the noise again", key="draw_again", on_click=draw_again, icon=":material/casino:",
                help="fresh noise (not seeded): the estimate as another release would give it")
    draws = c[1].selectbox("band of draws", (0, *BAND_DRAWS), key="band_draws",
                           format_func=lambda n: "no band" if n == 0 else f"{n} draws",
                           help="fit the same settings with fresh noise this many times and shade the range "
                                "(5 %–95 %) of the private kernels: how much one release can vary")
    c[2].caption("Public simulated data: every fit re-runs live with fresh noise for this session. Draw again to "
                 "see another release; a band shows many at once.")
    return draws or None


def series(shown: Shown, reference, noiseless) -> tuple[dict, dict, dict, dict]:
    """The kernel and baseline series to draw, by legend label, with their colours and dashes: the estimate, the
    non-private reference and the σ² = 0 line (dotted, in the estimate's colour)."""
    result = shown.result
    estimates, baselines = {"estimate": result.kernels}, {"estimate": result.baseline}
    colors, dashes = {"estimate": method_color(result.method)}, {}
    if reference is not None:
        estimates["non-private"], baselines["non-private"] = reference.kernels, reference.baseline
        colors["non-private"] = method_color(reference.method)
    if noiseless is not None:
        estimates[NOISELESS], colors[NOISELESS], dashes[NOISELESS] = noiseless.kernels, colors["estimate"], "dot"
    return estimates, baselines, colors, dashes


def show_kernels(ctx: PageContext, shown: Shown, reference, noiseless, draws: int | None, averaged) -> tuple:
    """The kernel grid; returns the baseline series, their colours and the band's error bars for the
    baseline chart."""
    result = shown.result
    estimates, baselines, colors, dashes = series(shown, reference, noiseless)
    bands, errors = None, None
    if draws:
        low, high, _ = noise_band(ctx.fingerprint, shown, draws)
        (k_low, k_high), (b_low, b_high) = band_of(low, high, result.dim, result.lags)
        bands = {f"{draws} fresh noise draws (5–95 %)": (k_low, k_high, method_color(result.method))}
        errors = {"estimate": (b_low, b_high)}
    steps = {f"averaged (w = {averaged.width:g})": averaged} if averaged is not None else None
    title = (f"Kernels h<sub>ij</sub>(t): estimate = {method_label(result.method)}"
             + (", non-private = " + get_family(reference.method).label if reference is not None else "")
             + " — column = source j (from), row = affected dimension i (to)")
    st.plotly_chart(kernel_grid(result.lag_grid, estimates, ctx.events.names, ctx.scenario, steps, colors=colors,
                                bands=bands, dashes=dashes, time_unit=ctx.events.time_unit, title=title),
                    key="kernels")
    if shown.private_data and reference is not None:
        st.caption(":material/visibility_off: **Not private — for your eyes only:** the non-private reference, the "
                   "σ² = 0 line, the loss curve and the event counts are computed from the raw data. Only the "
                   "estimate and its privacy report are the release.")
    return baselines, colors, errors


def show_baselines_and_loss(ctx: PageContext, shown: Shown, baselines: dict, colors: dict, errors) -> None:
    """The baselines (with the truth's on simulated data) beside the solver's notes — the loss curve, or a note
    for a one-shot method — in a collapsed expander."""
    result = shown.result
    c = st.columns(2)
    with c[0]:
        c[0].plotly_chart(baseline_chart(ctx.events.names, baselines,
                                         ctx.scenario.baseline if ctx.scenario is not None else None,
                                         colors=colors, errors=errors, time_unit=ctx.events.time_unit),
                          key="baselines")
        if note := negative_baseline_note(result.baseline, ctx.events.names):
            c[0].warning(note)
    show_baseline_profile(ctx, shown)
    with c[1].expander("Solver notes: the loss curve"):
        one_shot = loss_note(result.method)
        if one_shot:
            st.info(one_shot, icon=":material/info:")
        else:
            st.plotly_chart(loss_curve({"estimate": result.loss_history}, colors=colors), key="loss")
        if result.privacy is not None and not one_shot:
            st.caption("The loss is the exact objective on the raw data: a diagnostic for you, not part of the "
                         "private release (only the estimate is).")


def show_baseline_profile(ctx: PageContext, shown: Shown) -> None:
    """A baseline that follows the clock, drawn over its period (or the window), when the fit has one."""
    from dphawkes_core.evaluation.exp_kernels import fit_baseline

    from ..figures.baseline import baseline_profile_chart

    profile = fit_baseline(shown.result.baseline, shown.result.info)
    if profile.bins.constant:
        return
    st.plotly_chart(baseline_profile_chart(profile, ctx.events.names, ctx.events.time_unit), key="baseline_profile")
    st.caption("The bars show each baseline's mean over the windows; this chart its value on each part.")
