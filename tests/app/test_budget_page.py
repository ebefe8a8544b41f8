"""AppTest of the Privacy budget page: public simulations, metering, the user's releases composed
against naive summation, the budget setting, and a damaged ledger file."""

from pathlib import Path

import pytest
from app_tools import with_comparison
from conftest import no_problems
from streamlit.testing.v1 import AppTest

from dphawkes_core.data.row_key import data_fingerprint
from dphawkes_core.release.ledger import PUBLIC_MARK_REASON, Budget, LedgerKey, Mechanism, compose_epsilon
from dphawkes_core.release.ledger_file import LedgerBook

ROOT = Path(__file__).resolve().parents[2]
PAGE = str(ROOT / "pages" / "6_Privacy_budget.py")
TIMEOUT = 60


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
    at.toggle(key="meter_data").set_value(True).run()
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
        book.record_spend(key, f"request {i}", dict, label=f"fit {i}", formal=True, mechanisms=(mechanism,))
    book.record_spend(key, "seeded", dict, label="seeded fit", formal=False, reasons=("the noise was seeded",))
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
    composition = next(m.value for m in at.markdown if m.value.startswith("**Composition, with your releases.**"))
    assert "GDP" not in composition and "√" not in composition  # in words; the formula is behind details
    details = next(e for e in at.expander if e.label == "Details: the formula")
    assert any("μ = √(Σ 1/zᵢ²)" in m.value for m in details.markdown)


def test_the_budget_is_set_on_the_page_and_never_below_what_was_spent(private_ledger_file):
    at = open_budget_page()
    at.toggle(key="meter_data").set_value(True).run()
    book, key = LedgerBook(private_ledger_file), key_of(at)
    book.record_spend(key, "r", dict, label="fit", formal=True, mechanisms=(Mechanism("gaussian", 2.0),))
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


# --- the Estimate page on private data -----------------------------------------------------------------------


@pytest.fixture
def uploaded():
    """An upload (private data) of 20,000 simulated events with a stated window and its dimensions declared as
    public (as on the Data page: a formal release needs them)."""
    import io

    from dphawkes_app.data.domain_input import upload_with_domain
    from dphawkes_core.data.domain import Domain
    from dphawkes_core.data.io import save_csv
    from dphawkes_core.data.kernels import get_scenario
    from dphawkes_core.data.simulate import simulate

    buffer = io.StringIO()
    events = simulate(get_scenario("paper-2d"), n_events=20_000, seed=5)
    save_csv(events, buffer)
    return upload_with_domain("mine.csv", buffer.getvalue().encode(), end_time=events.end_time,
                              domain=Domain(dimensions=("0", "1")))


def open_estimate_on(dataset) -> AppTest:
    at = AppTest.from_file(str(ROOT / "pages" / "2_Estimate.py"), default_timeout=TIMEOUT)
    at.session_state["dataset"] = dataset
    return at.run()


def release(at: AppTest) -> AppTest:
    """Press "Release (spends ε = …)"."""
    button = next(b for b in at.button if b.key == "release")
    assert button.label.startswith("Release (spends ε = ") and not button.disabled
    button.click().run()
    return at


def test_estimate_on_private_data_spends_once_per_release_and_shows_the_budget(private_ledger_file, uploaded):
    at = open_estimate_on(uploaded)
    no_problems(at)
    book, key = LedgerBook(private_ledger_file), LedgerKey(data_fingerprint(uploaded.events))
    assert book.get(key) is None  # opening the page releases nothing; the release is on a click
    release(at)
    no_problems(at)
    ledger = book.get(key)
    assert len(ledger.metered) == 1  # the default formal DP-SSP fit, released once
    spent = ledger.spent()
    assert spent == pytest.approx(1.0, rel=1e-6)  # ε = 1 alone, at the budget's δ = the fit's δ
    assert f"spent **{spent:.3g}** of 5" in budget_box(at)
    assert any("Released." in s.value and "spent ε = 1" in s.value for s in at.success)
    at.run()  # re-rendering the page costs nothing
    assert len(book.get(key).metered) == 1 and book.get(key).spent() == pytest.approx(spent)
    # the replay now says so in an info box (was the "already paid for" caption)
    assert any("Shown again from the ledger — free" in box.value for box in at.info)
    at.number_input(key="eps").set_value(0.5).run()  # new settings: nothing until the click …
    assert len(book.get(key).metered) == 1
    release(at)  # … then a new release, composed with the first
    no_problems(at)
    assert len(book.get(key).metered) == 2
    assert spent < book.get(key).spent() < spent + 0.5
    shown = at.get("plotly_chart")[0].proto.spec
    book.open(key, Budget(book.get(key).spent() + 0.1, 1e-5))
    at.number_input(key="eps").set_value(2.0).run()  # would exceed the budget: refused, nothing drawn
    assert not at.exception
    assert any("would be refused" in w.value and "remaining" in w.value for w in at.warning)
    assert next(b for b in at.button if b.key == "release").disabled
    assert len(book.get(key).metered) == 2
    # a refusal keeps the last estimate on the page (it used to remove it)
    assert at.get("plotly_chart")[0].proto.spec == shown
    assert any("your last estimate on these data" in c.value for c in at.caption)


