"""Estimate page: start from a preset, fit the kernels with any method, compare with the truth, the
non-private fit and the other methods at the same ε."""

import math

import pandas as pd
import streamlit as st

from dphawkes_core.binning import lags_from_support
from dphawkes_experiments.compare import comparison_epsilon, method_row
from dphawkes_core.count_cap import AUTO, AUTO_CAP_SHARE
from dphawkes_core.errors import DPHawkesError
from dphawkes_core.estimators import (FitConfig, fit_cost, get_family, method_labels, method_names, release_status,
                                      is_sequence_unit)
from dphawkes_core.export import fit_payload, to_csv, to_json
from dphawkes_core.lag_average import add_lag_average, average_lags, fit_steps
from dphawkes_core.metrics import SHRINK_WARNING_RATIO, compare, constraint_ratio, kernel_function_error
from dphawkes_app.guidance import count_noun, loss_note, negative_baseline_note, support_note, time_scale
from dphawkes_app.plots import baseline_chart, kernel_grid, loss_curve
from dphawkes_app.presets import DEFAULT_PRESET, WORKS_COUNT_CAP, Preset, get_preset, preset_for, presets
from dphawkes_core.privacy import CALIBRATION_LABELS, CALIBRATIONS
from dphawkes_core.sequence_privacy import UNIT_LABELS
from dphawkes_app.budget import budget_state, metered_comparison, release_fit, show_budget
from dphawkes_app.common import (compare_cached, config_items, current_dataset, dataset_caption, dataset_to_url,
                                 family_controls, fit_cached, friendly_error, ignored_link_settings, method_label,
                                 option_widget_values, preset_dataset, privacy_unit_controls, public_items,
                                 reference_method, sequence_families, set_dataset, show_unit_conversion,
                                 sidebar_dataset, stats_cached, stats_config)

URL = {"bind": "query-params"}
CUSTOM = "custom"  # the preset selector's entry for data or settings of the user's own
PRIVACY_MODES = ("ε and δ", "σ² directly")
LAG_MODES = ("support s", "lags p")


def widget_values(preset: Preset) -> dict:
    """The sidebar widgets' values (by key) that reproduce ``preset``'s fit."""
    c = preset.config
    families = dict.fromkeys((c.method, *method_names()))  # the preset's own family first: its options win a key
    return {"dt": c.bin_size, "lagmode": "support s", "s": preset.support, "p": c.lags, "method": c.family.label,
            "C": {None: 0, AUTO: WORKS_COUNT_CAP}.get(c.count_cap, c.count_cap), "Cauto": c.count_cap == AUTO,
            "privacy": PRIVACY_MODES[c.epsilon is None],
            "eps": c.epsilon or 1.0, "sigma2": c.sigma2 if c.sigma2 is not None else 0.01, "delta": c.dp_delta,
            "calib": c.calibration} | option_widget_values({name: preset.options_for(name) for name in families})


def apply_preset() -> None:
    """Selector callback: load the chosen preset's data and put its settings into the widgets."""
    key = st.session_state["preset"]
    if key == CUSTOM:
        return
    set_dataset(preset_dataset(key))
    st.session_state.update(widget_values(get_preset(key)))


def choose_preset() -> tuple[Preset | None, Preset]:
    """The preset selector; returns the chosen preset (``None`` for the user's own data or settings) and
    the preset the widgets' defaults come from (the default one for the user's own)."""
    wanted = get_preset(st.query_params.get("preset", DEFAULT_PRESET)).key
    data, _ = current_dataset(wanted)
    if "preset" not in st.session_state:  # a new visit: the URL's preset if the data are its own
        match = preset_for(data.params, preferred=wanted)
        st.session_state["preset"] = match.key if match is not None else CUSTOM
    titles = {key: p.title for key, p in presets().items()} | {CUSTOM: "Your own data and settings"}
    key = st.selectbox("Start from", list(titles), format_func=titles.get, key="preset", on_change=apply_preset,
                       help="a preset sets the data and every fit setting together; change anything afterwards")
    if key == CUSTOM:
        if "preset" in st.query_params:
            del st.query_params["preset"]
        return None, get_preset(DEFAULT_PRESET)
    st.query_params["preset"] = key
    return get_preset(key), get_preset(key)


