"""One budget across privacy units under an enforced cap M: both views of a source's ledger compose every release,
each at its cost for the view's neighbour — an event-level release under the cap as a group of 2 capped events per
raw event and 2M per sequence replaced, a sequence-level release at its own ε in both — checked against the Gaussian
DP closed form written here (μ = √Σ(k/z)², its ε from dp_accounting), never against the ledger's own composition.
Without a cap the event-level release closes the sequence view — or, once a per-person promise was made on the
rows, is refused before any draw."""

import json
import math
import re

import numpy as np
import pandas as pd
import pytest
from dp_accounting.gaussian_mechanism import get_epsilon_gaussian

from dphawkes_core.privacy.accounting import BudgetExceeded, Mechanism, compose_epsilon
from dphawkes_core.release.ledger import (
    CAPPED_EVENT_NOTE,
    EVENT_ONLY_NOTE,
    Budget,
    DataLedger,
    LedgerKey,
    PromiseRefused,
    canonical_json,
    grouped,
)
from dphawkes_core.release.ledger_file import FILE_VERSION, LedgerBook, document_checksum

DELTA = 1e-5
M = 5
SOURCE = "rows-key"


def gdp_epsilon(*scaled_multipliers) -> float:
    """ε at δ of Gaussian releases with noise multipliers z/k (k: the group): μ = √Σ (k/z)²."""
    mu = math.sqrt(sum(1 / z**2 for z in scaled_multipliers))
    return float(get_epsilon_gaussian(1 / mu, DELTA))


def release(book, unit, z, max_events=None, request=None):
    mechanisms = (Mechanism("gaussian", z),)
    return book.record_spend(LedgerKey(SOURCE, unit), request or f"{unit}-{z}-{max_events}", lambda: {"z": z},
                        label=f"{unit} z={z}", formal=True, mechanisms=mechanisms, max_events=max_events)


def views(book):
    return book.get(LedgerKey(SOURCE, "event")), book.get(LedgerKey(SOURCE, "sequence"))


def test_both_views_compose_every_release_at_its_group(tmp_path):
    book = LedgerBook(tmp_path / "ledger.json")
    book.open(LedgerKey(SOURCE), Budget(50.0, DELTA))
    release(book, "event", 40.0, max_events=M)
    release(book, "sequence", 3.0)
    release(book, "event", 60.0, max_events=M)
    event, sequence = views(book)
    assert not sequence.closed
    assert event.spent() == pytest.approx(gdp_epsilon(40.0 / 2, 3.0, 60.0 / 2), rel=1e-9)
    assert sequence.spent() == pytest.approx(gdp_epsilon(40.0 / (2 * M), 3.0, 60.0 / (2 * M)), rel=1e-9)
    assert [round(row[1], 9) for row in sequence.history()] == [round(gdp_epsilon(z), 9)
                                                                for z in (40.0 / (2 * M), 3.0, 60.0 / (2 * M))]
    summary = event.summary()
    assert summary["sequence_view"]["spent_epsilon"] == pytest.approx(sequence.spent(), rel=1e-12)
    assert [e["max_events"] for e in summary["entries"]] == [M, None, M]


def test_a_capped_event_release_is_refused_when_the_sequence_view_would_go_over(tmp_path):
    """Per raw event it fits; per sequence (2M capped events) it does not: refused, nothing run or recorded."""
    path = tmp_path / "ledger.json"
    book = LedgerBook(path)
    book.open(LedgerKey(SOURCE), Budget(1.0, DELTA))
    z = 12.0
    assert gdp_epsilon(z / 2) < 1.0 < gdp_epsilon(z / (2 * M))
    before = path.read_text()
    with pytest.raises(BudgetExceeded, match="seen per sequence"):
        book.record_spend(LedgerKey(SOURCE, "event"), "r", lambda: pytest.fail("drawn"), label="x", formal=True,
                     mechanisms=(Mechanism("gaussian", z),), max_events=M)
    assert path.read_text() == before
    release(book, "event", z)  # with no cap it is charged per event only, and closes the sequence view
    event, sequence = views(book)
    assert event.spent() == pytest.approx(gdp_epsilon(z), rel=1e-9) and sequence.closed


