"""The results the app opens on without running anything (issue 43.5) are what their scripts compute: one cell of
Home's "what privacy costs" table and one group of the Privacy–utility page's default sweep are recomputed here
and equal the shipped files; the files record every parameter and seed; the pages open on them."""

from __future__ import annotations

import importlib.util
import json
import math

import numpy as np
import pytest
from app_tools import ROOT, TIMEOUT, figures, texts
from conftest import no_problems
from streamlit.testing.v1 import AppTest

from dphawkes_app.cost_story import cost_sentence, medians
from dphawkes_app.utility.controls import default_size_spec, default_tradeoff_spec
from dphawkes_app.utility.ready import READY_FILE
from dphawkes_core.estimators import FAMILIES
from dphawkes_experiments.sweep import cell_key, groups, run_group, size_specs

pytestmark = pytest.mark.usefixtures("clear_streamlit_caches")
COST_FILE = ROOT / "sample_data" / "privacy_cost.json"
ERRORS = ("kernel_function_error", "relative_error")


def script(name: str):
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def close(a: float, b: float) -> bool:
    """Equal at the error's own scale (round-off of any BLAS kernel)."""
    return math.isclose(a, b, rel_tol=1e-7, abs_tol=1e-12)


def test_a_cell_of_the_privacy_cost_table_is_what_its_script_computes():
    table = json.loads(COST_FILE.read_text())
    cost = script("privacy_cost_table")
    assert {r["method"] for r in table["rows"]} <= set(FAMILIES)  # no stale family
    assert all({"data_seed", "noise_seed", "run"} <= set(r) for r in table["rows"])
    assert table["data_seeds"] == [cost.data_seed(run) for run in range(table["runs"])]
    dataset = cost.simulation(1)
    for method, epsilon in (("ssp", 1.0), (table["references"][0], None)):
        shipped = next(r for r in table["rows"] if (r["method"], r["epsilon"], r["run"]) == (method, epsilon, 1))
        again = cost.cell(method, epsilon, 1, dataset)
        assert all(close(again[e], shipped[e]) for e in ERRORS), (method, epsilon, again, shipped)


def ready_rows():
    return json.loads(READY_FILE.read_text())["rows"]


def test_the_ready_sweep_is_every_cell_of_the_page_defaults():
    keys = {r["key"] for r in ready_rows()}
    tradeoff = default_tradeoff_spec()
    size_spec, sizes = default_size_spec()
    wanted = {cell_key(tradeoff, c) for c in tradeoff.cells()}
    wanted |= {cell_key(s, c) for s in size_specs(size_spec, sizes) for c in s.cells()}
    assert keys == wanted
    assert all(r["noise_seed"] is not None and r["seed"] is not None for r in ready_rows())


def test_a_group_of_the_ready_sweep_is_what_the_engine_computes():
    rows = {r["key"]: r for r in ready_rows()}
    group = groups(default_tradeoff_spec())[0]
    for again in run_group(group):
        shipped = rows[again["key"]]
        for error in ERRORS:
            if again.get(error) is not None and not math.isnan(again[error]):
                assert close(again[error], shipped[error]), (again["method"], again["level"], error)


def test_the_privacy_utility_page_opens_on_the_ready_result():
    at = AppTest.from_file(str(ROOT / "pages" / "3_Privacy_utility.py"), default_timeout=TIMEOUT).run()
    no_problems(at)
    assert "A ready result" in texts(at.info)
    assert len(figures(at)) >= 2  # the boxplots and the median error against ε, before any press


def test_home_opens_on_what_privacy_costs_with_its_sentence_from_the_table():
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT).run()
    no_problems(at)
    table = json.loads(COST_FILE.read_text())
    sentence = cost_sentence(table)
    assert sentence in texts(at.markdown)
    med = medians(table["rows"], table["metric"])
    best_private = min(v for (m, e), v in med.items() if e == 1.0)
    best_reference = min(v for (m, e), v in med.items() if e is None)
    assert f"by {best_private:.2f}" in sentence and f"by {best_reference:.2f}" in sentence
    cost = next(f for f in figures(at) if any((t.get("name") or "").endswith("(non-private)") for t in f["data"]))
    main = [(node.type, getattr(node, "value", None)) for node in at.main]
    first_chart = next(i for i, (kind, _) in enumerate(main) if kind == "plotly_chart")
    assert first_chart < main.index(("subheader", "Pages"))  # the first thing shown after the introduction
    assert main[first_chart - 2:first_chart] == [("subheader", "What privacy costs"), ("markdown", sentence)]
    assert np.isfinite([v for t in cost["data"] for v in (t.get("y") or []) if isinstance(v, float)]).all()
