"""Refactoring guard: every golden case (``cases.py``) rerun and compared with its recorded output.

Numbers must agree to 1e-12 relative, or to a few EPS of their own scale where that is larger than they
are (``comparator.py``: an estimate's entries, a loss history, an app figure's summaries); strings,
booleans, None, int-vs-float, dict keys and list lengths exactly. A failure names the JSON path of the
first mismatch. Re-recording: see ``record.py``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from . import cases, harness
from .comparator import compare

OUTPUTS = Path(__file__).resolve().parent / "outputs"

#: Intended differences from the recorded outputs, each with its reason. Keys: a case name (the whole case
#: is skipped with the reason) or ``"<case>:<JSON path>"`` (that path and everything below it may differ),
#: e.g. ``"fit_cls_2d:$.output.release_note": "wording of the note changed in <commit>"``.
PERMITTED_DIFFERENCES: dict[str, str] = {}


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
