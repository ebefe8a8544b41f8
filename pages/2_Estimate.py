"""Estimate page: start from a preset, fit the kernels with any method, compare with the truth, the
non-private fit and the other methods at the same ε.

On public (simulated) data everything re-runs live, with fresh noise per draw in this session; on private
data nothing is computed by opening the page or moving a widget: an estimate is released on request, through
the data set's privacy session (:mod:`dphawkes_app.estimate.release`)."""

import math

import numpy as np
import pandas as pd
import streamlit as st

from dphawkes_app.budget import budget_state, show_budget
from dphawkes_app.caches import compare_cached, config_items, fit_cached, preset_dataset, public_items, stats_cached
from dphawkes_app.controls import (
    family_controls,
    option_widget_values,
    privacy_unit_controls,
    sequence_families,
    show_unit_conversion,
)
from dphawkes_app.estimate.comparison import comparison_table, say_best_formal
from dphawkes_app.estimate.downloads import released_only
from dphawkes_app.estimate.follow import (
    CONFIRM_KEY,
    CUSTOM,
    follow_data,
    from_data,
    preset_remembered,
    sequence_unit_ready,
    show_note,
    show_unit_note,
)
from dphawkes_app.estimate.release import (
    Shown,
    after_comparison_release,
    app_session,
    band_of,
    comparison_flash,
    comparison_release,
    draw_again,
    live_fit,
    noise_band,
    noise_key,
    private_fit,
    release_fitter,
    replay_fitter,
)
from dphawkes_app.figures.kernels import baseline_chart, kernel_grid, loss_curve
from dphawkes_app.figures.palette import method_color
from dphawkes_app.guidance import (
    count_noun,
    loss_note,
    negative_baseline_note,
    no_better_than_zero,
    post_processing_note,
    support_note,
    time_scale,
    zero_note,
)
from dphawkes_app.heldout import GAIN, eyes_only, gain_column, heldout_table, holdout_controls, scores
from dphawkes_app.layout import dataset_caption, friendly_error, method_label, sidebar_dataset
from dphawkes_app.presets import DEFAULT_PRESET, WORKS_COUNT_CAP, Preset, get_preset, preset_for, presets
from dphawkes_app.state import current_dataset, dataset_to_url, ignored_link_settings, set_dataset
from dphawkes_core.errors import DPHawkesError
from dphawkes_core.estimators import FitConfig, fit_cost, get_family, is_sequence_unit, method_labels, method_names
from dphawkes_core.estimators.family import STATISTICS_LABELS
from dphawkes_core.estimators.registry import reference_method
from dphawkes_core.evaluation.lag_average import add_lag_average, average_lags, fit_steps
from dphawkes_core.evaluation.metrics import SHRINK_WARNING_RATIO, compare, constraint_ratio, kernel_function_error
from dphawkes_core.privacy.calibration import CALIBRATION_LABELS, CALIBRATIONS
from dphawkes_core.privacy.count_cap import AUTO, AUTO_CAP_SHARE
from dphawkes_core.privacy.sequence import UNIT_LABELS
from dphawkes_core.release.export import fit_payload, to_csv, to_json
from dphawkes_core.release.ledger import PUBLIC_MARK_REASON
from dphawkes_core.statistics.binning import lags_from_support
from dphawkes_experiments.compare import (
    COMPARISON_BUDGET_S,
    compare_methods,
    comparison_epsilon,
    method_row,
)

URL = {"bind": "query-params"}
PRIVACY_MODES = ("ε and δ", "σ² directly")
LAG_MODES = ("support s", "lags p")
BAND_DRAWS = (10, 20, 50)
EPSILON_HELP = ("ε bounds what anyone can learn about one event (the privacy unit) from the result: whatever they "
                "believed before, their odds that the event is in the data can move by a factor of at most e^ε — "
                "×1.1 at ε = 0.1, ×2.7 at ε = 1, ×20 at ε = 3. Smaller ε: more noise, more privacy. The Home page "
                "draws it.")
