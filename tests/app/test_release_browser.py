"""Real-browser tests of the release widgets: `streamlit run` headless, driven by Playwright in Debian's Chromium.

1. The release flow on private data: upload a CSV on the Data page, declare its dimensions, open Estimate —
   nothing spent —, confirm Δ and s, press "Release (spends ε = …)" once (one release in the ledger, "Released."),
   change ε and come back (shown again, free).
2. The noise band and "Draw the noise again" on the default preset, and the privacy unit, M and G written to the
   URL by the widgets and read back from it by a new session.
3. Home: ε explained with its picture, and the precomputed "what privacy costs" curve.

Screenshots go to the tests' tmp dirs; with ``DPHAWKES_SCREENSHOT=1`` also to ``docs/`` (palette PNGs):
``release_flow_plan.png``, ``release_flow_released.png``, ``epsilon_explained.png``, ``noise_band.png``.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from app_tools import private_csv, wait_idle

from benchmarks.chromium_driver import CHART
from dphawkes_core.estimators import FAMILIES
from dphawkes_core.release.ledger_file import LedgerBook

ROOT = Path(__file__).resolve().parents[2]
SCREENSHOT_LIMIT = 400 * 1024

pytestmark = pytest.mark.browser


def expect(locator):
    from playwright.sync_api import expect as playwright_expect

    return playwright_expect(locator)


def no_exception(page):
    assert page.locator("[data-testid='stException']").count() == 0


def save(image_path: Path, name: str) -> None:
    """Copy a screenshot to ``docs/name`` as a small palette PNG when ``DPHAWKES_SCREENSHOT`` is set."""
    if not os.environ.get("DPHAWKES_SCREENSHOT"):
        return
    from PIL import Image

    target = ROOT / "docs" / name
    image = Image.open(image_path).convert("RGB")
    image.thumbnail((1200, 1800))
    image.quantize(colors=128).save(target, optimize=True)
    assert target.stat().st_size < SCREENSHOT_LIMIT


def shot(page, tmp_path: Path, name: str, locator=None) -> None:
    path = tmp_path / name
    (locator or page).screenshot(path=str(path), **({} if locator is not None else {"full_page": True}))
    assert path.stat().st_size > 10_000
    save(path, name)


def drawn_tables(page) -> list[list[str]]:
    """Scroll every shown table into view until its grid is drawn (a table drawn on a canvas is drawn only once on
    screen: off screen, a full-page screenshot shows an empty box), back to the top; the tables' column headers."""
    page.wait_for_selector("[data-testid='stDataFrame']", state="visible", timeout=120_000)
    wait_idle(page)
    headers = []
    for table in page.locator("[data-testid='stDataFrame']").all():
        if not table.is_visible():
            continue  # in a closed expander
        table.scroll_into_view_if_needed()
        table.locator("table[role='grid']").wait_for(state="attached", timeout=60_000)
        headers.append(table.locator("th[role='columnheader']").all_inner_texts())
    page.evaluate("window.scrollTo(0, 0)")
    return headers


def one_release_family():
    """A formal family that releases once (not the default preset's by assumption: the test chooses it)."""
    return next(f for f in FAMILIES.values()
                if f.privacy.private and f.formal_only and not f.cost.iterative and not f.inputs.per_bin
                and "event" in f.privacy.units)


def choose(page, label: str, option: str) -> None:
    """Pick ``option`` in the selectbox labelled ``label``."""
    box = page.locator("[data-testid='stSelectbox']").filter(has=page.get_by_text(label, exact=True)).first
    box.locator("[role='combobox']").click()
    page.get_by_role("option", name=option, exact=True).click()
    wait_idle(page)


def metered(ledger: Path) -> int:
    if not ledger.exists():
        return 0
    return sum(len(entry.metered) for entry in LedgerBook(ledger).ledgers())