st.set_page_config(page_title="Estimate · dphawkes", page_icon="🔒", layout="wide")
st.title("Estimate")
preset, defaults_from = choose_preset()
DEFAULTS = widget_values(defaults_from)
dataset, fingerprint = current_dataset()
LINK = st.query_params.to_dict()  # before the widgets read (and drop) what they cannot use
sidebar_dataset(dataset)
dataset_to_url(dataset, preset)
st.caption("Data: " + dataset_caption(dataset) + " — change it on the Data page.")
BUDGET = budget_state(dataset, fingerprint)
show_budget(BUDGET)  # the remaining privacy budget of private data ("public — no budget" for a simulation)
if preset is None and dataset.scenario is None:  # real or uploaded data: Δ and s from their time scale
    SCALE = time_scale(dataset.events)
    DEFAULTS.update(dt=SCALE.bin_size, s=SCALE.support)
    st.caption(SCALE.describe())


def read_controls():
    """Sidebar widgets -> FitConfig (raises ConfigError on inconsistent values)."""
    sb = st.sidebar
    sb.header("Fit settings")
    bin_size = sb.number_input("bin size Δ", min_value=1e-4, value=DEFAULTS["dt"], step=0.05, format="%.4g", key="dt", **URL)
    lag_mode = sb.radio("memory", LAG_MODES, index=LAG_MODES.index(DEFAULTS["lagmode"]), horizontal=True,
                        key="lagmode", **URL,
                        help="how far back an event can excite: s in time units, or p = ⌈s/Δ⌉ bins")
    if lag_mode == "support s":
        support = sb.number_input("support s", min_value=1e-4, value=DEFAULTS["s"], step=0.5, format="%.4g", key="s", **URL)
        lags = lags_from_support(support, bin_size)
    else:
        lags = int(sb.number_input("lags p", min_value=1, value=DEFAULTS["p"], step=5, key="p", **URL))
    methods = {label: name for name, label in method_labels().items()}  # labels are also the URL values
    labels = list(methods)
    chosen = sb.selectbox("method", labels, index=labels.index(DEFAULTS["method"]) if DEFAULTS["method"] in labels else 0,
                          key="method", **URL)
    family = get_family(methods[chosen])
    sb.caption(family.summary)
    kwargs = family_controls(sb, family, DEFAULTS, url=URL)
    auto_cap = family.auto_count_cap and sb.checkbox(
        "choose C privately (auto)", value=DEFAULTS["Cauto"], key="Cauto", **URL,
        help=f"spend {AUTO_CAP_SHARE:.0%} of ε on a private choice of C (the cap that clips about 1 % of the "
             "events), the rest on the statistics; needs ε, not σ²")
    if auto_cap:
        kwargs["count_cap"] = AUTO
    else:
        cap = int(sb.number_input("count cap C (0 = no clipping)", min_value=0, value=DEFAULTS["C"], step=1, key="C",
                                  **URL, help="every bin count is clipped at C; the formal calibration needs C ≥ 1"))
        kwargs["count_cap"] = cap or None
    if family.private:
        sb.subheader("Privacy")
        mode = sb.radio("noise from", PRIVACY_MODES, index=PRIVACY_MODES.index(DEFAULTS["privacy"]), horizontal=True,
                        key="privacy", **URL)
        if mode == "ε and δ":
            kwargs["epsilon"] = sb.number_input("ε", min_value=1e-6, value=DEFAULTS["eps"], format="%.4g", key="eps", **URL)
        else:
            kwargs["sigma2"] = sb.number_input("σ² per noisy entry", min_value=0.0, value=DEFAULTS["sigma2"],
                                               format="%.4g", key="sigma2", **URL)
        kwargs["dp_delta"] = sb.number_input("δ", min_value=1e-12, max_value=0.5, value=DEFAULTS["delta"], format="%.1e",
                                             key="delta", **URL)
        kwargs.update(privacy_unit_controls(sb, private_clip=True))
        if family.formal_only:
            kwargs["calibration"] = "formal"
            sb.caption("calibration: formal (the only one this method has)")
        else:
            calibrations = list(family.calibrations)
            kwargs["calibration"] = sb.selectbox(
                "calibration", calibrations, key="calib", **URL,
                index=calibrations.index(DEFAULTS["calib"]) if DEFAULTS["calib"] in calibrations else 0)
            sb.caption(CALIBRATION_LABELS.get(kwargs["calibration"], kwargs["calibration"]))
        seed = sb.number_input("noise seed (empty = fresh noise)", min_value=0, value=None, step=1, key="seed",
                               help="leave empty for a private release; a seed makes the noise reproducible by "
                                    "anyone who knows it: not a private release (for teaching and tests)")
        kwargs["seed"] = None if seed is None else int(seed)
    return FitConfig(method=family.name, bin_size=float(bin_size), lags=lags, **kwargs)