DELTA_HELP = ("δ: the small probability that the ε bound does not hold (a rare unlucky output). Keep it far below "
              "1 / (number of people in the data), e.g. 1e-5.")


def widget_values(preset: Preset) -> dict:
    """The sidebar widgets' values (by key) that reproduce ``preset``'s fit."""
    c = preset.config
    families = dict.fromkeys((c.method, *method_names()))  # the preset's own family first: its options win a key
    return {"dt": c.bin_size, "lagmode": "support s", "s": preset.support, "p": c.lags, "method": c.family.label,
            "C": {None: 0, AUTO: WORKS_COUNT_CAP}.get(c.count_cap, c.count_cap), "Cauto": c.count_cap == AUTO,
            "privacy": PRIVACY_MODES[c.epsilon is None],
            "eps": c.epsilon or 1.0, "sigma2": c.sigma2 if c.sigma2 is not None else 0.01, "delta": c.dp_delta,
            "calib": c.calibration, "unit": "event"} | option_widget_values(
        {name: preset.options_for(name) for name in families})


def apply_preset() -> None:
    """Selector callback: load the chosen preset's data and put its settings into the widgets."""
    key = st.session_state["preset"]
    if key == CUSTOM:
        return
    preset = get_preset(key)
    dataset = preset_dataset(key)
    set_dataset(dataset)
    st.session_state.update(widget_values(preset))
    preset_remembered(preset)
    st.session_state["settings_for"] = st.session_state["dataset_fingerprint"]


def choose_preset() -> tuple[Preset | None, Preset]:
    """The preset selector; returns the chosen preset (``None`` for the user's own data or settings) and
    the preset the widgets' defaults come from (the default one for the user's own)."""
    wanted = get_preset(st.query_params.get("preset", DEFAULT_PRESET)).key
    data, fp = current_dataset(wanted)
    follow_data(data, fp, wanted, widget_values)  # a change of data: the preset, Δ and s follow it (said below)
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
BUDGET = budget_state(dataset, fingerprint, st.session_state.get("unit", "event"))  # the ledger seen by the unit
PRIVATE = BUDGET.metered or (bool(BUDGET.error) and not BUDGET.simulated)
show_budget(BUDGET)  # the remaining privacy budget of private data ("public — no budget" for a simulation)
SCALE = time_scale(dataset.events) if preset is None and dataset.scenario is None else None
if SCALE is not None:  # real or uploaded data: Δ and s proposed from their time scale
    DEFAULTS.update(dt=SCALE.bin_size, s=SCALE.support)
    st.caption(SCALE.describe())
show_note(fingerprint)
sequence_unit_ready(DEFAULTS)  # the sequence unit never dead-ends: a method or C it cannot use is switched
show_unit_note()