def test_without_a_cap_the_sequence_view_closes_and_a_capped_release_after_it_is_charged_per_raw_event(tmp_path):
    """With no per-person promise on the rows (no declaration, no sequence-level release yet), an uncapped
    event-level release closes the sequence view: every sequence-level release after it is refused."""
    book = LedgerBook(tmp_path / "ledger.json")
    book.open(LedgerKey(SOURCE), Budget(50.0, DELTA))
    release(book, "event", 30.0)
    release(book, "event", 20.0, max_events=M)
    event, sequence = views(book)
    assert sequence.closed and sequence.spent() == math.inf and sequence.remaining() == 0
    assert event.spent() == pytest.approx(gdp_epsilon(30.0, 20.0 / 2), rel=1e-9)
    with pytest.raises(BudgetExceeded, match="sequence-level budget of this data set is closed: one event-level "
                       "release on it protects single events only"):
        release(book, "sequence", 4.0, request="again")
    release(book, "event", 1.0, request="another uncapped")
    with pytest.raises(BudgetExceeded, match="closed: 2 event-level releases on it protect single events only.*what "
                       "they reveal"):
        release(book, "sequence", 4.0, request="again")
    assert not event.promise and len(book.get(LedgerKey(SOURCE)).metered) == 3


def test_after_a_sequence_level_release_an_uncapped_event_release_is_refused_before_any_draw(tmp_path):
    """A sequence-level release on the rows is a per-person promise: an event-level release with no cap would leave
    the per-person ε unbounded, so it is refused before anything runs, with advice that can be followed (a cap M, or
    the sequence unit) and no "inf"; the same release under a cap M goes through."""
    path = tmp_path / "ledger.json"
    book = LedgerBook(path)
    book.open(LedgerKey(SOURCE), Budget(50.0, DELTA))
    release(book, "sequence", 4.0)
    before = path.read_text()
    with pytest.raises(PromiseRefused) as refusal:
        book.record_spend(LedgerKey(SOURCE, "event"), "uncapped", lambda: pytest.fail("drawn"), label="x",
                          formal=True, mechanisms=(Mechanism("gaussian", 30.0),))
    message = str(refusal.value)
    assert path.read_text() == before and "\n" not in message and not re.search(r"\binf(inity)?\b|∞", message)
    assert "sequence-level release was made on these rows" in message
    assert "set a cap M" in message and "release at the sequence unit" in message
    release(book, "event", 20.0, max_events=M)
    event, sequence = views(book)
    assert not sequence.closed and sequence.spent() == pytest.approx(gdp_epsilon(4.0, 20.0 / (2 * M)), rel=1e-9)


def test_the_plan_check_sees_both_views(tmp_path):
    """What the app asks before a release: the cost in each view for the request's unit and cap."""
    book = LedgerBook(tmp_path / "ledger.json")
    book.open(LedgerKey(SOURCE), Budget(3.0, DELTA))
    release(book, "sequence", 2.0)
    event, sequence = views(book)
    planned = (Mechanism("gaussian", 10.0),)
    assert event.cost(planned, "event", M)[1] == pytest.approx(gdp_epsilon(2.0, 10.0 / 2), rel=1e-9)
    assert sequence.cost(planned, "event", M)[1] == pytest.approx(gdp_epsilon(2.0, 10.0 / (2 * M)), rel=1e-9)
    assert sequence.cost(planned, "event", None) == (math.inf, math.inf)
    with pytest.raises(BudgetExceeded, match="seen per sequence"):
        event.check(planned, "event", M)
    with pytest.raises(PromiseRefused):  # after a sequence-level release: the per-person promise holds
        event.check(planned, "event", None)
    fresh = DataLedger(LedgerKey(SOURCE), Budget(3.0, DELTA))
    fresh.check(planned, "event", None)  # no promise yet: closes the sequence view, fits the event view


