"""The golden comparator itself (``comparator.py``): it passes what round-off can change and reports what it
cannot — checked on synthetic trees and on every recorded output."""

from __future__ import annotations

import json
import math
import re

import pytest

from . import cases
from .comparator import CONVERGED_ROW_RULES, EPS, SCALE_RULES, compare, tolerances, zero_estimate_loss
from .test_golden import load_output

#: A key or table column that names an estimate's kernels or baseline, a σ² or an ε.
NAMED = re.compile(r"kernels|baseline|\w*epsilon\w*|\w*sigma2\w*|.*[εσ].*")
CASE_NAMES = [case.name for case in cases.CASES]


def named_numbers(tree, path: str = "$", named: bool = False):
    """``(path, container, key)`` of every finite nonzero float of ``tree`` under a :data:`NAMED` key or in a
    :data:`NAMED` column of a table (a dict of ``columns`` and ``rows`` or ``cells``)."""
    if isinstance(tree, dict):
        columns = tree.get("columns")
        for key, value in tree.items():
            sub = f"{path}.{key}"
            if key in ("rows", "cells") and isinstance(columns, list):
                for i, row in enumerate(value):
                    for j, column in enumerate(columns):
                        yield from _number(row, j, f"{sub}[{i}][{j}]", named or bool(NAMED.fullmatch(column)))
            else:
                yield from _number(tree, key, sub, named or bool(NAMED.fullmatch(key)))
    elif isinstance(tree, list):
        for i in range(len(tree)):
            yield from _number(tree, i, f"{path}[{i}]", named)


def _number(container, key, path: str, named: bool):
    value = container[key]
    if isinstance(value, (dict, list)):
        yield from named_numbers(value, path, named)
    elif named and isinstance(value, float) and math.isfinite(value) and value != 0:
        yield path, container, key


@pytest.mark.parametrize("name", CASE_NAMES)
def test_a_1e9_relative_change_of_any_kernel_baseline_sigma2_or_epsilon_is_reported(name):
    expected, actual = load_output(name), load_output(name)
    changed = []
    for path, container, key in named_numbers(actual):
        recorded = container[key]
        container[key] = recorded * (1 + 1e-9)
        diffs = compare(expected, actual)
        container[key] = recorded
        if len(diffs) != 1 or not diffs[0].startswith(path + ":"):
            changed.append((path, diffs))
    assert changed == [], f"{len(changed)} changes not reported as the one difference: {changed[:3]}"
    assert compare(expected, actual) == []


def test_every_kind_of_named_number_is_perturbed_somewhere():
    """The test above is not vacuous: the recorded outputs hold kernels, baselines, σ² and ε (also in tables)."""
    paths = [path for name in CASE_NAMES for path, _, _ in named_numbers(load_output(name))]
    for kind in (r"\.kernels\[", r"\.lag_average\.kernels\[", r"\.baseline\[", r"\.sigma2$", r"\.epsilon$",
                 r"\.epsilon_by_calibration\.tight-paper$", r"\.rows\[\d+\]\[\d+\]$", r"\.cells\[\d+\]\[\d+\]$"):
        assert any(re.search(kind, path) for path in paths), kind


def test_a_cls_loss_is_compared_at_the_scale_of_the_zero_estimate_loss():
    """The recorded CLS losses are round-off (1e-34 … 1e-29): another round-off value passes, a loss of a few
    EPS of the zero-estimate loss above the tolerance does not."""
    for name in ("fit_cls_2d", "fit_cls_2d_lags", "fit_cls_average_width", "fit_cls_window_time_unit", "fit_cls_4d"):
        recorded = load_output(name)
        loss = recorded["output"]["loss_history"][0]
        tolerance = tolerances(recorded)["$.output.loss_history[0]"]
        assert loss < 1e-28 < tolerance
        for other, reported in ((1.42 * loss, False), (0.0, False), (2 * tolerance, True)):
            changed = json.loads(json.dumps(recorded))
            changed["output"]["loss_history"][0] = other
            assert bool(compare(recorded, changed)) is reported, (name, other)


