"""Start-up: the CLI imports heavy modules only where a command uses them.

Each case runs the real command in a fresh interpreter under ``python -X importtime`` and reads the
modules it imported from that report, so the test checks behaviour, not timing (the timings are
``benchmarks/bench_startup.py`` and ``benchmarks/bench_vs_em.py``). A private fit is the positive control: it must
import the accountant, which shows that the check sees imports made inside functions. A CLS fit on a numeric CSV
imports no pandas (the loader reads typed columns with pyarrow) nor ``pyarrow.compute`` (its functions are called by
name: ``dphawkes_core/data/arrow_calls.py``); text labels, which need both, are the control. A
command imports only its own module of the CLI (``dphawkes --help``, which lists them all, is the control), and a
small fit on exact times neither numba (the compiled passes: their control is in
``tests/core/statistics/test_pair_passes.py``) nor scipy's sparse matrices. A fit imports the module of the family it
runs and no other family's (``fit --help``, which lists every family's options, is the control), and the ledger only
when it records to one.
"""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

from dphawkes_core.estimators.registry import BUILT_IN

APP_ONLY = ("tick", "plotly", "streamlit")  # simulation, figures, the app: never on a fit's path
ACCOUNTANT = "dp_accounting"
FAMILY_MODULES = {name: f"dphawkes_core.estimators.{module}" for name, module, _ in BUILT_IN}


def imported_modules(*cli_args: str, cwd) -> set[str]:
    """Names of every module imported by ``python -m dphawkes_cli *cli_args`` (checked to exit 0)."""
    proc = subprocess.run([sys.executable, "-X", "importtime", "-m", "dphawkes_cli", *cli_args],
                          capture_output=True, text=True, cwd=cwd, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    lines = [line for line in proc.stderr.splitlines() if line.startswith("import time:")]
    names = {line.rsplit("|", 1)[1].strip() for line in lines[1:]}  # lines[0] is the header
    assert "dphawkes_cli.main" in names  # the report really covers the command
    return names


def cls_fit_imports(events_path, tmp_path) -> set[str]:
    """Modules imported by a CLS fit of ``events_path`` (its JSON result written to ``tmp_path``)."""
    return imported_modules("fit", str(events_path), "--bin-size", "0.5", "--support", "2", "--method", "cls",
                            "--json", str(tmp_path / "cls.json"), cwd=tmp_path)


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
    assert set(FAMILY_MODULES.values()) <= names  # the control of a fit's one family: help lists every family


def test_cls_fit_imports_neither_accountant_nor_app_modules(events_csv, tmp_path):
    names = cls_fit_imports(events_csv, tmp_path)
    assert (tmp_path / "cls.json").exists()
    for package in (*APP_ONLY, ACCOUNTANT, "scipy.stats", "scipy.signal", "scipy.sparse"):
        assert not loaded(names, package), f"a CLS fit imported {package}"


@pytest.fixture(scope="module")
def sequences_csv(events_csv):
    """The same events as two sequences with numeric ids (``sequence,time,dimension``)."""
    rows = events_csv.read_text().splitlines()[1:]
    path = events_csv.with_name("sequences.csv")
    path.write_text("sequence,time,dimension\n" + "".join(f"{i % 2},{row}\n" for i, row in enumerate(rows)))
    return path


@pytest.mark.parametrize("which", ["events_csv", "sequences_csv"])
def test_cls_fit_on_a_numeric_csv_imports_no_pandas(which, request, tmp_path):
    names = cls_fit_imports(request.getfixturevalue(which), tmp_path)
    assert loaded(names, "pyarrow")  # the typed CSV reader did run
    assert not loaded(names, "pandas"), "a CLS fit on a numeric CSV imported pandas"
    assert "pyarrow.compute" not in names, "a numeric CSV's cells imported pyarrow.compute (data/arrow_calls.py)"


def test_text_labels_do_import_pandas(events_csv, tmp_path):
    """Positive control: dimension labels take the text path, whose pandas (and pyarrow.compute) import the check
    must see."""
    labelled = tmp_path / "labelled.csv"
    labelled.write_text(events_csv.read_text().replace(",0\n", ",buy\n").replace(",1\n", ",sell\n"))
    names = cls_fit_imports(labelled, tmp_path)
    assert loaded(names, "pandas") and "pyarrow.compute" in names


def test_private_fit_imports_the_accountant(events_csv, tmp_path):
    names = imported_modules("fit", str(events_csv), "--bin-size", "0.5", "--support", "2", "--method", "pgd",
                             "--bound", "1", "--iters", "5", "--epsilon", "1", "--json", str(tmp_path / "pgd.json"),
                             cwd=tmp_path)
    assert loaded(names, ACCOUNTANT)
    assert not any(loaded(names, package) for package in APP_ONLY)


def test_a_fit_not_asked_to_record_imports_no_ledger(events_csv, tmp_path):
    """The ledger (the accountant's records and its stores) is imported by a fit that records to one, not by every
    fit: ``--ledger``, the control, must import it (the check sees imports made inside functions)."""
    ledger = "dphawkes_core.release.ledger"
    assert ledger not in cls_fit_imports(events_csv, tmp_path)
    recorded = imported_modules("fit", str(events_csv), "--bin-size", "0.5", "--support", "2", "--method", "cls",
                                "--ledger", str(tmp_path / "ledger.json"), "--json", str(tmp_path / "rec.json"),
                                cwd=tmp_path)
    assert ledger in recorded


def blas_threads_around_a_fit(events_csv, tmp_path, numpy_first: bool) -> tuple[str, str]:
    """numpy's BLAS threads in a fresh interpreter before and after a CLI fit; ``numpy_first``: numpy imported before
    the command line (its BLAS starts with its own default, one thread per core)."""
    code = ("import sys\n" + ("import numpy\n" if numpy_first else "") +
            "from dphawkes_cli.main import main\nimport numpy\nfrom threadpoolctl import threadpool_info\n"
            "before = [i['num_threads'] for i in threadpool_info() if 'numpy' in i['filepath']]\n"
            f"main(['fit', {str(events_csv)!r}, '--bin-size', '0.5', '--support', '2', '--json', 'o.json'])\n"
            "after = [i['num_threads'] for i in threadpool_info() if 'numpy' in i['filepath']]\n"
            "print(before, after)\n")
    env = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
                                                             "OMP_NUM_THREADS")}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, timeout=120,
                          env=env)
    assert proc.returncode == 0, proc.stderr[-2000:]
    before, after = proc.stdout.strip().split("] [")
    return before.strip("[]"), after.strip("[]")


