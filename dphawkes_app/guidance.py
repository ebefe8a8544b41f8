"""Plain-words guidance shown next to a fit: defaults scaled to the data, and what a result means.

Pure functions (no Streamlit): the app and the CLI show their sentences as they are.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from dphawkes_core.data.io import Events
from dphawkes_core.estimators import FAMILIES, get_family
from dphawkes_core.estimators.family import Statistics
from dphawkes_core.privacy.time_scale import time_scale_from_count
from dphawkes_core.statistics.binning import lags_from_support

PRIVATE_SCALE_NOTE = (
    "Δ and s are not proposed from these private data: a value read from them would be as private as they are, "
    "and confirming it would not make it public. Set Δ and s from what you know of the process (e.g. the "
    "resolution of the times and how long an event's effect lasts), or let the release choose them privately "
    "(\"choose Δ and s privately\" in the sidebar): a small share of ε buys a noisy count of the events, inside the "
    "recorded release.")


def count_noun(count: int, noun: str, plural: str | None = None) -> str:
    """``"1 event"``, ``"2 events"``, ``"1,500 events"`` (thousands separated)."""
    return f"{count:,} {noun if count == 1 else (plural or noun + 's')}"


@dataclass(frozen=True)
class TimeScale:
    """Defaults for Δ and s from the data's mean inter-event time (public data only: :data:`PRIVATE_SCALE_NOTE`).

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
    """Suggested Δ and s for ``events`` (see :class:`TimeScale`): the core's rule
    (:func:`~dphawkes_core.privacy.time_scale.time_scale_from_count`) on the exact count, so only for data that are
    not private."""
    scale = time_scale_from_count(events.end_time, events.n_events)
    return TimeScale(scale.mean_gap, scale.bin_size, scale.support, events.time_unit)


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


#: What a family reads from the data, by its statistics (the method help's first sentence).
READS = {Statistics.BINNED: "the counts of events in bins of width Δ", Statistics.EVENTS: "the exact event times",
         Statistics.PAIRS: "the exact event times"}


def method_help(family) -> str:
    """The help shown under the method choice: what ``family`` reads and how it fits, in words that explain it
    without its own name."""
    return f"Fits {READS[family.inputs.statistics]}. {family.summary[:1].upper()}{family.summary[1:]}."


def methods_help(families) -> str:
    """The method choice's help: which of ``families`` read which data (the methods named by their labels only)."""
    by_reading: dict[str, list[str]] = {}
    for family in families:
        by_reading.setdefault(READS[family.inputs.statistics], []).append(family.label)
    return "What each method reads — " + "; ".join(f"{reads}: {', '.join(labels)}"
                                                   for reads, labels in by_reading.items()) + "."


def loss_note(method: str) -> str | None:
    """Why there is no loss curve for a one-shot method (a family that is not ``iterative``), or ``None`` for an
    iterative one."""
    family = get_family(method)
    if family.cost.iterative:
        return None
    iterative = ", ".join(f.label for f in FAMILIES.values() if f.cost.iterative)
    return (f"No loss curve: {family.label} runs in one step ({family.summary}), so there are no iterations to "
            f"plot. The loss curve is shown for the iterative methods ({iterative}).")


from dphawkes_experiments.compare import ZERO_LIKE  # noqa: E402 (one threshold for every sentence about zero)


def no_better_than_zero(error: float) -> bool:
    """The plain relative error (the all-zero estimate scores 1) says the estimate is no better than zero."""
    return bool(np.isfinite(error) and error >= ZERO_LIKE)


def worst_case_gradient(family) -> bool:
    """The family adds noise to gradients of the paper's quadratic loss under a theorem of the paper (DP-PGD,
    DP-CG): its formal sensitivity is the worst case over counts at the cap, ∝ C³p²/N (docs/privacy.md)."""
    return getattr(family, "theorem", None) is not None


def zero_reason(family) -> str:
    """Why a formal estimate of ``family`` can sit at zero, in a few words (for a table cell)."""
    if worst_case_gradient(family):
        return "its formal noise covers the worst case, every count at C: sensitivity ∝ C³p²/N"
    return "the noise drowns the signal at this ε and amount of data"


def zero_note(result, config, data_info, error: float, scale: float) -> str:
    """Why this private estimate is no better than outputting zero.

    Parameters
    ----------
    result : FitResult
        The private estimate (with its privacy report).
    config : FitConfig
    data_info : mapping
        ``n_bins`` (N) and ``count_cap`` (C).
    error : float
        Its plain relative error (against the truth or the non-private fit).
    scale : float
        The typical size of one entry of the reference (RMS of the truth or of the non-private fit), for
        comparing with the noise.
    """
    family = config.family
    report = result.privacy
    sigma = math.sqrt(report.sigma2) if report is not None and report.sigma2 is not None else math.nan
    head = (f"**No better than outputting zero.** The {family.label} estimate has error {error:.3f}; the all-zero "
            "estimate, which reveals nothing, has 1. ")
    if worst_case_gradient(family) and report is not None and report.calibration == "formal":
        n_bins = data_info.get("n_bins")
        cap = data_info.get("count_cap")
        others = ", ".join(f.label for f in FAMILIES.values()
                             if f.privacy.private and not f.cost.iterative and f.formal_only)
        return (head + "Why: the formal calibration bounds how far one event can move a noisy gradient in the worst "
                "case — every bin count at the cap C — and for the paper's quadratic loss that bound grows as "
                f"C³p²/N (`docs/privacy.md`): here S = {report.sensitivity:.3g} per step (C = {cap}, p = "
                f"{config.lags}, N = {n_bins:,} bins), over K = {report.iters} noisy steps, so at ε = "
                f"{report.epsilon:.3g} the noise is σ = {sigma:.3g} per gradient entry against entries of about "
                f"{scale:.2g} in the estimate. The iterates stay near their start U = 0. The guarantee is real, the "
                f"estimate is useless: {others or 'a one-release method'} reaches the same formal ε with one noisy "
                "release of the statistics and far less noise.")
    return (head + f"The noise (σ = {sigma:.3g} per noisy entry) drowns the signal at this ε with this much data: "
            "raise ε, use more data, or fewer lags p.")


def post_processing_note(private_label: str, private_error: float, noiseless_error: float, reference_label: str,
                         reference_error: float) -> str | None:
    """Why a private estimate can beat the plain non-private one: its post-processing (non-negativity,
    smoothing, a constraint) is not applied to the non-private fit. ``None`` when it does not beat it."""
    if not (np.isfinite(private_error) and np.isfinite(reference_error) and private_error < reference_error):
        return None
    return (f"**Why is the private {private_label} ({private_error:.3g}) better than the non-private "
            f"{reference_label} ({reference_error:.3g})?** Its post-processing — non-negative kernels and baselines, "
            f"smoothing across lags, a constraint — is free of privacy cost, and the plain {reference_label} does not "
            f"get it. With the same post-processing and no noise (σ² = 0) the error is {noiseless_error:.3g}: "
            "that is the fair non-private comparison, and the gap to it is what the noise costs.")
