"""Refactoring guard: every golden case (``cases.py``) rerun and compared with its recorded output.

Numbers must agree to 1e-12 relative (or 1e-300 absolute, so exact zeros stay zeros; NaN equals NaN);
strings, booleans, None, int-vs-float, dict keys and list lengths exactly. A failure names the JSON path of
the first mismatch. Re-recording: see ``record.py``.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from . import cases, harness

OUTPUTS = Path(__file__).resolve().parent / "outputs"
RTOL, ATOL = 1e-12, 1e-300

#: Intended differences from the recorded outputs, each with its reason. Keys: a case name (the whole case
#: is skipped with the reason) or ``"<case>:<JSON path>"`` (that path and everything below it may differ),
#: e.g. ``"fit_cls_2d:$.output.release_note": "wording of the note changed in <commit>"``.
PERMITTED_DIFFERENCES: dict[str, str] = {}


# ---- the comparator --------------------------------------------------------------------------------------

def compare(expected, actual, path: str = "$", permitted: tuple[str, ...] = ()) -> list[str]:
    """Every difference between two JSON trees, as ``"<JSON path>: <what>"`` lines in document order
    (paths under a ``permitted`` prefix are ignored)."""
    if _permitted(path, permitted):
        return []
    if isinstance(expected, dict) and isinstance(actual, dict):
        diffs = []
        for key in sorted(set(expected) | set(actual)):
            sub = f"{path}.{key}"
            if _permitted(sub, permitted):
                continue
            if key not in actual:
                diffs += [f"{sub}: missing (expected {_show(expected[key])})"]
            elif key not in expected:
                diffs += [f"{sub}: unexpected (got {_show(actual[key])})"]
            else:
                diffs += compare(expected[key], actual[key], sub, permitted)
        return diffs
    if isinstance(expected, list) and isinstance(actual, list):
        if len(expected) != len(actual):
            n = min(len(expected), len(actual))
            surplus = (f"extra items {_show(actual[n:])}" if len(actual) > n
                       else f"missing items {_show(expected[n:])}")
            head = [f"{path}: length {len(actual)}, expected {len(expected)} ({surplus})"]
            for i in range(n):  # the first common item that differs, where the lists part
                item = compare(expected[i], actual[i], f"{path}[{i}]", permitted)
                if item:
                    return head + item
            return head
        return [d for i, (e, a) in enumerate(zip(expected, actual)) for d in compare(e, a, f"{path}[{i}]", permitted)]
    if _kind(expected) != _kind(actual):
        return [f"{path}: {_kind(actual)} {_show(actual)}, expected {_kind(expected)} {_show(expected)}"]
    if isinstance(expected, float):
        if _close(expected, actual):
            return []
        rel = abs(actual - expected) / max(abs(expected), abs(actual)) if math.isfinite(actual - expected) else math.inf
        return [f"{path}: {actual!r}, expected {expected!r} (relative difference {rel:.3g})"]
    return [] if expected == actual else [f"{path}: {_show(actual)}, expected {_show(expected)}"]


def _permitted(path: str, permitted) -> bool:
    return any(path == p or path.startswith(p + ".") or path.startswith(p + "[") for p in permitted)


def _kind(value) -> str:
    """JSON type, with int and float told apart (bool is not a number)."""
    for kind, types in (("bool", bool), ("int", int), ("float", float), ("str", str), ("list", list),
                        ("dict", dict)):
        if isinstance(value, types):
            return kind
    return "null" if value is None else type(value).__name__


def _close(expected: float, actual: float) -> bool:
    if math.isnan(expected) or math.isnan(actual):
        return math.isnan(expected) and math.isnan(actual)
    if math.isinf(expected) or math.isinf(actual):
        return expected == actual
    return abs(actual - expected) <= max(RTOL * max(abs(expected), abs(actual)), ATOL)


def _show(value) -> str:
    text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    return text if len(text) <= 120 else text[:117] + "..."


def dumps(output) -> str:
    """The stored form of an output: pretty JSON with sorted keys (NaN and ±Infinity as Python writes them)."""
    return json.dumps(output, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def load_output(name: str):
    return json.loads((OUTPUTS / f"{name}.json").read_text())


def permitted_paths(case: str) -> tuple[str, ...]:
    prefix = case + ":"
    return tuple(key[len(prefix):] for key in PERMITTED_DIFFERENCES if key.startswith(prefix))


# ---- the guard -------------------------------------------------------------------------------------------

@pytest.mark.parametrize("case", cases.CASES, ids=[c.name for c in cases.CASES])
def test_golden(case, tmp_path):
    if case.name in PERMITTED_DIFFERENCES:
        pytest.skip(f"permitted difference: {PERMITTED_DIFFERENCES[case.name]}")
    stored = OUTPUTS / f"{case.name}.json"
    assert stored.exists(), f"no recorded output {stored}: run tests/golden/record.py --only {case.name}"
    actual = json.loads(dumps(case.run(tmp_path)))  # through JSON, as stored
    diffs = compare(load_output(case.name), actual, permitted=permitted_paths(case.name))
    assert not diffs, (f"{case.name}: {len(diffs)} difference(s) from {stored.name}; first at {diffs[0]}\n  "
                       + "\n  ".join(diffs[:20]))


def test_code_under_test_is_this_repo():
    """The guard checks the checkout it lives in, not another one's editable install."""
    files = harness.code_under_test()
    assert all(Path(f).resolve().is_relative_to(harness.ROOT) for f in files.values()), files


def test_every_output_has_a_case_and_every_permission_a_target():
    names = {c.name for c in cases.CASES}
    assert sorted(p.stem for p in OUTPUTS.glob("*.json") if p.stem not in names) == []
    assert sorted(k for k in PERMITTED_DIFFERENCES if k.split(":", 1)[0] not in names) == []
    assert all(reason.strip() for reason in PERMITTED_DIFFERENCES.values()), "every permission needs a reason"


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