def test_release_flow_on_private_data(server, browser, tmp_path):
    url, ledger = server
    content, end = private_csv()
    upload = tmp_path / "mine.csv"
    upload.write_bytes(content)
    page = browser.new_page(viewport={"width": 1280, "height": 2200})
    try:
        page.goto(f"{url}/Data", wait_until="domcontentloaded")
        wait_idle(page)
        page.get_by_text("Upload a file (CSV or Parquet)").click()
        wait_idle(page)
        window_end = page.get_by_role("textbox", name="window end")
        window_end.fill(repr(end))
        window_end.press("Enter")
        wait_idle(page)
        page.locator("[data-testid='stFileUploaderDropzoneInput']").set_input_files(str(upload))
        page.get_by_text("Loaded “mine.csv”").wait_for(timeout=60_000)
        wait_idle(page)
        page.get_by_role("button", name="Declare as public").click()
        page.get_by_text("Declared by you (public)").wait_for(timeout=60_000)
        wait_idle(page)

        page.get_by_role("link", name="Estimate").first.click()
        wait_idle(page)
        page.get_by_text("Not released yet").first.wait_for(timeout=60_000)
        choose(page, "method", one_release_family().label)
        assert metered(ledger) == 0 and page.locator(CHART).count() == 0  # opening and choosing: nothing spent
        release = page.get_by_role("button", name=re.compile(r"^Release \(spends ε = "))
        expect(release).to_be_enabled(timeout=60_000)  # nothing was read from the data: nothing to confirm
        wait_idle(page)
        no_exception(page)
        shot(page, tmp_path, "release_flow_plan.png")

        release.click()
        wait_idle(page)
        page.get_by_text("Released.", exact=False).first.wait_for(timeout=120_000)
        page.wait_for_selector(CHART, state="visible", timeout=120_000)
        assert metered(ledger) == 1
        assert page.get_by_text("Shown again from the ledger").count() == 0
        no_exception(page)
        headers = drawn_tables(page)
        assert ["estimate", "verdict", "gain", "± SE", "log-lik", "Poisson's", "note"] in headers  # the held-out table
        shot(page, tmp_path, "release_flow_released.png")

        eps = page.get_by_role("spinbutton", name="ε", exact=True)
        eps.fill("0.5")
        eps.press("Enter")
        wait_idle(page)
        page.get_by_text("your last estimate on these data").wait_for(timeout=60_000)
        assert metered(ledger) == 1 and page.locator(CHART).count() > 0  # the last estimate stays
        eps.fill("1")
        eps.press("Enter")
        wait_idle(page)
        page.get_by_text("Shown again from the ledger — free").wait_for(timeout=60_000)
        assert metered(ledger) == 1
        no_exception(page)
    finally:
        page.close()


def test_noise_band_and_the_unit_in_the_url(server, browser, tmp_path):
    url, _ = server
    page = browser.new_page(viewport={"width": 1280, "height": 2000})
    try:
        page.goto(f"{url}/Estimate?preset=works", wait_until="domcontentloaded")
        wait_idle(page)
        page.wait_for_selector(CHART, state="visible", timeout=120_000)
        estimate = "() => Array.from(document.querySelector(\"[data-testid='stPlotlyChart'] .js-plotly-plot\")" \
                   "._fullData.find(t => t.name === 'estimate').y)"
        before = page.evaluate(estimate)
        page.get_by_role("button", name="Draw the noise again").click()
        wait_idle(page)
        page.wait_for_function(f"(before) => ({estimate})().some((v, i) => v !== before[i])", arg=before,
                               timeout=60_000)
        choose(page, "band of draws", "20 draws")
        page.wait_for_function(
            "() => document.querySelector(\"[data-testid='stPlotlyChart'] .js-plotly-plot\")"
            "._fullData.some(t => t.fill === 'tonexty')", timeout=120_000)
        no_exception(page)
        shot(page, tmp_path, "noise_band.png", page.locator("[data-testid='stPlotlyChart']").first)

        page.get_by_text("sequence", exact=True).click()  # the privacy unit radio
        wait_idle(page)
        page.wait_for_function("() => window.location.search.includes('unit=sequence')", timeout=60_000)
        cap = page.get_by_role("spinbutton", name="events kept per sequence M (0 = no cap)")
        cap.fill("30")
        cap.press("Enter")
        page.wait_for_function("() => window.location.search.includes('seqM=30')", timeout=60_000)
        wait_idle(page)
        clip = page.get_by_role("spinbutton", name="clip norm G per sequence (0 = the G that M never clips)")
        clip.fill("2.5")
        clip.press("Enter")
        page.wait_for_function("() => window.location.search.includes('seqG=2.5')", timeout=60_000)
        wait_idle(page)
        no_exception(page)
        link = page.url
        page.goto(link, wait_until="domcontentloaded")  # a new session from the link
        wait_idle(page)
        page.wait_for_selector(CHART, state="visible", timeout=120_000)
        assert page.get_by_role("spinbutton", name="events kept per sequence M (0 = no cap)").input_value() == "30"
        assert (
            page.get_by_role("spinbutton", name="clip norm G per sequence (0 = the G that M never clips)").input_value()
            == "2.5"
        )
        assert page.get_by_role("radio", name="sequence").is_checked()
        no_exception(page)
    finally:
        page.close()


def test_home_explains_epsilon(server, browser, tmp_path):
    url, _ = server
    page = browser.new_page(viewport={"width": 1280, "height": 1900})
    try:
        page.goto(url, wait_until="domcontentloaded")
        wait_idle(page)
        page.wait_for_selector(CHART, state="visible", timeout=60_000)
        assert page.locator("[data-testid='stPlotlyChart']").count() >= 2  # the picture and the cost curve
        page.get_by_text("What ε means").scroll_into_view_if_needed()
        no_exception(page)
        shot(page, tmp_path, "epsilon_explained.png")
    finally:
        page.close()
