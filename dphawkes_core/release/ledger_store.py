"""Where ledgers live: the store interface behind the accountant (:mod:`.ledger`).

A store keeps every source's :class:`~dphawkes_core.release.ledger.DataLedger` and is the one place a spend is
recorded. Its first implementation is one JSON file (:class:`~dphawkes_core.release.ledger_file.LedgerBook`); a
database store implements the same methods a second time.
"""

from __future__ import annotations

import abc
import os
from collections.abc import Callable
from pathlib import Path

from dphawkes_core.errors import DPHawkesError
from dphawkes_core.release.ledger import Budget, DataLedger, LedgerKey, LedgerOutcome

LEDGER_ENV = "DPHAWKES_LEDGER"


class LedgerError(DPHawkesError):
    """The ledger cannot be read, parsed or verified (it is reported, never reset)."""


def default_ledger_path() -> Path:
    """The app's ledger file: ``$DPHAWKES_LEDGER`` or ``~/.dphawkes/ledger.json``."""
    configured = os.environ.get(LEDGER_ENV)
    return Path(configured).expanduser() if configured else Path.home() / ".dphawkes" / "ledger.json"


class LedgerStore(abc.ABC):
    """Every source's ledger, and the acts that change one."""

    @abc.abstractmethod
    def ledgers(self) -> tuple[DataLedger, ...]:
        """Every source's ledger (event views)."""

    @abc.abstractmethod
    def get(self, key: LedgerKey) -> DataLedger | None:
        """The ledger of ``key``'s source seen through its unit, or ``None`` when nothing was recorded for it."""

    @abc.abstractmethod
    def open(self, key: LedgerKey, budget: Budget | None = None, label: str = "", public: bool | None = None,
             tool: str = "python", note: str = "") -> DataLedger:
        """The ledger of ``key``, created when new; sets its budget, public mark and label."""

    @abc.abstractmethod
    def record_spend(self, key: LedgerKey, request: str, run: Callable[[], dict], *, label: str, formal: bool,
                     reasons=(), mechanisms=(), recorded: Callable[[], tuple] | None = None,
                     max_events: int | None = None) -> LedgerOutcome:
        """Record a request once: replay, refuse, or run and record it."""

    @abc.abstractmethod
    def merge(self, ledger: DataLedger) -> DataLedger:
        """Add ``ledger``'s entries to the stored ledger of its source."""