def read_averaging(bin_size: float) -> int | None:
    """The sidebar's lag averaging (off by default): m lags per bin of width w = mΔ, or ``None``."""
    sb = st.sidebar
    if not sb.checkbox("average the kernel over lags of width w", value=False, key="avg", **URL,
                       help="post-processing of the estimate (no privacy cost): the kernel averaged over bins of m "
                            "consecutive lags. Fit at a fine Δ (little bias), then average: less variance "
                            "(docs/accuracy.md)"):
        return None
    block = int(sb.number_input("lags per bin m", min_value=1, value=5, step=1, key="avgm", **URL))
    sb.caption(f"w = m × Δ = {block * bin_size:g}")
    return block


def averaged_kernels(result, block: int | None):
    """The estimate averaged over blocks of ``block`` lags, or ``None`` (off, or m > p: said on the page)."""
    if block is None:
        return None
    try:
        return average_lags(result.kernels, result.baseline, result.bin_size, block)
    except DPHawkesError as exc:
        st.warning(f"Lag averaging skipped: {exc}.")
        return None


def show_function_errors(result, averaged, scenario):
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


def show_metrics(result, reference, truth):
    """Error table (paper metric never alone) or, without a truth, the distance to the non-private fit."""
    reference_label = get_family(reference_method()).label
    if truth is None:
        st.info("No ground truth for this data set (it was not simulated): the errors below compare with the "
                f"non-private {reference_label} estimate instead.")
        if reference is not None:
            diff = compare(result.H, reference.H)
            st.dataframe(pd.DataFrame([{
                f"relative difference from {reference_label}": diff.relative_error,
                "kernels": diff.kernel_relative_error, "baselines": diff.baseline_relative_error,
            }]), hide_index=True)
        return
    rows = {method_label(result.method): compare(result.H, truth)}
    if reference is not None:
        rows[method_label(reference.method)] = compare(reference.H, truth)
    table = pd.DataFrame([{
        "estimate": label,
        "relative error ‖Ĥ−H‖/‖H‖": r.relative_error,
        "paper's relative error (÷ d(dp+1))": r.relative_error_paper,
        "kernels only": r.kernel_relative_error,
        "baselines only": r.baseline_relative_error,
    } for label, r in rows.items()])
    any_report = next(iter(rows.values()))
    zero = pd.DataFrame([{
        "estimate": "all-zero reference Ĥ = 0",
        "relative error ‖Ĥ−H‖/‖H‖": any_report.zero_estimate_relative_error,
        "paper's relative error (÷ d(dp+1))": any_report.zero_estimate_relative_error_paper,
        "kernels only": 1.0, "baselines only": 1.0,
    }])
    st.dataframe(pd.concat([table, zero], ignore_index=True), hide_index=True, key="metrics")
    st.caption(f"The paper's metric divides the relative error by d(dp+1) = {truth.size:,}, so it shrinks as p grows "
               "whatever the estimate; an estimate is only useful if its plain relative error is below the "
               "all-zero reference's 1.")


def show_shrinkage(config, reference):
    """Warn when the constraint ball is far smaller than the truth (or the CLS fit, without a truth)."""
    if reference is None:
        return
    constraint = config.family.constraint
    ratio = constraint_ratio(constraint, reference, config.bin_size, getattr(config, constraint) if constraint else None)
    if ratio is not None and ratio < SHRINK_WARNING_RATIO:
        what = "the true H" if dataset.scenario is not None else "the non-private estimate"
        st.info(f"**Shrinkage:** the constraint is {ratio:.2f}× the size of {what}, so every estimate is pulled "
                "toward zero. Private and non-private estimates then look alike because both are shrunk — "
                "not because the noise is harmless. Compare with the all-zero reference above.", icon=":material/info:")


