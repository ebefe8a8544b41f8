"""Where ledgers live: the store interface behind the accountant (:mod:`.ledger`).

A store keeps every source's :class:`~dphawkes_core.release.ledger.DataLedger` and is the one place a ledger
changes. Each act below is one transaction on one source's ledger: read it (locked against every other writer of
that source), apply the accountant's pure transition (the rules live there, not in the store), write the result —
all or nothing. Two implementations, chosen by the ledger's address (:func:`~.ledger_address.open_ledger`): one
JSON file (:class:`~dphawkes_core.release.ledger_file.LedgerBook`, the embedded default) and a PostgreSQL database
for a team (:class:`~dphawkes_core.release.ledger_postgres.PostgresLedger`: a row lock per source around the same
transitions, and the budget checked a second time inside the database, whose roles are the owner's and the
analysts' rights).

**Rights.** The owner's acts (:meth:`LedgerStore.open` with a budget or a public mark, :meth:`~LedgerStore.absorb`,
:meth:`~LedgerStore.merge`) set what the analysts' acts (:meth:`~LedgerStore.charge`, :meth:`~LedgerStore.settle`,
:meth:`~LedgerStore.note_look`, :meth:`~LedgerStore.promise_person`) spend within. A ledger file cannot tell them
apart (whoever may write the file is its owner; the CLI's ``fit`` only sets the first budget of a new data set); a
shared store (:attr:`LedgerStore.shared`) refuses the owner's acts to an analyst in the database itself.

**Charge first.** A release is three steps (:meth:`LedgerStore.record_spend`):

1. :meth:`~LedgerStore.charge` — one transaction that answers the request from an earlier entry, or checks the
   budget and records the spend (an entry in state ``charged``), or refuses;
2. the draw, outside any transaction (it may be slow; it may fail; the process may be killed);
3. :meth:`~LedgerStore.settle` — the result (or the failure) attached to the already-charged entry.

Whatever happens after step 1, the spend is recorded: the ledger never shows fewer spends than draws made.
"""

from __future__ import annotations

import abc
import contextlib
import dataclasses
import getpass
import os
from collections.abc import Callable
from pathlib import Path

from dphawkes_core.errors import DPHawkesError
from dphawkes_core.release.ledger import (
    CHARGED,
    Budget,
    BudgetExceeded,
    DataLedger,
    DataLook,
    Entry,
    LedgerKey,
    LedgerOutcome,
    PersonPromise,
)

LEDGER_ENV = "DPHAWKES_LEDGER"


class LedgerError(DPHawkesError):
    """The ledger cannot be read, parsed or verified (it is reported, never reset)."""


class NoBudgetSet(BudgetExceeded):
    """A release on rows a shared ledger does not know: its data owner sets their budget first (refused before any
    draw)."""


def default_ledger_path() -> Path:
    """The app's ledger file when ``$DPHAWKES_LEDGER`` names none: ``~/.dphawkes/ledger.json``
    (:func:`~.ledger_address.default_ledger_address` reads the variable, a file or a database)."""
    configured = os.environ.get(LEDGER_ENV)
    return Path(configured).expanduser() if configured else Path.home() / ".dphawkes" / "ledger.json"


def os_user() -> str:
    """The OS user running this process (who changed a setting, as a ledger file records it)."""
    try:
        return getpass.getuser()
    except (KeyError, OSError):  # no name for this uid (a container)
        return f"uid {os.getuid()}"


