"""Start-up: the CLI imports heavy modules only where a command uses them (issue 14).

Each case runs the real command in a fresh interpreter under ``python -X importtime`` and reads the
modules it imported from that report, so the test checks behaviour, not timing (the timings are
``benchmarks/bench_startup.py``). A private fit is the positive control: it must import the accountant,
which shows that the check sees imports made inside functions.
"""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

APP_ONLY = ("tick", "plotly", "streamlit")  # simulation, figures, the app: never on a fit's path
ACCOUNTANT = "dp_accounting"


def imported_modules(*cli_args: str, cwd) -> set[str]:
    """Names of every module imported by ``python -m dphawkes_core.cli *cli_args`` (checked to exit 0)."""
    proc = subprocess.run([sys.executable, "-X", "importtime", "-m", "dphawkes_core.cli", *cli_args],
                          capture_output=True, text=True, cwd=cwd, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    lines = [line for line in proc.stderr.splitlines() if line.startswith("import time:")]
    names = {line.rsplit("|", 1)[1].strip() for line in lines[1:]}  # lines[0] is the header
    assert "dphawkes_core.cli" in names  # the report really covers the command
    return names


def loaded(names: set[str], package: str) -> bool:
    """Whether ``package`` or any of its submodules is among ``names``."""
    return any(name == package or name.startswith(package + ".") for name in names)


@pytest.fixture(scope="module")
def events_csv(tmp_path_factory):
    """A small two-dimensional event file (independent Poisson streams; no simulator needed)."""
    rng = np.random.default_rng(0)
    times = np.sort(rng.uniform(0, 500, size=2000))
    path = tmp_path_factory.mktemp("startup") / "events.csv"
    rows = "".join(f"{t:.6f},{j}\n" for t, j in zip(times, rng.integers(0, 2, size=times.size)))
    path.write_text("time,dimension\n" + rows)
    return path


def test_fit_help_imports_no_heavy_module(tmp_path):
    names = imported_modules("fit", "--help", cwd=tmp_path)
    for package in (*APP_ONLY, ACCOUNTANT, "scipy", "pandas"):
        assert not loaded(names, package), f"`dphawkes fit --help` imported {package}"


def test_cls_fit_imports_neither_accountant_nor_app_modules(events_csv, tmp_path):
    out = tmp_path / "cls.json"
    names = imported_modules("fit", str(events_csv), "--bin-size", "0.5", "--support", "2", "--method", "cls",
                             "--json", str(out), cwd=tmp_path)
    assert out.exists()
    for package in (*APP_ONLY, ACCOUNTANT, "scipy.stats", "scipy.signal", "scipy.sparse"):
        assert not loaded(names, package), f"a CLS fit imported {package}"


def test_private_fit_imports_the_accountant(events_csv, tmp_path):
    names = imported_modules("fit", str(events_csv), "--bin-size", "0.5", "--support", "2", "--method", "pgd",
                             "--bound", "1", "--iters", "5", "--epsilon", "1", "--json", str(tmp_path / "pgd.json"),
                             cwd=tmp_path)
    assert loaded(names, ACCOUNTANT)
    assert not any(loaded(names, package) for package in APP_ONLY)


def test_cli_fit_runs_numpy_blas_on_one_thread(events_csv, tmp_path):
    """The BLAS policy (dphawkes_core/threads.py) reaches the fit path: numpy's BLAS has 1 thread after
    a CLI fit, in a fresh interpreter whose BLAS started with its default (one per core)."""
    code = ("import sys\nfrom threadpoolctl import threadpool_info\nfrom dphawkes_core.cli import main\n"
            "before = [i['num_threads'] for i in threadpool_info() if 'numpy' in i['filepath']]\n"
            f"main(['fit', {str(events_csv)!r}, '--bin-size', '0.5', '--support', '2', '--json', 'o.json'])\n"
            "after = [i['num_threads'] for i in threadpool_info() if 'numpy' in i['filepath']]\n"
            "print(before, after)\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    before, after = proc.stdout.strip().split("] [")
    assert after.strip("[]") == "1"
    if (os.cpu_count() or 1) > 1 and not {"OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS"} & set(os.environ):
        assert before.strip("[]") != "1"  # the policy, not the default, made it 1
