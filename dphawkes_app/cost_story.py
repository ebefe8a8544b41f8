"""What privacy costs in accuracy, in one sentence a stakeholder can repeat, read from the precomputed table the
Home page draws (``sample_data/privacy_cost.json``): the best formal method's median kernel error at ε = 1 against
the best non-private fit's, and at the largest ε. Pure functions: the numbers come from the table, never typed in."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import numpy as np

from dphawkes_core.errors import DPHawkesError
from dphawkes_core.estimators import get_family

STORY_EPSILON = 1.0  # the ε the sentence is about (the app's default)


def medians(rows: Iterable[Mapping], metric: str) -> dict[tuple[str, float | None], float]:
    """``{(method, ε or None): median of metric}`` over the runs."""
    values: dict = {}
    for row in rows:
        epsilon = None if row["epsilon"] is None else float(row["epsilon"])
        values.setdefault((row["method"], epsilon), []).append(float(row[metric]))
    return {key: float(np.median(v)) for key, v in values.items()}


def ratio_words(ratio: float) -> str:
    """How many times the error, for people: "about the same", "about twice" …"""
    if ratio < 1.1:
        return "about the same error as"
    if ratio < 1.35:
        return "about a quarter more error than"
    if ratio < 1.75:
        return "about half as much error again as"
    if ratio < 2.5:
        return "about twice the error of"
    return f"about {ratio:.0f} times the error of"


def _label(method: str) -> str:
    try:
        return get_family(method).label
    except DPHawkesError:  # a family of the table no longer registered
        return method


def cost_sentence(table: Mapping) -> str:
    """The sentence: at ε = 1 the best formal method's median kernel error against the best non-private one's, and
    at the largest ε of the table; 0 is exact, 1 no better than estimating nothing."""
    metric = table.get("metric", "relative_error")
    med = medians(table["rows"], metric)
    private = {key: value for key, value in med.items() if key[1] is not None}
    references = {key[0]: value for key, value in med.items() if key[1] is None}
    reference, best_ref = min(references.items(), key=lambda kv: kv[1])
    epsilons = sorted({key[1] for key in private})
    at_one = min(epsilons, key=lambda e: abs(e - STORY_EPSILON))
    method, error = min(((m, v) for (m, e), v in private.items() if e == at_one), key=lambda mv: mv[1])
    top = epsilons[-1]
    error_top = min(v for (m, e), v in private.items() if e == top)
    return (f"**At ε = {at_one:g}, privacy costs {ratio_words(error / best_ref)} the best non-private fit**: on "
            f"{table['n_events']:,} simulated events the best formal method, {_label(method)}, misses the true "
            f"kernels by {error:.2f}, the non-private {_label(reference)} by {best_ref:.2f}. At ε = {top:g} it is "
            f"{error_top:.2f}: {ratio_words(error_top / best_ref)} no privacy. (0 is exact; 1 is no better than "
            "estimating nothing.)")
