"""The verdict's rule: better / worse beyond about two standard errors of 0, cannot tell within them or without a
standard error, worse with the count when the fit says test events could not happen — the words ``score`` and the
app show."""

import math

import pytest

from dphawkes_experiments.verdict import BETTER, CANNOT_TELL, WORSE, heldout_verdict


@pytest.mark.parametrize("gain, se, word", [
    (0.21, 0.1, BETTER), (0.19, 0.1, CANNOT_TELL), (0.15, 0.1, CANNOT_TELL), (0.0, 0.1, CANNOT_TELL),
    (-0.15, 0.1, CANNOT_TELL), (-0.19, 0.1, CANNOT_TELL), (-0.21, 0.1, WORSE), (0.036, 0.085, CANNOT_TELL),
    (0.345, 0.105, BETTER), (0.2, math.nan, CANNOT_TELL), (-3.0, math.nan, CANNOT_TELL), (1e-4, 0.0, BETTER),
])
def test_two_standard_errors_decide(gain, se, word):
    """Japan's private exp fit at +0.036 ± 0.085 (the issue's example) cannot be told from a constant rate; EM's
    +0.345 ± 0.105 is better; 1.5 standard errors (a planted one-SE rule would say better) cannot tell."""
    verdict = heldout_verdict(gain, se, 1376, 0)
    assert verdict.word == word
    assert verdict.sentence.startswith({BETTER: "better than a constant rate", WORSE: "worse than a constant rate",
                                        CANNOT_TELL: "cannot tell"}[word])
    assert f"{gain:+.3f}" in verdict.sentence
    assert ("no standard error" in verdict.sentence) == math.isnan(se)


def test_a_fit_that_says_events_could_not_happen_is_worse_with_their_count():
    verdict = heldout_verdict(-math.inf, math.nan, 1376, 118)
    assert verdict.word == WORSE
    assert "the fit says 118 of the 1,376 test events could not happen" in verdict.sentence
    assert "−∞" in verdict.sentence and "inf" not in verdict.sentence.replace("−∞", "")


def test_a_rectified_fit_keeps_its_verdict_and_says_where_it_was_floored():
    verdict = heldout_verdict(0.3, 0.1, 900, 12, rectified=True, floor_share=0.05)
    assert verdict.word == BETTER
    assert verdict.sentence.endswith("the fit says 12 of the 900 test events could not happen (its intensity is ≤ 0 "
                                     "there), and it was read as at least 5 % of the training part's mean rate there")
    assert verdict.to_dict() == {"verdict": BETTER, "verdict_text": verdict.sentence}
