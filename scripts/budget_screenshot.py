"""Write docs/budget.png: the Privacy budget page of a simulation metered like private data, in Chromium.

A fresh ledger (in a temporary directory) gets three formal DP-SSP releases and one seeded fit on
paper-2d (20,000 events, seed 2); ``streamlit run`` serves the app with that ledger and headless
Debian Chromium (Playwright, never ``playwright install``) opens the page by a link naming the same
simulation, waits for the chart and saves a palette PNG.

Run: ``.venv/bin/python scripts/budget_screenshot.py`` (takes about a minute).
"""

from __future__ import annotations

import sys
import tempfile
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.chromium_driver import CHART, CHROMIUM, CHROMIUM_ARGS, IDLE, running_app  # noqa: E402
from dphawkes_app.presets import DEFAULT_PRESET, get_preset  # noqa: E402
from dphawkes_core.data.datasets import simulate_dataset  # noqa: E402
from dphawkes_core.data.kernels import get_scenario  # noqa: E402
from dphawkes_core.data.row_key import data_fingerprint  # noqa: E402
from dphawkes_core.estimators import FitConfig, prepare_stats  # noqa: E402
from dphawkes_core.release.ledger import Budget, LedgerKey  # noqa: E402
from dphawkes_core.release.ledger_file import LedgerBook  # noqa: E402
from dphawkes_core.release.ledger_store import LEDGER_ENV  # noqa: E402
from dphawkes_core.release.session import metered_fit  # noqa: E402

SIMULATION = {"data": "paper-2d", "n": 20_000, "dseed": 2}
TARGET = ROOT / "docs" / "budget.png"


def fill_ledger(path: Path) -> None:
    """The simulation metered like private data, with a budget of ε = 3 and four fits."""
    dataset = simulate_dataset(get_scenario(SIMULATION["data"]), n_events=SIMULATION["n"], seed=SIMULATION["dseed"])
    book, key = LedgerBook(path), LedgerKey(data_fingerprint(dataset.events))
    book.open(key, Budget(3.0, 1e-5), label=dataset.label, public=False)
    works = get_preset(DEFAULT_PRESET).config  # its Δ, p, ε and δ; DP-SSP with a public C (the picture's releases)
    config = FitConfig(method="ssp", bin_size=works.bin_size, lags=works.lags, epsilon=works.epsilon,
                       dp_delta=works.dp_delta, calibration="formal", count_cap=5)
    stats, info = prepare_stats(dataset.events, config)
    for changes in ({}, {"epsilon": 0.5}, {"epsilon": 1.5}, {"seed": 7}):
        metered_fit(book, key, stats, replace(config, **changes), info)


def screenshot(url: str, raw: Path) -> None:
    """Open the Privacy budget page on the simulation and save a full-page screenshot."""
    from playwright.sync_api import sync_playwright

    query = "&".join(f"{k}={v}" for k, v in SIMULATION.items())
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1300, "height": 2300})
            page.goto(f"{url}/Privacy_budget?{query}", wait_until="domcontentloaded")
            page.wait_for_selector(IDLE, timeout=120_000)
            page.wait_for_selector(CHART, state="visible", timeout=120_000)
            if page.locator("[data-testid='stException']").count():
                raise RuntimeError("the page shows an exception")
            page.screenshot(path=str(raw), full_page=True)
        finally:
            browser.close()


def main() -> None:
    from PIL import Image

    with tempfile.TemporaryDirectory() as tmp:
        ledger, raw = Path(tmp) / "ledger.json", Path(tmp) / "budget.png"
        fill_ledger(ledger)
        with running_app(Path(tmp) / "streamlit.log", env={LEDGER_ENV: str(ledger)}) as url:
            screenshot(url, raw)
        image = Image.open(raw).convert("RGB")
        image = image.crop(image.getbbox())
        image.thumbnail((1200, 2200))
        image.quantize(colors=128).save(TARGET, optimize=True)
    print(f"wrote {TARGET} ({TARGET.stat().st_size // 1024} KB)")


if __name__ == "__main__":
    main()
