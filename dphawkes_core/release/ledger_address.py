"""Which store a ledger address names: a ``postgresql://`` (or ``postgres://``) URL is a team's database
(:class:`~.ledger_postgres.PostgresLedger`), anything else a ledger file (:class:`~.ledger_file.LedgerBook`) — wherever
a ledger is given (``--ledger``, ``dphawkes ledger …``, the app's ``DPHAWKES_LEDGER``).

A database address never holds a password: libpq reads it from its own environment (``PGPASSWORD``) or password file
(``~/.pgpass``, ``PGPASSFILE``), so that no address printed, logged or stored by this program reveals it. An address
with one is refused before anything connects, the refusal does not repeat it, and the store shows it with the
password masked (:func:`masked`).
"""

from __future__ import annotations

import os
from urllib.parse import parse_qs, urlsplit

from dphawkes_core.errors import DPHawkesError
from dphawkes_core.release.ledger_store import LEDGER_ENV, LedgerStore, default_ledger_path

DATABASE_SCHEMES = ("postgresql", "postgres")


def is_database_address(address) -> bool:
    """True for a PostgreSQL URL (``postgresql://…`` or ``postgres://…``)."""
    return isinstance(address, str) and address.split("://", 1)[0].lower() in DATABASE_SCHEMES and "://" in address


def checked_database_address(address: str) -> str:
    """``address`` when it is a PostgreSQL URL without a password; otherwise a one-line refusal that does not repeat
    it."""
    try:
        parts = urlsplit(address)
        query = parse_qs(parts.query)
        has_password = parts.password is not None or any(key.lower() == "password" for key in query)
    except ValueError:
        raise DPHawkesError("the ledger address is not a valid PostgreSQL URL (postgresql://[user@]host[:port]/"
                            "database)") from None
    if has_password:
        raise DPHawkesError("the ledger address holds a password: leave it out of the address (it would be shown "
                            "wherever the address is) and give it to libpq instead — the PGPASSWORD variable or a "
                            "password file (~/.pgpass, or PGPASSFILE)")
    return address


def masked(address: str) -> str:
    """``address`` with any password in it replaced by ``***`` (what a store with a refused address shows)."""
    try:
        parts = urlsplit(address)
        netloc = parts.netloc
        if parts.password is not None:
            netloc = f"{parts.username or ''}:***@{parts.netloc.rsplit('@', 1)[1]}"
        query = "&".join("password=***" if item.split("=", 1)[0].lower() == "password" else item
                         for item in parts.query.split("&")) if parts.query else ""
        return parts._replace(netloc=netloc, query=query).geturl()
    except ValueError:
        return "a PostgreSQL address that does not parse"


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
