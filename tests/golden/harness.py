"""The golden-output harness: the ONE place that knows where the code under test lives.

Everything the refactoring guard runs goes through the few functions below:

* :func:`run_cli` — the ``dphawkes`` command line, called in-process, its output file parsed and normalised;
* :func:`app_snapshot` — one Streamlit page under ``AppTest``, reduced to its deterministic key numbers;
* :func:`sample_data` / :func:`simulate_csv` / :func:`sequence_csv` — the input files the cases read;
* :func:`normalise` — volatile fields dropped, temporary paths replaced by placeholders.

When modules or pages move, only the block marked "CODE UNDER TEST" changes (the CLI entry point and the
page files). Cases (``cases.py``) speak only of argv lists and page names; the comparison lives in
``test_golden.py``.
"""

from __future__ import annotations

import base64
import contextlib
import importlib.util
import io
import json
import math
import os
import re
import sys
from pathlib import Path

import numpy as np
import pandas as pd

# ---- CODE UNDER TEST: the only module paths and file names this guard knows ------------------------------
#: repo root of the code under test (app.py, pages/, sample_data/); ``DPHAWKES_GOLDEN_ROOT`` overrides it
ROOT = Path(os.environ.get("DPHAWKES_GOLDEN_ROOT") or Path(__file__).resolve().parents[2]).resolve()


def _in_root(module: str) -> bool:
    """Whether ``module`` is importable from this repo (not from another checkout's editable install)."""
    spec = importlib.util.find_spec(module)
    return spec is not None and spec.origin is not None and Path(spec.origin).resolve().is_relative_to(ROOT)


# the ``dphawkes`` console script (pyproject [project.scripts]): dphawkes_cli.main since d5b3c5d (the layers as
# packages), dphawkes_core.cli up to dfecf98 (where the outputs were recorded). Chosen by which one this repo
# has, not by catching ImportError, so that a broken import inside the CLI is reported as itself.
if _in_root("dphawkes_cli"):
    from dphawkes_cli.main import main as _cli_main
else:
    from dphawkes_core.cli import main as _cli_main

SAMPLE_DIR = ROOT / "sample_data"
PAGES = {  # logical page name -> script, relative to ROOT
    "home": "app.py",
    "data": "pages/1_Data.py",
    "estimate": "pages/2_Estimate.py",
    "privacy_utility": "pages/3_Privacy_utility.py",
    "reproduce": "pages/4_Reproduce_paper.py",
    "audit": "pages/5_Privacy_audit.py",
    "budget": "pages/6_Privacy_budget.py",
}
LEDGER_ENV = "DPHAWKES_LEDGER"  # the app's ledger file (else ~/.dphawkes/ledger.json: never touch it)
DATA_DIR_ENV = "DPHAWKES_DATA_DIR"  # the app's real-data directory (else <repo>/../shared/data)
# -----------------------------------------------------------------------------------------------------------

#: keys whose values are wall-clock measurements (different on every run): dropped wherever they occur
VOLATILE_KEYS = frozenset({
    "elapsed_s",  # fit / audit / sweep-cell wall time
    "stats_s",  # sweep: time to bin and compute the statistics
    "sim_s",  # sweep: time to simulate
    "who",  # ledger: the OS user (or database role) who changed a setting — whoever runs the recording
})
#: patterns in app text masked before its numbers are read (timings measured on this run)
VOLATILE_TEXT = (
    re.compile(r"\btook\s+[\d.,]+\s*(?:ms|s|µs|min)\b"),  # Estimate page: "fit took 43 ms"
    re.compile(r"[\d.,]+\s*s of trials"),  # Audit page: "0.4 s of trials"
)
#: wall-clock timestamps inside strings (the Budget page's "released (UTC)" column): replaced by <timestamp>
TIMESTAMP = re.compile(r"\b\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:\d{2})?")
_TMP, _ROOT = "<tmp>", "<root>"
APP_TIMEOUT = 60
#: The estimator families registered when the outputs were recorded. The snapshots pin numbers, not the registry:
#: what a family registered later adds to a listing (its name among a ``--method``'s choices, its option flags and
#: choice sets in ``--help``, its row in the Estimate page's comparison) is left out (:func:`later_families`), so
#: adding a family (a plug-in, a test's toy) needs no re-recording, while every recorded family's entry still counts.
RECORDED_FAMILIES = ("cls", "pgd", "cg", "ssp", "pgd-clip", "ctls", "exp", "mle")


