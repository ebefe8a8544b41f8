"""What a fit with these settings would be on private data, in one sentence shared by the CLI and the app, and
reasons rendered per surface (the flag in the command line, the Data page in the app)."""

import itertools

import pytest

from dphawkes_core.errors import ConfigError
from dphawkes_core.privacy.formal_words import Reason, render_reasons, would_be_sentence
from dphawkes_core.privacy.report import DATA_SETTINGS, formal_status

DERIVED = list(itertools.chain.from_iterable(itertools.combinations(sorted(DATA_SETTINGS), k) for k in (0, 1, 2)))


def test_a_release_and_settings_that_lack_only_the_release():
    released = formal_status("formal", seed=None, window_stated=True, released=True)
    assert would_be_sentence(released) == "a formal (ε, δ)-DP release"
    unreleased = formal_status("formal", seed=None, window_stated=True)
    assert unreleased.settings_formal and not unreleased.formal
    sentence = would_be_sentence(unreleased, "app")
    assert "on private data" in sentence and "would be a formal (ε, δ)-DP release" in sentence
    assert "not released" not in sentence  # the reason it is no release here is the sentence's subject


@pytest.mark.parametrize("derived", DERIVED)
@pytest.mark.parametrize("calibration", ["formal", "paper", None])
@pytest.mark.parametrize("seed", [None, 3])
def test_settings_that_would_not_be_formal_say_why_in_each_surface_words(derived, calibration, seed):
    status = formal_status(calibration, seed=seed, window_stated=True, data_derived=derived)
    app, cli = would_be_sentence(status, "app"), would_be_sentence(status, "cli")
    if status.settings_formal:
        assert "would be a formal" in app and app == cli
        return
    assert "would not be one on private data either" in app
    for reason in status.reasons:
        if not reason.startswith("not released"):
            assert Reason.parse(reason).render("app") in app and Reason.parse(reason).render("cli") in cli
    assert " --" not in app  # the app never advises a flag
    for key, flag in (("d", "--dimensions"), ("S", "--sequences")):
        if key in derived:
            assert "declare it on the Data page" in app and f"declare it: {flag}" in cli

def test_a_reason_with_a_declaration_renders_per_surface():
    reason = formal_status("formal", seed=None, window_stated=True, data_derived=("d",)).reasons[-1]
    assert reason == "the number of dimensions d was taken from the data"  # the core's words carry no advice
    parsed = Reason.parse(reason)
    assert parsed == Reason(reason, "dimensions")
    assert parsed.render("cli") == reason + " (declare it: --dimensions)"  # the CLI names its flag
    assert parsed.render("app") == reason + " (declare it on the Data page)"
    sequences = Reason.parse(formal_status("formal", seed=None, window_stated=True, data_derived=("S",)).reasons[-1])
    assert sequences.declare == "sequences" and sequences.render("cli").endswith("(declare it: --sequences)")
    assert render_reasons(["plain words"], "app") == ("plain words",)
    with pytest.raises(ConfigError):
        parsed.render("email")


def test_a_reason_stored_with_the_cli_advice_in_its_words_renders_per_surface():
    stored = "the number of dimensions d (declare it: --dimensions) was taken from the data"  # an older ledger's
    parsed = Reason.parse(stored)
    assert parsed.declare == "dimensions" and "--" not in parsed.text
    assert "--" not in parsed.render("app") and parsed.render("cli").endswith("(declare it: --dimensions)")


@pytest.mark.parametrize("derived", DERIVED)
def test_no_core_reason_carries_a_flag_and_only_a_declaration_brings_advice(derived):
    status = formal_status("paper", seed=1, window_stated=False, data_derived=derived, noise=False)
    for reason in status.reasons:
        assert "--" not in reason
        parsed = Reason.parse(reason)
        assert (parsed.declare is not None) == reason.startswith(("the number of dimensions", "the set of sequences"))
        assert "--" not in parsed.render("app")
        assert ("--" in parsed.render("cli")) == (parsed.declare is not None)