def test_group_privacy_of_each_kind_of_mechanism():
    """k neighbours: a noise multiplier divided by k (Gaussian μ → kμ, discrete Gaussian ρ → k²ρ, Laplace ε → kε);
    a pure step's ε times k."""
    mechanisms = (Mechanism("gaussian", 6.0, 3), Mechanism("discrete-gaussian", 8.0), Mechanism("laplace", 5.0),
                  Mechanism("pure", 0.1))
    assert grouped(mechanisms, 2) == (Mechanism("gaussian", 3.0, 3), Mechanism("discrete-gaussian", 4.0),
                                      Mechanism("laplace", 2.5), Mechanism("pure", 0.2))
    assert grouped(mechanisms, math.inf) is None
    assert compose_epsilon(grouped((Mechanism("laplace", 5.0),), 2), DELTA) == pytest.approx(2 / 5, rel=1e-2)


def test_a_format_3_ledger_is_read_with_its_event_releases_uncapped(tmp_path):
    """A format-3 entry has no cap (nor a state: it was recorded released): read as uncapped, so its event-level
    release keeps the sequence view closed; the file is written back in the current format."""
    path = tmp_path / "ledger.json"
    book = LedgerBook(path)
    book.open(LedgerKey(SOURCE), Budget(50.0, DELTA))
    release(book, "event", 30.0)
    document = json.loads(path.read_text())
    for item in document["ledgers"]:
        del item["looks"], item["person"]
        for entry in item["entries"]:
            del entry["max_events"], entry["state"]
    items = json.loads(canonical_json(document["ledgers"]))
    path.write_text(json.dumps({**document, "version": 3, "checksum": document_checksum(items), "ledgers": items}))
    event, sequence = views(LedgerBook(path))
    assert sequence.closed and event.entries[0].max_events is None
    release(book, "event", 20.0, max_events=M)
    assert json.loads(path.read_text())["version"] == FILE_VERSION
    assert LedgerBook(path).get(LedgerKey(SOURCE)).spent() == pytest.approx(gdp_epsilon(30.0, 10.0), rel=1e-9)


# --- through the CLI ----------------------------------------------------------------------------------------------


def run_cli(capsys, *argv):
    from dphawkes_cli.main import main

    status = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return status, out, err


@pytest.fixture
def sequences_csv(tmp_path):
    rng = np.random.default_rng(5)
    frames = [pd.DataFrame({"sequence": s, "time": np.sort(rng.uniform(0, 50, 40)).round(4),
                            "dimension": rng.integers(0, 2, 40)}) for s in range(6)]
    path = tmp_path / "sequences.csv"
    pd.concat(frames).to_csv(path, index=False)
    return path


def fit(capsys, data, ledger, epsilon, *extra):
    return run_cli(capsys, "fit", data, "--bin-size", 0.5, "--support", 2, "--method", "ssp", "--epsilon", epsilon,
                   "--calibration", "formal", "--count-cap", 5, "--ledger", ledger, "--budget", 60,
                   "--dimensions", 2, "--sequences", 6, "--end-time", 50, *extra)


