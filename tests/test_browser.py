"""One real-browser test: `streamlit run` headless, driven by Playwright in Debian's Chromium.

Opens the Estimate page, waits for the Plotly kernel grid, changes K, waits for the re-render and
checks that the plotted estimate changed, that the URL records the new value, and that no
Streamlit exception box appears. Saves a screenshot under the test's tmp dir; with
``DPHAWKES_SCREENSHOT=1`` it also writes ``docs/screenshot.png`` (palette PNG, < 300 KB).
"""

import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
IDLE = ("[data-testid='stApp'][data-test-connection-state='CONNECTED']"
        "[data-test-script-state='notRunning']")
CHART = "[data-testid='stPlotlyChart'] .main-svg"
SCREENSHOT_LIMIT = 300 * 1024

pytestmark = pytest.mark.browser


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def server(tmp_path):
    if not Path(CHROMIUM).exists():
        pytest.skip(f"{CHROMIUM} is missing (make test installs Debian's chromium via scripts/ensure_chromium.sh)")
    pytest.importorskip("playwright.sync_api", reason="the playwright Python package is not installed")
    port = _free_port()
    log = open(tmp_path / "streamlit.log", "w")
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", "app.py", "--server.address", "127.0.0.1",
         "--server.port", str(port), "--server.headless", "true", "--browser.gatherUsageStats", "false",
         "--server.fileWatcherType", "none"],
        cwd=ROOT, stdout=log, stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as r:
                    if r.read().decode().strip() == "ok":
                        break
            except OSError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("streamlit did not start: " + (tmp_path / "streamlit.log").read_text()[-2000:])
            time.sleep(0.2)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


def _wait_idle(page, timeout=60_000):
    page.wait_for_selector(IDLE, timeout=timeout)
    page.wait_for_function("!document.querySelector(\"[data-testid='stSkeleton']\")", timeout=timeout)


def _estimate_trace(page):
    """y values of the DP-PGD estimate in the first kernel cell, decoded by Plotly in the page."""
    return page.evaluate(
        """() => {
            const gd = document.querySelector("[data-testid='stPlotlyChart'] .js-plotly-plot");
            const tr = gd._fullData.find(t => t.name === 'estimate');
            return Array.from(tr.y);
        }"""
    )


def _save_screenshot(page, path: Path) -> None:
    page.screenshot(path=str(path), full_page=True)
    if os.environ.get("DPHAWKES_SCREENSHOT"):
        from PIL import Image

        target = ROOT / "docs" / "screenshot.png"
        image = Image.open(path).convert("RGB")
        image.thumbnail((1200, 1600))
        image.quantize(colors=128).save(target, optimize=True)
        assert target.stat().st_size < SCREENSHOT_LIMIT


def test_estimate_page_renders_and_rerenders(server, tmp_path):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 2400})
            page.goto(server, wait_until="domcontentloaded")
            _wait_idle(page)
            page.get_by_role("link", name="Estimate").first.click()
            _wait_idle(page)
            page.wait_for_selector(CHART, state="visible", timeout=60_000)
            before = _estimate_trace(page)
            assert len(before) == 50  # p = ⌈5 / 0.1⌉ lags

            k_input = page.get_by_label("iterations K")
            k_input.fill("50")
            k_input.press("Enter")
            page.wait_for_function("() => window.location.search.includes('K=50')", timeout=30_000)
            _wait_idle(page)
            page.wait_for_selector(CHART, state="visible", timeout=60_000)
            page.wait_for_function(
                """(before) => {
                    const gd = document.querySelector("[data-testid='stPlotlyChart'] .js-plotly-plot");
                    const tr = gd && gd._fullData.find(t => t.name === 'estimate');
                    return tr && Array.from(tr.y).some((v, i) => v !== before[i]);
                }""", arg=before, timeout=30_000)
            assert _estimate_trace(page) != before
            assert page.locator("[data-testid='stException']").count() == 0
            _save_screenshot(page, tmp_path / "estimate.png")
            assert (tmp_path / "estimate.png").stat().st_size > 10_000
        finally:
            browser.close()
