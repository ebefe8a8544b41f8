"""The app under load: 4 concurrent sessions against one ``streamlit run app.py``.

The server runs headless on 127.0.0.1 (a free port; only localhost traffic, ``app_server``). The
sessions are websocket clients speaking Streamlit's own protocol (``benchmarks/st_client.py``): each
opens ``/_stcore/stream`` as a new browser tab does, asks for a page run and reads every message the
server sends until ``script_finished`` — the deltas a browser would draw, without drawing them (a
real user draws on their own machine, not on the server's two cores). Every step is bounded by
:data:`STEP_TIMEOUT_S` and the whole run by :data:`RUN_TIMEOUT_S`. Rounds:

0. one session opens the default Estimate page on the fresh server (it pays the one-off work every
   later session reuses from Streamlit's process-wide caches: imports, the default preset's
   simulation); reported, not a target;
1. a classroom: :data:`CLASSROOM` distinct sessions (eight students) open the default Estimate page at once,
   right after the cold round, and one real browser (below) opens it beside them; each session's render under
   :data:`CLASSROOM_TARGET_S` on the server, the browser's under :data:`CLASSROOM_BROWSER_TARGET_S` (the data set,
   its statistics, the automatic C's tail counts and the references come from the process-wide caches; each
   session draws only its own noise, the automatic C's included);
1b. four sessions open the default Estimate page at once;
2. two sessions, with the Privacy–utility page open and a small sweep typed in (2000 events, ε = 1,
   one run, the default methods: :data:`SWEEP_SETTINGS`, sent as the widget values the browser
   sends), press *Run sweep* while the other two open the Estimate page, one at once (beside the
   sweeps' process pools starting) and one :data:`SWEEP_RENDER_STAGGER_S` later (beside their fits);
3. one real browser session (headless Debian Chromium through Playwright, a fresh profile) opens the
   Estimate page while four websocket sessions open it too: what one user sees under that load, the
   drawing of its Plotly figures included (reported, not a target: the browser draws on the server's
   cores here).

A render is timed from sending the rerun request to ``script_finished``, every delta received, at
least one Plotly chart among them; an exception element, an error box or a compile error fails the
run. In the browser: from navigation until the page is idle with its Plotly chart drawn. Targets:
each Estimate render of rounds 1 and 2 under 3 s, every page renders, no error.
``python -m benchmarks.bench_load`` prints the figures written to ``docs/load.md``.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import tempfile
import time
from pathlib import Path

from benchmarks.chromium_driver import CHART, CHROMIUM, CHROMIUM_ARGS, IDLE, running_app
from benchmarks.st_client import RenderError, Session, widget_state

SESSIONS = 4
RENDER_TARGET_S = 3.0
CLASSROOM = 8
CLASSROOM_TARGET_S = 2.0
CLASSROOM_BROWSER_TARGET_S = 5.0
STEP_TIMEOUT_S = 120
RUN_TIMEOUT_S = 600
ESTIMATE, PRIVACY_UTILITY = "Estimate", "Privacy_utility"  # the pages' URL path names
# widget key -> value: "events per simulation", "levels" (of ε), "runs (seeds)" of the ε-sweep tab
SWEEP_SETTINGS = {"pu_events": 2000, "pu_levels_epsilon": "1", "pu_runs": 1}
RUN_SWEEP = "pu_run"  # the tab's *Run sweep* button
SWEEP_CELLS = 4  # one run, one Δ, one level: one cell each for CLS, ctls, DP-SSP and DP-PGD (the default methods)
SWEEP_RENDER_STAGGER_S = 5.0  # round 2's renders start 0 s and 5 s after the press: pool start-up, then fits
BROWSER_PROBLEM = "[data-testid='stException'], [data-testid='stAlertContentError']"


def _with_chart(render, what: str):
    if not render.elements.get("plotly_chart"):
        raise RenderError(f"{what}: finished without a Plotly chart ({render.elements})")
    return render


async def open_estimate(url: str, delay_s: float = 0.0) -> float:
    """Seconds for a new session's default Estimate render (request sent -> ``script_finished``),
    opened ``delay_s`` after the call."""
    await asyncio.sleep(delay_s)
    async with Session(url) as session:
        return _with_chart(await session.run(ESTIMATE, STEP_TIMEOUT_S), ESTIMATE).seconds


async def prepare_sweep(session: Session) -> tuple:
    """Open the Privacy–utility page and type :data:`SWEEP_SETTINGS`, as a user does before pressing
    *Run sweep*; returns the widget states of that press."""
    page = await session.run(PRIVACY_UTILITY, STEP_TIMEOUT_S)
    settings = tuple(widget_state(page, key, value) for key, value in SWEEP_SETTINGS.items())
    await session.run(PRIVACY_UTILITY, STEP_TIMEOUT_S, widgets=settings)
    return settings + (widget_state(page, RUN_SWEEP),)


async def run_sweep(session: Session, press: tuple) -> float:
    """Seconds from pressing *Run sweep* to the finished page with its boxplots (of
    :data:`SWEEP_CELLS` cells: the settings were taken)."""
    render = _with_chart(await session.run(PRIVACY_UTILITY, STEP_TIMEOUT_S, widgets=press), "sweep")
    if not any(text.startswith(f"{SWEEP_CELLS} cells") for text in render.texts):
        raise RenderError(f"the sweep was not the {SWEEP_CELLS}-cell one typed in: {render.texts}")
    return render.seconds


async def browser_estimate(browser, url: str) -> float:
    """Seconds from navigation to a drawn, idle default Estimate page in a new browser context."""
    context = await browser.new_context(viewport={"width": 1400, "height": 1000})
    try:
        page = await context.new_page()
        page.set_default_timeout(STEP_TIMEOUT_S * 1000)
        start = time.perf_counter()
        await page.goto(f"{url}/{ESTIMATE}")
        await page.wait_for_selector(IDLE)
        await page.wait_for_function("!document.querySelector(\"[data-testid='stSkeleton']\")")
        await page.wait_for_selector(f"{CHART}, {BROWSER_PROBLEM}", state="visible")
        elapsed = time.perf_counter() - start
        problems = page.locator(BROWSER_PROBLEM)
        if await problems.count():
            raise RenderError(f"browser: {(await problems.first.inner_text())[:300]}")
        return elapsed
    finally:
        await context.close()


async def started(browser) -> None:
    """Let a just-launched browser finish starting (one blank page in a context of its own, closed): the student's
    browser is running before the class opens the page; each timed page still opens in a fresh context."""
    context = await browser.new_context()
    try:
        await (await context.new_page()).goto("about:blank")
    finally:
        await context.close()


def _server_cpu_s() -> float:
    """CPU seconds (user + system, with its finished children) of this process's streamlit child."""
    total = 0.0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError):
            fields = stat.read_text().rsplit(")", 1)[1].split()
            if int(fields[1]) == os.getpid() and b"streamlit" in (stat.parent / "cmdline").read_bytes():
                total += sum(int(v) for v in fields[11:15]) / os.sysconf("SC_CLK_TCK")
    return total