def read_controls():
    """Sidebar widgets -> FitConfig (raises ConfigError on inconsistent values)."""
    sb = st.sidebar
    sb.header("Fit settings")
    bin_size = sb.number_input(
        "bin size Δ", min_value=1e-4, value=DEFAULTS["dt"], step=0.05, format="%.4g", key="dt", **URL
    )
    lag_mode = sb.radio("memory", LAG_MODES, index=LAG_MODES.index(DEFAULTS["lagmode"]), horizontal=True,
                        key="lagmode", **URL,
                        help="how far back an event can excite: s in time units, or p = ⌈s/Δ⌉ bins")
    if lag_mode == "support s":
        support = sb.number_input(
            "support s", min_value=1e-4, value=DEFAULTS["s"], step=0.5, format="%.4g", key="s", **URL
        )
        lags = lags_from_support(support, bin_size)
    else:
        lags = int(sb.number_input("lags p", min_value=1, value=DEFAULTS["p"], step=5, key="p", **URL))
    if PRIVATE and from_data():  # proposed from private data: read from the data until confirmed as public
        sb.checkbox("Δ and s are my public choice", key=CONFIRM_KEY,
                    help="Δ and s were proposed from these data (their mean time between events): read from the "
                         "private data. A formal release needs settings chosen without looking at the data — "
                         "confirm these as your public choice, or set your own.")
        sb.caption("Δ and s: proposed from these data — *read from the data* until you confirm them.")
    methods = {label: name for name, label in method_labels().items()}  # labels are also the URL values
    labels = list(methods)
    by_kind = {kind: ", ".join(get_family(n).label for n in methods.values() if get_family(n).statistics == kind)
               for kind in STATISTICS_LABELS}
    kinds = "; ".join(f"{by_kind[kind]}: {text}" for kind, text in STATISTICS_LABELS.items() if by_kind[kind])
    chosen = sb.selectbox(
        "method",
        labels,
        index=labels.index(DEFAULTS["method"]) if DEFAULTS["method"] in labels else 0,
        key="method",
        **URL,
        help=f"What each method fits — {kinds}.",
    )
    family = get_family(methods[chosen])
    sb.caption(f"Fits {STATISTICS_LABELS[family.statistics]}. {family.summary}")
    kwargs = family_controls(sb, family, DEFAULTS, url=URL)
    auto_cap = family.auto_count_cap and sb.checkbox(
        "choose C privately (auto)", value=DEFAULTS["Cauto"], key="Cauto", **URL,
        help=f"spend {AUTO_CAP_SHARE:.0%} of ε on a private choice of C (the cap that clips about 1 % of the "
             "events), the rest on the statistics; needs ε, not σ², and the event unit")
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
            kwargs["epsilon"] = sb.number_input("ε", min_value=1e-6, value=DEFAULTS["eps"], format="%.4g", key="eps",
                                                help=EPSILON_HELP, **URL)
        else:
            kwargs["sigma2"] = sb.number_input("σ² per noisy entry", min_value=0.0, value=DEFAULTS["sigma2"],
                                               format="%.4g", key="sigma2", **URL)
        kwargs["dp_delta"] = sb.number_input(
            "δ",
            min_value=1e-12,
            max_value=0.5,
            value=DEFAULTS["delta"],
            format="%.1e",
            key="delta",
            help=DELTA_HELP,
            **URL,
        )
        kwargs.update(privacy_unit_controls(sb, private_clip=True, url=URL))
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


def noiseless_label(config: FitConfig) -> str:
    """The private family without noise (σ² = 0): the fair non-private comparison, with the same post-processing."""
    return f"{config.family.label} with σ² = 0: {get_family(reference_method()).label} with the same post-processing"


