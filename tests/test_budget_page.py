"""AppTest of the Privacy budget page: public simulations, metering, the user's releases composed
against naive summation, the budget setting, and a damaged ledger file."""

from pathlib import Path

import pytest
from conftest import no_problems
from streamlit.testing.v1 import AppTest

from dphawkes_core.ledger import Budget, LedgerBook, LedgerKey, Mechanism, compose_epsilon, data_fingerprint

ROOT = Path(__file__).resolve().parent.parent
PAGE = str(ROOT / "pages" / "6_Privacy_budget.py")
TIMEOUT = 60

pytestmark = pytest.mark.usefixtures("clear_streamlit_caches")


def open_budget_page() -> AppTest:
    return AppTest.from_file(PAGE, default_timeout=TIMEOUT).run()


def key_of(at: AppTest) -> LedgerKey:
    return LedgerKey(data_fingerprint(at.session_state["dataset"].events))


def budget_box(at: AppTest) -> str:
    return next(box.value for box in at.info if "Privacy budget of this data set" in box.value)


def test_a_simulation_is_public_until_metered(private_ledger_file):
    at = open_budget_page()
    no_problems(at)
    assert any("public — no budget" in c.value for c in at.caption)
    assert not any("Privacy budget of this data set" in box.value for box in at.info)
    at.toggle(key="meter_simulation").set_value(True).run()
    no_problems(at)
    ledger = LedgerBook(private_ledger_file).get(key_of(at))
    assert ledger is not None and not ledger.public
    assert "spent **0**" in budget_box(at)


def test_the_users_releases_are_listed_composed_against_naive_summation(private_ledger_file):
    at = open_budget_page()
    book, key = LedgerBook(private_ledger_file), key_of(at)
    book.open(key, Budget(4.0, 1e-5), public=False)
    noise = [Mechanism("gaussian", 4.0), Mechanism("gaussian", 6.0, 10), Mechanism("gaussian", 3.0)]
    for i, mechanism in enumerate(noise):
        book.release(key, f"request {i}", dict, label=f"fit {i}", formal=True, mechanisms=(mechanism,))
    book.release(key, "seeded", dict, label="seeded fit", formal=False, reasons=("the noise was seeded",))
    at.run()
    no_problems(at)
    table = next(df.value for df in at.dataframe if "composed ε so far" in df.value.columns)
    assert list(table["release"]) == ["fit 0", "fit 1", "fit 2"]
    composed = compose_epsilon(noise, 1e-5)  # independent of the page: the core's exact composition
    assert table["composed ε so far"].iloc[-1] == pytest.approx(composed)
    assert table["naive Σε so far"].iloc[-1] == pytest.approx(sum(compose_epsilon([m], 1e-5) for m in noise))
    assert (table["composed ε so far"] <= table["naive Σε so far"] + 1e-12).all()
    assert table["composed ε so far"].iloc[-1] < table["naive Σε so far"].iloc[-1]
    assert f"spent **{composed:.3g}** of 4" in budget_box(at)
    unmetered = next(df.value for df in at.dataframe if "why it is not a formal release" in df.value.columns)
    assert list(unmetered["output"]) == ["seeded fit"]
    assert len(at.get("plotly_chart")) == 1


def test_the_budget_is_set_on_the_page_and_never_below_what_was_spent(private_ledger_file):
    at = open_budget_page()
    at.toggle(key="meter_simulation").set_value(True).run()
    book, key = LedgerBook(private_ledger_file), key_of(at)
    book.release(key, "r", dict, label="fit", formal=True, mechanisms=(Mechanism("gaussian", 2.0),))
    at.number_input(key="budget_epsilon").set_value(8.0)
    at.button[0].click().run()  # the form's submit button
    no_problems(at)
    assert book.get(key).budget.epsilon == 8.0
    at.number_input(key="budget_epsilon").set_value(0.5)
    at.button[0].click().run()
    assert any("below the ε already spent" in e.value for e in at.error)
    assert book.get(key).budget.epsilon == 8.0


def test_a_damaged_ledger_file_is_reported_and_left_alone(private_ledger_file):
    private_ledger_file.write_text('{"format": "dphawkes-ledger", "version": 1, "ledgers": [{"fingerpr')
    at = open_budget_page()
    assert not at.exception
    assert any("corrupted" in e.value and "not reset" in e.value for e in at.error)
    assert private_ledger_file.read_text().endswith('"fingerpr')