async def _round(name: str, figures: dict, *steps) -> list:
    """Run ``steps`` at once; record their results, the wall time, the server's CPU and the load."""
    cpu, start, load = _server_cpu_s(), time.perf_counter(), os.getloadavg()[0]
    results = await asyncio.gather(*steps)
    figures[name] = {"results": list(results), "wall_s": time.perf_counter() - start,
                     "server_cpu_s": _server_cpu_s() - cpu, "load": (load, os.getloadavg()[0])}
    return list(results)


async def _load(url: str) -> dict:
    from playwright.async_api import async_playwright

    figures: dict = {}
    await _round("round0_first_render", figures, open_estimate(url))
    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            await started(browser)
            classroom = await _round("round1_classroom", figures, browser_estimate(browser, url),
                                     *(open_estimate(url) for _ in range(CLASSROOM)))
        finally:
            await browser.close()
    figures["round1_classroom"]["results"] = classroom[1:]
    figures["round1_classroom_browser"] = classroom[0]
    await _round("round1_renders_at_once", figures, *(open_estimate(url) for _ in range(SESSIONS)))
    half = SESSIONS // 2
    async with contextlib.AsyncExitStack() as stack:
        sweepers = [await stack.enter_async_context(Session(url)) for _ in range(half)]
        presses = [await prepare_sweep(s) for s in sweepers]
        mixed = await _round("round2", figures, *(run_sweep(s, p) for s, p in zip(sweepers, presses)),
                             *(open_estimate(url, k * SWEEP_RENDER_STAGGER_S) for k in range(SESSIONS - half)))
    figures["round2_sweeps"], figures["round2_renders"] = mixed[:half], mixed[half:]
    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            beside = await _round("round3", figures, browser_estimate(browser, url),
                                  *(open_estimate(url) for _ in range(SESSIONS)))
        finally:
            await browser.close()
    figures["round3_browser"], figures["round3_renders"] = beside[0], beside[1:]
    return figures


