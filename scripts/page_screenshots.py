"""Write docs/page_<name>.png: the first screen of every page of a running app at 1400 × 1000, in Chromium.

Start the app first (its own ledger, the real data sets), e.g.::

    DPHAWKES_LEDGER=/tmp/screens_ledger.json DPHAWKES_DATA_DIR=… \\
        .venv/bin/python -m streamlit run app.py --server.headless true --server.port 8612

then run ``.venv/bin/python scripts/page_screenshots.py [URL]`` (default ``http://127.0.0.1:8612``). Each page is
opened on the default data in a new session; Reproduce after "Run Figure 1", the audit after "Run audit". Headless
Debian Chromium through Playwright (never ``playwright install``); the pictures are 128-colour palette PNGs.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.chromium_driver import CHROMIUM, CHROMIUM_ARGS, IDLE  # noqa: E402

WIDTH, HEIGHT = 1400, 1000  # the stakeholder's screen of issue 43: Home's holds what privacy costs
PAGES = (("home", "", None), ("data", "Data", None), ("estimate", "Estimate", None),
         ("privacy_utility", "Privacy_utility", None), ("reproduce", "Reproduce_paper", "Run Figure 1"),
         ("audit", "Privacy_audit", "Run audit"), ("budget", "Privacy_budget", None))


def wait_idle(page, timeout: int = 300_000) -> None:
    """Until the script has run and drawn (no skeleton)."""
    page.wait_for_selector(IDLE, timeout=timeout)
    page.wait_for_function("!document.querySelector(\"[data-testid='stSkeleton']\")", timeout=timeout)


def capture(browser, url: str, path: str, click: str | None, raw: Path) -> None:
    """One page's first screen (after clicking ``click``, scrolled to what it drew)."""
    page = browser.new_page(viewport={"width": WIDTH, "height": HEIGHT})
    try:
        page.goto(f"{url}/{path}", wait_until="domcontentloaded")
        wait_idle(page)
        page.wait_for_timeout(1500)  # Plotly draws after the script ends
        if click:
            page.get_by_role("button", name=click).first.click()
            page.wait_for_timeout(1000)
            wait_idle(page)
            page.locator("[data-testid='stPlotlyChart']").first.scroll_into_view_if_needed()
            page.wait_for_timeout(1500)
        if page.locator("[data-testid='stException']").count():
            raise RuntimeError(f"{path or 'Home'} shows an exception")
        page.mouse.move(WIDTH - 5, 5)  # no chart's toolbar under the pointer
        page.wait_for_timeout(300)
        page.screenshot(path=str(raw))
    finally:
        page.close()


def main(url: str = "http://127.0.0.1:8612") -> None:
    from PIL import Image
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            for name, path, click in PAGES:
                target = ROOT / "docs" / f"page_{name}.png"
                raw = target.with_suffix(".raw.png")
                capture(browser, url, path, click, raw)
                Image.open(raw).convert("RGB").quantize(colors=128).save(target, optimize=True)
                raw.unlink()
                print(f"wrote {target} ({target.stat().st_size // 1024} KB)")
        finally:
            browser.close()


if __name__ == "__main__":
    main(*sys.argv[1:2])
