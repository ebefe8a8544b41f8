"""The import graph, built from the source's AST (every import: top level, inside functions and under
``TYPE_CHECKING``), has no circle and keeps the layers: core < experiments < CLI and app (``docs/architecture.md``)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("dphawkes_core", "dphawkes_experiments", "dphawkes_cli", "dphawkes_app")
# layer of each package; a module may import only from its own layer or lower ones, and the two top layers
# (the CLI and the app) not from each other
LAYERS = {"dphawkes_core": 0, "dphawkes_experiments": 1, "dphawkes_cli": 2, "dphawkes_app": 2, "pages": 3}
APP_ONLY = ("streamlit", "plotly")  # third-party packages only the app layer may import


def module_files() -> dict[str, Path]:
    """Dotted name -> file of every module of the product (packages, ``app.py`` and the pages)."""
    files = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            files[name] = path
    files["app"] = ROOT / "app.py"
    for path in sorted((ROOT / "pages").glob("*.py")):
        files[f"pages.{path.stem}"] = path
    return files


def imported_names(name: str, path: Path) -> set[str]:
    """Every dotted name that ``path`` imports, relative imports resolved against the module ``name``."""
    is_package = path.name == "__init__.py"
    package = name if is_package else name.rpartition(".")[0]
    names = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module
            names.add(module)
            names.update(f"{module}.{alias.name}" for alias in node.names)  # `from pkg import submodule`
    return names


def import_graph() -> dict[str, set[str]]:
    """Module -> the product modules it imports (a submodule import counts as importing the submodule)."""
    files = module_files()
    graph = {}
    for name, path in files.items():
        targets = set()
        for target in imported_names(name, path):
            targets.update(enclosing_packages(target, name))
        graph[name] = {target for target in targets if target in files and target != name}
    return graph


def enclosing_packages(target: str, importer: str) -> list[str]:
    """``target`` and the packages Python runs to import it (``a.b.c`` runs ``a/__init__`` and ``a/b/__init__``),
    except those that contain the importer itself (already running when it imports a sibling)."""
    parts = target.split(".")
    prefixes = [".".join(parts[:k]) for k in range(1, len(parts))]
    return [target] + [p for p in prefixes if not (importer == p or importer.startswith(p + "."))]


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(node):
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph[node]):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def layer(name: str) -> int:
    return LAYERS.get(name.split(".")[0], LAYERS["pages"])


def test_the_graph_sees_imports_inside_functions_and_type_checking(tmp_path):
    source = tmp_path / "m.py"
    source.write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .a import X\n"
                      "def f():\n    from ..b import c\n    import dphawkes_core.statistics.moments\n")
    assert imported_names("pkg.sub.m", source) >= {"pkg.sub.a", "pkg.b", "pkg.b.c", "dphawkes_core.statistics.moments"}


def test_importing_a_submodule_runs_its_packages_but_not_the_importers_own():
    assert enclosing_packages("a.b.c", "x") == ["a.b.c", "a", "a.b"]
    assert enclosing_packages("a.b.c", "a.b.d") == ["a.b.c"]


def test_circles_are_found():
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert circles({"a": {"b"}, "b": set()}) == []


def test_no_import_circles():
    assert circles(import_graph()) == []


def test_lower_layers_never_import_higher_ones():
    upward = [(source, target) for source, targets in import_graph().items() for target in targets
              if layer(target) > layer(source)
              or (layer(target) == layer(source) and source.split(".")[0] != target.split(".")[0]
                  and not source.startswith("pages") and source != "app")]
    assert upward == []


@pytest.mark.parametrize("package", ["dphawkes_core", "dphawkes_experiments", "dphawkes_cli"])
def test_streamlit_and_plotly_only_in_the_app_layer(package):
    files = {name: path for name, path in module_files().items() if name.split(".")[0] == package}
    offenders = sorted(f"{name} imports {target}" for name, path in files.items()
                       for target in imported_names(name, path) if target.split(".")[0] in APP_ONLY)
    assert offenders == []


def test_no_product_module_at_the_repository_root():
    """The app's helpers live in ``dphawkes_app``; at the root only ``app.py`` (Streamlit's entry point)."""
    assert sorted(p.name for p in ROOT.glob("*.py")) == ["app.py"]


# ---- inside the core -------------------------------------------------------------------------------------

#: The core's sub-packages from the bottom up (``docs/architecture.md``): each may import only from its own
#: sub-package, the ones below it and the loose base modules (errors, validation, threads).
CORE_ORDER = ("data", "statistics", "privacy", "estimators", "evaluation", "release")
CORE_BASE = ("errors", "validation", "threads")
MAX_LOOSE_CORE_MODULES = 6


def core_rank(name: str) -> int | None:
    """Rank of a core module in :data:`CORE_ORDER` (−1 for the base modules, None outside the core)."""
    parts = name.split(".")
    if parts[0] != "dphawkes_core" or len(parts) == 1:
        return None
    if parts[1] in CORE_BASE:
        return -1
    return CORE_ORDER.index(parts[1]) if parts[1] in CORE_ORDER else None


def test_every_core_module_sits_in_a_layer():
    unplaced = sorted(name for name in module_files() if name.startswith("dphawkes_core.")
                      and core_rank(name) is None)
    assert unplaced == [], "a core module outside the layers of CORE_ORDER / CORE_BASE"


def test_core_layers_import_only_downward():
    upward = sorted(f"{source} -> {target}" for source, targets in import_graph().items()
                    for target in targets
                    if core_rank(source) is not None and core_rank(target) is not None
                    and core_rank(target) > core_rank(source))
    assert upward == []


def test_the_core_has_few_loose_modules():
    loose = sorted(p.name for p in (ROOT / "dphawkes_core").glob("*.py") if p.name != "__init__.py")
    assert len(loose) <= MAX_LOOSE_CORE_MODULES, loose
    assert not {"misc.py", "utils.py", "common.py"} & set(loose)


def test_the_core_layer_check_sees_an_upward_import():
    assert core_rank("dphawkes_core.statistics.moments") > core_rank("dphawkes_core.data.io")
    assert core_rank("dphawkes_core.errors") == -1 and core_rank("dphawkes_cli.main") is None


#: Which sub-packages each core sub-package may import (besides itself and the base modules): the drawing of
#: ``docs/architecture.md`` as data. A new edge is a design decision: add it here, downward only.
ALLOWED_CORE_EDGES = {
    "data": set(),
    "statistics": {"data"},
    "privacy": {"data", "statistics"},
    "estimators": {"data", "statistics", "privacy"},
    "evaluation": {"data", "estimators"},
    "release": {"data", "statistics", "privacy", "estimators", "evaluation"},
}


def core_edges(graph: dict[str, set[str]]) -> dict[tuple[str, str], list[str]]:
    """(importing sub-package, imported sub-package) -> the module imports that make the edge."""
    edges = {}
    for source, targets in graph.items():
        for target in targets:
            if core_rank(source) is None or core_rank(target) is None or min(core_rank(source), core_rank(target)) < 0:
                continue
            pair = (source.split(".")[1], target.split(".")[1])
            if pair[0] != pair[1]:
                edges.setdefault(pair, []).append(f"{source} -> {target}")
    return edges


def test_core_subpackages_import_only_along_the_listed_edges():
    unlisted = {pair: sites for pair, sites in core_edges(import_graph()).items()
                if pair[1] not in ALLOWED_CORE_EDGES[pair[0]]}
    assert unlisted == {}


def test_the_listed_edges_point_down_and_cover_every_subpackage():
    assert set(ALLOWED_CORE_EDGES) == set(CORE_ORDER)
    assert all(CORE_ORDER.index(target) < CORE_ORDER.index(source)
               for source, targets in ALLOWED_CORE_EDGES.items() for target in targets)


def test_the_edge_check_sees_an_unlisted_edge():
    planted = {"dphawkes_core.statistics.moments": {"dphawkes_core.privacy.noise", "dphawkes_core.data.io",
                                                    "dphawkes_core.errors"}}
    moments = "dphawkes_core.statistics.moments -> "
    assert core_edges(planted) == {("statistics", "privacy"): [moments + "dphawkes_core.privacy.noise"],
                                   ("statistics", "data"): [moments + "dphawkes_core.data.io"]}


def family_territories() -> dict[str, str]:
    """Family name -> the module (or, for a family in a folder, the package) that holds it."""
    from dphawkes_core.estimators.registry import FAMILIES
    return {name: type(family).__module__ for name, family in FAMILIES.items()}


def owner(module: str, territories: dict[str, str]) -> str | None:
    return next((name for name, home in territories.items() if module == home or module.startswith(home + ".")),
                None)


def test_no_family_imports_another():
    """What two families share lives in a module neither owns (``estimators/solvers.py``, ``settings.py``)."""
    territories = family_territories()
    crossing = sorted(f"{source} -> {target}" for source, targets in import_graph().items() for target in targets
                      if owner(source, territories) and owner(target, territories)
                      and owner(source, territories) != owner(target, territories))
    assert crossing == []


# ---- configs are derived in one place --------------------------------------------------------------------

def config_rebuilds(tree: ast.AST) -> int:
    """Calls ``FitConfig(**…)`` whose ``**`` argument reads another config's ``to_dict()`` (directly or through a
    dict display, ``FitConfig(**{**config.to_dict(), …})``)."""
    found = 0
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", None)) == "FitConfig":
            starred = [k.value for k in node.keywords if k.arg is None]
            if any(isinstance(n, ast.Attribute) and n.attr == "to_dict" for s in starred for n in ast.walk(s)):
                found += 1
    return found


def test_one_place_builds_a_config_from_another_configs_settings():
    """The named derivations of ``FitConfig`` (``with_changes``, ``noiseless``, ``with_selection``, ``for_method``,
    ``statistics_key``) are how every layer derives a config; only ``with_changes`` rebuilds from ``to_dict``."""
    sites = {name: config_rebuilds(ast.parse(path.read_text())) for name, path in module_files().items()}
    assert {name: n for name, n in sites.items() if n} == {"dphawkes_core.estimators.config": 1}


def test_the_rebuild_counter_sees_both_forms():
    assert config_rebuilds(ast.parse("FitConfig(**{**c.to_dict(), 'seed': 1})\nFitConfig(**c.to_dict())")) == 2
    assert config_rebuilds(ast.parse("FitConfig(**values)\nFitConfig(method='cls')")) == 0


def test_the_ledger_is_a_budget_store_blind_to_estimators():
    """The ledger keeps budgets and entries; what a request is (a FitConfig) is the session's business. What it asks
    the families — by how much a release recorded under an older version of their bound was short — goes through
    ``release/recost.py`` and the registry alone."""
    graph = import_graph()
    assert sorted(t for t in graph["dphawkes_core.release.ledger"] if t.startswith("dphawkes_core.estimators")) == []
    assert sorted(t for t in graph["dphawkes_core.release.recost"] if t.startswith("dphawkes_core.estimators")) == [
        "dphawkes_core.estimators", "dphawkes_core.estimators.registry"]


def test_accounting_is_the_bottom_of_the_privacy_layer():
    """One accounting path: the composition and the zCDP/GDP maths import no other privacy module (so calibration
    can use them without a circle), and the samplers in ``noise`` import no accounting."""
    graph = import_graph()
    privacy = "dphawkes_core.privacy."
    assert sorted(t for t in graph[privacy + "accounting"] if t.startswith(privacy)) == []
    assert privacy + "accounting" not in graph[privacy + "noise"]


def accounting_functions() -> dict[str, list[str]]:
    """Functions of the core that compose ε over several mechanisms, by module: any top-level function whose
    name says it composes (``compose*``/``composed*``) and returns an ε rather than a noise calibration."""
    found = {}
    for name, path in module_files().items():
        if not name.startswith("dphawkes_core."):
            continue
        tree = ast.parse(path.read_text())
        hits = [f.name for f in tree.body if isinstance(f, ast.FunctionDef)
                and f.name.lstrip("_").startswith(("compose", "composed")) and "epsilon" in f.name]
        if hits:
            found[name] = hits
    return found


def test_one_function_composes_epsilon():
    assert accounting_functions() == {"dphawkes_core.privacy.accounting": ["compose_epsilon"]}


ACCOUNTANT = "dphawkes_core.privacy.accounting"


def dp_accounting_importers() -> list[str]:
    """Product modules (every layer) that import ``dp_accounting`` or anything in it, at any depth."""
    return sorted(name for name, path in module_files().items()
                  if any(target.split(".")[0] == "dp_accounting" for target in imported_names(name, path)))


def test_dp_accounting_is_reached_only_through_the_accountant():
    """One accountant: the composition, its inverses (split, remaining) and group privacy live in
    ``privacy/accounting.py``; every other module asks it (a re-export would count as an import here too)."""
    assert dp_accounting_importers() == [ACCOUNTANT]


def test_the_importer_scan_sees_an_import_inside_a_function(tmp_path):
    source = tmp_path / "m.py"
    source.write_text("def f():\n    from dp_accounting.gaussian_mechanism import get_sigma_gaussian\n")
    assert any(t.split(".")[0] == "dp_accounting" for t in imported_names("pkg.m", source))
