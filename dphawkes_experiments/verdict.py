"""The held-out score in words: does the fit predict better than the constant-rate model?

One rule, used by ``dphawkes score`` (its JSON ``verdict`` and a line on stderr), ``fit --holdout-start`` and the
app's held-out table (:func:`heldout_verdict`):

* **worse** when the fit's intensity is ≤ 0 at a test event and the score could not read it otherwise (the fit says
  those events could not happen: its log-likelihood is −∞), with how many;
* **better** when the gain over the constant-rate (Poisson) model is more than :data:`VERDICT_Z` standard errors
  above 0, **worse** when more than that below;
* **cannot tell** when the gain is within about two standard errors of 0, or has no standard error (a test part of
  one block).

A fit read as its rectified intensity (:mod:`~dphawkes_experiments.rectified`) keeps its verdict from the rectified
gain, and the sentence says at how many test events its own intensity is ≤ 0 and how it was read there.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

VERDICT_Z = 2.0  # "about two standard errors"
BETTER, WORSE, CANNOT_TELL = "better", "worse", "cannot tell"


@dataclass(frozen=True)
class Verdict:
    """The answer (``better``, ``worse`` or ``cannot tell``) and one sentence that says why."""

    word: str
    sentence: str

    def to_dict(self) -> dict:
        """``{"verdict": word, "verdict_text": sentence}``."""
        return {"verdict": self.word, "verdict_text": self.sentence}


def heldout_verdict(gain: float, standard_error: float, n_test: int, nonpositive: int, rectified: bool = False,
                    floor_share: float | None = None) -> Verdict:
    """The verdict of a held-out score (:class:`~dphawkes_experiments.prediction.HeldOutScore`'s fields).

    Parameters
    ----------
    gain, standard_error : float
        The gain over the constant-rate model (nats per test event; −∞ when the intensity is ≤ 0 at a test event)
        and its standard error (NaN when there is none).
    n_test : int
        Test events scored.
    nonpositive : int
        Test events where the fit's own intensity is ≤ 0.
    rectified : bool
        The fit was read as ``max(λ, floor)`` (then the gain is finite).
    floor_share : float, optional
        That floor as a share of the training part's mean rate (for the sentence).
    """
    could_not = (f"the fit says {nonpositive:,} of the {n_test:,} test events could not happen (its intensity is "
                 "≤ 0 there)")
    if not math.isfinite(gain) and gain < 0:
        return Verdict(WORSE, f"worse than a constant rate: {could_not}, so its held-out log-likelihood is −∞")
    about = f"{gain:+.3f}" + (f" ± {standard_error:.3f}" if math.isfinite(standard_error) else "") + \
        " nats per test event"
    if not math.isfinite(standard_error):
        word, why = CANNOT_TELL, (f"cannot tell whether it predicts better than a constant rate: {about}, with no "
                                  "standard error (the test part is one block)")
    elif gain > VERDICT_Z * standard_error:
        word, why = BETTER, f"better than a constant rate: {about} (more than two standard errors above 0)"
    elif gain < -VERDICT_Z * standard_error:
        word, why = WORSE, f"worse than a constant rate: {about} (more than two standard errors below 0)"
    else:
        word, why = CANNOT_TELL, (f"cannot tell from a constant rate: {about}, within two standard errors of 0")
    if rectified and nonpositive:
        share = f"{100 * floor_share:g} % of the training part's mean rate" if floor_share is not None else "a floor"
        why += f"; {could_not}, and it was read as at least {share} there"
    return Verdict(word, why)