def test_cli_fit_runs_numpy_blas_on_one_thread(events_csv, tmp_path):
    """The BLAS policy (dphawkes_core/threads.py) reaches the fit path: numpy's BLAS has 1 thread after a CLI fit, in
    a fresh interpreter whose BLAS started with its default (one per core: numpy imported first)."""
    before, after = blas_threads_around_a_fit(events_csv, tmp_path, numpy_first=True)
    assert after == "1"
    if (os.cpu_count() or 1) > 1:
        assert before != "1"  # the policy, not the default, made it 1


def test_the_command_line_starts_numpy_blas_on_one_thread(events_csv, tmp_path):
    """Imported before numpy (as ``dphawkes`` and ``python -m dphawkes_cli`` are), the command line makes OpenBLAS
    start with one thread, not start a pool it never uses; the control is numpy imported first (above)."""
    before, after = blas_threads_around_a_fit(events_csv, tmp_path, numpy_first=False)
    assert before == after == "1"


COMMAND_MODULES = ("dphawkes_cli.fit", "dphawkes_cli.audit", "dphawkes_cli.sweep", "dphawkes_cli.select")


def test_a_command_imports_only_its_own_module_of_the_cli(events_csv, tmp_path):
    names = cls_fit_imports(events_csv, tmp_path)
    assert "dphawkes_cli.fit" in names
    for module in COMMAND_MODULES[1:]:
        assert module not in names, f"a fit imported {module}"
    listing = imported_modules("--help", cwd=tmp_path)  # the control: the list of commands builds every one
    assert all(module in listing for module in COMMAND_MODULES)


def test_a_small_likelihood_fit_imports_no_compiled_pass_scipy_or_pandas(events_csv, tmp_path):
    names = imported_modules("fit", str(events_csv), "--bin-size", "0.5", "--support", "2", "--method", "mle",
                             "--json", str(tmp_path / "mle.json"), cwd=tmp_path)
    assert (tmp_path / "mle.json").exists()
    for package in ("numba", "scipy", "pandas", *APP_ONLY, ACCOUNTANT):
        assert not loaded(names, package), f"a small mle fit imported {package}"
    assert FAMILY_MODULES["mle"] in names
    others = {module for name, module in FAMILY_MODULES.items() if name != "mle"}
    assert not others & names, f"an mle fit imported other families' modules: {sorted(others & names)}"


def test_a_small_grid_free_fit_loads_no_compiled_pass(events_csv, tmp_path):
    names = imported_modules("fit", str(events_csv), "--bin-size", "0.5", "--support", "2", "--method", "ctls",
                             "--sigma2", "0", "--json", str(tmp_path / "ctls.json"), cwd=tmp_path)
    assert (tmp_path / "ctls.json").exists()
    for package in ("numba", "pandas", *APP_ONLY):  # scipy.optimize: its non-negative solve
        assert not loaded(names, package), f"a small ctls fit imported {package}"
