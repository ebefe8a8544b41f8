"""AppTests of the sequence unit on the Estimate page (issue 21, point 4): it works from every preset (a method
without the unit or an automatic C is switched to what the unit needs, saying so), and the unit, M and G are in
the link and in the "you changed" note."""

import pytest
from app_tools import open_estimate, texts
from conftest import no_problems

from dphawkes_app.presets import presets
from dphawkes_core.estimators import FAMILIES, get_family, method_labels

pytestmark = pytest.mark.usefixtures("clear_streamlit_caches")
BY_LABEL = {label: name for name, label in method_labels().items()}


@pytest.mark.parametrize("key", list(presets()))
def test_the_sequence_unit_from_every_preset(key):
    at = open_estimate(preset=key)
    no_problems(at)
    was_auto = any(c.key == "Cauto" and c.value for c in at.checkbox)
    had_unit = "sequence" in get_family(BY_LABEL[at.selectbox(key="method").value]).units
    at.radio(key="unit").set_value("sequence").run()
    no_problems(at)  # no dead end: no error replaces the page
    family = get_family(BY_LABEL[at.selectbox(key="method").value])
    assert "sequence" in family.units
    assert not any(c.key == "Cauto" and c.value for c in at.checkbox)  # no automatic C with the sequence unit
    note = texts(at.info)
    if was_auto:
        assert "C is now the public C" in note
    if not had_unit:
        assert "the method was switched to" in note
    assert at.get("plotly_chart")  # the estimate under the sequence unit (public simulated data: live)
    assert "privacy unit" in texts(at.caption)  # "You changed … the privacy unit …"


def test_the_link_carries_the_unit_M_and_G():
    sequence_family = next(f for f in FAMILIES.values() if f.private and "sequence" in f.units)
    at = open_estimate(preset="works", unit="sequence", seqM="30", seqG="2.5", method=sequence_family.label)
    no_problems(at)
    assert at.radio(key="unit").value == "sequence"
    assert at.number_input(key="seqM").value == 30 and at.number_input(key="seqG").value == 2.5
    changed = next(c.value for c in at.caption if c.value.startswith("You changed"))
    assert "the privacy unit" in changed and "M (events per sequence)" in changed and "G (clip per sequence)" in changed
    assert not any(note.startswith("Ignored") for note in texts(at.info).split(" | "))


def test_a_link_with_the_sequence_unit_and_an_automatic_C_is_switched_not_refused():
    at = open_estimate(preset="works", unit="sequence", Cauto="true")
    no_problems(at)
    assert not any(c.key == "Cauto" and c.value for c in at.checkbox)
    assert "C is now the public C" in texts(at.info)
