"""The reasons a fit is not formal, as the app shows them: the core's words with the app's advice (the Data page),
never a command-line flag; the CLI's rendering of the same reasons names the flag."""

from __future__ import annotations

import itertools

import pytest
from test_words_on_screen import FLAG

from dphawkes_core.privacy.formal_words import Reason, would_be_sentence
from dphawkes_core.privacy.report import DATA_SETTINGS, formal_status
from dphawkes_experiments.compare import MethodRow

SETTINGS = list(itertools.chain.from_iterable(itertools.combinations(sorted(DATA_SETTINGS), k) for k in (1, 2)))


@pytest.mark.parametrize("derived", SETTINGS)
@pytest.mark.parametrize("seed", [None, 7])
def test_the_app_shows_every_reason_without_a_flag_and_with_its_own_advice(derived, seed):
    status = formal_status("formal", seed=seed, window_stated=True, data_derived=derived)
    row = MethodRow("ssp", 0.3, 1.0, status)
    shown = [row.formal_column(private_data) for private_data in (True, False)]
    shown += [would_be_sentence(status, "app"), *status.reasons]  # the Estimate page's warning lists the reasons
    assert not [text for text in shown if FLAG.search(text)]
    declarable = {"d", "S"} & set(derived)
    assert ("declare it on the Data page" in shown[0]) == bool(declarable)
    cli = would_be_sentence(status, "cli")
    assert {match.group(0) for match in FLAG.finditer(cli)} == {
        {"d": "--dimensions", "S": "--sequences"}[key] for key in declarable}
    assert all(Reason.parse(reason).render("app").startswith(reason) for reason in status.reasons)
