"""Record the golden outputs: run every case of ``cases.py`` and write ``outputs/<case>.json``.

The stored outputs are the behaviour of the code at the commit they were recorded from (first: dfecf98).
``test_golden.py`` compares every later run with them, so a refactoring that moves code around can prove it
changed nothing.

Usage (from the repo root)::

    .venv/bin/python tests/golden/record.py                  # every case
    .venv/bin/python tests/golden/record.py --only fit_cls_2d app_home
    .venv/bin/python tests/golden/record.py --twice          # also run each case twice: must be identical
    .venv/bin/python tests/golden/record.py --check          # compare with the stored outputs, write nothing

Recording from a pristine checkout of another commit (the package under test must win over an editable
install, hence PYTHONPATH)::

    git worktree add /tmp/golden-base <commit>
    cp -r tests/golden /tmp/golden-base/tests/
    cd /tmp/golden-base && PYTHONPATH=/tmp/golden-base /path/to/.venv/bin/python tests/golden/record.py --twice
    # then copy /tmp/golden-base/tests/golden/outputs/*.json back

Re-baselining. Only re-record when a change of behaviour is intended, and never silently: a re-baseline
must come with a listed diff — run ``record.py --check`` before re-recording and paste its list of changed
JSON paths (per case, old -> new) into the commit message or the review, each with its reason. For a
change that should stay visible without re-recording, list it in ``PERMITTED_DIFFERENCES`` in
``test_golden.py`` instead (a case or a JSON path, with the reason).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: the package ``golden``

from golden import cases, harness  # noqa: E402
from golden.comparator import compare  # noqa: E402
from golden.test_golden import OUTPUTS, dumps, load_output  # noqa: E402


def run_case(case: cases.Case) -> tuple[dict, float]:
    """One run of ``case`` in a fresh temporary directory; returns its output and the seconds it took."""
    with tempfile.TemporaryDirectory(prefix=f"golden-{case.name}-") as tmp:
        start = time.perf_counter()
        output = case.run(Path(tmp))
        return output, time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", nargs="+", metavar="CASE", help="record only these cases")
    parser.add_argument("--twice", action="store_true", help="run each case twice and report any difference")
    parser.add_argument("--check", action="store_true", help="compare with the stored outputs; write nothing")
    args = parser.parse_args(argv)

    files = harness.code_under_test()
    print("code under test: " + ", ".join(f"{k} {v}" for k, v in files.items()), file=sys.stderr)
    if not all(Path(f).resolve().is_relative_to(harness.ROOT) for f in files.values()):
        print("error: the code under test is not the repo root's (set PYTHONPATH to the root)", file=sys.stderr)
        return 2
    unknown = sorted(set(args.only or ()) - set(cases.BY_NAME))
    if unknown:
        print(f"error: unknown cases {unknown}", file=sys.stderr)
        return 2
    selected = [cases.BY_NAME[name] for name in args.only] if args.only else cases.CASES
    OUTPUTS.mkdir(exist_ok=True)
    problems, total = 0, 0.0
    for case in selected:
        output, seconds = run_case(case)
        output = json.loads(dumps(output))  # exactly what is stored
        total += seconds
        note = ""
        if args.twice:
            again, seconds2 = run_case(case)
            diffs = compare(output, json.loads(dumps(again)))
            total += seconds2
            if diffs:
                problems += 1
                note = "NOT DETERMINISTIC:\n    " + "\n    ".join(diffs[:10])
        if args.check:
            diffs = compare(load_output(case.name), output) if (OUTPUTS / f"{case.name}.json").exists() \
                else ["(no stored output)"]
            if diffs:
                problems += 1
                note += "\n  CHANGED:\n    " + "\n    ".join(diffs)
        else:
            (OUTPUTS / f"{case.name}.json").write_text(dumps(output))
        print(f"{case.name:40s} {seconds:6.2f} s {note}", file=sys.stderr)
    stale = sorted(p.stem for p in OUTPUTS.glob("*.json")) if not args.only else []
    stale = [name for name in stale if name not in cases.BY_NAME]
    if stale:
        print(f"outputs without a case (delete them): {stale}", file=sys.stderr)
    print(f"{len(selected)} cases in {total:.1f} s; {problems} with differences", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
