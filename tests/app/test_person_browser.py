"""Real-browser flows of the per-person cost before spending (`streamlit run` headless, Debian's Chromium through
Playwright):

1. Upload a CSV with a sequence column on the Data page and declare its domain; on Estimate declare one sequence =
   one person (the page switches to the sequence unit and states the per-person cost before the button), release,
   switch the unit to the event: the budget box counts that release on the same rows.
2. Open a real data set by link (its window in the URL, its labels.csv as declared dimensions) and release.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pandas as pd
import pytest
from app_tools import wait_idle

from benchmarks.chromium_driver import CHART
from dphawkes_core.data.datasets import list_samples
from dphawkes_core.data.kernels import get_scenario
from dphawkes_core.data.simulate import simulate
from dphawkes_core.release.ledger_file import LedgerBook

pytestmark = pytest.mark.browser
END = 400.0
RELEASE = re.compile(r"^Release \(spends ε = ")
REAL = "mat_quakes_magnitude"


def shifts_csv(path: Path, first_seed: int = 0) -> None:
    """Three simulated sequences (the paper's 2-d process, seeds ``first_seed`` on) in one CSV with a sequence column
    (another ``first_seed``: other rows, so another ledger entry on a server the tests share)."""
    frames = [simulate(get_scenario("paper-2d"), end_time=END, seed=s).to_frame().assign(sequence=s)
              for s in range(first_seed, first_seed + 3)]
    pd.concat(frames)[["sequence", "time", "dimension"]].to_csv(path, index=False)


def units_released(ledger: Path) -> list[str]:
    return [e.unit for entry in LedgerBook(ledger).ledgers() for e in entry.metered] if ledger.exists() else []


def no_exception(page) -> None:
    assert page.locator("[data-testid='stException']").count() == 0


def click_until(page, target, done: str, tries: int = 3) -> None:
    """Click ``target`` until the page says ``done`` (a JS condition): on a loaded machine a click that lands while a
    rerun is still being drawn can be lost, so it is clicked again (each click here is idempotent)."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    for _ in range(tries - 1):
        wait_idle(page)
        target.click()
        try:
            page.wait_for_function(done, timeout=40_000)
            return
        except PlaywrightTimeout:
            continue
    wait_idle(page)
    target.click()
    page.wait_for_function(done, timeout=60_000)


def test_upload_declare_release_switch_unit_budget(server, browser, tmp_path):
    url, ledger = server
    upload = tmp_path / "shifts.csv"
    shifts_csv(upload)
    page = browser.new_page(viewport={"width": 1400, "height": 2200})
    try:
        page.goto(f"{url}/Data", wait_until="domcontentloaded")
        wait_idle(page)
        page.get_by_text("Upload a file (CSV or Parquet)").click()
        wait_idle(page)
        window_end = page.get_by_role("textbox", name="window end")
        window_end.fill(repr(END))
        window_end.press("Enter")
        wait_idle(page)
        page.locator("[data-testid='stFileUploaderDropzoneInput']").set_input_files(str(upload))
        page.get_by_text("Loaded “shifts.csv”").wait_for(timeout=60_000)
        wait_idle(page)
        page.get_by_text(re.compile(r"declare the 3 sequence keys found as public")).click()
        wait_idle(page)
        page.get_by_role("button", name="Declare as public").click()
        page.get_by_text("Declared by you (public)").wait_for(timeout=60_000)
        wait_idle(page)

        page.get_by_role("link", name="Estimate").first.click()
        wait_idle(page)
        page.get_by_text("Is one sequence one person?").wait_for(timeout=120_000)
        click_until(page, page.get_by_text("yes — one sequence is one person", exact=True),
                    "() => window.location.search.includes('unit=sequence')")
        wait_idle(page)
        page.get_by_text(re.compile(r"^Per person \(one whole sequence")).wait_for(timeout=120_000)
        assert units_released(ledger) == []  # the cost is stated before anything is spent
        release = page.get_by_role("button", name=RELEASE)
        release.click()
        wait_idle(page)
        page.get_by_text("Released.", exact=False).first.wait_for(timeout=120_000)
        assert units_released(ledger) == ["sequence"]
        no_exception(page)

        unit = page.locator("[data-testid='stRadio']").filter(has_text="privacy unit")
        click_until(page, unit.get_by_text("event", exact=True),
                    "() => !window.location.search.includes('unit=sequence')")
        wait_idle(page)
        page.get_by_text(re.compile(r"counted in both views: 0 event-level and 1 sequence-level; seen per "
                                    r"sequence: spent")).wait_for(timeout=120_000)
        no_exception(page)
    finally:
        page.close()


def test_a_real_data_set_by_link_releases(server, browser):
    if not any(s.name == REAL for s in list_samples()):
        pytest.skip(f"{REAL} is not in {os.environ.get('DPHAWKES_DATA_DIR', 'the data directory')} "
                    "(set DPHAWKES_DATA_DIR)")
    url, ledger = server
    page = browser.new_page(viewport={"width": 1400, "height": 2200})
    try:
        page.goto(f"{url}/Estimate?data=sample&name={REAL}&start=0&end=17532", wait_until="domcontentloaded")
        wait_idle(page)
        release = page.get_by_role("button", name=RELEASE)
        release.wait_for(timeout=120_000)
        before = len(units_released(ledger))
        release.click()
        wait_idle(page)
        page.get_by_text("Released.", exact=False).first.wait_for(timeout=120_000)
        page.wait_for_selector(CHART, state="visible", timeout=120_000)
        assert len(units_released(ledger)) == before + 1
        no_exception(page)
    finally:
        page.close()
