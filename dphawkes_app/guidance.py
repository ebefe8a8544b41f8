"""Plain-words guidance shown next to a fit: defaults scaled to the data, and what a result means.

Pure functions (no Streamlit): the app and the CLI show their sentences as they are.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from dphawkes_core.binning import lags_from_support
from dphawkes_core.estimators import FAMILIES, get_family
from dphawkes_core.events import Events

BINS_PER_GAP = 4  # default Δ ≈ mean inter-event time / 4: most bins hold 0 or 1 event
GAPS_PER_SUPPORT = 10  # default s ≈ 10 mean inter-event times: p ≈ 40 lags


def count_noun(count: int, noun: str, plural: str | None = None) -> str:
    """``"1 event"``, ``"2 events"``, ``"1,500 events"`` (thousands separated)."""
    return f"{count:,} {noun if count == 1 else (plural or noun + 's')}"


def nice_number(x: float) -> float:
    """The number of the form 1, 2 or 5 × 10^k nearest to ``x > 0`` on a log scale."""
    exponent = math.floor(math.log10(x))
    candidates = [m * 10.0**e for e in (exponent, exponent + 1) for m in (1, 2, 5)]
    return float(min(candidates, key=lambda c: abs(math.log(c / x))))


@dataclass(frozen=True)
class TimeScale:
    """Defaults for Δ and s from the data's mean inter-event time.

    Attributes
    ----------
    mean_gap : float
        Observed time (summed over sequences) divided by the number of events.
    bin_size : float
        Suggested Δ: ``mean_gap / BINS_PER_GAP`` rounded to 1, 2 or 5 × 10^k.
    support : float
        Suggested s: ``GAPS_PER_SUPPORT · mean_gap`` rounded likewise.
    unit : str
        The data's time unit ("" when unknown).
    """

    mean_gap: float
    bin_size: float
    support: float
    unit: str = ""

    def describe(self) -> str:
        """One sentence saying where the defaults come from."""
        unit = f" {self.unit}" if self.unit else ""
        return (f"Δ = {self.bin_size:g} and s = {self.support:g}{unit} are chosen from these data: about ¼ and 10× "
                f"their mean time between events ({self.mean_gap:.3g}{unit}). Change them in the sidebar.")


def time_scale(events: Events) -> TimeScale:
    """Suggested Δ and s for ``events`` (see :class:`TimeScale`)."""
    observed = float(sum(seq.end_time for seq in events.sequences))
    gap = observed / max(events.n_events, 1)
    return TimeScale(gap, nice_number(gap / BINS_PER_GAP), nice_number(gap * GAPS_PER_SUPPORT),
                     events.time_unit)


def support_note(support: float, bin_size: float) -> str | None:
    """Say how the support s became ``p = ⌈s/Δ⌉`` lags when that changes it noticeably.

    A support shorter than Δ still needs one lag, so it is raised to Δ; otherwise s is rounded up to
    a whole number of bins. Returns ``None`` when ``p·Δ`` equals s (up to rounding).
    """
    lags = lags_from_support(support, bin_size)
    covered = lags * bin_size
    if support < bin_size and not math.isclose(support, bin_size, rel_tol=1e-9):
        return (f"The support s = {support:g} is shorter than one bin Δ = {bin_size:g}: the fit uses one lag, so "
                f"it covers {covered:g}. Lower Δ to model shorter effects.")
    if not math.isclose(covered, support, rel_tol=1e-6):
        return f"s = {support:g} is not a whole number of bins: p = ⌈s/Δ⌉ = {lags} lags cover {covered:.4g}."
    return None


def negative_baseline_note(baseline, names) -> str | None:
    """Flag negative estimated baseline rates (a rate must be > 0), or ``None`` when all are positive."""
    baseline = np.asarray(baseline, float)
    bad = [f"η of {name} = {value:.3g}" for name, value in zip(names, baseline) if value < 0]
    if not bad:
        return None
    return (f"Negative baseline rate ({', '.join(bad)}): a rate of events cannot be below zero. Least squares "
            "does not enforce positivity, so noise (or too little data) pushed it below zero; read it as "
            "“about zero”, and do not use this estimate to simulate or predict without fixing that.")


def loss_note(method: str) -> str | None:
    """Why there is no loss curve for a one-shot method (a family that is not ``iterative``), or ``None`` for an
    iterative one."""
    family = get_family(method)
    if family.iterative:
        return None
    iterative = ", ".join(f.label for f in FAMILIES.values() if f.iterative)
    return (f"No loss curve: {family.label} runs in one step ({family.summary}), so there are no iterations to "
            f"plot. The loss curve is shown for the iterative methods ({iterative}).")
