"""The words of a formal status, one sentence for every surface that shows it.

:func:`would_be_sentence` says what a fit that was not released (an experiment, a CLI fit without a ledger,
any fit on public or simulated data) WOULD be if made with the same settings on private data, through a
privacy session: the CLI prints it and the app's formal column shows it. :class:`Reason` carries a reason
without the surface's advice, and renders the advice per surface: the flag that declares something in the
command line, the page that declares it in the app.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from dphawkes_core.errors import ConfigError

from .report import NOT_RELEASED, FormalStatus, data_reason

SURFACES = ("cli", "app")
# what a missing declaration asks for, per surface: the flag in the command line, the page in the app
DECLARE = {"dimensions": {"cli": "declare it: --dimensions", "app": "declare it on the Data page"},
           "sequences": {"cli": "declare it: --sequences", "app": "declare it on the Data page"}}
# the reasons a declaration lifts, by their words (calibration.DATA_SETTINGS keys d and S)
_DECLARED_BY = {data_reason("d"): "dimensions", data_reason("S"): "sequences"}
# the CLI's advice inside a reason written before reasons were structured (ledgers and fit files of older versions)
_LEGACY_ADVICE = re.compile(r"\s*\(declare it: --(?P<what>[a-z]+)\)")


@dataclass(frozen=True)
class Reason:
    """Why a release is not formal, apart from what to do about it.

    Attributes
    ----------
    text : str
        The reason in words that hold on every surface.
    declare : str or None
        What the user can declare to lift it (a key of :data:`DECLARE`), else ``None``.
    """

    text: str
    declare: str | None = None

    @classmethod
    def parse(cls, reason: str) -> Reason:
        """The structured form of a reason string of :func:`~dphawkes_core.privacy.report.formal_status` (also
        of one stored by an older version with the CLI's advice in its words)."""
        match = _LEGACY_ADVICE.search(reason)
        if match is not None and match["what"] in DECLARE:
            return cls(_LEGACY_ADVICE.sub("", reason), match["what"])
        return cls(reason, _DECLARED_BY.get(reason))

    def render(self, surface: str) -> str:
        """The reason with the advice of ``surface`` (``"cli"`` or ``"app"``)."""
        if surface not in SURFACES:
            raise ConfigError(f"unknown surface {surface!r}; use {', '.join(SURFACES)}")
        return self.text if self.declare is None else f"{self.text} ({DECLARE[self.declare][surface]})"


def render_reasons(reasons, surface: str) -> tuple[str, ...]:
    """Every reason string rendered for ``surface``."""
    return tuple(Reason.parse(reason).render(surface) for reason in reasons)


def would_be_sentence(status: FormalStatus, surface: str = "cli") -> str:
    """One sentence: what a release with these settings is, or would be on private data.

    Parameters
    ----------
    status : FormalStatus
        The fit's status (:func:`~dphawkes_core.estimators.release_status`).
    surface : str
        ``"cli"`` or ``"app"``: whose advice the reasons carry.

    Returns
    -------
    str
        For a formal release, that it is one; for settings that lack nothing but the release through a privacy
        session, that on private data they would give a formal (ε, δ)-DP release; else that they would not,
        and why (the reasons other than not being released).
    """
    if status.formal:
        return "a formal (ε, δ)-DP release"
    others = [reason for reason in status.reasons if reason != NOT_RELEASED]
    if not others:
        return ("not a release; with these settings on private data, released through a privacy session, "
                "it would be a formal (ε, δ)-DP release")
    return ("not a formal guarantee, and with these settings it would not be one on private data either: "
            + "; ".join(render_reasons(others, surface)))
