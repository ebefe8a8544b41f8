"""The budget settings are the data owner's: on a shared deployment (an owner secret configured, a server address
other than localhost, a visitor from elsewhere) the Privacy budget page shows them read-only until the owner signs in
with the secret (compared in constant time); a local single-user run keeps them editable. On a team's PostgreSQL
ledger the database's rights hold besides: the app connected as an analyst's role cannot change a budget."""

from pathlib import Path

import pytest
from conftest import no_problems
from streamlit.testing.v1 import AppTest

from dphawkes_app import owner
from dphawkes_core.data.row_key import data_fingerprint
from dphawkes_core.release.ledger import Budget, LedgerKey, Mechanism
from dphawkes_core.release.ledger_file import LedgerBook

ROOT = Path(__file__).resolve().parents[2]
PAGE = str(ROOT / "pages" / "6_Privacy_budget.py")
SECRET = "correct horse battery staple"

pytestmark = pytest.mark.usefixtures("clear_streamlit_caches")


def budget_page(dataset=None) -> AppTest:
    at = AppTest.from_file(PAGE, default_timeout=60)
    if dataset is not None:
        at.session_state["dataset"] = dataset
    return at.run()


def metered_simulation(ledger_path: Path) -> LedgerKey:
    """The page's default data set (a simulation) metered with a budget of 4 and one release."""
    at = budget_page()
    key = LedgerKey(data_fingerprint(at.session_state["dataset"].events))
    book = LedgerBook(ledger_path)
    book.open(key, Budget(4.0, 1e-5), label="simulation", public=False)
    book.record_spend(key, "r", dict, label="fit", formal=True, mechanisms=(Mechanism("gaussian", 3.0),))
    return key


def editable(at: AppTest) -> bool:
    return any(n.key == "budget_epsilon" for n in at.number_input) and not at.toggle(key="meter_data").disabled


def test_a_visitor_of_a_shared_deployment_sees_the_settings_read_only_until_the_owner_signs_in(private_ledger_file,
                                                                                              monkeypatch):
    key = metered_simulation(private_ledger_file)
    monkeypatch.setenv(owner.OWNER_SECRET_ENV, SECRET)
    at = budget_page()
    no_problems(at)
    assert not editable(at)
    assert any("Shared deployment" in box.value and "an owner secret is configured" in box.value for box in at.info)
    assert any("Total ε for this data set:** 4 " in m.value and "set by the data owner" in m.value for m in at.markdown)
    assert any("budget ε = 4" in c.value and "by " in c.value for c in at.caption)  # who set it, and when
    state = __import__("dphawkes_app.budget", fromlist=["budget_state"]).budget_state(
        at.session_state["dataset"], "x")  # the store a page gets: the owner's acts refused (the Reproduce button)
    with pytest.raises(Exception, match="only the data owner changes a budget or a public mark"):
        state.book.open(key, public=True)

    at.text_input(key="owner_secret").input("not the secret")
    at.button[0].click().run()
    assert not editable(at) and any("not the owner secret" in e.value for e in at.error)
    at.text_input(key="owner_secret").input(SECRET)
    at.button[0].click().run()
    assert editable(at) and any("Signed in as the data owner" in s.value for s in at.success)
    at.number_input(key="budget_epsilon").set_value(6.0)
    next(b for b in at.button if b.label == "Set the budget").click().run()
    no_problems(at)
    ledger = LedgerBook(private_ledger_file).get(key)
    assert ledger.budget.epsilon == 6.0 and ledger.changes[-1].tool == "app" and ledger.changes[-1].who
    next(b for b in at.button if b.key == "owner_sign_out").click().run()
    assert not editable(at)


def test_without_a_secret_a_shared_deployment_stays_read_only(private_ledger_file, monkeypatch):
    metered_simulation(private_ledger_file)
    monkeypatch.setattr(owner, "deployment_reason", lambda: "the app is served on 0.0.0.0")
    at = budget_page()
    no_problems(at)
    assert not editable(at) and not any(t.key == "owner_secret" for t in at.text_input)
    assert any("No owner secret is configured" in c.value for c in at.caption)


def test_a_local_single_user_run_keeps_the_settings_editable(private_ledger_file):
    metered_simulation(private_ledger_file)
    at = budget_page()
    no_problems(at)
    assert editable(at) and not any("Shared deployment" in box.value for box in at.info)


@pytest.mark.parametrize("secret, address, visitor, headers, shared", [
    ("", None, None, {}, ""),
    ("", "localhost", None, {"Host": "localhost:8501"}, ""),
    ("", "127.0.0.1", None, {"host": "127.0.0.1:8501"}, ""),
    ("", "", None, {"Host": "[::1]:8501"}, ""),
    ("s", None, None, {}, "an owner secret is configured"),
    ("", "0.0.0.0", None, {}, "the app is served on 0.0.0.0"),
    ("", None, "192.0.2.7", {}, "you reach the app from another machine"),
    ("", None, None, {"X-Forwarded-For": "192.0.2.7", "Host": "localhost"}, "you reach the app through a proxy"),
    ("", None, None, {"Host": "dphawkes.example.org"}, "you reach the app as dphawkes.example.org"),
])
def test_what_makes_a_deployment_shared(secret, address, visitor, headers, shared):
    assert owner.shared_reason(secret, address, visitor, headers) == shared


def test_the_secret_is_compared_in_constant_time(monkeypatch):
    calls = []
    real = owner.hmac.compare_digest
    monkeypatch.setattr(owner.hmac, "compare_digest", lambda a, b: calls.append((a, b)) or real(a, b))
    assert owner.secret_matches(SECRET, SECRET) and not owner.secret_matches(SECRET[:-1], SECRET)
    assert not owner.secret_matches("", "")  # no secret configured: nobody signs in
    assert calls == [(SECRET.encode(), SECRET.encode()), (SECRET[:-1].encode(), SECRET.encode())]


@pytest.mark.postgres
def test_the_app_on_a_team_database_as_an_analyst(ledger_database, monkeypatch):
    """``DPHAWKES_LEDGER`` a PostgreSQL URL of an analyst's role: an unregistered data set says it has no budget;
    a registered one shows the owner's; the budget form of a local run is refused by the database itself."""
    from dphawkes_core.release.ledger_postgres import PostgresLedger

    monkeypatch.setenv("DPHAWKES_LEDGER", ledger_database.analyst_url)
    at = budget_page()
    no_problems(at)
    at.toggle(key="meter_data").set_value(True).run()  # the analyst's role cannot register the data set
    assert any("refused by the database" in e.value.lower() for e in at.error)
    key = LedgerKey(data_fingerprint(at.session_state["dataset"].events))
    PostgresLedger(ledger_database.owner_url).open(key, Budget(3.0, 1e-5), label="simulation", public=False)
    at.run()
    assert any("spent **0** of 3" in box.value for box in at.info)
    at.number_input(key="budget_epsilon").set_value(30.0)
    next(b for b in at.button if b.label == "Set the budget").click().run()
    assert any("refused by the database: permission denied" in e.value.lower() for e in at.error)
    assert PostgresLedger(ledger_database.owner_url).get(key).budget.epsilon == 3.0