def test_an_audit_on_private_data_is_refused(private_ledger_file, uploaded):
    at = AppTest.from_file(str(ROOT / "pages" / "5_Privacy_audit.py"), default_timeout=TIMEOUT)
    at.session_state["dataset"] = uploaded
    at.run()
    no_problems(at)
    assert any("refused" in box.value for box in at.info)
    # nothing to run on the private data; the one-click way on: a public simulated copy
    assert [b.key for b in at.button] == ["au_simulate"] and "public, no budget" in at.button[0].label
    assert LedgerBook(private_ledger_file).get(LedgerKey(data_fingerprint(uploaded.events))) is None
    at.button(key="au_simulate").click().run()
    no_problems(at)
    assert at.session_state["dataset"].source == "simulated"
    assert at.session_state["dataset"].events.dim == uploaded.events.dim
    assert any(b.key == "au_run" for b in at.button)
    assert LedgerBook(private_ledger_file).get(LedgerKey(data_fingerprint(uploaded.events))) is None


def test_privacy_utility_shows_the_budget_and_refuses_a_sweep_of_private_data(uploaded):
    at = AppTest.from_file(str(ROOT / "pages" / "3_Privacy_utility.py"), default_timeout=TIMEOUT)
    at.session_state["dataset"] = uploaded
    at.run()
    no_problems(at)
    assert "spent **0** of 5" in budget_box(at)
    source = at.radio(key="pu_source")
    source.set_value(source.options[1]).run()  # the current (private) data set
    no_problems(at)
    assert any("refused" in box.value for box in at.info)
    assert not any(b.key == "pu_run" for b in at.button)


def comparison_shown(at: AppTest) -> bool:
    """The comparison table shows the other methods' results (not only their "not released yet" rows)."""
    table = next((df.value for df in at.dataframe if "formal guarantee" in df.value.columns), None)
    if table is None:
        return False
    others = table[~table["method"].str.contains("chosen|all-zero")]
    return len(others) > 0 and not others["formal guarantee"].str.startswith("not run").any()


@pytest.mark.slow
def test_the_comparison_on_private_data_runs_on_request_through_the_ledger(private_ledger_file, uploaded):
    at = open_estimate_on(uploaded)
    book, key = LedgerBook(private_ledger_file), LedgerKey(data_fingerprint(uploaded.events))
    assert book.get(key) is None and not comparison_shown(at)  # nothing before a click
    release(at)
    assert len(book.get(key).entries) == 1  # the chosen fit only: the other methods wait
    assert not comparison_shown(with_comparison(at))
    at.checkbox(key="cmp_slow").check().run()
    assert len(book.get(key).entries) == 1
    go = next(b for b in at.button if b.key == "cmp_release_go")  # a button (was the toggle cmp_release)
    assert "spends ε" in go.label
    go.click().run()
    no_problems(at)
    after = book.get(key).entries
    assert len(after) > 1 and comparison_shown(at)
    at.run()  # shown again: every method's release comes from the ledger
    assert book.get(key).entries == after and comparison_shown(at)
    assert not any(b.key == "cmp_release_go" for b in at.button)


def test_published_data_can_be_declared_public(private_ledger_file, uploaded):
    at = AppTest.from_file(PAGE, default_timeout=TIMEOUT)
    at.session_state["dataset"] = uploaded
    at.run()
    assert at.toggle(key="meter_data").value  # uploaded data are private by default
    at.toggle(key="meter_data").set_value(False).run()
    no_problems(at)
    assert LedgerBook(private_ledger_file).get(LedgerKey(data_fingerprint(uploaded.events))).public
    assert any("Marked public (published data)" in c.value for c in at.caption)