def show_metrics(shown: Shown, reference, noiseless, truth):
    """Error table (paper metric never alone) or, without a truth, the distance to the non-private fit; the
    private fit beating the plain non-private one is explained by the post-processing; an estimate no better
    than zero says so, and why."""
    result, config = shown.result, shown.config
    reference_label = get_family(reference_method()).label
    if truth is None:
        show_heldout(shown, reference is not None, noiseless is not None)
        st.info("No ground truth for this data set (it was not simulated): the held-out score above is the measure "
                f"of prediction; the differences below only compare with the non-private {reference_label} estimate.")
        if reference is not None:
            diff = compare(result.H, reference.H)
            st.dataframe(pd.DataFrame([{
                f"relative difference from {reference_label}": diff.relative_error,
                "kernels": diff.kernel_relative_error, "baselines": diff.baseline_relative_error,
            }]), hide_index=True)
            zero_warning(shown, diff.relative_error, reference.H)
        return
    fits = {method_label(result.method): result}
    if reference is not None:
        fits[method_label(reference.method)] = reference
    if noiseless is not None:
        fits[noiseless_label(config)] = noiseless
    rows = {label: compare(fit.H, truth) for label, fit in fits.items()}
    grid_free = {label: kernel_function_error(fit_steps(fit), dataset.scenario) for label, fit in fits.items()} \
        if dataset.scenario is not None else None
    table = pd.DataFrame([{
        "estimate": label,
        "relative error ‖Ĥ−H‖/‖H‖": r.relative_error,
        **({"grid-free kernel error": grid_free[label]} if grid_free else {}),
        "paper's relative error (÷ d(dp+1))": r.relative_error_paper,
        "kernels only": r.kernel_relative_error,
        "baselines only": r.baseline_relative_error,
    } for label, r in rows.items()])
    any_report = next(iter(rows.values()))
    zero = pd.DataFrame([{
        "estimate": "all-zero reference Ĥ = 0",
        "relative error ‖Ĥ−H‖/‖H‖": any_report.zero_estimate_relative_error,
        **({"grid-free kernel error": 1.0} if grid_free else {}),
        "paper's relative error (÷ d(dp+1))": any_report.zero_estimate_relative_error_paper,
        "kernels only": 1.0, "baselines only": 1.0,
    }])
    st.dataframe(pd.concat([table, zero], ignore_index=True), hide_index=True, key="metrics")
    st.caption(f"The paper's metric divides the relative error by d(dp+1) = {truth.size:,}, so it shrinks as p grows "
               "whatever the estimate; an estimate is only useful if its plain relative error is below the "
               "all-zero reference's 1."
               + (" The plain error compares each step with the kernel at the end of its bin; the grid-free error "
                  "compares the whole kernel functions over [0, s] (the all-zero estimate scores 1 on both): the "
                  "fair one between an estimate on exact times and a binned one." if grid_free else ""))
    private_error = rows[method_label(result.method)].relative_error
    if reference is not None and noiseless is not None:
        note = post_processing_note(config.family.label, private_error, rows[noiseless_label(config)].relative_error,
                                    reference_label, rows[method_label(reference.method)].relative_error)
        if note:
            st.info(note, icon=":material/balance:")
    zero_warning(shown, private_error, truth)


def show_heldout(shown: Shown, with_reference: bool, with_noiseless: bool) -> None:
    """The headline on data without a truth: each estimate's held-out gain over Poisson (its settings fitted on the
    training part), with its standard error and the test events where its intensity is ≤ 0."""
    st.markdown("**Held-out prediction** — does the estimate predict the events it was not fitted on?")
    start, share = holdout_controls(dataset.events)
    configs = {method_label(shown.config.method): shown.config}
    if with_reference:
        configs[method_label(reference_method())] = reference_config(shown)
    if with_noiseless:
        configs[noiseless_label(shown.config)] = noiseless_config(shown)
    st.session_state["heldout"] = (start, share)  # the comparison below scores its rows on the same split
    st.dataframe(heldout_table(scores(fingerprint, dataset.events, start, share, configs)), hide_index=True,
                 key="heldout", placeholder="—")
    st.caption(eyes_only(shown.private_data))


def zero_warning(shown: Shown, error: float, reference_H) -> None:
    """Say when a private estimate is no better than outputting zero, and why."""
    if shown.result.privacy is None or not no_better_than_zero(error):
        return
    scale = float(np.sqrt(np.mean(np.square(reference_H))))
    st.warning(zero_note(shown.result, shown.config, shown.data_info, error, scale), icon=":material/exposure_zero:")


def show_shrinkage(config, reference):
    """Warn when the constraint ball is far smaller than the truth (or the CLS fit, without a truth)."""
    if reference is None:
        return
    constraint = config.family.constraint
    ratio = constraint_ratio(
        constraint, reference, config.bin_size, getattr(config, constraint) if constraint else None
    )
    if ratio is not None and ratio < SHRINK_WARNING_RATIO:
        what = "the true H" if dataset.scenario is not None else "the non-private estimate"
        st.info(f"**Shrinkage:** the constraint is {ratio:.2f}× the size of {what}, so every estimate is pulled "
                "toward zero. Private and non-private estimates then look alike because both are shrunk — "
                "not because the noise is harmless. Compare with the all-zero reference above.", icon=":material/info:")


