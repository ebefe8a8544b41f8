"""The method help explains every registered method without naming it: not its label, not its acronym, not the
words the acronym stands for, not the method named in its label's brackets."""

from __future__ import annotations

import re

import pytest

from dphawkes_app.guidance import method_help, methods_help
from dphawkes_core.estimators import FAMILIES


def acronyms(label: str) -> list[str]:
    """The acronyms in a label: ``DP-PGD`` → ``DP-PGD``, ``PGD``; ``CLS`` → ``CLS``."""
    found = re.findall(r"\b(?:DP-)?[A-Z]{2,}\b", label)
    return found + [a.removeprefix("DP-") for a in found if a.startswith("DP-")]


def phrases(label: str) -> list[str]:
    """How a descriptive label names its method, in brackets after what it reads: ``exact event times (maximum
    likelihood)`` → ``maximum likelihood``."""
    return [p.lower() for p in re.findall(r"\(([^)]+)\)", label)]


def expands(text: str, acronym: str) -> bool:
    """Whether consecutive words of ``text`` have the initials of ``acronym`` (``projected gradient descent``)."""
    initials = [w[0].lower() for w in re.findall(r"[A-Za-z][\w’']*", text)]
    letters = list(acronym.lower())
    return any(initials[k:k + len(letters)] == letters for k in range(len(initials)))


def names_itself(label: str, text: str) -> list[str]:
    """Every way ``text`` names the method ``label``."""
    found = [label] if label.lower() in text.lower() else []
    found += [a for a in acronyms(label) if re.search(rf"(?<![\w-]){re.escape(a)}(?![\w-])", text)]
    found += [f"{a} spelled out" for a in acronyms(label) if not a.startswith("DP-") and expands(text, a)]
    return found + [p for p in phrases(label) if p in text.lower()]


def test_the_check_finds_a_help_that_names_its_method():
    assert names_itself("DP-PGD", "DP-PGD: projected gradient descent on the ball")
    assert names_itself("DP-PGD", "K noisy projected gradient descent steps") == ["PGD spelled out"]
    assert names_itself("CLS", "non-private conditional least squares") == ["CLS spelled out"]
    assert names_itself("exact event times (maximum likelihood)", "maximum likelihood on the times")
    assert not names_itself("DP-CG", "K noisy Frank–Wolfe steps towards the ball")


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_the_help_of_every_method_explains_it_without_its_name(name):
    family = FAMILIES[name]
    text = method_help(family)
    assert not names_itself(family.label, text), text
    assert text.startswith("Fits the ") and text.endswith(".") and len(text) > 60


def test_the_method_choice_help_names_each_method_once_beside_what_it_reads():
    text = methods_help(FAMILIES.values())
    parts = dict(part.split(": ") for part in text.removeprefix("What each method reads — ").removesuffix(".")
                 .split("; "))
    assert list(parts) == ["the counts of events in bins of width Δ", "the exact event times"]
    named = [label for labels in parts.values() for label in labels.split(", ")]
    assert sorted(named) == sorted(f.label for f in FAMILIES.values())