def test_the_cli_charges_a_capped_event_release_in_both_views(capsys, tmp_path, sequences_csv):
    """``--max-events`` at the event unit: formal, it says what it costs per raw event and per sequence, the
    sequence view stays open and a sequence-level release after it is accepted; both views then hold both."""
    ledger = tmp_path / "ledger.json"
    status, out, err = fit(capsys, sequences_csv, ledger, 1.0, "--max-events", 12)
    payload = json.loads(out)
    assert status == 0 and payload["formal_guarantee"] and payload["data_info"]["max_events"] == 12
    assert payload["data_info"]["events_over_cap"] == 6 * (40 - 12)
    assert EVENT_ONLY_NOTE not in err and CAPPED_EVENT_NOTE.split("{")[0] in err
    assert not payload["ledger"]["sequence_view"]["closed"]
    assert payload["ledger"]["sequence_view"]["spent_epsilon"] > payload["ledger"]["spent_epsilon"]
    (stored,) = LedgerBook(ledger).ledgers()
    capped = stored.entries[0]
    assert capped.max_events == 12 and capped.unit == "event"
    status, out, err = fit(capsys, sequences_csv, ledger, 1.0, "--privacy-unit", "sequence", "--max-events", 40)
    assert status == 0, err
    (stored,) = LedgerBook(ledger).ledgers()
    sequence_release = stored.entries[1].mechanisms
    shown = json.loads(run_cli(capsys, "ledger", "show", ledger)[1])["data_sets"][0]
    assert not shown["sequence_view"]["closed"]
    expected_event = compose_epsilon(grouped(capped.mechanisms, 2) + sequence_release, DELTA)
    expected_sequence = compose_epsilon(grouped(capped.mechanisms, 24) + sequence_release, DELTA)
    assert shown["spent_epsilon"] == pytest.approx(expected_event, rel=1e-9)
    assert shown["sequence_view"]["spent_epsilon"] == pytest.approx(expected_sequence, rel=1e-9)
    assert expected_sequence > expected_event > capped.epsilon(DELTA)


def test_a_budget_below_what_the_open_sequence_view_spent_is_refused(tmp_path):
    """The budget bounds both views: one below the sequence view's spent is refused while that view is open; once an
    uncapped event-level release has closed it, the event view's spent is the floor."""
    book = LedgerBook(tmp_path / "ledger.json")
    book.open(LedgerKey(SOURCE), Budget(50.0, DELTA))
    release(book, "event", 30.0, max_events=M)
    per_event, per_sequence = gdp_epsilon(30.0 / 2), gdp_epsilon(30.0 / (2 * M))
    assert per_event < 1.0 < per_sequence
    with pytest.raises(BudgetExceeded, match="below the ε already spent"):
        book.open(LedgerKey(SOURCE), Budget(1.0, DELTA))
    book.open(LedgerKey(SOURCE), Budget(per_sequence * 1.01, DELTA))
    release(book, "event", 400.0)  # closes the sequence view
    book.open(LedgerKey(SOURCE), Budget(1.0, DELTA))  # above the event view's spent
    assert views(book)[1].closed


@pytest.mark.parametrize("z", [0.7, 3.0])
def test_person_epsilon_before_a_release_is_the_sequence_view_cost(z, tmp_path):
    """What the app states per person before the button: a sequence-level release its own ε, a capped event-level one
    the GDP closed form at 2M·μ — the sequence view's charge after the release — and an uncapped one nothing unless a
    k is assumed (then k·μ)."""
    from dphawkes_core.release.ledger import person_epsilon

    mechanisms = (Mechanism("gaussian", z),)
    assert person_epsilon(mechanisms, "sequence", 40, DELTA) == pytest.approx(gdp_epsilon(z), rel=1e-9)
    assert person_epsilon(mechanisms, "event", M, DELTA) == pytest.approx(gdp_epsilon(z / (2 * M)), rel=1e-9)
    assert person_epsilon(mechanisms, "event", None, DELTA) is None
    assert person_epsilon(mechanisms, "event", None, DELTA, assumed_events=7) == pytest.approx(gdp_epsilon(z / 7),
                                                                                                  rel=1e-9)
    book = LedgerBook(tmp_path / "ledger.json")
    book.open(LedgerKey(SOURCE), Budget(1000.0, DELTA))
    release(book, "event", z, max_events=M)
    assert book.get(LedgerKey(SOURCE, "sequence")).spent() == pytest.approx(
        person_epsilon(mechanisms, "event", M, DELTA), rel=1e-9)