def code_under_test() -> dict[str, str]:
    """The files the CLI entry point and the core package were imported from (all must lie under ROOT)."""
    import dphawkes_core

    return {"cli": sys.modules[_cli_main.__module__].__file__, "core": dphawkes_core.__file__, "root": str(ROOT)}


# ---- normalisation ---------------------------------------------------------------------------------------

def normalise(value, tmp_dir: str | os.PathLike | None = None):
    """A JSON-able copy of ``value``: volatile keys dropped (:data:`VOLATILE_KEYS`), numpy scalars and arrays
    as plain numbers and lists, tuples as lists; inside strings the temporary directory and repo root are
    replaced by ``<tmp>`` and ``<root>`` and wall-clock timestamps by ``<timestamp>`` (:data:`TIMESTAMP`)."""
    if isinstance(value, dict):
        return {str(k): normalise(v, tmp_dir) for k, v in value.items() if k not in VOLATILE_KEYS}
    if isinstance(value, (list, tuple)):
        return [normalise(v, tmp_dir) for v in value]
    if isinstance(value, np.ndarray):
        return normalise(value.tolist(), tmp_dir)
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return float(value)
    if isinstance(value, str):
        return _paths(value, tmp_dir)
    if value is None or value is pd.NA or value is pd.NaT:
        return None
    return _paths(str(value), tmp_dir)


def _paths(text: str, tmp_dir) -> str:
    if tmp_dir is not None:
        for form in sorted({str(tmp_dir), str(Path(tmp_dir).resolve())}, key=len, reverse=True):
            text = text.replace(form, _TMP)
    return TIMESTAMP.sub("<timestamp>", text.replace(str(ROOT), _ROOT))


# ---- input files -----------------------------------------------------------------------------------------

def sample_data(name: str) -> str:
    """Absolute path of a file in the repo's ``sample_data/``."""
    path = SAMPLE_DIR / name
    assert path.is_file(), f"no sample data file {path}"
    return str(path)


def simulate_csv(tmp_dir, scenario: str, events: int, seed: int) -> str:
    """``dphawkes simulate`` into ``tmp_dir`` (cached per arguments); returns the CSV path."""
    path = Path(tmp_dir) / f"sim_{scenario}_{events}_{seed}.csv"
    if not path.exists():
        result = run_cli(["simulate", "--scenario", scenario, "--events", events, "--seed", seed, "--out", path],
                         tmp_dir)
        assert result["status"] == 0, f"simulate failed: {result}"
    return str(path)


def sequence_csv(tmp_dir, scenario: str = "paper-2d", sequences: int = 6, events: int = 150, seed: int = 10) -> str:
    """A multi-sequence event file (``sequence,time,dimension``): ``sequences`` simulations of ``scenario``
    with seeds ``seed, seed+1, …``, each one sequence (one person)."""
    path = Path(tmp_dir) / f"seq_{scenario}_{sequences}x{events}_{seed}.csv"
    if not path.exists():
        frames = [pd.read_csv(simulate_csv(tmp_dir, scenario, events, seed + s)).assign(sequence=s)
                  for s in range(sequences)]
        pd.concat(frames)[["sequence", "time", "dimension"]].to_csv(path, index=False)
    return str(path)


# ---- the command line ------------------------------------------------------------------------------------

