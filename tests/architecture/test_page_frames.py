"""The app's pages are frames and its functions short, read from the source's AST.

* A page function (``pages/*.py``, ``app.py``) reads no module-level state other than constants: what it needs
  comes in as arguments (the Estimate page's frozen :class:`~dphawkes_app.estimate.context.PageContext`). A
  constant is an UPPER_CASE name bound once at module level from imports, literals and other constants — never from
  Streamlit (``st``) or from another module-level variable (the data set, the budget, a widget's value).
* No function in ``pages/``, ``app.py`` or ``dphawkes_app/`` is over :data:`MAX_FUNCTION_LINES` lines of code (its
  docstring not counted: the project asks for NumPy-style docstrings) unless its docstring says why ("long
  because …").
* Every page is a frame (:data:`FRAME_PAGES`: all six; their helpers live in ``dphawkes_app``) of at most
  :data:`MAX_FRAME_LINES` = 170 lines (the longest, Estimate, has 164); the CLI's ``main.py`` only parses and
  dispatches (at most :data:`MAX_CLI_MAIN_LINES` lines, every command in its own module).
* No colour literal outside the palette module: every figure takes its colours from ``dphawkes_app.figures.palette``.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = sorted((ROOT / "pages").glob("*.py")) + [ROOT / "app.py"]
APP_MODULES = sorted((ROOT / "dphawkes_app").rglob("*.py"))
PALETTE = ROOT / "dphawkes_app" / "figures" / "palette.py"
MAX_FUNCTION_LINES = 50
MAX_FRAME_LINES = 170
FRAME_PAGES = ("1_Data.py", "2_Estimate.py", "3_Privacy_utility.py", "4_Reproduce_paper.py",
               "5_Privacy_audit.py", "6_Privacy_budget.py")
MAX_CLI_MAIN_LINES = 250
COMMAND_MODULES = ("fit", "ledger", "audit", "score", "select", "sweep")
HEX_COLOUR = re.compile(r"#[0-9a-fA-F]{6}\b")


def module_state(tree: ast.Module) -> set[str]:
    """Module-level names that are state, not constants (see the module's docstring)."""
    state, constants, bound = set(), set(), set()
    for node in tree.body:
        if isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            reads = {n.id for n in ast.walk(node.value) if isinstance(n, ast.Name)}
            for target in targets:
                for name in (n.id for n in ast.walk(target) if isinstance(n, ast.Name)):
                    if name.isupper() and name not in bound and not reads & (state | {"st"}):
                        constants.add(name)
                    else:
                        constants.discard(name)
                        state.add(name)
                    bound.add(name)
        elif isinstance(node, ast.For | ast.With | ast.AsyncFor | ast.AsyncWith):
            state |= {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    return state


def local_names(function: ast.FunctionDef) -> set[str]:
    """Parameters (of the function and every function or lambda inside it) and every name it binds."""
    names = set()
    for node in ast.walk(function):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            args = node.args
            names |= {a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg) if a}
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
    return names


def state_reads(source: str) -> list[str]:
    """``function: name`` for every read of module-level state inside a module-level function of ``source``."""
    tree = ast.parse(source)
    state = module_state(tree)
    reads = []
    for function in (n for n in tree.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)):
        declared_global = {name for n in ast.walk(function) if isinstance(n, ast.Global) for name in n.names}
        loaded = {n.id for n in ast.walk(function) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
        for name in sorted((loaded - (local_names(function) - declared_global)) & state):
            reads.append(f"{function.name}: {name}")
    return reads


def code_lines(function: ast.FunctionDef) -> int:
    """Lines of a function, its decorators' and docstring's not counted."""
    lines = function.end_lineno - function.lineno + 1
    doc = function.body[0]
    if isinstance(doc, ast.Expr) and isinstance(doc.value, ast.Constant) and isinstance(doc.value.value, str):
        lines -= doc.end_lineno - doc.lineno + 1
    return lines


def long_functions(source: str) -> list[str]:
    """``name (lines)`` of every function of ``source`` over the limit whose docstring gives no reason."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and code_lines(node) > MAX_FUNCTION_LINES:
            if "long because" not in (ast.get_docstring(node) or "").lower():
                found.append(f"{node.name} ({code_lines(node)} lines)")
    return found


def test_the_checks_see_what_they_look_for():
    planted = ("import streamlit as st\nLIMIT = 3\nNAMES = ('a', 'b')\nDEFAULTS = dict(x=LIMIT)\n"
               "dataset = st.session_state['d']\nBUDGET = len(dataset)\nWIDGET = st.number_input('x')\n"
               "def reads(x):\n    return dataset, BUDGET, WIDGET, x\n"
               "def constants(x):\n    return LIMIT, NAMES, DEFAULTS, x\n"
               "def shadows(dataset):\n    BUDGET = 2\n    return dataset, BUDGET\n")
    assert state_reads(planted) == ["reads: BUDGET", "reads: WIDGET", "reads: dataset"]
    long_one = "def f():\n    '''Doc.'''\n" + "    x = 1\n" * (MAX_FUNCTION_LINES + 1)
    assert long_functions(long_one) == [f"f ({MAX_FUNCTION_LINES + 2} lines)"]  # with its def line
    assert not long_functions(long_one.replace("Doc.", "Long because it must be."))
    assert not long_functions("def f():\n    '''" + "doc\n" * 80 + "'''\n    return 1\n")


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_page_functions_read_no_module_state(page):
    assert state_reads(page.read_text()) == []


@pytest.mark.parametrize("path", PAGES + APP_MODULES, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_long_function_without_a_reason(path):
    assert long_functions(path.read_text()) == []


@pytest.mark.parametrize("name", FRAME_PAGES)
def test_a_frame_page_is_short(name):
    assert len((ROOT / "pages" / name).read_text().splitlines()) <= MAX_FRAME_LINES


def test_the_cli_main_parses_and_dispatches():
    main = ROOT / "dphawkes_cli" / "main.py"
    assert len(main.read_text().splitlines()) <= MAX_CLI_MAIN_LINES
    for name in COMMAND_MODULES:
        tree = ast.parse((ROOT / "dphawkes_cli" / f"{name}.py").read_text())
        functions = {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}
        assert f"add_{name}_parser" in functions, f"dphawkes_cli/{name}.py sets up its own sub-parser"


@pytest.mark.parametrize("path", PAGES + APP_MODULES, ids=lambda p: str(p.relative_to(ROOT)))
def test_colours_come_from_the_palette(path):
    colours = [c for node in ast.walk(ast.parse(path.read_text())) if isinstance(node, ast.Constant)
               and isinstance(node.value, str) for c in HEX_COLOUR.findall(node.value)]
    if path == PALETTE:
        assert colours  # the check sees colours where they are
        return
    assert colours == []
