"""Run every ``benchmarks/bench_*.py`` module and print one table of targets.

Each module exposes ``rows() -> list[dict]`` with keys ``benchmark``, ``measured``, ``target`` and
``met`` (bool); it runs with the project's BLAS threading policy (one thread, ``dphawkes_core/threads.py``)
and its header line reports the BLAS settings it ran with. Every module runs in a fresh Python process, so one
benchmark's imports, threads and
caches (e.g. the app benchmark's Streamlit runtime) cannot slow down or clutter another. The process
exits non-zero when a target is missed.
"""

from __future__ import annotations

import importlib
import json
import os
import pkgutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

MARKER = "BENCHMARK-ROWS:"
LEDGER_ENV = "DPHAWKES_LEDGER"  # dphawkes_core.release.ledger.LEDGER_ENV (not imported: the parent stays light)


def run_one(name: str) -> None:
    """Child mode: run one module under the BLAS policy (``dphawkes_core.threads``) and print its rows
    and the BLAS thread settings it ran with as one JSON line after ``MARKER``."""
    from dphawkes_core.threads import blas_settings, set_blas_threads

    set_blas_threads()  # process-wide, before the module's imports: a BLAS they load starts limited too
    module = importlib.import_module(f"benchmarks.{name}")
    rows = module.rows()
    settings = blas_settings()
    print(MARKER + json.dumps({"rows": rows, "blas": settings}), flush=True)


def main() -> int:
    """Run the benchmarks given on the command line (module names) or all of them."""
    if len(sys.argv) == 3 and sys.argv[1] == "--one":
        run_one(sys.argv[2])
        return 0
    package_dir = Path(__file__).parent
    names = sys.argv[1:] or sorted(
        m.name for m in pkgutil.iter_modules([str(package_dir)]) if m.name.startswith("bench_")
    )
    all_rows = []
    with tempfile.TemporaryDirectory() as scratch:
        # every benchmark's app runs against a ledger of its own: never the user's (which it would read, and
        # charge, and which may be of another format), so the numbers do not depend on who runs them
        env = {**os.environ, LEDGER_ENV: str(Path(scratch) / "ledger.json")}
        for name in names:
            all_rows.extend(_run_child(name, package_dir, env))
    missed = [r for r in all_rows if not r["met"]]
    print(f"\n{len(all_rows) - len(missed)} of {len(all_rows)} targets met")
    return 1 if missed else 0


def _run_child(name: str, package_dir: Path, env: dict) -> list[dict]:
    """Run one benchmark module in a fresh process and print its rows."""
    start, load_before = time.perf_counter(), os.getloadavg()[0]
    proc = subprocess.run([sys.executable, "-m", "benchmarks.run_all", "--one", name],
                          capture_output=True, text=True, cwd=package_dir.parent, env=env)
    lines = [line for line in proc.stdout.splitlines() if line.startswith(MARKER)]
    if proc.returncode != 0 or not lines:
        print(f"# {name}: FAILED (exit {proc.returncode})\n{proc.stderr[-2000:]}", flush=True)
        return [{"benchmark": name, "measured": "failed", "target": "runs", "met": False}]
    child = json.loads(lines[-1][len(MARKER):])
    rows = child["rows"]
    print(f"# {name}: {time.perf_counter() - start:.1f} s; BLAS: {child['blas']}; load average "
          f"{load_before:.1f} before, {os.getloadavg()[0]:.1f} after", flush=True)
    for row in rows:
        print(f"  {row['benchmark']:<62} {row['measured']:<34} target {row['target']:<22} "
              f"{'MET' if row['met'] else 'MISSED'}", flush=True)
    return rows


if __name__ == "__main__":
    sys.exit(main())