def run_cli(argv: list[str], tmp_dir) -> dict:
    """Run ``dphawkes *argv`` in-process and return its normalised result.

    The output goes to a file in ``tmp_dir`` (``--json`` for fit / audit / ledger show, ``--out`` for sweep
    and simulate) unless ``argv`` names one. Returns ``{"status": exit status, "stderr": lines (progress
    counters dropped), "output": parsed output or None}``: a fit / audit / ledger JSON as is, a sweep table
    as ``{"columns", "rows", "params"}`` (its CSV and sidecar), a simulation as its event table, and for
    ``--help`` the option flags and choice sets the help names (independent of the terminal width).
    """
    argv = [str(a) for a in argv]
    command = argv[0] if argv else ""
    out_flag = "--out" if command in ("sweep", "simulate") else "--json"
    out = None
    if out_flag in argv:
        out = Path(argv[argv.index(out_flag) + 1])
    elif command in ("fit", "audit", "ledger", "sweep", "simulate") and "--help" not in argv:
        out = Path(tmp_dir) / {"sweep": "sweep.csv", "simulate": "events.csv"}.get(command, "out.json")
        argv = argv + [out_flag, str(out)]
    if out is not None and out.exists():
        out.unlink()  # never read a previous step's output
    stderr, stdout = io.StringIO(), io.StringIO()
    columns = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = "400"  # argparse wraps help and usage at the terminal width: no wrapping
    try:
        with contextlib.redirect_stderr(stderr), contextlib.redirect_stdout(stdout):
            status = _cli_main(argv)
    except SystemExit as exc:  # --help and argparse usage errors
        status = exc.code
    finally:
        if columns is None:
            os.environ.pop("COLUMNS")
        else:
            os.environ["COLUMNS"] = columns
    output = None
    if out is not None and out.exists():
        output = _read_output(command, out)
    elif "--help" in argv:
        output = _help_listing(stdout.getvalue())
    return normalise({"status": status, "stderr": _stderr_lines(stderr.getvalue()), "output": output}, tmp_dir)


def later_families() -> list:
    """The registered families that are not among :data:`RECORDED_FAMILIES` (registered after the recording)."""
    from dphawkes_core.estimators.registry import FAMILIES

    return [family for name, family in FAMILIES.items() if name not in RECORDED_FAMILIES]


def _help_listing(text: str) -> dict:
    """The option flags and choice sets a ``--help`` names, without what families registered later add: their
    flags and choice sets (unless a recorded family declares the same), and their names inside a method list."""
    later = later_families()
    recorded = [f for f in _registered() if f.name in RECORDED_FAMILIES]
    own_flags = {s.flag for f in recorded for s in f.settings}
    own_choices = {_choice_set(s.choices) for f in recorded for s in f.settings if s.kind == "choice"}
    later_flags = {s.flag for f in later for s in f.settings} - own_flags
    later_choices = {_choice_set(s.choices) for f in later for s in f.settings if s.kind == "choice"} - own_choices
    later_names = {f.name for f in later}
    flags = set(re.findall(r"(?<![\w-])--[a-z][a-z0-9-]*", text)) - later_flags
    choices = {"{" + ",".join(c for c in found[1:-1].split(",") if c not in later_names) + "}"
               for found in set(re.findall(r"\{[^{}\s]+\}", text)) - later_choices}
    return {"flags": sorted(flags), "choices": sorted(choices)}


def _registered() -> list:
    from dphawkes_core.estimators.registry import FAMILIES

    return list(FAMILIES.values())


def _choice_set(choices) -> str:
    return "{" + ",".join(str(c) for c in choices) + "}"


def _stderr_lines(text: str) -> list[str]:
    """stderr without the ``\\r``-overwritten progress counters ("17/100 trials")."""
    lines = []
    for line in text.splitlines():
        line = line.split("\r")[-1].strip()
        if line and not re.fullmatch(r"\d+/\d+ (?:cells|trials)", line):
            lines.append(line)
    return lines