def measure() -> dict:
    """Run the rounds against a fresh server; raise if a page fails to render or shows an error.

    Returns
    -------
    dict
        Per round (``round0_first_render``, ``round1_classroom``, ``round1_renders_at_once``, ``round2``,
        ``round3``): the
        step times, wall time, the server's CPU seconds and the load average before and after; and
        ``round1_classroom_browser``, ``round2_sweeps``, ``round2_renders``, ``round3_browser``,
        ``round3_renders`` split out.
    """
    if not Path(CHROMIUM).exists():
        raise RuntimeError(f"{CHROMIUM} is missing: run scripts/ensure_chromium.sh")
    with (
        tempfile.TemporaryDirectory() as tmp,
        running_app(Path(tmp) / "streamlit.log", env={"DPHAWKES_LEDGER": str(Path(tmp) / "ledger.json")}) as url,
    ):
        return asyncio.run(asyncio.wait_for(_load(url), RUN_TIMEOUT_S))


def _seconds(values) -> str:
    return ", ".join(f"{v:.2f}" for v in values) + " s"


def rows() -> list[dict]:
    """Benchmark rows for ``benchmarks/run_all.py``."""
    f = measure()
    at_once, beside = f["round1_renders_at_once"]["results"], f["round2_renders"]
    classroom = f["round1_classroom"]
    return [
        {
            "benchmark": "app load: first Estimate render on a fresh server (1 session)",
            "measured": _seconds(f["round0_first_render"]["results"]),
            "target": "renders, no error",
            "met": True,
        },
        {
            "benchmark": f"app load: a classroom, {CLASSROOM} sessions open Estimate at once (after the cold round)",
            "measured": _seconds(classroom["results"]) + f"; server CPU {classroom['server_cpu_s']:.1f} s in all",
            "target": f"each < {CLASSROOM_TARGET_S:g} s",
            "met": max(classroom["results"]) < CLASSROOM_TARGET_S,
        },
        {
            "benchmark": "app load: 1 Chromium opens Estimate beside the classroom",
            "measured": f"{f['round1_classroom_browser']:.2f} s",
            "target": f"< {CLASSROOM_BROWSER_TARGET_S:g} s",
            "met": f["round1_classroom_browser"] < CLASSROOM_BROWSER_TARGET_S,
        },
        {
            "benchmark": f"app load: {SESSIONS} sessions open Estimate at once",
            "measured": _seconds(at_once),
            "target": f"each < {RENDER_TARGET_S:g} s",
            "met": max(at_once) < RENDER_TARGET_S,
        },
        {
            "benchmark": "app load: 2 small sweeps + 2 Estimate renders at once",
            "measured": "sweeps " + _seconds(f["round2_sweeps"]) + "; renders " + _seconds(beside),
            "target": f"renders < {RENDER_TARGET_S:g} s, no error",
            "met": max(beside) < RENDER_TARGET_S,
        },
        {
            "benchmark": f"app load: 1 Chromium + {SESSIONS} sessions open Estimate",
            "measured": f"browser {f['round3_browser']:.2f} s; renders " + _seconds(f["round3_renders"]),
            "target": "renders, no error",
            "met": True,
        },
    ]


if __name__ == "__main__":
    print(f"# {os.cpu_count()} CPUs; load average before: {os.getloadavg()[0]:.2f}")
    for key, value in measure().items():
        if isinstance(value, dict):
            print(f"{key}: " + _seconds(value["results"]) + f"; wall {value['wall_s']:.2f} s; server CPU "
                  f"{value['server_cpu_s']:.2f} s; load {value['load'][0]:.2f} -> {value['load'][1]:.2f}")
        else:
            print(f"{key}: " + _seconds(value if isinstance(value, list) else [value]))
