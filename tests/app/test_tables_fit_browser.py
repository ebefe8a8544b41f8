"""In Debian's Chromium at 1100 px: the Estimate page's error table (the default preset, simulated) fits the page —
no column cut at its right edge: the grid's scroll width is its visible width (short headers, the full names in
their help; the estimate column at a fixed width, its rows in full under the table)."""

from __future__ import annotations

import pytest
from app_tools import chromium_browser, served_app, wait_idle

pytestmark = pytest.mark.browser
OVERFLOW = """() => [...document.querySelectorAll("[data-testid='stDataFrame']")]
    .filter(frame => frame.offsetParent !== null)
    .map(frame => { const grid = frame.querySelector('.dvn-scroller');
                    return grid ? grid.scrollWidth - grid.clientWidth : 0; })"""


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    with served_app(tmp_path_factory.mktemp("tables_server")) as (url, _), chromium_browser() as chromium:
        tab = chromium.new_page(viewport={"width": 1100, "height": 900})
        yield url, tab
        tab.close()


def overflow(tab, path: str) -> list[int]:
    tab.goto(path, wait_until="domcontentloaded")
    wait_idle(tab)
    tab.wait_for_selector("[data-testid='stDataFrame']", timeout=120_000)
    wait_idle(tab)
    return tab.evaluate(OVERFLOW)


def test_the_error_table_fits_at_1100_px(page):
    url, tab = page
    widths = overflow(tab, f"{url}/Estimate")
    assert widths and max(widths) <= 1, widths