def _read_output(command: str, path: Path):
    if command == "sweep":
        frame = pd.read_csv(path)
        sidecar = path.with_name(path.name + ".json")
        params = json.loads(sidecar.read_text()) if sidecar.exists() else None
        frame = frame.drop(columns=[c for c in frame.columns if c in VOLATILE_KEYS])
        return {"columns": list(frame.columns), "rows": _records(frame), "params": params}
    if command == "simulate":
        frame = pd.read_csv(path)
        return {"columns": list(frame.columns), "n_rows": len(frame),
                "column_sums": {c: float(frame[c].sum()) for c in frame.columns},
                "head": _records(frame.head(5)), "tail": _records(frame.tail(5))}
    return json.loads(path.read_text())


def _records(frame: pd.DataFrame) -> list[list]:
    return [[_cell(v) for v in row] for row in frame.itertuples(index=False, name=None)]


def _cell(value):
    if isinstance(value, (np.generic,)):
        value = value.item()
    if isinstance(value, float) and math.isnan(value):
        return float("nan")
    if value is None or value is pd.NA:
        return None
    return value


# ---- the Streamlit app -----------------------------------------------------------------------------------

def app_snapshot(page: str, tmp_dir, actions: tuple = (), query: dict | None = None) -> dict:
    """Run the app page ``page`` (a key of :data:`PAGES`) under ``AppTest`` and return its key numbers.

    ``actions`` are applied one by one after the first run, each followed by a rerun:
    ``("number_input", "seed", 0)`` sets a widget (by type and key), ``("button", "au_run")`` clicks one,
    ``("switch_page", "estimate")`` goes to another page in the same session (AppTest switches pages only
    from the main script: start such flows at ``"home"``).
    ``query`` are URL query parameters of the first run. The Streamlit caches are cleared before and after,
    the app's ledger is a file in ``tmp_dir`` and its real-data directory an empty folder there.

    Returns ``{"exceptions", "errors", "elements"}``: every element in page order (main area, then sidebar)
    that carries numbers — metrics (label, value), dataframes and tables (columns, index, cells), widget values
    by key, Plotly traces (count, sum, min, max of every numeric array) and the numbers in text elements
    (timings masked: :data:`VOLATILE_TEXT`).
    """
    import streamlit as st
    from streamlit.testing.v1 import AppTest

    tmp_dir = Path(tmp_dir)
    data_dir = tmp_dir / "no_real_data"
    data_dir.mkdir(exist_ok=True)
    env = {LEDGER_ENV: str(tmp_dir / "app_ledger.json"), DATA_DIR_ENV: str(data_dir)}
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    st.cache_data.clear()
    st.cache_resource.clear()
    try:
        at = AppTest.from_file(str(ROOT / PAGES[page]), default_timeout=APP_TIMEOUT)
        if query:
            at.query_params.update(query)
        at.run()
        for action in actions:
            kind, key, *value = action
            if kind == "switch_page":
                at.switch_page(os.path.relpath(ROOT / PAGES[key], (ROOT / PAGES[page]).parent)).run()
                continue
            widget = getattr(at, kind)(key=key)
            (widget.set_value(value[0]) if value else widget.click()).run()
        snapshot = {
            "exceptions": [e.value for e in at.exception],
            "errors": [e.value for e in at.error],
            "elements": _elements(at.main, "main", tmp_dir) + _elements(at.sidebar, "sidebar", tmp_dir),
        }
    finally:
        st.cache_data.clear()
        st.cache_resource.clear()
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    return normalise(snapshot, tmp_dir)


_TEXT = {"markdown", "caption", "info", "success", "warning", "error", "title", "header", "subheader", "text",
         "latex", "code", "exception", "toast"}
_NUMBER = re.compile(r"(?<![\w.])[-−]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:[eE][-+−]?\d+)?(?![\w])")


def text_numbers(text: str, tmp_dir=None) -> list[float]:
    """The numbers written in ``text`` (``50,000`` is one number; ``−`` is a minus), after the temporary
    directory and repo root are replaced by placeholders and timings masked."""
    text = _paths(text, tmp_dir)
    for pattern in VOLATILE_TEXT:
        text = pattern.sub("<time>", text)
    return [float(m.replace(",", "").replace("−", "-")) for m in _NUMBER.findall(text)]