def public_mark_text() -> str:
    """The core's sentence on data marked public, with the mark (when, from which tool), or nothing."""
    mark = BUDGET.ledger.public_mark if BUDGET.ledger is not None else None
    return f" {PUBLIC_MARK_REASON[:1].upper()}{PUBLIC_MARK_REASON[1:]} ({mark.sentence()})." if mark else ""


def show_privacy(shown: Shown):
    """σ², ε under each calibration and their ratio, with the formal status: a release (private data), or the
    settings' status on public data (nothing is released there), and the guarantee in the other privacy unit."""
    report, status, config = shown.result.privacy, shown.status, shown.config
    st.subheader("Privacy")
    eps = report.epsilon_by_calibration
    cols = st.columns(3)
    cols[0].metric("noise variance σ²", f"{report.sigma2:.4g}")
    cols[1].metric(f"ε ({report.calibration})", f"{report.epsilon:.4g}", help=EPSILON_HELP)
    cols[2].metric("δ", f"{report.dp_delta:.1e}", help=DELTA_HELP)
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
    bounds = ("the clip G or cap M per sequence, C, d, p, the windows, the number of sequences"
              if report.privacy_unit == "sequence" else "count cap C, B or r, d, p, n")
    if status.formal:
        st.success(f"**Formal (ε, δ)-DP release** for {UNIT_LABELS[report.privacy_unit]}: the noise is calibrated "
                   f"from public bounds only ({bounds}), the domain and window were declared, the noise is fresh, and "
                   "the release is metered in this data set's ledger.")
        show_unit_conversion(report, config.max_events or 50)
    elif not shown.private_data and status.settings_formal:
        st.success(f"**Formal (ε, δ)-DP settings** for {UNIT_LABELS[report.privacy_unit]}: on private data this "
                   f"would be a formal (ε, δ)-DP release — noise from public bounds only ({bounds}), a stated window, "
                   "fresh noise — released through the data set's ledger. Here the data are public (a simulation, or "
                   "data marked published): everything re-runs live and nothing is a release." + public_mark_text(),
                   icon=":material/verified:")
        show_unit_conversion(report, config.max_events or 50)
    else:
        reasons = [r for r in status.reasons if shown.private_data or not r.startswith("not released")]
        advice = "" if report.formal else " Choose the *formal* calibration (with a count cap C) for a guarantee."
        st.warning(f"**Not a formal guarantee:** {'; '.join(reasons)}.{advice}"
                   + ("" if shown.private_data else public_mark_text()), icon="⚠️")
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


