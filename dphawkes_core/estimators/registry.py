"""The one registry of estimator families: the only place a method name is looked up.

A new family is a module with a :class:`~dphawkes_core.estimators.family.Family` subclass and one line in
:data:`BUILT_IN` (or, for a family outside the package — a plug-in, a test's toy family — :func:`register`).

A built-in family's module is imported when the family is first asked for (``FAMILIES[name]``, :func:`get_family`,
or going through every family), not when the registry is: a command that fits one family imports that family's
module and not the seven others (``tests/cli/test_startup.py``; their imports were most of a small fit's start-up,
``docs/load.md``). The names are known without importing anything (:func:`method_names`).
"""

from __future__ import annotations

from collections.abc import Iterator, MutableMapping
from typing import TYPE_CHECKING

from dphawkes_core.errors import ConfigError

if TYPE_CHECKING:  # imported when first asked for (Families); named here for readers and the import-graph test
    from dphawkes_core.estimators.clipped import PGDClip  # noqa: F401
    from dphawkes_core.estimators.exp import Exp  # noqa: F401
    from dphawkes_core.estimators.family import Family
    from dphawkes_core.estimators.gradient import CG, PGD  # noqa: F401
    from dphawkes_core.estimators.grid_free import CTLS  # noqa: F401
    from dphawkes_core.estimators.least_squares import CLS  # noqa: F401
    from dphawkes_core.estimators.mle import MLE  # noqa: F401
    from dphawkes_core.estimators.ssp import SSP  # noqa: F401

#: The built-in families in registration order (the non-private reference first): name, module under
#: ``dphawkes_core.estimators``, class. ``tests/core/estimators/test_registry.py`` checks each against its class.
BUILT_IN = (("cls", "least_squares", "CLS"), ("pgd", "gradient", "PGD"), ("cg", "gradient", "CG"),
            ("ssp", "ssp", "SSP"), ("pgd-clip", "clipped", "PGDClip"), ("ctls", "grid_free", "CTLS"),
            ("exp", "exp", "Exp"), ("mle", "mle", "MLE"))


class Families(MutableMapping):
    """``{name: Family}`` in registration order, a built-in family made (its module imported) on first access.

    Iterating the names imports nothing; reading a value (``[name]``, ``values()``, ``items()``) imports that
    family's module. A registered family (:func:`register`) is held as it is."""

    def __init__(self, built_in) -> None:
        self._entries: dict[str, object] = {name: (module, cls) for name, module, cls in built_in}

    def __getitem__(self, name: str) -> Family:
        entry = self._entries[name]
        if isinstance(entry, tuple):
            module, cls = entry
            # __import__, the import statement's machinery: `python -X importtime` reports the module
            # (tests/cli/test_startup.py reads that report)
            entry = getattr(__import__(f"dphawkes_core.estimators.{module}", fromlist=[cls]), cls)()
            self._entries[name] = entry
        return entry

    def __setitem__(self, name: str, family: Family) -> None:
        self._entries[name] = family

    def __delitem__(self, name: str) -> None:
        del self._entries[name]

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._entries))

    def __len__(self) -> int:
        return len(self._entries)

    def __repr__(self) -> str:
        return f"Families({list(self._entries)})"


FAMILIES: Families = Families(BUILT_IN)


def register(family: Family) -> Family:
    """Add ``family`` under its name (a name taken by another family is refused)."""
    known = FAMILIES.get(family.name)  # a built-in of that name is made to compare
    if known is not None and type(known) is not type(family):
        raise ValueError(f"a family named {family.name!r} is already registered")
    FAMILIES[family.name] = family
    return family


def unregister(name: str) -> None:
    """Remove a family added with :func:`register` (tests that register a toy family clean up with it)."""
    FAMILIES.pop(name, None)


def get_family(name: str) -> Family:
    """The family called ``name``; an unknown name is a one-line :class:`ConfigError` listing the known ones."""
    try:
        return FAMILIES[name]
    except (KeyError, TypeError):
        raise ConfigError(f"unknown method {name!r}; choose one of {', '.join(FAMILIES)}") from None


def method_names() -> tuple[str, ...]:
    """The registered methods' names, in registration order (the non-private reference first); imports no family."""
    return tuple(FAMILIES)


def reference_method(family: Family | None = None) -> str:
    """The non-private reference family's name: the fit a private estimate is shown beside when the data have no
    truth. For a family that fits exact event times, the first registered non-private family that fits them too
    (the maximum likelihood on exact times: the best non-private fit there, on the same events); otherwise, and
    without a family, the first registered family that adds no noise (CLS), which also keys the binned families'
    shared statistics."""
    if family is not None and family.fits_event_times:
        exact = next((name for name, f in FAMILIES.items() if not f.privacy.private and f.fits_event_times), None)
        if exact is not None:
            return exact
    return next(name for name, f in FAMILIES.items() if not f.privacy.private)


def method_labels() -> dict[str, str]:
    """``{name: display label}`` of every registered family."""
    return {name: family.label for name, family in FAMILIES.items()}
