"""AppTests of the sequence unit on the Estimate page: it works from every preset (a method
without the unit or an automatic C is switched to what the unit needs, saying so), and the unit, M and G are in
the link and in the "you changed" note."""

import io

import pandas as pd
import pytest
from app_tools import ledger_of, open_estimate, release_button, texts, use_formal_method
from conftest import no_problems

from dphawkes_app.presets import presets
from dphawkes_core.data.datasets import Dataset
from dphawkes_core.data.domain import Domain
from dphawkes_core.data.io import load_csv
from dphawkes_core.data.kernels import get_scenario
from dphawkes_core.data.simulate import simulate
from dphawkes_core.estimators import FAMILIES, get_family, method_labels
from dphawkes_core.privacy.accounting import compose_epsilon

BY_LABEL = {label: name for name, label in method_labels().items()}


@pytest.mark.parametrize("key", list(presets()))
def test_the_sequence_unit_from_every_preset(key):
    at = open_estimate(preset=key)
    no_problems(at)
    was_auto = any(c.key == "Cauto" and c.value for c in at.checkbox)
    had_unit = "sequence" in get_family(BY_LABEL[at.selectbox(key="method").value]).privacy.units
    at.radio(key="unit").set_value("sequence").run()
    no_problems(at)  # no dead end: no error replaces the page
    family = get_family(BY_LABEL[at.selectbox(key="method").value])
    assert "sequence" in family.privacy.units
    assert not any(c.key == "Cauto" and c.value for c in at.checkbox)  # no automatic C with the sequence unit
    note = texts(at.info)
    if was_auto:
        assert "C is now the public C" in note
    if not had_unit:
        assert "the method was switched to" in note
    assert at.get("plotly_chart")  # the estimate under the sequence unit (public simulated data: live)
    assert "privacy unit" in texts(at.caption)  # "You changed … the privacy unit …"


def test_the_link_carries_the_unit_M_and_G():
    sequence_family = next(f for f in FAMILIES.values() if f.privacy.private and "sequence" in f.privacy.units)
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


def several_sequences(seed: int = 0) -> Dataset:
    """Uploaded (private) data of three simulated sequences, their dimensions, keys and window declared."""
    frames = [simulate(get_scenario("paper-2d"), end_time=400.0, seed=seed + s).to_frame().assign(sequence=s)
              for s in range(3)]
    content = pd.concat(frames)[["sequence", "time", "dimension"]].to_csv(index=False).encode()
    events = load_csv(io.BytesIO(content), end_time=400.0, domain=Domain(dimensions=("0", "1"),
                                                                         sequences=("0", "1", "2")))
    return Dataset(events=events, label="shifts.csv", source="upload", params={"file": "shifts.csv"})


def test_both_units_charge_one_budget_and_the_sequence_view_closes_after_an_event_release():
    """One budget across units, in the app: an event-level release (it says it protects events only) closes the
    sequence view, which then refuses a new release before anything is drawn; a sequence-level release on other rows
    is a per-person promise: an event-level release without a cap M after it is refused before any draw (issue 43,
    item 1 — main released it and closed the per-person view), and both are composed in the event view."""
    family = next(f for f in FAMILIES.values() if f.privacy.private and "sequence" in f.privacy.units)
    data = several_sequences()
    at = use_formal_method(open_estimate(data), family)
    release_button(at).click().run()
    no_problems(at)
    assert "protects single events only" in texts(at.success)
    at.radio(key="unit").set_value("sequence").run()
    at.number_input(key="seqM").set_value(301).run()
    assert release_button(at).disabled
    assert "sequence-level budget of this data set is closed" in texts(at.warning)
    sequence_view = ledger_of(data, "sequence")
    assert sequence_view.closed and sequence_view.spent() == float("inf") and sequence_view.remaining() == 0

    data = several_sequences(seed=3)
    at = use_formal_method(open_estimate(data), family)
    at.radio(key="unit").set_value("sequence").run()
    at.number_input(key="seqM").set_value(300).run()
    release_button(at).click().run()
    no_problems(at)
    at.radio(key="unit").set_value("event").run()
    use_formal_method(at, family)
    assert release_button(at).disabled
    assert "a sequence-level release was made on these rows" in texts(at.warning)
    event_view = ledger_of(data)
    assert [e.unit for e in event_view.metered] == ["sequence"] and not ledger_of(data, "sequence").closed
    assert event_view.spent() == compose_epsilon(event_view.mechanisms(), event_view.budget.delta)
