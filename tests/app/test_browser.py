"""Real-browser tests: `streamlit run` headless, driven by Playwright in Debian's Chromium.

One server for the module. The first test opens the app, follows the menu to the Estimate page (the
default preset), waits for the Plotly kernel grid, changes ε, waits for the re-render and checks that the
plotted estimate changed, that the URL records the new value, that no Streamlit exception box appears and
that there is no Deploy button. The second opens shared links to the Estimate page on the paper's 4-d
process and on a 5-dimensional real data set and checks, in the rendered SVG, that the grid's row and
column labels do not overlap each other or the plots. Screenshots go to the tests' tmp dirs; with
``DPHAWKES_SCREENSHOT=1`` they are also written to ``docs/`` (palette PNGs, < 300 KB each):
``screenshot.png`` (README: the default page), ``estimate_paper_fig1.png`` (the paper's Figure 1
setting), ``estimate_paper4d.png`` and
``estimate_japan_quakes.png`` (the kernel grids).
"""

import os
from pathlib import Path

import pytest
from app_tools import served_app, wait_idle

from benchmarks.chromium_driver import CHART
from dphawkes_app.presets import DEFAULT_PRESET, get_preset
from dphawkes_core.data.datasets import list_samples

ROOT = Path(__file__).resolve().parents[2]
SCREENSHOT_LIMIT = 300 * 1024

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with served_app(tmp_path_factory.mktemp("streamlit")) as (url, _):
        yield url


def _estimate_trace(page):
    """y values of the estimate in the first kernel cell, decoded by Plotly in the page (once Plotly has drawn
    the chart holding an 'estimate' trace: the page may show other charts first)."""
    page.wait_for_function(
        """() => { const gd = document.querySelector("[data-testid='stPlotlyChart'] .js-plotly-plot");
                   return gd && gd._fullData && gd._fullData.some(t => t.name === 'estimate'); }""", timeout=120_000)
    return page.evaluate(
        """() => {
            const gd = document.querySelector("[data-testid='stPlotlyChart'] .js-plotly-plot");
            const tr = gd._fullData.find(t => t.name === 'estimate');
            return Array.from(tr.y);
        }"""
    )


def _save(image_path: Path, name: str) -> None:
    """Copy a screenshot to ``docs/name`` as a small palette PNG when ``DPHAWKES_SCREENSHOT`` is set."""
    if not os.environ.get("DPHAWKES_SCREENSHOT"):
        return
    from PIL import Image

    target = ROOT / "docs" / name
    image = Image.open(image_path).convert("RGB")
    image.thumbnail((1200, 1600))
    image.quantize(colors=128).save(target, optimize=True)
    assert target.stat().st_size < SCREENSHOT_LIMIT


def _overlaps(page) -> list:
    """Pairs of kernel-grid labels ("from j" / "to i") whose boxes overlap each other or a plot area."""
    return page.evaluate(
        """() => {
            const gd = document.querySelector("[data-testid='stPlotlyChart'] .js-plotly-plot");
            const labels = Array.from(gd.querySelectorAll("g.annotation")).map(a => a.getBoundingClientRect());
            const plots = Array.from(gd.querySelectorAll("g.bglayer rect.bg"))  // one per subplot
                .map(r => r.getBoundingClientRect());
            const hit = (a, b) => a.left < b.right - 1 && b.left < a.right - 1
                && a.top < b.bottom - 1 && b.top < a.bottom - 1;
            const bad = [];
            labels.forEach((a, i) => labels.forEach((b, j) => { if (i < j && hit(a, b)) bad.push(["label", i, j]); }));
            labels.forEach((a, i) => plots.forEach((b, j) => { if (hit(a, b)) bad.push(["plot", i, j]); }));
            return bad;
        }"""
    )


def test_estimate_page_renders_and_rerenders(server, browser, tmp_path):
    page = browser.new_page(viewport={"width": 1400, "height": 2400})
    try:
        page.goto(server, wait_until="domcontentloaded")
        wait_idle(page)
        assert page.locator("[data-testid='stAppDeployButton']").count() == 0  # client.toolbarMode
        page.get_by_role("link", name="Estimate").first.click()
        wait_idle(page)
        page.wait_for_selector(CHART, state="visible", timeout=120_000)
        before = _estimate_trace(page)
        assert len(before) == get_preset(DEFAULT_PRESET).config.lags
        # the README's picture: the default page, where a formal private estimate works
        page.screenshot(path=str(tmp_path / "default.png"), full_page=True)
        assert (tmp_path / "default.png").stat().st_size > 10_000
        _save(tmp_path / "default.png", "screenshot.png")

        eps_input = page.get_by_label("ε", exact=True)
        eps_input.fill("0.3")
        eps_input.press("Enter")
        page.wait_for_function("() => window.location.search.includes('eps=0.3')", timeout=60_000)
        wait_idle(page)
        page.wait_for_selector(CHART, state="visible", timeout=120_000)
        page.wait_for_function(
            """(before) => {
                const gd = document.querySelector("[data-testid='stPlotlyChart'] .js-plotly-plot");
                const tr = gd && gd._fullData.find(t => t.name === 'estimate');
                return tr && Array.from(tr.y).some((v, i) => v !== before[i]);
            }""", arg=before, timeout=60_000)
        assert _estimate_trace(page) != before
        assert page.locator("[data-testid='stException']").count() == 0

        # the paper's regime, one link away: Figure 1 as published (DP-PGD, B = 0.2)
        page.goto(f"{server}/Estimate?preset=fig1", wait_until="domcontentloaded")
        wait_idle(page)
        page.wait_for_selector(CHART, state="visible", timeout=120_000)
        assert page.locator("[data-testid='stException']").count() == 0
        page.screenshot(path=str(tmp_path / "estimate.png"), full_page=True)
        assert (tmp_path / "estimate.png").stat().st_size > 10_000
        _save(tmp_path / "estimate.png", "estimate_paper_fig1.png")
    finally:
        page.close()


REAL_5D = "japan_quakes_zones"


@pytest.mark.parametrize("link, picture", [
    ("preset=fig3", "estimate_paper4d.png"),  # paper-4d, DP-CG
    (f"data=sample&name={REAL_5D}&method=CLS", "estimate_japan_quakes.png"),  # 5 long zone names
])
def test_kernel_grids_stay_readable(server, browser, tmp_path, link, picture):
    if REAL_5D in link and REAL_5D not in {s.name for s in list_samples()}:
        pytest.skip("real data directory not available")
    page = browser.new_page(viewport={"width": 1400, "height": 2000})
    try:
        page.goto(f"{server}/Estimate?{link}", wait_until="domcontentloaded")
        wait_idle(page)
        if REAL_5D in link:  # real data are private: nothing is fitted until the user asks
            show = page.get_by_role("button", name="Show it (not a formal release — spends nothing)")
            show.wait_for(timeout=120_000)
            assert page.locator(CHART).count() == 0
            show.click()
            wait_idle(page)
        page.wait_for_selector(CHART, state="visible", timeout=120_000)
        assert page.locator("[data-testid='stException']").count() == 0
        grid = page.locator("[data-testid='stPlotlyChart']").first
        labels = grid.locator("g.annotation")
        d = 4 if "fig3" in link else 5
        assert labels.count() == 2 * d  # "from j" over each column, "to i" beside each row
        assert _overlaps(page) == []
        grid.screenshot(path=str(tmp_path / picture))
        _save(tmp_path / picture, picture)
    finally:
        page.close()
