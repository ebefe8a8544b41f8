"""The words of the Estimate, Privacy–utility, Privacy audit and Data pages that a reader at 1100–1280 px tripped
over: counts said correctly, no μ-GDP jargon outside "details", the registry's method labels and readable column
names, one ε for one release, and the person question worded for the data it is asked on."""

from __future__ import annotations

import re

import pytest
from app_tools import (
    ledger_of,
    open_estimate,
    planned_epsilon,
    release_button,
    texts,
    use_formal_method,
)
from conftest import no_problems
from test_messages_true_on_my_pages import run_broken_audit
from test_pages_sweep import multi_sequence_dataset, page, small_grid
from test_person_declaration import SEQUENCE_FAMILY
from test_sequence_unit_page import several_sequences

from dphawkes_core.estimators import FAMILIES

JARGON = re.compile(r"GDP|zCDP|μ =|ρ =")


def budget_box(at) -> str:
    return next(e.value for e in at.info if "Privacy budget of this data set" in e.value)


def test_the_budget_box_counts_its_releases_in_words(data):
    at = use_formal_method(open_estimate(data))
    assert "no release yet" in budget_box(at)
    release_button(at).click().run()
    no_problems(at)
    assert len(ledger_of(data).metered) == 1
    assert "in one release" in budget_box(at) and "in one release" in texts(at.success)
    at.number_input(key="eps").set_value(0.5).run()
    release_button(at).click().run()
    assert "in 2 releases" in budget_box(at) and "in 2 releases" in texts(at.success)
    shown = texts(at.info) + texts(at.success) + texts(at.caption) + texts(at.markdown)
    assert "release(s)" not in shown and not re.search(r"\b0 release", shown)


def all_words(at) -> str:
    return " | ".join(texts(at.get(kind)) for kind in ("markdown", "caption", "info", "success", "warning"))


def test_the_guarantee_in_the_other_unit_is_said_without_gdp_until_details_are_asked(data):
    at = use_formal_method(open_estimate(data))
    release_button(at).click().run()
    no_problems(at)
    words = all_words(at)
    assert "Per person with k = 50 events" in words and "Per event: ε = " in words
    assert not JARGON.search(words), JARGON.search(words)
    at.toggle(key="unit_figures").set_value(True).run()
    figures = all_words(at)
    assert "GDP): ε = " in figures and "(μ = " in figures  # the figures, on request


def test_the_audit_says_its_gaussian_test_in_words_and_keeps_mu_behind_details():
    at = run_broken_audit()
    words = all_words(at)
    assert "which uses that the noise is Gaussian, gives ε ≥" in words
    assert not JARGON.search(words) and "μ ≥" not in words
    at.toggle(key="audit_mu").set_value(True).run()
    assert "the formal claim is μ = √K·S/σ = " in texts(at.caption)


def test_a_capped_event_level_release_says_the_same_epsilon_on_the_button_and_after_the_click():
    """Under a cap M at the event unit the ledger charges one raw event as the two kept events it can move, and one
    person as the 2M kept events of a sequence: the plan and the "Released." message say the event charge beside
    the release's own ε; the button says the per-person charge the plan states (issue 43), which is what the
    per-sequence view is then charged."""
    data = several_sequences()
    at = use_formal_method(open_estimate(data), SEQUENCE_FAMILY)
    at.number_input(key="eps").set_value(0.05).run()
    at.number_input(key="evM").set_value(10).run()
    button = planned_epsilon(at)
    assert "its own ε = 0.05 is per kept event" in texts(at.info)
    release_button(at).click().run()
    no_problems(at)
    charged = ledger_of(data, "event").spent()
    message = texts(at.success)
    assert f"{button:.3g}" == f"{ledger_of(data, 'sequence').spent():.3g}"  # per person: the 2M group
    assert f"it spent ε = {charged:.3g} — its own ε = 0.05 is per kept event" in message
    assert charged > 0.05 * 1.5  # the group of two, not the own ε


@pytest.mark.slow
def test_the_privacy_utility_table_shows_the_registry_labels_and_readable_columns():
    at = page("pages/3_Privacy_utility.py").run()
    small_grid(at).run()
    at.button(key="pu_run").click().run()
    no_problems(at)
    table = at.dataframe[0].value
    assert set(table["method"]) == {FAMILIES["cls"].label, FAMILIES["pgd"].label}
    raw = [c for c in table.columns if "_" in c or c in ("sigma2", "epsilon", "level", "lags", "seed")]
    assert not raw and "noise variance σ²" in table.columns and "kernel error" in table.columns
    words = all_words(at)
    assert not re.search(r"\bcls\b|sigma2|n_events|formal_settings|run\(s\)", words), words


def test_the_person_question_on_simulated_data_is_a_choice_for_the_lesson_and_on_private_data_a_declaration():
    """Asked on both (a teacher may want the per-person cost on a simulation), worded for each: on simulated data
    nothing is spent and nobody's events are in the rows."""
    simulated = open_estimate(multi_sequence_dataset())
    no_problems(simulated)
    question = simulated.radio(key="person_answer")
    assert question.label == "These simulated data hold 12 sequences. Treat one sequence as one person?"
    assert "nothing is spent on public data" in question.help
    question.set_value("yes — one sequence is one person").run()
    assert simulated.radio(key="unit").value == "sequence"  # the lesson starts from the sequence unit
    private = open_estimate(several_sequences())
    question = private.radio(key="person_answer")
    assert question.label == "These data hold 3 sequences. Is one sequence one person?"
    assert "a public declaration about the data set" in question.help
