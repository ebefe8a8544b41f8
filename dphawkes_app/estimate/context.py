"""The Estimate page's context: what every function of the page reads besides its own widgets, gathered once at
the top of a run and passed down as an argument (the page reads no module-level state)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from dphawkes_core.data.datasets import Dataset

from ..budget import BudgetState
from ..presets import Preset


@dataclass(frozen=True)
class PageContext:
    """One run of the Estimate page.

    Attributes
    ----------
    dataset : Dataset
        The session's data set.
    fingerprint : str
        Its cache key (:func:`dphawkes_app.state.fingerprint`).
    budget : BudgetState
        Its ledger as seen by the privacy unit chosen in the sidebar.
    preset : Preset or None
        The preset chosen above (``None``: the user's own data or settings).
    defaults_from : Preset
        The preset the widgets' defaults come from (the default one for the user's own).
    defaults : mapping
        The widgets' initial values by key (the preset's, or Δ and s proposed from real data's time scale).
    link : mapping
        The URL's parameters before the widgets read them (what a link asked for).
    """

    dataset: Dataset
    fingerprint: str
    budget: BudgetState
    preset: Preset | None
    defaults_from: Preset
    defaults: Mapping
    link: Mapping

    @property
    def private(self) -> bool:
        """Private data: metered by the ledger, or a ledger that cannot be read for data that are not simulated
        (then nothing is released)."""
        return self.budget.private

    @property
    def events(self):
        return self.dataset.events

    @property
    def scenario(self):
        """The simulated process (its true kernels), or ``None`` for real or uploaded data."""
        return self.dataset.scenario
