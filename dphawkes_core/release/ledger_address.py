"""Which store a ledger address names: a ``postgresql://`` (or ``postgres://``) URL is a team's database
(:class:`~.ledger_postgres.PostgresLedger`), anything else a ledger file (:class:`~.ledger_file.LedgerBook`) — wherever
a ledger is given (``--ledger``, ``dphawkes ledger …``, the app's ``DPHAWKES_LEDGER``).

A database address never holds a password: libpq reads it from its own environment (``PGPASSWORD``) or password file
(``~/.pgpass``, ``PGPASSFILE``), so that no address printed, logged or stored by this program reveals it. An address
with one is refused before anything connects, the refusal does not repeat it, and the store shows it with the
password masked (:func:`~.ledger_postgres.checked_database_address`, :func:`~.ledger_postgres.masked`).
"""

from __future__ import annotations

import os

from dphawkes_core.release.ledger_store import LEDGER_ENV, LedgerStore, default_ledger_path

DATABASE_SCHEMES = ("postgresql", "postgres")


def is_database_address(address) -> bool:
    """True for a PostgreSQL URL (``postgresql://…`` or ``postgres://…``)."""
    return isinstance(address, str) and address.split("://", 1)[0].lower() in DATABASE_SCHEMES and "://" in address


def open_ledger(address) -> LedgerStore:
    """The store at ``address``: a PostgreSQL database for a URL, else the ledger file at that path."""
    if is_database_address(address):
        from dphawkes_core.release.ledger_postgres import PostgresLedger

        return PostgresLedger(address)
    from dphawkes_core.release.ledger_file import LedgerBook

    return LedgerBook(address)


def default_ledger_address() -> str:
    """The app's ledger: ``$DPHAWKES_LEDGER`` (a file or a PostgreSQL URL) or ``~/.dphawkes/ledger.json``."""
    configured = os.environ.get(LEDGER_ENV, "")
    return configured if is_database_address(configured) else str(default_ledger_path())
