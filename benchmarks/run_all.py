"""Run every ``benchmarks/bench_*.py`` module and print one table of targets.

Each module exposes ``rows() -> list[dict]`` with keys ``benchmark``, ``measured``, ``target`` and
``met`` (bool). The process exits non-zero when a target is missed.
"""

from __future__ import annotations

import importlib
import pkgutil
import sys
import time
from pathlib import Path


def main() -> int:
    """Run the benchmarks given on the command line (module names) or all of them."""
    package_dir = Path(__file__).parent
    names = sys.argv[1:] or sorted(
        m.name for m in pkgutil.iter_modules([str(package_dir)]) if m.name.startswith("bench_")
    )
    all_rows = []
    for name in names:
        start = time.perf_counter()
        module = importlib.import_module(f"benchmarks.{name}")
        rows = module.rows()
        print(f"# {name}: {time.perf_counter() - start:.1f} s", flush=True)
        for row in rows:
            print(f"  {row['benchmark']:<62} {row['measured']:<34} target {row['target']:<22} "
                  f"{'MET' if row['met'] else 'MISSED'}", flush=True)
        all_rows.extend(rows)
    missed = [r for r in all_rows if not r["met"]]
    print(f"\n{len(all_rows) - len(missed)} of {len(all_rows)} targets met")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
