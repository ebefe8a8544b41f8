"""The one registry of estimator families: the only place a method name is looked up.

A new family is a module with a :class:`~dphawkes_core.estimators.family.Family` subclass and one line in
:data:`FAMILIES` (or, for a family outside the package — a plug-in, a test's toy family — :func:`register`).
"""

from __future__ import annotations

from dphawkes_core.errors import ConfigError
from dphawkes_core.estimators.clipped import PGDClip
from dphawkes_core.estimators.exp import Exp
from dphawkes_core.estimators.family import Family
from dphawkes_core.estimators.gradient import CG, PGD
from dphawkes_core.estimators.grid_free import CTLS
from dphawkes_core.estimators.least_squares import CLS
from dphawkes_core.estimators.mle import MLE
from dphawkes_core.estimators.ssp import SSP

FAMILIES: dict[str, Family] = {}


def register(family: Family) -> Family:
    """Add ``family`` under its name (a name taken by another family is refused)."""
    known = FAMILIES.get(family.name)
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
    """The registered methods' names, in registration order (the non-private reference first)."""
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


for _family in (CLS(), PGD(), CG(), SSP(), PGDClip(), CTLS(), Exp(), MLE()):
    register(_family)