def show_comparison(shown: Shown, reference, has_truth, blocked: str):
    """The chosen fit beside every other method at the same ε, on the same statistics; on private data each
    formal method is a release, made only on request (one button for all of them)."""
    st.subheader("The same fit with the other methods")
    config, result, stats, data_info = shown.config, shown.result, shown.stats, shown.data_info
    epsilon = comparison_epsilon(config, result, fallback=defaults_from.config.epsilon)
    reference_label = get_family(reference_method()).label
    if epsilon is None:
        st.caption("No finite ε to compare the methods at: choose a private method with ε, or σ² > 0.")
        return
    include_slow = st.checkbox("also run methods predicted to take over a second", key="cmp_slow")
    others = tuple(m for m in method_names() if m != config.method)
    if shown.private_data:  # each formal method's fit is a release: only on request
        session = app_session(BUDGET, dataset, fingerprint, config.privacy_unit)
        comparison_flash()
        pending = []
        args = (stats, data_info, config, epsilon, reference, defaults_from.public, others, include_slow)
        extra = dict(released=True, events=dataset.events, scenario=dataset.scenario)
        other_rows = compare_methods(*args, fitter=replay_fitter(session, pending), **extra)
        if comparison_release(session, pending, "the other methods", blocked):
            answers = []
            try:
                compare_methods(*args, fitter=release_fitter(session, answers), **extra)
            except DPHawkesError as exc:
                friendly_error(exc)
            after_comparison_release(session, answers)
    else:
        other_rows = compare_cached(fingerprint, stats, data_info, config_items(config), epsilon, reference,
                                    public_items(defaults_from.public), others, include_slow, noise_key(config),
                                    dataset.events, dataset.scenario)
    rows = (method_row(result, config, reference, data_info, released=shown.private_data,
                       scenario=dataset.scenario),) + other_rows
    table = comparison_table(rows, has_truth, reference_label, rows[0])
    if not has_truth:
        table.insert(1, GAIN, comparison_gains(shown, rows, epsilon, include_slow))
    st.dataframe(table, hide_index=True, key="comparison", placeholder="—")
    say_best_formal(rows, config)
    formal_only = " and ".join(get_family(m).label for m in method_names() if get_family(m).formal_only)
    st.caption(f"Every private method at ε = {epsilon:.4g}, δ = {config.dp_delta:g}, on the same statistics "
               f"(Δ = {config.bin_size:g}, p = {config.lags}, C = {data_info['count_cap'] or 'none'}); {formal_only} "
               "use the formal calibration, the others the chosen one; B, r, G and K are the chosen "
               f"method's where it has them, else the public values of '{defaults_from.title}'."
               + ("" if shown.private_data else " On public data nothing is released: 'formal guarantee' says "
                  "whether the same settings would be a formal release on private data.")
               + ("" if has_truth else " The held-out gain: each method's settings fitted on the training part "
                  "chosen above and scored on the test part" + (" (for your eyes only: it reads the private test "
                                                                 "events)." if shown.private_data else ".")))


def comparison_gains(shown: Shown, rows, epsilon: float, include_slow: bool) -> list:
    """Each comparison row's held-out gain over Poisson on the split chosen above (its settings fitted on the
    training part; the all-zero row last, not scored: its intensity is 0)."""
    start, share = st.session_state.get("heldout", (None, 0.7))
    config = shown.config
    config = config.with_selection(count_cap=shown.data_info["count_cap"])  # the others: clipped at the chosen C
    configs = {r.method: (shown.config if i == 0 else config.for_method(r.method, epsilon, dict(defaults_from.public)))
               for i, r in enumerate(rows) if r.ran}
    results = scores(fingerprint, dataset.events, start, share, configs,
                     None if include_slow else COMPARISON_BUDGET_S)
    return gain_column(results, [r.method for r in rows]) + [math.nan]


def show_export(shown: Shown, truth, averaged):
    """Download buttons for the estimate (and its lag average) and every parameter needed to reproduce it; on
    private data the release only (:func:`released_only`), with the status it was recorded with."""
    result, config, data_info = shown.result, shown.config, shown.data_info
    status = shown.status if shown.private_data else None  # public data: the core's "not released" status
    payload = fit_payload(result, config, dict(data_info), dataset.events.names, dataset.params, truth, status=status)
    if averaged is not None:
        add_lag_average(payload, result, averaged, dataset.scenario)
    if shown.private_data:
        payload = released_only(payload)
        st.caption("The downloads hold the release only: the estimate, its settings and its formal status — not the "
                   "loss, the event counts or anything else computed from the raw data.")
    c = st.columns(2)
    c[0].download_button("Download JSON", to_json(payload), file_name=f"dphawkes_{result.method}.json",
                         mime="application/json", key="dl_json")
    c[1].download_button("Download CSV", to_csv(result, config, dataset.events.names, truth, dict(data_info),
                                                status=status),
                         file_name=f"dphawkes_{result.method}.csv", mime="text/csv", key="dl_csv")


def clip_note(data_info) -> str:
    """The sequence unit's clip norm G, when it was chosen privately (a release, shown like the fit)."""
    auto = data_info.get("auto_sequence_clip")
    if auto is None:
        return ""
    return (f" Clip norm G = {auto['sequence_clip']:.4g} chosen privately with {auto['share']:.0%} of ε "
            f"(a noisy histogram of the sequences' norms).")


