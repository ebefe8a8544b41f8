"""Power of the worst-case privacy audit through the CLI: for each formal method,
``dphawkes audit --worst-case`` at ε = 1, δ = 1e-5 with 2000 trials per data set, run on the correct
mechanism and on one whose noise std is cut 2× (``--broken --broken-factor 2``), with seeds 1…RUNS each.

Settings: the CLI's defaults for ``--worst-case`` — the family's worst-case public settings
(``Family.audit_hints``: ``worst_case_options``/``worst_case_lags``/``worst_case_dim``; ``worst_case_state``),
confidence
0.999 — on paper-2d (1000 events, data seed 1), Δ = 1, C = the data's largest bin count (5), p = 3 unless
the family fixes it. Target: every broken run refuted, no correct run refuted, each audit under a minute.
The table in docs/privacy.md ("Empirical audit") comes from ``python benchmarks/bench_audit.py``.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

METHODS = ("ssp", "pgd", "cg", "pgd-clip", "ctls")
RUNS = 10
FACTOR = 2.0
COMMAND = ["audit", "--scenario", "paper-2d", "--bin-size", "1", "--worst-case", "--epsilon", "1",
           "--dp-delta", "1e-5", "--trials", "2000"]


def cli_audit(method: str, seed: int, broken: float | None) -> tuple[dict, float]:
    """One ``dphawkes audit --worst-case`` run in a fresh process: its JSON and wall-clock seconds."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "audit.json"
        argv = [sys.executable, "-m", "dphawkes_cli", *COMMAND, "--method", method, "--seed", str(seed),
                "--json", str(out)] + (["--broken", "--broken-factor", str(broken)] if broken else [])
        start = time.perf_counter()
        subprocess.run(argv, check=True, capture_output=True, text=True)
        return json.loads(out.read_text()), time.perf_counter() - start


def measure(method: str, runs: int = RUNS) -> dict:
    """``runs`` correct and ``runs`` broken audits of ``method``: μ lower bounds (relative to the claim),
    refutations and seconds per audit."""
    rows = {}
    for label, broken in (("correct", None), ("broken", FACTOR)):
        payloads, seconds = zip(*(cli_audit(method, seed, broken) for seed in range(1, runs + 1)))
        bounds = np.array([p["mu_lower_bound"] for p in payloads])
        rows[label] = {"mu_lower_bound": bounds, "refuted": sum(p["violated"] for p in payloads),
                       "seconds": float(np.mean(seconds)), "payload": payloads[0]}
    return rows


def table_row(method: str, rows: dict) -> str:
    """One Markdown row of the docs' table."""
    p = rows["correct"]["payload"]
    options = ", ".join(f"{k} = {p[k]:g}" if isinstance(p[k], float) else f"{k} = {p[k]}"
                        for k in ("iters", "bound", "radius", "clip") if k in p)
    settings = (f"d = {p['worst_case_dim']}, p = {p['lags']}, C = {p['count_cap']}"
                + (f", {options}" if options else "")
                + (", at the state U*" if p.get("released_at_state") is not None else ""))
    correct, broken = rows["correct"]["mu_lower_bound"], rows["broken"]["mu_lower_bound"]
    stats = lambda b: f"{b.min():.3f} / {np.median(b):.3f} / {b.max():.3f}"  # noqa: E731
    runs = correct.size
    return (f"| {method} | {settings} | {p['mu_claimed']:.3f} | {stats(correct)} | {stats(broken)} | "
            f"{rows['broken']['refuted']}/{runs} | {rows['correct']['refuted']}/{runs} | "
            f"{(rows['correct']['seconds'] + rows['broken']['seconds']) / 2:.1f} |")


def rows() -> list[dict]:
    out = []
    for method in METHODS:
        measured = measure(method)
        out.append({"benchmark": f"worst-case CLI audit {method}: broken 2× caught / correct refuted "
                                 f"({RUNS} runs each, 2000 trials, ε = 1)",
                    "measured": f"{measured['broken']['refuted']}/{RUNS} caught, {measured['correct']['refuted']}"
                                f"/{RUNS} refuted ({measured['correct']['seconds']:.1f} s per audit)",
                    "target": f"{RUNS}/{RUNS} caught, 0 refuted, < 60 s",
                    "met": measured["broken"]["refuted"] == RUNS and measured["correct"]["refuted"] == 0
                    and max(measured["correct"]["seconds"], measured["broken"]["seconds"]) < 60,
                    "row": table_row(method, measured)})
    return out


if __name__ == "__main__":
    print("| method | settings | claimed μ | μ lower bound, correct (min / median / max) | "
          "μ lower bound, broken 2× | broken caught | correct refuted | s per audit |")
    print("|---|---|---|---|---|---|---|---|")
    results = rows()
    for row in results:
        print(row["row"])
    for row in results:
        print({key: value for key, value in row.items() if key != "row"}, file=sys.stderr)
