"""Eight releases at once on a team's PostgreSQL ledger — three threads in each of two processes and two from the
app — with a budget for four: exactly four are recorded and released, the others refused before any draw, and every
release that answered is in the ledger (none lost)."""

from __future__ import annotations

import multiprocessing
import random
import time

import pytest
from app_tools import open_estimate, private_dataset, release_button, use_formal_method

from dphawkes_core.data.row_key import data_fingerprint
from dphawkes_core.errors import DPHawkesError
from dphawkes_core.estimators import FAMILIES, FitConfig
from dphawkes_core.privacy.accounting import compose_epsilon
from dphawkes_core.release.ledger import Budget, LedgerKey
from dphawkes_core.release.ledger_postgres import PostgresLedger
from dphawkes_core.release.session import PrivacySession

pytestmark = [pytest.mark.postgres, pytest.mark.usefixtures("clear_streamlit_caches")]

BIN_SIZES = {"first process": (0.5, 0.6, 0.7), "second process": (0.8, 0.9, 1.1), "app": (1.2, 1.3)}


def config(family, bin_size: float) -> FitConfig:
    return FitConfig(method=family.name, bin_size=bin_size, lags=4, epsilon=1.0, calibration="formal", count_cap=5)


def _process(url, events, fingerprint, family, bin_sizes, start, outcomes) -> None:
    """A forked process: its releases in threads, started together with the app's, each draw slowed (charged
    first, so the others' charges land while it draws)."""
    import threading

    import dphawkes_core.release.session as session_module

    real = session_module.run_private

    def slow(*args):
        time.sleep(0.4)
        return real(*args)

    session_module.run_private = slow
    rng = random.Random(fingerprint + str(bin_sizes))

    def one(bin_size, pause):
        time.sleep(pause)
        session = PrivacySession.for_events(events, PostgresLedger(url), fingerprint)
        try:
            answer = session.release(config(family, bin_size))
            outcomes.put((bin_size, "released", answer.entry.request))
        except DPHawkesError as exc:
            outcomes.put((bin_size, "refused" if "refused" in str(exc) else f"failed: {exc}", None))

    start.wait(timeout=120)
    threads = [threading.Thread(target=one, args=(b, rng.uniform(0.0, 1.5))) for b in bin_sizes]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


def _app_release(at, bin_size: float) -> str:
    """Set Δ on the Estimate page and press Release: ``released`` or ``refused`` (by the plan or the ledger)."""
    at.number_input(key="dt").set_value(bin_size).run()
    button = release_button(at)
    if button.disabled:
        return "refused"
    button.click().run()
    if any("Released." in s.value for s in at.success):
        return "released"
    assert any("refused" in box.value.lower() for box in (*at.error, *at.warning)), [e.value for e in at.error]
    return "refused"


def test_eight_concurrent_releases_from_two_processes_and_the_app_with_a_budget_for_four(ledger_database,
                                                                                         monkeypatch):
    monkeypatch.setenv("DPHAWKES_LEDGER", ledger_database.analyst_url)
    dataset = private_dataset(3_000, seed=11)
    events, fingerprint = dataset.events, data_fingerprint(dataset.events)
    family = FAMILIES["ssp"]  # statistics, a count cap and ε: the same release in the processes and the app
    at = use_formal_method(open_estimate(dataset), family)
    planned = PrivacySession.for_events(events, PostgresLedger(ledger_database.analyst_url), fingerprint).plan(
        config(family, 0.5))[1]
    four, five = (compose_epsilon(tuple(planned) * k, 1e-5) for k in (4, 5))
    key = LedgerKey(fingerprint)
    PostgresLedger(ledger_database.owner_url).open(key, Budget((four + five) / 2, 1e-5), label="mine.csv")

    context = multiprocessing.get_context("fork")
    start, outcomes = context.Barrier(3), context.Queue()
    workers = [context.Process(target=_process, args=(ledger_database.analyst_url, events, fingerprint, family,
                                                      BIN_SIZES[name], start, outcomes))
               for name in ("first process", "second process")]
    for worker in workers:
        worker.start()
    start.wait(timeout=120)
    app = [_app_release(at, bin_size) for bin_size in BIN_SIZES["app"]]
    for worker in workers:
        worker.join(timeout=180)
    processes = [outcomes.get(timeout=10) for _ in range(6)]
    assert all(worker.exitcode == 0 for worker in workers)

    assert all(outcome in ("released", "refused") for _, outcome, _ in processes), processes
    released = [request for _, outcome, request in processes if outcome == "released"]
    ledger = PostgresLedger(ledger_database.owner_url).get(key)
    assert len(released) + app.count("released") == 4, (processes, app)  # exactly four, whoever won
    assert len(ledger.metered) == 4 and all(entry.state == "released" for entry in ledger.entries)
    assert set(released) <= {entry.request for entry in ledger.entries}  # none lost
    assert len({entry.mechanisms for entry in ledger.metered}) == 1  # each the same cost: a budget for four of them
    assert ledger.spent() == pytest.approx(four, rel=1e-9) and ledger.spent() <= ledger.budget.epsilon