def _elements(block, where: str, tmp_dir) -> list[dict]:
    """Depth-first, in page order: a summary of every element of ``block`` that carries numbers or a value."""
    out = []
    for node in getattr(block, "children", {}).values():
        kind = getattr(node, "type", None)
        if getattr(node, "children", None) and kind not in ("dataframe", "table"):
            out += _elements(node, where, tmp_dir)
            continue
        item = _element(node, kind, tmp_dir)
        if item is not None:
            out.append({"where": where, "type": kind, **item})
    return out


def _element(node, kind: str, tmp_dir):
    """One element's deterministic content, or None for elements without numbers or values."""
    if kind == "metric":
        return {"label": node.label, "value": node.value, "delta": getattr(node, "delta", None)}
    if kind in ("dataframe", "table"):
        return {"frame": _frame(node.value)}
    if kind == "plotly_chart":
        return {"key": getattr(node, "key", None), "traces": _plotly_traces(json.loads(node.proto.spec))}
    if kind in _TEXT:
        numbers = text_numbers(str(node.value), tmp_dir)
        return {"numbers": numbers} if numbers else None
    key = getattr(node, "key", None)
    if key is not None and kind not in ("download_button", "button", "form_submit_button"):
        try:
            return {"key": key, "value": _widget_value(node.value)}
        except Exception:  # noqa: BLE001 - a widget without a readable value is left out
            return None
    return None


def _widget_value(value):
    if isinstance(value, (list, tuple)):
        return [_widget_value(v) for v in value]
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    if isinstance(value, np.generic):
        return value.item()
    return str(value)


def _frame(frame) -> dict:
    """A dataframe as ``{"columns", "index", "cells"}`` (numbers, strings, None; NaN kept); in a table of methods
    (a ``method`` column) the rows of families registered later are left out (:data:`RECORDED_FAMILIES`)."""
    if hasattr(frame, "data") and not isinstance(frame, pd.DataFrame):  # a pandas Styler
        frame = frame.data
    frame = pd.DataFrame(frame)
    frame = frame.drop(columns=[c for c in frame.columns if c in VOLATILE_KEYS])
    labels = tuple(f.label for f in later_families())
    if "method" in frame.columns and labels:
        later = frame["method"].astype(str).str.startswith(labels)
        if later.any():  # the rows after them move up, as in a table without them (a range index renumbered)
            frame = frame[~later]
            frame = frame.reset_index(drop=True) if pd.api.types.is_integer_dtype(frame.index) else frame
    return {"columns": [str(c) for c in frame.columns], "index": [_cell(i) for i in frame.index],
            "cells": _records(frame)}


def _plotly_traces(figure: dict) -> list[dict]:
    """Per trace: its type and name, and count / sum / min / max of each numeric data array."""
    traces = []
    for trace in figure.get("data", []):
        item = {"type": trace.get("type"), "name": trace.get("name")}
        for field in ("x", "y", "z", "base", "width"):
            if field in trace:
                summary = _array_summary(trace[field])
                if summary is not None:
                    item[field] = summary
        traces.append(item)
    return traces


def _array_summary(values):
    if isinstance(values, dict) and "bdata" in values:  # Plotly >= 6: base64-encoded numpy arrays
        array = np.frombuffer(base64.b64decode(values["bdata"]), dtype=values["dtype"])
        if "shape" in values:
            array = array.reshape([int(n) for n in str(values["shape"]).split(",")])
    else:
        try:
            array = np.asarray(values, dtype=float)
        except (TypeError, ValueError):
            return {"n": len(values)} if isinstance(values, list) else None
    array = np.asarray(array, dtype=float).ravel()
    finite = array[np.isfinite(array)]
    if finite.size == 0:
        return {"n": int(array.size)}
    return {"n": int(array.size), "n_finite": int(finite.size), "sum": float(finite.sum()),
            "min": float(finite.min()), "max": float(finite.max())}
