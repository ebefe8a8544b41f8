"""A family is two files: its module and one registry line. :mod:`plain_ssp` (a module under ``tests/``) reuses the
single release DP-SSP first made, from its neutral home, and is registered here, in a temporary registry, and
nowhere else. With it registered the contract suite passes, the CLI fits and lists it, the Estimate page offers,
fits and compares it — and the golden snapshots that list the registry (``--help``, the Estimate page's comparison)
still equal their recorded outputs: they pin numbers, not the registry's list."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from plain_ssp import PlainSSP
from streamlit.testing.v1 import AppTest
from test_import_layers import imported_names

from dphawkes_cli.main import main
from dphawkes_core.estimators import FAMILIES, method_names, register, unregister
from dphawkes_core.estimators.checks import check_family
from tests.golden import cases, harness
from tests.golden.comparator import compare
from tests.golden.test_golden import dumps, load_output

ROOT = Path(__file__).resolve().parents[2]
FAMILY = PlainSSP()


@pytest.fixture
def registered(clear_streamlit_caches):
    before = dict(FAMILIES)
    register(FAMILY)  # the second file: one registry line
    yield FAMILY
    unregister(FAMILY.name)
    assert FAMILIES == before  # the temporary registry is gone


def test_the_module_reuses_the_shared_release_and_imports_no_family():
    names = imported_names("plain_ssp", ROOT / "tests" / "architecture" / "plain_ssp.py")
    family_modules = {type(f).__module__ for f in FAMILIES.values()}
    assert "dphawkes_core.estimators.releases.noisy_statistics" in names
    assert not {n for n in names if any(n == m or n.startswith(m + ".") for m in family_modules)}


def test_it_passes_the_contract_suite(registered):
    outcomes = {o.check: o for o in check_family(registered)}
    assert all(o.passed for name, o in outcomes.items() if name != "sequence-unit sensitivity"), outcomes
    assert outcomes["sequence-unit sensitivity"].skipped == "no sequence unit"


def test_the_cli_lists_it_and_fits_it_with_its_option(registered, tmp_path, capsys):
    events, out = tmp_path / "events.csv", tmp_path / "fit.json"
    assert main(["simulate", "--scenario", "paper-2d", "--events", "1500", "--seed", "3", "--out", str(events)]) == 0
    with pytest.raises(SystemExit):
        main(["fit", "--help"])
    assert "plain-ssp" in capsys.readouterr().out
    assert main(["fit", str(events), "--bin-size", "0.5", "--lags", "4", "--method", "plain-ssp", "--epsilon", "1",
                 "--calibration", "formal", "--count-cap", "5", "--end-time", "1500", "--dimensions", "2",
                 "--plain-ridge", "0.25", "--json", str(out)]) == 0, capsys.readouterr().err
    payload = json.loads(out.read_text())
    assert payload["method"] == "plain-ssp" and payload["plain_ridge"] == 0.25
    assert payload["privacy"]["note"] == PlainSSP.note and payload["formal_settings"] is True


def test_the_estimate_page_offers_it_fits_it_and_compares_it(registered):
    at = AppTest.from_file(str(ROOT / "pages" / "2_Estimate.py"), default_timeout=120).run()
    assert registered.label in at.selectbox(key="method").options
    at.selectbox(key="method").set_value(registered.label).run()
    at.number_input(key="plain_ridge").set_value(0.25).run()
    assert not at.exception and not at.error, [e.value for e in (*at.exception, *at.error)]
    assert at.get("plotly_chart"), "its fit is drawn"
    at.toggle(key="cmp_on").set_value(True).run()
    table = next(df.value for df in at.dataframe if "formal guarantee" in df.value.columns).set_index("method")
    assert table.index[0].startswith(registered.label) and len(table) == len(FAMILIES) + 1  # every family, Ĥ = 0


def test_the_snapshot_rule_leaves_out_only_what_a_later_family_adds(registered):
    """The rule itself, on listings with and without the family (the golden comparisons below rely on it)."""
    listing = harness._help_listing("--method {cls,pgd,plain-ssp} --plain-ridge X --bound B {ridge,psd} {a,b}")
    assert listing == {"flags": ["--bound", "--method"], "choices": ["{a,b}", "{cls,pgd}", "{ridge,psd}"]}
    frame = harness._frame(pd.DataFrame({"method": ["DP-SSP — chosen", "plain SSP", "all-zero reference Ĥ = 0"],
                                         "ε": [1.0, 1.0, 0.0]}))
    assert frame == {"columns": ["method", "ε"], "index": [0, 1],
                     "cells": [["DP-SSP — chosen", 1.0], ["all-zero reference Ĥ = 0", 0.0]]}
    unregister(registered.name)
    assert harness._help_listing("{cls,plain-ssp} --plain-ridge")["choices"] == ["{cls,plain-ssp}"]
    register(registered)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["cli_help", "app_estimate_seeded", "app_estimate_pgd_seeded"])
def test_the_snapshots_that_list_the_registry_are_unchanged_with_it(registered, name, tmp_path):
    """The three cases a new family used to force re-recording (its name in ``--method``, its flags, its row in
    the comparison): equal to the recorded outputs with the family registered — while the family does appear."""
    actual = json.loads(dumps(cases.BY_NAME[name].run(tmp_path)))
    diffs = compare(load_output(name), actual)
    assert not diffs, diffs[:10]
    if name == "cli_help":  # left out of the snapshot, not out of the help
        assert registered.name in method_names() and [f.name for f in harness.later_families()] == [registered.name]
