"""The held-out score, the Estimate page's headline measure on data without a known truth.

Each estimate's settings are fitted on the training part — the events before a time for one sequence, the first
share of the sequences for several (:func:`~dphawkes_experiments.prediction.heldout_split`, as ``fit
--holdout-start`` and ``sweep``) — and scored on the rest by its log-likelihood per test event against the
Poisson model of the training part (:func:`~dphawkes_experiments.prediction.score_heldout`): the gain in nats per
test event, with its block-bootstrap standard error, and the verdict in words — better, worse or cannot tell against
a constant rate (:mod:`~dphawkes_experiments.verdict`), saying how many test events a fit whose intensity reaches 0
says could not happen.

The choice made on private data: the score reads the private test events, and the fits on the training part are
not releases — a private family's noise there is one seeded draw (:data:`HELDOUT_SEED`), computed for the analyst
like the non-private reference. It is shown "for your eyes only" and never put in a download; it is not released
with noise and budget of its own (a release of a score is not offered: it would spend budget on a diagnostic).
"""

from __future__ import annotations

import math

import pandas as pd
import streamlit as st

from dphawkes_core.errors import DPHawkesError
from dphawkes_core.estimators import FitConfig, fit, fit_cost
from dphawkes_experiments.prediction import heldout_split, score_fit

HELDOUT_SEED = 0  # the training-part fits of private families: one seeded draw (a diagnostic, not a release)
TRAIN_SHARE = 0.7  # default: the test part is the last 30 % of the window, or of the sequences
GAIN = "held-out gain over Poisson (nats per test event)"
VERDICT = "better than a constant rate?"
HELDOUT_COLUMNS = {  # short headers (the full name in the help) so that the table fits the page at 1100 px
    VERDICT: st.column_config.TextColumn("verdict", help="better, worse or cannot tell (the gain within about two "
                                         "standard errors of 0): the sentences under the table say why",
                                         width="small"),
    GAIN: st.column_config.NumberColumn("gain", help=GAIN + ": > 0 predicts better than Poisson", width="small",
                                        format="%.3g"),
    "± SE": st.column_config.NumberColumn("± SE", help="block-bootstrap standard error of the gain", width="small",
                                          format="%.2g"),
    "log-lik per test event": st.column_config.NumberColumn("log-lik", help="log-likelihood per test event",
                                                            width="small", format="%.4g"),
    "Poisson's": st.column_config.NumberColumn("Poisson's", help="the Poisson model's log-likelihood per test event",
                                               width="small", format="%.4g"),
}


def holdout_controls(events, where=st, prefix: str = "") -> tuple[float | None, float]:
    """The split's one setting: where the test part starts (one sequence, time since the window start) or the
    share of sequences that train (several). Returns ``(start, share)``; ``prefix`` keeps each page's widgets apart."""
    if events.n_sequences > 1:
        share = where.number_input("share of the sequences that train (the first ones)", min_value=0.05,
                                   max_value=0.95, value=TRAIN_SHARE, step=0.05, key=f"{prefix}holdout_share")
        return None, float(share)
    length = events.sequences[0].end_time
    unit = f" ({events.time_unit})" if events.time_unit else ""
    start = where.number_input(f"test part starts at (time since the window start{unit})", min_value=0.0,
                               max_value=float(length), value=float(TRAIN_SHARE * length), format="%.6g",
                               key=f"{prefix}holdout_start", help="the settings are fitted on the events before it, "
                               "and scored on the events from it on (the whole history counts)")
    return float(start), TRAIN_SHARE


def heldout_config(config: FitConfig) -> FitConfig:
    """``config`` with seeded noise (its own seed, else :data:`HELDOUT_SEED`): a reproducible diagnostic fit."""
    if config.seed is not None or not config.family.privacy.private:
        return config
    return config.with_changes(seed=HELDOUT_SEED)


@st.cache_data(show_spinner="Fitting on the training part and scoring the test part…", max_entries=64)
def score_cached(dataset_fp: str, _events, start: float | None, share: float, config_items: tuple) -> dict:
    """The score of one configuration (``config_items``: :func:`~dphawkes_app.caches.config_items`) fitted on the
    training part, as a dict, or ``{"error": why}`` when it cannot be fitted or scored there."""
    try:
        split = heldout_split(_events, start, share)
        result, _ = fit(split.train, FitConfig(**dict(config_items)))
        return score_fit(result, split).to_dict() | {"error": ""}
    except DPHawkesError as exc:
        return {"error": str(exc)}


def scores(dataset_fp: str, events, start, share, configs: dict, budget_s: float | None = None) -> dict:
    """``{label: score dict}`` of each configuration; one predicted to take over ``budget_s`` seconds on the
    whole data is skipped (said in its row)."""
    from .caches import config_items

    out = {}
    for label, config in configs.items():
        cost = fit_cost(events, config)
        if cost.refused or (budget_s is not None and cost.seconds > budget_s):
            out[label] = {"error": f"not run: {cost.reason}" if cost.refused else
                          f"skipped: predicted to take {cost.seconds:.2g} s"}
            continue
        out[label] = score_cached(dataset_fp, events, start, share, config_items(heldout_config(config)))
    return out


def _number(value) -> float:
    """A score value from its dict (``"-inf"``/``"inf"``/None as NaN: the verdict says what an infinite score
    means)."""
    return math.nan if value is None or isinstance(value, str) else float(value)


def heldout_table(results: dict) -> pd.DataFrame:
    """One row per estimate: the verdict's word, the gain and its standard error, the log-likelihoods and the test
    events (the full verdicts: :func:`verdict_lines`)."""
    rows = []
    for label, score in results.items():
        if score["error"]:
            rows.append({"estimate": label, VERDICT: "not scored", GAIN: math.nan, "± SE": math.nan,
                         "note": score["error"]})
            continue
        rows.append({"estimate": label, VERDICT: score["verdict"], GAIN: _number(score["gain_over_poisson"]),
                     "± SE": _number(score["gain_standard_error"]),
                     "log-lik per test event": _number(score["loglik_per_event"]),
                     "Poisson's": _number(score["poisson_loglik_per_event"]),
                     "note": f"{score['n_test_events']:,} test events"})
    return pd.DataFrame(rows)


def verdict_lines(results: dict) -> str:
    """The verdict of every scored estimate in full, one Markdown bullet each (what the table's short word means),
    and the events a test window starts with, which are conditioned on."""
    lines = [f"- **{label}**: {score['verdict_text']}." for label, score in results.items() if not score["error"]]
    starts = max((score.get("conditioned_events", 0) for score in results.values() if not score["error"]), default=0)
    if starts:
        lines.append(f"- {starts:,} test events sit at the very start of their window (t = 0, where a window cut at "
                     "its first event begins): they are history for the rest, not scored.")
    return "\n".join(lines)


def gain_column(results: dict, labels: list) -> list:
    """The gain of each of ``labels`` (NaN where not scored), for a column of the comparison table."""
    return [_number(results[label]["gain_over_poisson"]) if label in results and not results[label]["error"]
            else math.nan for label in labels]


def eyes_only(private_data: bool) -> str:
    """The caption under a held-out table."""
    text = ("Each estimate's settings fitted on the training part and scored on the test part: log-likelihood per "
            "test event minus the Poisson model's (constant rates of the training part); > 0 predicts better than "
            "Poisson. The standard error is a block bootstrap over the test window (or the test sequences). A "
            "private family's training-part fit is one seeded noise draw.")
    if private_data:
        text = (":material/visibility_off: **Not private — for your eyes only:** the score reads the private test "
                "events and its training-part fits are not releases; it is never in a download. " + text)
    return text