def show_privacy(report, status, config):
    """σ², ε under each calibration and their ratio, with the label of :func:`release_status`, and the
    guarantee converted to the other privacy unit."""
    st.subheader("Privacy")
    eps = report.epsilon_by_calibration
    cols = st.columns(3)
    cols[0].metric("noise variance σ²", f"{report.sigma2:.4g}")
    cols[1].metric(f"ε ({report.calibration})", f"{report.epsilon:.4g}")
    cols[2].metric("δ", f"{report.dp_delta:.1e}")
    rows = []
    for name in CALIBRATIONS:
        value = eps.get(name)
        if value is None and report.calibration != name and name != "formal":
            continue  # this method has no such calibration
        rows.append({
            "calibration": name,
            "meaning": CALIBRATION_LABELS[name],
            "ε for this σ²": value if value is not None else math.nan,
            "formal calibration": "yes" if name == "formal" else "no (data-dependent)",
            "ε ÷ ε(paper)": (value / eps["paper"]) if value is not None and eps.get("paper") else math.nan,
        })
    st.dataframe(pd.DataFrame(rows), hide_index=True, key="privacy_table", placeholder="n/a")
    if status.formal:
        bounds = ("the clip G or cap M per sequence, C, d, p, the windows, the number of sequences"
                  if report.privacy_unit == "sequence" else "count cap C, B or r, d, p, n")
        st.success(f"Formal (ε, δ)-DP for {UNIT_LABELS[report.privacy_unit]}: the noise is calibrated from public "
                   f"bounds only ({bounds}), the observation window was stated, and the noise is fresh.")
        show_unit_conversion(report, config.max_events or 50)
    else:
        advice = "" if report.formal else " Choose the *formal* calibration (with a count cap C) for a guarantee."
        st.warning(f"**Not a formal guarantee:** {'; '.join(status.reasons)}.{advice}", icon="⚠️")
    if eps.get("formal") is None:
        st.caption("Set a count cap C ≥ 1 to see the formal ε for this σ².")


def show_preset(config):
    """The preset's sentence, and which settings were changed from it (the sentence describes the preset)."""
    if preset is None:
        st.caption("Your own data or settings: choose a preset above to start again from a known setting.")
        return
    st.info(f"**{preset.title}.** {preset.summary}", icon=":material/lightbulb:")
    changed = preset.changed_settings(config) + (() if preset.matches_data(dataset.params) else ("the data",))
    if changed:
        st.caption(f"You changed {', '.join(changed)}: the sentence above describes the preset as given.")


def show_comparison(stats, data_info, config, result, reference, has_truth):
    """The chosen fit beside every other method at the same ε, on the same statistics."""
    st.subheader("The same fit with the other methods")
    epsilon = comparison_epsilon(config, result, fallback=defaults_from.config.epsilon)
    reference_label = get_family(reference_method()).label
    if epsilon is None:
        st.caption("No finite ε to compare the methods at: choose a private method with ε, or σ² > 0.")
        return
    include_slow = st.checkbox("also run methods predicted to take over a second", key="cmp_slow")
    others = tuple(m for m in method_names() if m != config.method)
    if BUDGET.metered:  # on private data each formal method's fit is a release: only on request
        other_rows = metered_comparison(BUDGET, stats, data_info, config, epsilon, reference, defaults_from.public,
                                        others, include_slow)
        if other_rows is None:
            return
    else:
        other_rows = compare_cached(fingerprint, stats, data_info, config_items(config), epsilon, reference,
                                    public_items(defaults_from.public), others, include_slow)
    rows = (method_row(result, config, reference, data_info),) + other_rows
    error = "relative error ‖Ĥ−H‖/‖H‖" if has_truth else f"relative difference from {reference_label}"
    table = pd.DataFrame([{"method": method_label(r.method) + (" — chosen" if r is rows[0] else ""),
                           error: r.relative_error, "ε": r.epsilon, "formal guarantee": r.guarantee}
                          for r in rows]
                         + [{"method": "all-zero reference Ĥ = 0", error: 1.0, "ε": 0.0,
                             "formal guarantee": "yes: a constant reveals nothing"}])
    st.dataframe(table, hide_index=True, key="comparison", placeholder="—")
    formal_only = " and ".join(get_family(m).label for m in method_names() if get_family(m).formal_only)
    st.caption(f"Every private method at ε = {epsilon:.4g}, δ = {config.dp_delta:g}, on the same statistics "
               f"(Δ = {config.bin_size:g}, p = {config.lags}, C = {stats.count_cap or 'none'}); {formal_only} "
               "use the formal calibration, the others the chosen one; B, r, G and K are the chosen "
               f"method's where it has them, else the public values of '{defaults_from.title}'.")


def show_export(result, config, data_info, truth, averaged):
    """Download buttons for the estimate (and its lag average) and every parameter needed to reproduce it."""
    payload = fit_payload(result, config, data_info, dataset.events.names, dataset.params, truth)
    if averaged is not None:
        add_lag_average(payload, result, averaged, dataset.scenario)
    c = st.columns(2)
    c[0].download_button("Download JSON", to_json(payload), file_name=f"dphawkes_{result.method}.json",
                         mime="application/json", key="dl_json")
    c[1].download_button("Download CSV", to_csv(result, config, dataset.events.names, truth),
                         file_name=f"dphawkes_{result.method}.csv", mime="text/csv", key="dl_csv")


