"""Helpers of the app tests under tests/app: private data sets, opening pages, reading the ledger.

Nothing here depends on the method the default preset uses: a test that needs a formal private method picks one
from the registry (:func:`formal_family`) and sets it on the page.
"""

from __future__ import annotations

import base64
import contextlib
import functools
import io
import json
import re
from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from dphawkes_core.data.datasets import Dataset
from dphawkes_core.data.domain import Domain
from dphawkes_core.data.io import load_csv, save_csv
from dphawkes_core.data.kernels import get_scenario
from dphawkes_core.data.row_key import data_fingerprint
from dphawkes_core.data.simulate import simulate
from dphawkes_core.estimators import FAMILIES
from dphawkes_core.release.ledger import LedgerKey
from dphawkes_core.release.ledger_file import LedgerBook
from dphawkes_core.release.ledger_store import LEDGER_ENV, default_ledger_path

ROOT = Path(__file__).resolve().parents[2]
ESTIMATE = str(ROOT / "pages" / "2_Estimate.py")
TIMEOUT = 120


@functools.cache
def private_csv(n_events: int = 20_000, seed: int = 5) -> tuple[bytes, float]:
    """A CSV of simulated events (the paper's 2-d process) and its window end, as a user would upload it."""
    buffer = io.StringIO()
    events = simulate(get_scenario("paper-2d"), n_events=n_events, seed=seed)
    save_csv(events, buffer)
    return buffer.getvalue().encode(), float(events.end_time)


def private_dataset(n_events: int = 20_000, seed: int = 5, declared: bool = True) -> Dataset:
    """Uploaded (private) data with a stated window and, by default, declared dimensions: a formal release is
    possible on them."""
    content, end = private_csv(n_events, seed)
    domain = Domain(dimensions=("0", "1")) if declared else None
    events = load_csv(content, end_time=end, domain=domain)
    return Dataset(events=events, label="mine.csv", source="upload", params={"file": "mine.csv", "end_time": end})


def formal_family():
    """The first registered private family with the formal calibration and the event unit (not the default
    preset's method on purpose: the tests set it)."""
    return next(f for f in FAMILIES.values()
                if f.privacy.private and "formal" in f.privacy.calibrations and "event" in f.privacy.units
                and not f.inputs.per_bin)


def open_estimate(dataset: Dataset | None = None, **query) -> AppTest:
    at = AppTest.from_file(ESTIMATE, default_timeout=TIMEOUT)
    at.query_params.update(query)
    if dataset is not None:
        at.session_state["dataset"] = dataset
    return at.run()


def with_comparison(at: AppTest) -> AppTest:
    """Turn on the comparison with the other methods (computed on demand, off when the page opens); the run that
    fits every other method gets :data:`TIMEOUT` whatever the page's own default (on the paper's 4-d preset it is
    the page's heaviest run, ~30 s on a quiet machine)."""
    at.toggle(key="cmp_on").set_value(True).run(timeout=TIMEOUT)
    return at


def use_formal_method(at: AppTest, family=None) -> AppTest:
    """Set a formal private method with a public C = 5 and ε = 1 on the Estimate page (whatever the default)."""
    family = family or formal_family()
    at.selectbox(key="method").set_value(family.label).run()
    if any(c.key == "Cauto" for c in at.checkbox):
        at.checkbox(key="Cauto").uncheck().run()
    if any(n.key == "C" for n in at.number_input):
        at.number_input(key="C").set_value(5).run()
    if any(s.key == "calib" for s in at.selectbox):
        at.selectbox(key="calib").set_value("formal").run()
    if any(r.key == "privacy" for r in at.radio):
        at.radio(key="privacy").set_value("ε and δ").run()
    at.number_input(key="eps").set_value(1.0).run()
    return at


def ledger_of(dataset: Dataset, unit: str = "event"):
    return LedgerBook(default_ledger_path()).get(LedgerKey(data_fingerprint(dataset.events), unit))


def release_button(at: AppTest):
    return next(b for b in at.button if b.key == "release")


def planned_epsilon(at: AppTest) -> float:
    """The ε the Release button says it spends."""
    return float(re.search(r"spends ε = ([0-9.e+-]+)", release_button(at).label).group(1))


def texts(elements) -> str:
    return " | ".join(e.value for e in elements)


def figures(at: AppTest) -> list[dict]:
    return [json.loads(chart.proto.spec) for chart in at.get("plotly_chart")]


def decode(values):
    """Plotly >= 6 encodes arrays as base64 ``{"dtype", "bdata"}``."""
    if isinstance(values, dict) and "bdata" in values:
        return np.frombuffer(base64.b64decode(values["bdata"]), dtype=values["dtype"])
    return np.asarray(values)


def estimate_trace(at: AppTest) -> np.ndarray:
    """The estimate's values in every kernel cell, in order."""
    kernels = figures(at)[0]
    return np.concatenate([decode(t["y"]) for t in kernels["data"] if t.get("name") == "estimate"])


# --- browser tests (Debian's Chromium through playwright) -------------------------------------------------------

@contextlib.contextmanager
def served_app(folder: Path):
    """The app served by ``streamlit run`` for a browser test, with a ledger of its own in ``folder`` (never the
    user's); skips, saying why, without Chromium or playwright. Yields ``(url, ledger path)``."""
    from benchmarks.chromium_driver import CHROMIUM, running_app

    if not Path(CHROMIUM).exists():
        pytest.skip(f"{CHROMIUM} is missing (make test installs Debian's chromium via scripts/ensure_chromium.sh)")
    pytest.importorskip("playwright.sync_api", reason="the playwright Python package is not installed")
    ledger = folder / "ledger.json"
    with running_app(folder / "streamlit.log", env={LEDGER_ENV: str(ledger)}) as url:
        yield url, ledger


@contextlib.contextmanager
def chromium_browser():
    """Headless Debian Chromium (never ``playwright install``), closed afterwards."""
    from playwright.sync_api import sync_playwright

    from benchmarks.chromium_driver import CHROMIUM, CHROMIUM_ARGS

    with sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield chromium
        finally:
            chromium.close()


def wait_idle(page, timeout=120_000):
    """Wait until the page has run and drawn (no running indicator, no skeleton)."""
    from benchmarks.chromium_driver import IDLE

    page.wait_for_selector(IDLE, timeout=timeout)
    page.wait_for_function("!document.querySelector(\"[data-testid='stSkeleton']\")", timeout=timeout)


def error_table(at: AppTest):
    """The Estimate page's errors against the truth as one frame indexed by row name: the headline table and, with
    "more error measures" turned on here, the other measures."""
    if not at.toggle(key="more_errors").value:
        at.toggle(key="more_errors").set_value(True).run()
    tables = [t.value for t in at.table if t.value.index.name == "estimate"]
    return tables[0].join(tables[1])
