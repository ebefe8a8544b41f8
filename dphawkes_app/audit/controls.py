"""The Privacy audit page's controls: the method, its calibration and options, the claimed ε and δ, the trials,
the broken mechanism (for teaching) and the neighbours, read into an audit configuration."""

import math

import streamlit as st

from dphawkes_app.bounded_input import FieldChecks
from dphawkes_app.controls import calibration_words, family_controls
from dphawkes_core.data.datasets import Dataset
from dphawkes_core.estimators import FitConfig, get_family, method_names
from dphawkes_core.evaluation.metrics import constraint_scale
from dphawkes_core.statistics.binning import lags_from_support
from dphawkes_experiments.audit import AuditConfig, default_count_cap

SUPERSCRIPTS = str.maketrans("0123456789-", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻")


def power_of_ten(value: float) -> str:
    """``1000000.0`` as ``10⁶`` (and ``2.0`` as ``2``)."""
    exponent = math.log10(value)
    if value >= 100 and exponent == int(exponent):
        return "10" + str(int(exponent)).translate(SUPERSCRIPTS)
    return f"{value:g}"


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
