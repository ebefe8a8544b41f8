"""In Debian's Chromium, at 1280 and 1100 px wide: no figure's title, axis title or annotation runs past the edge
of its chart on Home, Data, Estimate and Reproduce (after a run), on the default data. The layout rule behind it is
tested on every figure builder in ``test_figure_titles_fit.py``."""

from __future__ import annotations

import pytest
from app_tools import wait_idle

pytestmark = pytest.mark.browser

# every title-like text of every Plotly chart whose box leaves its chart's svg (1 px of slack)
CUT_TEXTS = """
() => {
  const cut = [];
  document.querySelectorAll("[data-testid='stPlotlyChart']").forEach((chart, n) => {
    const svg = chart.querySelector('.main-svg');
    if (!svg) return;
    const box = svg.getBoundingClientRect();
    chart.querySelectorAll('.gtitle, .xtitle, .ytitle, .annotation-text').forEach(text => {
      const b = text.getBoundingClientRect();
      if (b.width > 0 && (b.left < box.left - 1 || b.right > box.right + 1 || b.top < box.top - 1
                          || b.bottom > box.bottom + 1)) {
        cut.push(`chart ${n}: ${text.getAttribute('class')} "${text.textContent.slice(0, 80)}"`);
      }
    });
  });
  return cut;
}
"""
CHARTS = "[data-testid='stPlotlyChart'] .main-svg"


def open_page(browser, url: str, width: int):
    page = browser.new_page(viewport={"width": width, "height": 2000})
    page.goto(url)
    wait_idle(page)
    page.wait_for_selector(CHARTS, timeout=120_000)
    page.wait_for_timeout(1000)  # Plotly draws its text after the svg appears
    return page


@pytest.mark.parametrize("width", [1280, 1100])
@pytest.mark.parametrize("path", ["", "Data", "Estimate"])
def test_no_figure_text_is_cut(server, browser, path, width):
    page = open_page(browser, f"{server[0]}/{path}", width)
    try:
        assert page.locator(CHARTS).count() >= 2
        assert page.evaluate(CUT_TEXTS) == []
    finally:
        page.close()


@pytest.mark.parametrize("width", [1280, 1100])
def test_the_reproduced_kernel_figure_is_not_cut(server, browser, width):
    page = browser.new_page(viewport={"width": width, "height": 2000})
    try:
        page.goto(f"{server[0]}/Reproduce_paper")
        wait_idle(page)
        page.get_by_role("button", name="Run Figure 1").click()
        page.wait_for_selector(CHARTS, timeout=120_000)
        wait_idle(page)
        page.wait_for_timeout(1000)
        assert page.evaluate(CUT_TEXTS) == []
    finally:
        page.close()