def test_the_public_mark_says_when_and_from_which_tool_and_can_be_undone(private_ledger_file, uploaded):
    """The public mark keeps its time, its tool and the user's note; undoing it really meters again."""
    at = AppTest.from_file(PAGE, default_timeout=TIMEOUT)
    at.session_state["dataset"] = uploaded
    at.run()
    at.text_input(key="public_note").input("the published catalogue")
    at.toggle(key="meter_data").set_value(False).run()
    no_problems(at)
    book, key = LedgerBook(private_ledger_file), LedgerKey(data_fingerprint(uploaded.events))
    mark = book.get(key).public_mark
    assert mark.tool == "app" and mark.note == "the published catalogue" and mark.created
    shown = " ".join(w.value for w in at.warning)
    assert "from the app (note: the published catalogue)" in shown and PUBLIC_MARK_REASON[4:] in shown
    at.button(key="undo_public").click().run()
    no_problems(at)
    assert not book.get(key).public and at.toggle(key="meter_data").value
    assert "Privacy budget of this data set" in budget_box(at)


def test_a_mark_set_from_the_cli_is_shown_as_such(private_ledger_file, uploaded):
    LedgerBook(private_ledger_file).open(LedgerKey(data_fingerprint(uploaded.events)), public=True, tool="cli",
                                         note="open data")
    at = AppTest.from_file(PAGE, default_timeout=TIMEOUT)
    at.session_state["dataset"] = uploaded
    at.run()
    no_problems(at)
    assert not at.toggle(key="meter_data").value
    assert any("from the CLI (note: open data)" in w.value for w in at.warning)


def test_the_estimate_page_on_data_marked_public_says_why_nothing_is_formal(private_ledger_file, uploaded):
    """The core's one sentence (the CLI's formal_reasons carry the same) and the mark, on the page that fits."""
    LedgerBook(private_ledger_file).open(LedgerKey(data_fingerprint(uploaded.events)), public=True, tool="cli")
    at = AppTest.from_file(str(ROOT / "pages" / "2_Estimate.py"), default_timeout=120)
    at.session_state["dataset"] = uploaded
    at.run()
    no_problems(at)
    shown = " ".join(e.value for e in [*at.success, *at.warning])
    assert PUBLIC_MARK_REASON[4:] in shown and "from the CLI" in shown
    assert not any("Formal (ε, δ)-DP release**" in s.value for s in at.success)


def test_the_app_and_the_cli_ask_the_same_release_by_the_same_identity(private_ledger_file, uploaded):
    """The same data, declaration and settings: one request, so a release made in one is replayed in the other."""
    from dphawkes_app.budget import BudgetState
    from dphawkes_app.estimate.release import app_session
    from dphawkes_app.state import fingerprint
    from dphawkes_core.estimators import FitConfig
    from dphawkes_core.release.session import PrivacySession

    book, key = LedgerBook(private_ledger_file), LedgerKey(data_fingerprint(uploaded.events))
    config = FitConfig(method="ssp", bin_size=0.5, lags=4, epsilon=1.0, calibration="formal", count_cap=5)
    app = app_session(BudgetState(book, key, False), uploaded, fingerprint(uploaded), "event")
    cli = PrivacySession.for_events(uploaded.events, book, key.fingerprint)
    assert app.request(config) == cli.request(config)
    first = cli.release(config)
    assert first.entry.formal and app.replay(config).entry == first.entry


def test_a_capped_event_release_keeps_the_sequence_view_open_and_charges_it(private_ledger_file):
    """An event-level release under an enforced cap M is listed with its cap and charged to the sequence view as
    2M events (the view stays open, its ε shown); an uncapped one then closes it."""
    at = open_budget_page()
    book, key = LedgerBook(private_ledger_file), key_of(at)
    book.open(key, Budget(50.0, 1e-5), public=False)
    book.record_spend(key, "capped", dict, label="capped fit", formal=True, mechanisms=(Mechanism("gaussian", 40.0),),
                 max_events=5)
    at.run()
    no_problems(at)
    table = next(df.value for df in at.dataframe if "composed ε so far" in df.value.columns)
    assert list(table["unit"]) == ["event, first 5 events per sequence"]
    assert table["ε alone"].iloc[0] == pytest.approx(compose_epsilon([Mechanism("gaussian", 20.0)], 1e-5))
    per_sequence = compose_epsilon([Mechanism("gaussian", 4.0)], 1e-5)  # 40 / (2·5)
    sets = next(df.value for df in at.dataframe if "sequence-level view" in df.value.columns)
    assert list(sets["sequence-level view"]) == [f"open, composed ε {per_sequence:.3g}"]
    book.record_spend(key, "uncapped", dict, label="uncapped fit", formal=True,
                      mechanisms=(Mechanism("gaussian", 40.0),))
    at.run()
    sets = next(df.value for df in at.dataframe if "sequence-level view" in df.value.columns)
    assert list(sets["sequence-level view"]) == ["closed"]