class LedgerStore(abc.ABC):
    """Every source's ledger, and the acts that change one.

    An implementation provides the nine abstract methods and :attr:`address`; each act is atomic per source
    (concurrent acts on one source behave as if one came after the other) and durable once it returns. Reads return
    snapshots (:class:`~dphawkes_core.release.ledger.DataLedger`, seen through the key's unit). A store that cannot
    read or verify what it holds raises :class:`LedgerError` and never resets it.
    """

    #: A store several users reach, whose rights are its own (a database): only its owner sets budgets and public
    #: marks, and a data set has no budget until the owner sets one. ``False`` for a ledger file (the embedded
    #: default), where a first release on a new data set opens it with the default budget.
    shared: bool = False

    @property
    @abc.abstractmethod
    def address(self) -> str:
        """Where the ledgers live, as the user gave it (a file's path, a database's URL: never a password)."""

    # --- reads ---------------------------------------------------------------------------------------------------

    @abc.abstractmethod
    def ledgers(self) -> tuple[DataLedger, ...]:
        """Every source's ledger (event views)."""

    @abc.abstractmethod
    def get(self, key: LedgerKey) -> DataLedger | None:
        """The ledger of ``key``'s source seen through its unit, or ``None`` when nothing was recorded for it."""

    # --- the owner's acts ----------------------------------------------------------------------------------------

    @abc.abstractmethod
    def open(self, key: LedgerKey, budget: Budget | None = None, label: str = "", public: bool | None = None,
             tool: str = "python", note: str = "") -> DataLedger:
        """The ledger of ``key``, created (default budget unless given) when new, after :meth:`DataLedger.configured
        <dphawkes_core.release.ledger.DataLedger.configured>`: a given ``budget`` replaces the stored one (refused
        below what was spent), ``public`` sets or withdraws the public mark (with the time, ``tool`` and ``note``), a
        ``label`` renames it."""

    # --- the analyst's acts --------------------------------------------------------------------------------------

    @abc.abstractmethod
    def charge(self, key: LedgerKey, entry: Entry) -> LedgerOutcome:
        """Step 1 of a release, one transaction: :meth:`DataLedger.charge
        <dphawkes_core.release.ledger.DataLedger.charge>` on the stored ledger of ``key`` (a new one with the default
        budget when none), ``entry`` stamped with the current time. Returns the earlier entry (``replayed``) or the
        charged one; raises ``BudgetExceeded`` (nothing recorded) when a formal release does not fit."""

    @abc.abstractmethod
    def settle(self, key: LedgerKey, request: str, result: dict, *, failed: bool = False,
               mechanisms=None) -> LedgerOutcome:
        """Step 3, one transaction: :meth:`DataLedger.settle <dphawkes_core.release.ledger.DataLedger.settle>` — the
        ``result`` (or the failure) attached to the charged entry of ``request``."""

    @abc.abstractmethod
    def note_look(self, key: LedgerKey, look: DataLook) -> DataLedger:
        """Record a non-private look at the rows of ``key`` (:meth:`DataLedger.looked
        <dphawkes_core.release.ledger.DataLedger.looked>`; a new ledger with the default budget when none)."""

    @abc.abstractmethod
    def promise_person(self, key: LedgerKey, promise: PersonPromise) -> DataLedger:
        """Record "one sequence is one person" for the rows of ``key`` (:meth:`DataLedger.promised
        <dphawkes_core.release.ledger.DataLedger.promised>`; refused when it could not be kept)."""

    # --- migration -----------------------------------------------------------------------------------------------

    @abc.abstractmethod
    def absorb(self, ledger: DataLedger, name: str) -> DataLedger:
        """Join a migrated ledger (named ``name``) to the stored ledger of its source, once, in one transaction
        (:func:`~dphawkes_core.release.ledger.absorb`: concurrent migrations count it once)."""

    @abc.abstractmethod
    def merge(self, ledger: DataLedger) -> tuple[DataLedger, int]:
        """Join a ledger copied from another store to the stored ledger of its source, in one transaction: every
        entry once, by its request identity (:func:`~dphawkes_core.release.ledger_copy.joined`). Returns the ledger
        after and how many entries were new."""

    # --- a release: the three steps ------------------------------------------------------------------------------

    def record_spend(self, key: LedgerKey, request: str, run: Callable[[], dict], *, label: str, formal: bool,
                     reasons=(), mechanisms=(), recorded: Callable[[], tuple] | None = None,
                     max_events: int | None = None) -> LedgerOutcome:
        """Record a request once: charge it (or answer it from an earlier entry, or refuse it), then draw it, then
        attach what the draw gave.

        Parameters
        ----------
        key : LedgerKey
            The source and the release's privacy unit (the view its budget is checked in).
        request : str
            :func:`~dphawkes_core.release.session.request_identity` of the data and settings.
        run : callable
            Draws the release and returns it as a JSON-able dict (called only when the request was charged now).
            An exception it raises (a refusal decided after the draw included) is recorded as the entry's outcome
            (``{"error": why, **exc.drawn}``, state ``failed``) and raised again; the spend stays.
        label, formal, reasons, mechanisms :
            As in :class:`~dphawkes_core.release.ledger.Entry`; ``mechanisms`` must be what ``run`` will spend (the
            budget is checked on them, and they are what is charged).
        recorded : callable, optional
            The mechanisms to record, asked after ``run`` (the same cost, with the values chosen during the
            release: :class:`~dphawkes_core.release.session.PrivacySession`); default ``mechanisms``.
        max_events : int, optional
            An event-level release's enforced cap M on events per sequence: both views charge it (its group in each,
            :func:`~dphawkes_core.release.ledger.group_factor`); without one, an event-level release closes the
            sequence view.

        Returns
        -------
        LedgerOutcome
            The new entry (released), or the earlier entry of the same request (``replayed``: in any state — the
            caller answers a charged or failed one with its refusal, :meth:`Entry.unanswered
            <dphawkes_core.release.ledger.Entry.unanswered>`).

        Raises
        ------
        BudgetExceeded
            When the release is formal and would exceed the budget, needs a closed view or breaks the per-person
            promise (nothing is run or recorded).
        """
        cap = max_events if key.unit == "event" else None
        pending = Entry(request, label, bool(formal), tuple(reasons), tuple(mechanisms), {}, "", key.unit, cap,
                        CHARGED)
        outcome = self.charge(key, pending)
        if outcome.replayed:
            return outcome
        try:
            result = run()
        except BaseException as exc:  # the spend stays; what happened is the entry's outcome
            with contextlib.suppress(Exception):  # the entry stays charged if even this cannot be written
                self.settle(key, request, failure_record(exc), failed=True)
            raise
        return self.settle(key, request, result, mechanisms=tuple(recorded()) if recorded is not None else None)


class RefusedAfterDraw(DPHawkesError):
    """A release refused after some of its noise was drawn (a decision that read a noisy value): charged, and
    recorded with what was drawn (``drawn``, JSON-able) and why."""

    def __init__(self, message: str, drawn: dict | None = None):
        super().__init__(message)
        self.drawn = dict(drawn or {})


def failure_record(exc: BaseException) -> dict:
    """What a failed release's entry holds: why (a user's one line, or the exception's type and message) and what
    was drawn before it failed."""
    why = str(exc) if isinstance(exc, DPHawkesError) else f"{type(exc).__name__}: {exc}".rstrip(": ")
    return {"error": why, **getattr(exc, "drawn", {})}


def stamped(entry: Entry, now: str) -> Entry:
    """``entry`` as charged at ``now``."""
    return dataclasses.replace(entry, created=now)
