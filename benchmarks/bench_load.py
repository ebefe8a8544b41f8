"""The app under load: 4 concurrent browser sessions against one ``streamlit run app.py`` (issue 14).

The server runs headless on 127.0.0.1 (a free port; only localhost traffic); the sessions are four
browser contexts of one headless Debian Chromium driven by Playwright (never ``playwright install``;
``scripts/ensure_chromium.sh`` installs ``/usr/bin/chromium``). Two rounds, every step bounded by
:data:`STEP_TIMEOUT_MS` and the whole run by :data:`RUN_TIMEOUT_S`:

0. one session opens the default Estimate page on the fresh server (it pays the one-off work every
   later session reuses from Streamlit's process-wide caches: imports, the default preset's
   simulation); reported, not a target;
1. all four sessions open the default Estimate page at once;
2. two sessions run a small sweep on the Privacy–utility page (2000 events, ε = 1, one run, the
   default methods: :data:`SWEEP_SETTINGS`) while the other two open the Estimate page afresh.

A render is timed from navigation to the page being idle (script finished, no skeleton) with its
Plotly chart drawn; every page must show no Streamlit exception or error box. Targets: each
Estimate render under 3 s, every page renders, no error. ``python -m benchmarks.bench_load`` prints
the figures written to ``docs/load.md``.
"""

from __future__ import annotations

import asyncio
import os
import tempfile
import time
from pathlib import Path

from app_server import CHART, CHROMIUM, CHROMIUM_ARGS, IDLE, running_app

PROBLEM = "[data-testid='stException'], [data-testid='stAlertContentError']"
SESSIONS = 4
RENDER_TARGET_S = 3.0
STEP_TIMEOUT_MS = 120_000
RUN_TIMEOUT_S = 600
SWEEP_SETTINGS = {"events per simulation": "2000", "levels": "1", "runs (seeds)": "1"}


async def _wait_rendered(page) -> None:
    """Idle (script finished, no skeleton) with a drawn Plotly chart; raise if an error box shows."""
    await page.wait_for_selector(IDLE, timeout=STEP_TIMEOUT_MS)
    await page.wait_for_function("!document.querySelector(\"[data-testid='stSkeleton']\")",
                                 timeout=STEP_TIMEOUT_MS)
    await page.wait_for_selector(f"{CHART}, {PROBLEM}", state="visible", timeout=STEP_TIMEOUT_MS)
    await _check_no_problem(page)


async def _check_no_problem(page) -> None:
    problems = page.locator(PROBLEM)
    if await problems.count():
        raise RuntimeError(f"{page.url}: {(await problems.first.inner_text())[:300]}")


async def _new_page(context):
    page = await context.new_page()
    page.set_default_timeout(STEP_TIMEOUT_MS)
    return page


async def open_estimate(context, url: str) -> float:
    """Seconds from navigation to a rendered default Estimate page in a new tab (a new session)."""
    page = await _new_page(context)
    start = time.perf_counter()
    await page.goto(f"{url}/Estimate", timeout=STEP_TIMEOUT_MS)
    await _wait_rendered(page)
    elapsed = time.perf_counter() - start
    await page.close()
    return elapsed


async def run_small_sweep(context, url: str) -> float:
    """Seconds from pressing *Run sweep* (with :data:`SWEEP_SETTINGS`) to the drawn boxplots."""
    page = await _new_page(context)
    await page.goto(f"{url}/Privacy_utility", timeout=STEP_TIMEOUT_MS)
    await page.wait_for_selector(IDLE, timeout=STEP_TIMEOUT_MS)
    for label, value in SWEEP_SETTINGS.items():
        field = page.get_by_label(label, exact=True).first
        await field.fill(value)
        await field.press("Enter")
        await page.wait_for_timeout(300)  # let the rerun start before waiting for idle
        await page.wait_for_selector(IDLE, timeout=STEP_TIMEOUT_MS)
    await _check_no_problem(page)
    start = time.perf_counter()
    await page.get_by_role("button", name="Run sweep", exact=True).click()
    await page.wait_for_timeout(300)
    await _wait_rendered(page)
    elapsed = time.perf_counter() - start
    await page.close()
    return elapsed


async def _load(url: str) -> dict:
    from playwright.async_api import async_playwright

    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            contexts = [await browser.new_context(viewport={"width": 1400, "height": 1000}) for _ in range(SESSIONS)]
            first = await open_estimate(contexts[0], url)
            start = time.perf_counter()
            together = await asyncio.gather(*(open_estimate(c, url) for c in contexts))
            round1 = time.perf_counter() - start
            half = SESSIONS // 2
            start = time.perf_counter()
            mixed = await asyncio.gather(*(run_small_sweep(c, url) for c in contexts[:half]),
                                         *(open_estimate(c, url) for c in contexts[half:]))
            round2 = time.perf_counter() - start
        finally:
            await browser.close()
    return {"first_render": [first], "renders_at_once": together, "sweeps": mixed[:half], "renders_beside_sweeps": mixed[half:],
            "round1_s": round1, "round2_s": round2}


def measure() -> dict:
    """Run both rounds against a fresh server; raise if a page fails to render or shows an error."""
    if not Path(CHROMIUM).exists():
        raise RuntimeError(f"{CHROMIUM} is missing: run scripts/ensure_chromium.sh")
    with tempfile.TemporaryDirectory() as tmp, running_app(Path(tmp) / "streamlit.log") as url:
        return asyncio.run(asyncio.wait_for(_load(url), RUN_TIMEOUT_S))


def rows() -> list[dict]:
    """Benchmark rows for ``benchmarks/run_all.py``."""
    figures = measure()
    together, beside = figures["renders_at_once"], figures["renders_beside_sweeps"]
    return [
        {"benchmark": "app load: first Estimate render on a fresh server (1 session)",
         "measured": f"{figures['first_render'][0]:.2f} s", "target": "renders, no error", "met": True},
        {"benchmark": f"app load: {SESSIONS} sessions open Estimate at once",
         "measured": "renders " + ", ".join(f"{t:.2f}" for t in together) + " s",
         "target": f"each < {RENDER_TARGET_S:g} s", "met": max(together) < RENDER_TARGET_S},
        {"benchmark": "app load: 2 small sweeps + 2 Estimate renders at once",
         "measured": "sweeps " + ", ".join(f"{t:.1f}" for t in figures["sweeps"]) + " s; renders "
                     + ", ".join(f"{t:.2f}" for t in beside) + " s",
         "target": f"renders < {RENDER_TARGET_S:g} s, no error", "met": max(beside) < RENDER_TARGET_S},
    ]


if __name__ == "__main__":
    print(f"# {os.cpu_count()} CPUs; load average before: {os.getloadavg()[0]:.2f}")
    result = measure()
    for key, value in result.items():
        print(key, [round(v, 2) for v in value] if isinstance(value, list) else round(value, 2))