def clip_note(data_info: dict) -> str:
    """The sequence unit's clip norm G, when it was chosen privately (a release, shown like the fit)."""
    auto = data_info.get("auto_sequence_clip")
    if auto is None:
        return ""
    return (f" Clip norm G = {auto['sequence_clip']:.4g} chosen privately with {auto['share']:.0%} of ε "
            f"(a noisy histogram of the sequences' norms).")


def main():
    try:
        config = read_controls()
        block = read_averaging(config.bin_size)
    except DPHawkesError as exc:
        friendly_error(exc)
        return
    ignored_link_settings(LINK)
    show_preset(config)
    if st.session_state.get("lagmode") == "support s" and (note := support_note(st.session_state["s"], config.bin_size)):
        (st.warning if st.session_state["s"] < config.bin_size else st.caption)(note)
    events = dataset.events
    if is_sequence_unit(config) and events.n_sequences == 1:
        st.warning("One sequence: under the sequence unit it is the whole data set (one person), so the release "
                   "may reveal almost nothing about it — and it keeps only its first M events. The sequence unit "
                   "is meant for many sequences, one per person (e.g. the taxi shifts on the Data page).")
    cost = fit_cost(events, config)
    if cost.refused:
        st.error(f"Not started: {cost.reason}.", icon="⛔")
        return
    if cost.level == "warn":
        st.warning(f"Heavy fit: {cost.reason}.")
        if not st.checkbox("Run it anyway", key="confirm_heavy"):
            return
    try:
        stats, data_info = stats_cached(fingerprint, events, config_items(stats_config(config)))
        result = release_fit(BUDGET, fingerprint, stats, config, data_info)  # private data: through the ledger
        if result is None:
            return
        reference = None
        if config.family.private:  # beside it, the non-private reference on the same counts
            cls_config = FitConfig(method=reference_method(), bin_size=config.bin_size, lags=config.lags,
                                   count_cap=stats.count_cap)
            cls_stats = stats if not is_sequence_unit(config) else stats_cached(
                fingerprint, events, config_items(stats_config(cls_config)))[0]  # the unclipped sums
            reference = fit_cached(fingerprint, cls_stats, config_items(cls_config))
    except DPHawkesError as exc:
        friendly_error(exc)
        return
    truth = dataset.scenario.true_H(config.bin_size, config.lags) if dataset.scenario is not None else None
    st.caption(f"{data_info['n_bins']:,} bins of Δ = {config.bin_size:g}, p = {config.lags} lags "
               f"(support {config.bin_size * config.lags:.4g}); {count_noun(data_info['dropped_events'], 'event')} "
               f"after the last full bin dropped, {data_info['clipped_events']:,} removed by the count cap; "
               f"fit took {result.elapsed_s * 1000:.0f} ms ({cost.summary()} predicted).{clip_note(data_info)}")
    estimates = {"estimate": result.kernels}
    baselines = {"estimate": result.baseline}
    if reference is not None:
        estimates["non-private"] = reference.kernels
        baselines["non-private"] = reference.baseline
    averaged = averaged_kernels(result, block)
    steps = {f"averaged (w = {averaged.width:g})": averaged} if averaged is not None else None
    st.plotly_chart(kernel_grid(result.lag_grid, estimates, events.names, dataset.scenario, steps), key="kernels")
    c = st.columns(2)
    with c[0]:
        c[0].plotly_chart(baseline_chart(events.names, baselines,
                                         dataset.scenario.baseline if dataset.scenario is not None else None),
                          key="baselines")
        if note := negative_baseline_note(result.baseline, events.names):
            c[0].warning(note)
    with c[1]:
        one_shot = loss_note(result.method)
        if one_shot:
            c[1].info(one_shot, icon=":material/info:")
        else:
            c[1].plotly_chart(loss_curve({"estimate": result.loss_history}), key="loss")
        if result.privacy is not None and not one_shot:
            c[1].caption("The loss is the exact objective on the raw data: a diagnostic for you, not part of the "
                         "private release (only the estimate is).")
    st.subheader("Errors")
    show_metrics(result, reference, truth)
    if averaged is not None and dataset.scenario is not None:
        show_function_errors(result, averaged, dataset.scenario)
    show_shrinkage(config, truth if truth is not None else (reference.H if reference is not None else None))
    if config.privacy_unit == "event":
        show_comparison(stats, data_info, config, result,
                        truth if truth is not None else (reference or result).H, truth is not None)
    else:
        st.caption("The comparison with the other methods is for the event unit: with one sequence as the unit, "
                   f"only {sequence_families()} is available.")
    if result.privacy is not None:
        show_privacy(result.privacy, release_status(config, data_info), config)
    st.subheader("Export")
    show_export(result, config, data_info, truth, averaged)


main()
