"""The registry's non-private reference: the maximum likelihood beside a family that fits exact event times, CLS
beside a binned one and where no family is named (the binned families' shared statistics are keyed on it)."""

from __future__ import annotations

import pytest

from dphawkes_core.estimators import FitConfig, get_family
from dphawkes_core.estimators.registry import FAMILIES, reference_method


@pytest.mark.parametrize("name", list(FAMILIES))
def test_the_reference_fits_the_same_kind_of_data_and_adds_no_noise(name):
    family = get_family(name)
    reference = get_family(reference_method(family))
    assert not reference.privacy.private
    assert reference.fits_event_times == family.fits_event_times
    assert reference_method(family) == ("mle" if family.fits_event_times else "cls")


def test_without_a_family_the_reference_is_cls_and_keys_the_binned_statistics():
    assert reference_method() == "cls"
    key = FitConfig(method="ssp", bin_size=0.5, lags=4, epsilon=1.0, calibration="formal", count_cap=3).statistics_key()
    assert key.method == "cls"


# --- a family's module is imported when the family is first asked for ---------------------------------------------

def test_each_built_in_entry_names_its_family():
    from dphawkes_core.estimators.registry import BUILT_IN

    assert [name for name, _, _ in BUILT_IN] == list(FAMILIES)[:len(BUILT_IN)]
    for name, module, cls in BUILT_IN:
        family = FAMILIES[name]
        assert type(family).__name__ == cls and type(family).__module__ == f"dphawkes_core.estimators.{module}"
        assert family.name == name


def test_names_are_known_without_importing_a_family_and_one_family_imports_one_module():
    """In a fresh interpreter: the method names import no family module; asking for mle imports its module only;
    going through every family imports them all (the control)."""
    import subprocess
    import sys

    code = ("import sys\n"
            "from dphawkes_core.estimators import get_family, method_names, FAMILIES\n"
            "from dphawkes_core.estimators.registry import BUILT_IN\n"
            "modules = {f'dphawkes_core.estimators.{m}' for _, m, _ in BUILT_IN}\n"
            "def loaded(): return sorted(modules & set(sys.modules))\n"
            "names = method_names(); first = loaded()\n"
            "get_family('mle'); second = loaded()\n"
            "labels = [f.label for f in FAMILIES.values()]; third = loaded()\n"
            "print(first, second, len(third), len(modules), names == tuple(n for n, _, _ in BUILT_IN))\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.split() == ["[]", "['dphawkes_core.estimators.mle']", "7", "7", "True"]


def test_the_package_names_what_its_type_checking_block_imports():
    """``dphawkes_core.estimators`` exports its names lazily (``_EXPORTS``); the ``TYPE_CHECKING`` block that shows
    them to readers and to the import-graph test names the same ones from the same modules, and each resolves to the
    object its module defines."""
    import ast
    import importlib
    from pathlib import Path

    import dphawkes_core.estimators as package

    tree = ast.parse(Path(package.__file__).read_text())
    block = next(node for node in tree.body if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING")
    imported = {(node.module.rsplit(".", 1)[1], alias.name) for node in block.body for alias in node.names}
    exported = {(module, name) for module, names in package._EXPORTS.items() for name in names}
    assert imported == exported
    assert sorted(package.__all__) == sorted(name for _, name in exported)
    for module, name in exported:
        assert getattr(package, name) is getattr(importlib.import_module(f"dphawkes_core.estimators.{module}"), name)
    with pytest.raises(AttributeError):
        package.no_such_name  # noqa: B018