def references(shown: Shown):
    """The non-private reference on the same counts (the unclipped sums for the sequence unit) and the private
    family without noise (σ² = 0, the same post-processing: the fair non-private comparison). Both are computed
    from the raw data; deterministic, so cached for every session."""
    config, stats = shown.config, shown.stats
    if not config.family.private:
        return None, None
    cls_config = reference_config(shown)
    # unclipped sums
    cls_stats = stats_cached(fingerprint, dataset.events, config_items(cls_config.statistics_key()))[0]
    reference = fit_cached(fingerprint, cls_stats, config_items(cls_config))
    noiseless = None
    if not is_sequence_unit(config):
        try:
            noiseless = fit_cached(fingerprint, stats, config_items(noiseless_config(shown)))
        except DPHawkesError:
            noiseless = None  # e.g. a family that needs noise to run: no σ² = 0 line
    return reference, noiseless


def reference_config(shown: Shown) -> FitConfig:
    """The non-private reference's settings: the shown fit's Δ, p and the C its events were kept under."""
    config = shown.config
    return FitConfig(method=reference_method(), bin_size=config.bin_size, lags=config.lags,
                     count_cap=shown.data_info["count_cap"])


def noiseless_config(shown: Shown) -> FitConfig:
    """The shown private fit with σ² = 0 (no noise, so its statistics' public C) and the same post-processing:
    an option left to a public rule that depends on σ (the ridge λ) keeps the value the private fit used, so
    e.g. the smoothing across lags (in units of λ) is the same."""
    config, result = shown.config, shown.result
    kept = {setting.name: float(result.info[setting.name]) for setting in config.family.settings
            if getattr(config, setting.name) is None and isinstance(result.info.get(setting.name), (int, float))}
    return config.with_selection(count_cap=shown.data_info["count_cap"]).noiseless(**kept)


def band_controls(shown: Shown) -> int | None:
    """On public data: "draw the noise again" and the band of several draws (number of draws, or ``None``)."""
    if shown.private_data or not shown.result.privacy or shown.config.seed is not None:
        return None
    c = st.columns([1, 1, 2])
    c[0].button("Draw the noise again", key="draw_again", on_click=draw_again, icon=":material/casino:",
                help="fresh noise (not seeded): the estimate as another release would give it")
    draws = c[1].selectbox("band of draws", (0, *BAND_DRAWS), key="band_draws",
                           format_func=lambda n: "no band" if n == 0 else f"{n} draws",
                           help="fit the same settings with fresh noise this many times and shade the range "
                                "(5 %–95 %) of the private kernels: how much one release can vary")
    c[2].caption("Public simulated data: every fit re-runs live with fresh noise for this session. Draw again to "
                 "see another release; a band shows many at once.")
    return draws or None


def main():
    try:
        config = read_controls()
        block = read_averaging(config.bin_size)
    except DPHawkesError as exc:
        friendly_error(exc)
        return
    ignored_link_settings(LINK)
    show_preset(config)
    if st.session_state.get("lagmode") == "support s" and (
        note := support_note(st.session_state["s"], config.bin_size)
    ):
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
    blocked = ""
    if PRIVATE and from_data() and not st.session_state.get(CONFIRM_KEY):
        blocked = ("Δ and s were proposed from these data (read from the data): confirm them as your public choice "
                   "in the sidebar, or set your own, before a formal release.")
    try:
        shown = private_fit(BUDGET, dataset, fingerprint, config, blocked) if PRIVATE else \
            live_fit(fingerprint, events, config)
        if shown is None:
            return
        reference, noiseless = references(shown)
    except DPHawkesError as exc:
        friendly_error(exc)
        return
    show_estimate(shown, reference, noiseless, block, cost, blocked)


