"""Default Estimate page render in AppTest: the "Privacy that works" preset (paper-2d, 50,000 events,
Δ = 0.5, s = 4, formal ctls at ε = 1 with C chosen privately).

Measured with every Streamlit cache cleared (so the render simulates the 50,000 events, computes the
grid-free statistics, runs ctls, the CLS reference and the comparison with the other methods (each on its
own statistics) at
the same ε, and builds every figure), after one warm-up run that pays the one-off imports (tick,
plotly, dp-accounting). Each render is a new AppTest (a new session) sharing the warm-up's registry of
installed Streamlit components: AppTest otherwise rescans every installed distribution's metadata on
its first run (about 2 s here), which a server does once at start, not per page view. A second row
times the re-run after changing only ε: the cached data are reused; the count cap (chosen privately with
ε), the statistics, the accounting and every method are computed again, so its target is the page's
2 s (it was 1 s when the default used a fixed C and a re-run could reuse the statistics).
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path

import streamlit as st
from streamlit.testing.v1 import AppTest

PAGE = str(Path(__file__).resolve().parent.parent / "pages" / "2_Estimate.py")
TARGET_S = 2.0
RERUN_TARGET_S = 2.0  # a new ε is a new release: cap, statistics, accounting and every method again
REPEATS = 3


def _fresh_render(components=None) -> tuple[float, AppTest]:
    st.cache_data.clear()
    st.cache_resource.clear()
    at = AppTest.from_file(PAGE, default_timeout=120)
    at._bidi_component_manager = components  # None: scan the installed packages (the warm-up)
    start = time.perf_counter()
    at.run()
    elapsed = time.perf_counter() - start
    if at.exception or at.error or not at.get("plotly_chart"):
        raise RuntimeError(f"the default Estimate page did not render: {at.exception} {at.error}")
    return elapsed, at


def rows() -> list[dict]:
    """Benchmark rows for ``benchmarks/run_all.py``."""
    _, warm = _fresh_render()  # warm-up: imports and the one scan for installed components
    renders = [_fresh_render(warm._bidi_component_manager) for _ in range(REPEATS)]
    median = statistics.median(t for t, _ in renders)
    at = renders[-1][1]
    at.number_input(key="eps").set_value(2.0)
    start = time.perf_counter()
    at.run()
    rerun = time.perf_counter() - start
    st.cache_data.clear()
    return [
        {"benchmark": "app: default Estimate page render (Privacy that works: 50,000 events, ctls + comparison)",
         "measured": f"{median:.2f} s (median of {REPEATS}, caches cleared)",
         "target": f"< {TARGET_S:g} s", "met": median < TARGET_S},
        {"benchmark": "app: Estimate re-run after changing ε (cached data; statistics and every method again)",
         "measured": f"{rerun:.2f} s", "target": f"< {RERUN_TARGET_S:g} s", "met": rerun < RERUN_TARGET_S},
    ]