@pytest.mark.parametrize("cls, started_at_zero", [("fit_cls_2d", "fit_pgd_sigma2"), ("fit_cls_4d", "fit_cg_4d")])
def test_the_loss_scale_from_the_counts_is_below_the_zero_estimate_loss(cls, started_at_zero):
    """A DP-PGD / DP-CG history starts at the zero estimate, so its first recorded loss is ``L(0)`` of the same
    data, Δ and p: the bound read from the CLS output's counts is below it (and not absurdly far)."""
    bound = zero_estimate_loss(load_output(cls)["output"])
    zero_loss = load_output(started_at_zero)["output"]["loss_history"][0]
    assert zero_loss / 200 < bound <= zero_loss


def test_an_entry_near_zero_is_compared_at_its_arrays_scale():
    """An estimate's entry moves by a few EPS of the array's largest entry (a solve mixes them all): that
    passes, and the same move of an isolated number of the same size is reported."""
    tree = {"kernels": [[1.0, 1e-6]], "alone": 1e-6}
    rule = next(r for r in SCALE_RULES if re.fullmatch(r.field, "$.kernels"))
    moved = rule.k * EPS / 2
    assert compare(tree, {**tree, "kernels": [[1.0, 1e-6 + moved]]}) == []
    assert compare(tree, {**tree, "kernels": [[1.0, 1e-6 + 3 * moved]]})[0].startswith("$.kernels[0][1]:")
    assert compare(tree, {**tree, "alone": 1e-6 + moved})[0].startswith("$.alone:")


def test_a_figure_summary_is_compared_at_its_curves_extent():
    curve = {"n": 8, "n_finite": 8, "sum": 0.5, "min": -3e-5, "max": 0.2}
    tree = {"elements": [{"traces": [{"y": curve}]}]}
    at = tolerances(tree)
    rule = next(r for r in SCALE_RULES if re.fullmatch(r.field, "$.elements[0].traces[0].y.min"))
    assert at["$.elements[0].traces[0].y.min"] == at["$.elements[0].traces[0].y.max"] == rule.k * EPS * 0.2
    assert at["$.elements[0].traces[0].y.sum"] == pytest.approx(8 * at["$.elements[0].traces[0].y.max"])
    assert "$.elements[0].traces[0].y.n" not in at  # counts are integers: exact
    nudged = json.loads(json.dumps(tree))
    nudged["elements"][0]["traces"][0]["y"]["min"] = -3e-5 * (1 + 1e-11)  # 1e-11 relative, 1.5e-15 of 0.2
    assert compare(tree, nudged) == []
    nudged["elements"][0]["traces"][0]["y"]["min"] = -3e-5 - 2 * rule.k * EPS * 0.2
    assert compare(tree, nudged)[0].startswith("$.elements[0].traces[0].y.min:")


def test_comparator_catches_small_changes_and_passes_identical_trees():
    tree = {"a": [1.0, 2.5e-3, {"b": "x", "c": True, "d": None}], "n": 3, "z": 0.0, "nan": float("nan")}
    assert compare(tree, json.loads(json.dumps(tree))) == []
    changed = json.loads(json.dumps(tree))
    changed["a"][1] *= 1 + 1e-9
    diffs = compare(tree, changed)
    assert len(diffs) == 1 and diffs[0].startswith("$.a[1]:")
    assert compare(tree, {**tree, "z": 1e-320}) == []  # tiny absolute: a denormal next to an exact zero
    assert compare(tree, {**tree, "z": 1e-200})[0].startswith("$.z:")
    assert compare(tree, {**tree, "n": 3.0})[0].startswith("$.n: float")  # int vs float
    assert compare(tree, {**tree, "a": [1.0, 2.5e-3, {"b": "x", "c": 1, "d": None}]})[0].startswith("$.a[2].c:")
    assert compare(tree, {**tree, "a": [1.0]})[0].startswith("$.a: length 1, expected 3 (missing items")
    assert compare(tree, {**tree, "a": [2.0]})[1].startswith("$.a[0]: 2.0, expected 1.0")  # where the lists part
    assert compare(tree, {k: v for k, v in tree.items() if k != "n"})[0].startswith("$.n: missing")
    assert compare(tree, changed, permitted=("$.a[1]",)) == []
    assert compare(tree, changed, permitted=("$.a",)) == []
    assert compare(tree, changed, permitted=("$.a[10]",)) != []  # a prefix is a path, not a string prefix


