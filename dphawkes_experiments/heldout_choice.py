"""Choosing the width w (Δ), the support s and, for the exponential family, the decays by held-out likelihood —
without privacy.

The data given are the training window only (the caller has set its test block aside, untouched). They are cut
once more at a validation start V: every candidate of a grid is fitted on ``[0, V)`` and scored on ``[V, T)`` by the
held-out log-likelihood gain over Poisson (:func:`~dphawkes_experiments.prediction.score_heldout`, nats per
validation event, the intensity conditioning on the whole history); the candidate with the largest gain wins (a
score of −∞, an intensity ≤ 0 at a validation event, never wins). The report keeps every candidate's score, so the
choice can be read next to what it was compared with.

The choice reads the data: it is not private. On private data it is the analyst's diagnostic; the private choice
of Δ and s is :mod:`dphawkes_core.privacy.time_scale`.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

from dphawkes_core.data.io import Events
from dphawkes_core.errors import ConfigError
from dphawkes_core.estimators import FitConfig, fit
from dphawkes_core.evaluation.lag_average import fit_steps
from dphawkes_core.statistics.binning import lags_from_support
from dphawkes_experiments.prediction import heldout_split, score_heldout

NOTE = "chosen by reading the validation events: not a private choice"


@dataclass(frozen=True)
class Candidate:
    """One setting of the grid and its validation score.

    Attributes
    ----------
    bin_size, support : float
        w (Δ) and s.
    lags : int
        ``p = ⌈s/w⌉``.
    decays : tuple of float or None
        The exponential family's decays (``None`` for another family).
    gain : float
        Validation gain over Poisson, nats per validation event (``-inf``: an intensity ≤ 0 at a validation event).
    standard_error : float
        Its block-bootstrap standard error.
    nonpositive_events : int
        Validation events at which the fitted intensity is ≤ 0.
    """

    bin_size: float
    support: float
    lags: int
    decays: tuple | None
    gain: float
    standard_error: float
    nonpositive_events: int

    def to_dict(self) -> dict:
        """Plain dict for JSON (``-inf`` as text)."""
        return {"bin_size": self.bin_size, "support": self.support, "lags": self.lags,
                "decays": None if self.decays is None else list(self.decays),
                "gain_over_poisson": self.gain if math.isfinite(self.gain) else str(self.gain),
                "gain_standard_error": None if math.isnan(self.standard_error) else self.standard_error,
                "nonpositive_intensity_events": self.nonpositive_events}


@dataclass(frozen=True)
class SelectionReport:
    """The grid's scores and the winner.

    Attributes
    ----------
    candidates : tuple of Candidate
        Every setting compared, in grid order.
    best : Candidate or None
        The largest finite gain (``None`` when every candidate scored −∞).
    validation_start : float
        V, relative to the window's start.
    n_fit_events, n_validation_events : int
        Events before V (fitted) and from V on (scored).
    """

    candidates: tuple
    best: Candidate | None
    validation_start: float
    n_fit_events: int
    n_validation_events: int

    def config(self, base: FitConfig) -> FitConfig:
        """``base`` at the chosen setting."""
        if self.best is None:
            raise ConfigError("every candidate scored −∞ on the validation block (an intensity ≤ 0 at a validation "
                              "event): widen the grid")
        return _candidate_config(base, self.best.bin_size, self.best.support, self.best.decays)

    def to_dict(self) -> dict:
        """Plain dict for JSON, with the note that the choice is not private."""
        return {"best": None if self.best is None else self.best.to_dict(),
                "candidates": [c.to_dict() for c in self.candidates], "validation_start": self.validation_start,
                "n_fit_events": self.n_fit_events, "n_validation_events": self.n_validation_events, "note": NOTE}


def _candidate_config(base: FitConfig, width: float, support: float, decays) -> FitConfig:
    changes = {"bin_size": float(width), "lags": lags_from_support(support, width)}
    if decays is not None:
        changes["decays"] = tuple(decays)
    return base.with_changes(**changes)


def select_by_heldout(events: Events, base: FitConfig, widths, supports, validation_start: float,
                      decays_grid=None) -> SelectionReport:
    """Fit ``base`` at every (w, s[, decays]) of the grid on ``[0, V)`` and score it on ``[V, T)``.

    Parameters
    ----------
    events : Events
        One sequence: the training window (the test block already set aside).
    base : FitConfig
        The fit to tune (its own Δ, p and decays are replaced by the grid's).
    widths, supports : iterable of float
        The grid of w and s (every pair is tried).
    validation_start : float
        V, relative to the window's start, inside it.
    decays_grid : iterable of tuple of float, optional
        Sets of decays to try (the exponential family only).

    Returns
    -------
    SelectionReport
    """
    if events.n_sequences != 1:
        raise ConfigError("selection by held-out likelihood cuts one sequence at a validation start")
    if decays_grid is not None and "decays" not in base.to_dict():
        raise ConfigError(f"{base.family.label} has no decays to choose")
    split = heldout_split(events, float(validation_start))
    candidates = []
    for width, support, decays in itertools.product(widths, supports, decays_grid or [None]):
        config = _candidate_config(base, width, support, decays)
        result, _ = fit(split.train, config)
        score = score_heldout(fit_steps(result), result.baseline, split)
        candidates.append(Candidate(float(width), float(support), config.lags,
                                    None if decays is None else tuple(float(b) for b in decays),
                                    score.gain_over_poisson, score.gain_standard_error,
                                    score.nonpositive_intensity_events))
    finite = [c for c in candidates if math.isfinite(c.gain)]
    best = max(finite, key=lambda c: c.gain) if finite else None
    n_validation = candidates and score.n_test_events
    return SelectionReport(tuple(candidates), best, float(validation_start), split.train.n_events,
                           int(n_validation or 0))
