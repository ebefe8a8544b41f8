"""A new data set starts from settings that fit it (issue 43: after the taxi shifts, Japan quakes opened with the
taxi's C = 5 — a third of the quakes removed, said only inside a collapsed expander — and Δ = 0.5, hours become
days): the privacy unit, Δ and s in the new data's time unit, and C chosen for them; a share of events removed by a
cap above 1 % is said beside the headline."""

import dataclasses

import numpy as np
import pytest
from app_tools import open_estimate, release_button, texts, use_formal_method
from conftest import no_problems
from test_person_declaration import SEQUENCE_FAMILY
from test_sequence_unit_page import several_sequences

from dphawkes_app.estimate.new_data import converted, proposed_cap, removed_share_note
from dphawkes_app.state import fingerprint
from dphawkes_core.data.datasets import Dataset
from dphawkes_core.data.domain import Domain
from dphawkes_core.data.io import load_csv
from dphawkes_core.statistics.binning import bin_sparse

pytestmark = pytest.mark.usefixtures("clear_streamlit_caches")
DAYS = 400.0


def in_hours(dataset: Dataset) -> Dataset:
    return dataclasses.replace(dataset, events=dataclasses.replace(dataset.events, time_unit="h"))


def bursty_days() -> Dataset:
    """One private sequence in days with bursts (many events per day): a cap C = 1 removes most of them."""
    rng = np.random.default_rng(11)
    starts = np.sort(rng.uniform(0, DAYS - 1, 200))
    times = np.sort(np.concatenate([s + rng.exponential(0.05, 8) for s in starts]))
    times = times[times < DAYS]
    rows = "".join(f"{t:.5f},{rng.integers(2)}\n" for t in times)
    events = load_csv(("time,dimension\n" + rows).encode(), end_time=DAYS, domain=Domain(dimensions=("0", "1")))
    events = dataclasses.replace(events, time_unit="d")
    return Dataset(events=events, label="quakes.csv", source="upload", params={"file": "quakes.csv"})


def switch_to(at, dataset: Dataset):
    at.session_state["dataset"] = dataset
    at.session_state["dataset_fingerprint"] = fingerprint(dataset)
    return at.run()


def test_after_sequences_in_hours_one_sequence_in_days_gets_its_own_unit_and_cap():
    at = use_formal_method(open_estimate(in_hours(several_sequences())), SEQUENCE_FAMILY)
    at.number_input(key="dt").set_value(0.5).run()
    at.radio(key="person_answer").set_value("yes — one sequence is one person").run()
    assert at.radio(key="unit").value == "sequence" and at.checkbox(key="Cauto").value is False  # C public there
    switch_to(at, bursty_days())
    no_problems(at)
    assert at.radio(key="unit").value == "event"  # one sequence: the sequence unit protects nothing more
    assert at.number_input(key="dt").value == pytest.approx(0.5 / 24, rel=1e-3)  # the same half hour, in days
    assert at.checkbox(key="Cauto").value is True  # C chosen privately for the new data
    note = texts(at.info)
    assert "Δ = 0.5 h is now Δ = 0.02083 d" in note and "privacy unit is the event" in note and \
        "C is chosen privately" in note


def test_a_cap_removing_more_than_one_percent_is_said_beside_the_headline():
    at = use_formal_method(open_estimate(bursty_days()), SEQUENCE_FAMILY)
    at.number_input(key="dt").set_value(0.5).run()
    at.number_input(key="C").set_value(1).run()
    release_button(at).click().run()
    no_problems(at)
    main = [(node.type, getattr(node, "value", None)) for node in at.main]  # top level: nothing in an expander
    errors = main.index(("subheader", "Errors"))
    headline = next(i for i, (kind, _) in enumerate(main) if kind == "dataframe")  # the held-out table here
    removed = next(i for i, (kind, value) in enumerate(main)
                   if kind == "warning" and "of the events were removed" in value)
    assert errors < removed < headline  # right under the "Errors" heading, above the headline table
    assert "by the count cap C = 1" in main[removed][1] and "for your eyes only" in main[removed][1]


def test_the_cap_proposed_for_public_data_removes_at_most_one_percent_and_one_less_removes_more():
    events = bursty_days().events
    cap = proposed_cap(events, 0.5)
    values = np.concatenate([np.asarray(v) for v in bin_sparse(events, 0.5).values])

    def removed(c):
        return float(np.maximum(values - c, 0).sum()) / events.n_events

    assert removed(cap) <= 0.01 < removed(cap - 1)


def test_time_conversion_and_the_removed_share_sentence():
    assert converted(0.5, "h", "d") == pytest.approx(0.5 / 24, rel=1e-3)
    assert converted(2.0, "d", "d") is None and converted(2.0, None, "d") is None
    assert removed_share_note({"n_events": 1000, "clipped_events": 10}, False) is None  # 1 %: not more
    note = removed_share_note({"n_events": 6252, "clipped_events": 1927, "count_cap": 5}, True)
    assert note.startswith("**31\u00a0% of the events were removed") and "1,927 by the count cap C = 5" in note