def show_estimate(shown: Shown, reference, noiseless, block, cost, blocked: str) -> None:
    """Everything about the estimate shown: figures, errors, comparison, privacy and export."""
    result, config, data_info = shown.result, shown.config, shown.data_info
    events = dataset.events
    truth = dataset.scenario.true_H(config.bin_size, config.lags) if dataset.scenario is not None else None
    st.caption(f"{data_info['n_bins']:,} bins of Δ = {config.bin_size:g}, p = {config.lags} lags "
               f"(support {config.bin_size * config.lags:.4g}); {count_noun(data_info['dropped_events'], 'event')} "
               f"after the last full bin dropped, {data_info['clipped_events']:,} removed by the count cap; "
               f"fit took {result.elapsed_s * 1000:.0f} ms ({cost.summary()} predicted).{clip_note(data_info)}")
    draws = band_controls(shown)
    label = method_label(result.method)
    estimates = {"estimate": result.kernels}
    baselines = {"estimate": result.baseline}
    colors = {"estimate": method_color(result.method)}
    dashes = {}
    if reference is not None:
        estimates["non-private"] = reference.kernels
        baselines["non-private"] = reference.baseline
        colors["non-private"] = method_color(reference.method)
    if noiseless is not None:
        estimates["σ² = 0, same post-processing"] = noiseless.kernels
        colors["σ² = 0, same post-processing"] = method_color(result.method)
        dashes["σ² = 0, same post-processing"] = "dot"
    bands, errors = None, None
    if draws:
        low, high, _ = noise_band(fingerprint, shown, draws)
        (k_low, k_high), (b_low, b_high) = band_of(low, high, result.dim, result.lags)
        name = f"{draws} fresh noise draws (5–95 %)"
        bands = {name: (k_low, k_high, method_color(result.method))}
        errors = {"estimate": (b_low, b_high)}
    averaged = averaged_kernels(result, block)
    steps = {f"averaged (w = {averaged.width:g})": averaged} if averaged is not None else None
    title = (f"Kernels h<sub>ij</sub>(t): estimate = {label}" + (", non-private = " + get_family(reference.method).label
                                                                  if reference is not None else "")
             + " — column = source j (from), row = affected dimension i (to)")
    st.plotly_chart(kernel_grid(result.lag_grid, estimates, events.names, dataset.scenario, steps, colors=colors,
                                bands=bands, dashes=dashes, time_unit=events.time_unit, title=title), key="kernels")
    if shown.private_data and reference is not None:
        st.caption(":material/visibility_off: **Not private — for your eyes only:** the non-private reference, the "
                   "σ² = 0 line, the loss curve and the event counts are computed from the raw data. Only the "
                   "estimate and its privacy report are the release.")
    c = st.columns(2)
    with c[0]:
        c[0].plotly_chart(baseline_chart(events.names, baselines,
                                         dataset.scenario.baseline if dataset.scenario is not None else None,
                                         colors=colors, errors=errors), key="baselines")
        if note := negative_baseline_note(result.baseline, events.names):
            c[0].warning(note)
    with c[1]:
        one_shot = loss_note(result.method)
        if one_shot:
            c[1].info(one_shot, icon=":material/info:")
        else:
            c[1].plotly_chart(loss_curve({"estimate": result.loss_history}, colors=colors), key="loss")
        if result.privacy is not None and not one_shot:
            c[1].caption("The loss is the exact objective on the raw data: a diagnostic for you, not part of the "
                         "private release (only the estimate is).")
    st.subheader("Errors")
    show_metrics(shown, reference, noiseless, truth)
    if averaged is not None and dataset.scenario is not None:
        show_function_errors(result, averaged, dataset.scenario)
    show_shrinkage(config, truth if truth is not None else (reference.H if reference is not None else None))
    if config.privacy_unit == "event":
        show_comparison(shown, truth if truth is not None else (reference or result).H, truth is not None, blocked)
    else:
        st.caption("The comparison with the other methods is for the event unit: with one sequence as the unit, "
                   f"only {sequence_families()} offer it.")
    if result.privacy is not None:
        show_privacy(shown)
    st.subheader("Export")
    show_export(shown, truth, averaged)


main()
