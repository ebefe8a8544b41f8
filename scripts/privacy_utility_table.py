"""Write sample_data/privacy_utility.json: every cell of the two sweeps the Privacy–utility page's untouched widgets
describe, so that the page opens on a ready result (dphawkes_app/utility/ready.py).

The sweeps are :func:`dphawkes_app.utility.controls.default_tradeoff_spec` (error against ε: the first scenario,
20,000 events per simulation, CLS, the default preset's method, DP-SSP and DP-PGD at ε = 0.1 … 10, Δ = 0.5, three
runs) and :func:`~dphawkes_app.utility.controls.default_size_spec` (error against the number of events at ε = 1).
Each row is one cell as the sweep engine returns it — its key, simulation seed, noise seed, every setting and
error — and the file records both specs in full. Cells are seeded experiments on public simulations: re-running a
group reproduces its rows (``tests/app/test_precomputed_results.py``).

Run: ``.venv/bin/python scripts/privacy_utility_table.py`` (a few minutes on two cores).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from dphawkes_app.utility.controls import default_size_spec, default_tradeoff_spec  # noqa: E402
from dphawkes_app.utility.ready import READY_FILE  # noqa: E402
from dphawkes_experiments.sweep import merge_tables, run_size_sweep, run_sweep  # noqa: E402


def main() -> None:
    start = time.perf_counter()
    tradeoff = default_tradeoff_spec()
    rows = run_sweep(tradeoff)
    print(f"error against ε: {len(rows)} cells ({time.perf_counter() - start:.0f} s)", flush=True)
    size_spec, sizes = default_size_spec()
    sized = run_size_sweep(size_spec, sizes)
    print(f"error against the number of events: {len(sized)} cells ({time.perf_counter() - start:.0f} s)",
          flush=True)
    table = merge_tables(rows, sized)
    payload = {
        "what": "every cell of the Privacy–utility page's two default sweeps (seeded experiments on public "
                "simulations)",
        "made_by": "scripts/privacy_utility_table.py", "commit": _commit(),
        "tradeoff_spec": tradeoff.to_dict(), "size_spec": size_spec.to_dict(), "sizes": list(sizes),
        "rows": json.loads(table.to_json(orient="records")),
    }
    READY_FILE.write_text(json.dumps(payload, indent=0, default=str) + "\n")
    print(f"wrote {READY_FILE.relative_to(ROOT)} ({READY_FILE.stat().st_size / 1024:.0f} KB, {len(table)} rows)")


def _commit() -> str:
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                              check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return ""


if __name__ == "__main__":
    main()