def test_a_maximum_likelihood_row_is_compared_at_its_convergence_tolerance_and_no_other_row_is():
    """An iterative fit stops within about its tolerance of the optimum, so the row of the app's comparison about it
    may move by a few ``tol`` under another kernel (measured: 2.8e-8 at tol 1e-8); a change of 100× the tolerance
    allowed is still reported, and every other row keeps 1e-12."""
    recorded = load_output("app_estimate_seeded")
    mle_label = "(maximum likelihood) (non-private)"
    table = next(k for k, element in enumerate(recorded["elements"]) if "frame" in element  # the comparison: the
                 and any(str(row[0]).endswith(mle_label) for row in element["frame"]["cells"])  # error table above
                 and any(row[0] == "CLS (non-private)" for row in element["frame"]["cells"]))  # has mle, not CLS
    rows = recorded["elements"][table]["frame"]["cells"]
    mle = next(i for i, row in enumerate(rows) if row[0].endswith(mle_label))
    cls = next(i for i, row in enumerate(rows) if row[0] == "CLS (non-private)")
    rule = CONVERGED_ROW_RULES[0]
    for i, relative, reported in ((mle, 3e-8, False), (mle, 100 * rule.k * rule.tol, True), (cls, 1e-9, True)):
        changed = json.loads(json.dumps(recorded))
        changed["elements"][table]["frame"]["cells"][i][1] *= 1 + relative
        assert bool(compare(recorded, changed)) is reported, (rows[i][0], relative)


def test_the_reference_curves_follow_a_converged_reference_row_and_only_then():
    """Where the comparison's non-private reference is the maximum likelihood, its plotted curves are that fit and
    move with it (measured 1.5e-12 of the extent under another kernel): a 1e-9 change of the extent passes, a change
    of 100× the allowed tolerance is reported; with a CLS reference row the same 1e-9 change is reported."""
    rule = CONVERGED_ROW_RULES[0]
    curve = {"n": 8, "n_finite": 8, "sum": 0.5, "min": 0.0, "max": 0.2}

    def output(reference: str, maximum: float) -> dict:
        return {"elements": [{"traces": [{"name": "non-private", "y": {**curve, "max": maximum}},
                                         {"name": "estimate", "y": dict(curve)}]},
                             {"frame": {"cells": [[f"{reference} (non-private)", 0.3]]}}]}

    mle = output("exact event times (maximum likelihood)", 0.2)
    assert compare(mle, output("exact event times (maximum likelihood)", 0.2 * (1 + 1e-9))) == []
    assert compare(mle, output("exact event times (maximum likelihood)", 0.2 * (1 + 100 * rule.k * rule.tol)))
    cls = output("CLS", 0.2)
    assert compare(cls, output("CLS", 0.2 * (1 + 1e-9)))[0].startswith("$.elements[0].traces[0].y.max:")
    moved_estimate = json.loads(json.dumps(mle))
    moved_estimate["elements"][0]["traces"][1]["y"]["max"] *= 1 + 1e-9  # another curve of the same figure
    assert compare(mle, moved_estimate)[0].startswith("$.elements[0].traces[1].y.max:")
