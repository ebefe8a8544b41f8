"""Who may change the budget settings in the app: anyone on a local single-user run; on a shared deployment, only
the data owner, signed in with the owner secret.

A deployment is *shared* when an owner secret is configured (``DPHAWKES_OWNER_SECRET``, or ``dphawkes_owner_secret``
in Streamlit's secrets), when the server listens on an address other than localhost, or when the visitor does not
reach it from this machine (another IP address, a proxy's forwarding headers, another host name). There, the budget
settings are read-only — the store refuses a change of a budget or a public mark (:class:`ReadOnlySettings`) — until
the owner signs in; the secret is compared in constant time (:func:`hmac.compare_digest`). A run on localhost without
a secret keeps every setting editable. In a ledger database the rights are the database's besides: an app connected
as an analyst's role cannot change a budget, signed in or not.
"""

from __future__ import annotations

import hmac
import os

import streamlit as st

from dphawkes_core.errors import DPHawkesError
from dphawkes_core.release.ledger_store import LedgerStore

OWNER_SECRET_ENV = "DPHAWKES_OWNER_SECRET"
OWNER_SECRET_KEY = "dphawkes_owner_secret"
SIGNED_IN = "owner_signed_in"
LOCAL_NAMES = {"", "localhost", "127.0.0.1", "::1", "[::1]"}
FORWARDING_HEADERS = ("x-forwarded-for", "x-forwarded-host", "forwarded", "x-real-ip")
OWNER_ONLY = ("only the data owner changes a budget or a public mark on this shared deployment: sign in on the "
              "*Privacy budget* page")


def owner_secret() -> str:
    """The configured owner secret: the environment's, else Streamlit's secrets' (empty when neither is set)."""
    secret = os.environ.get(OWNER_SECRET_ENV, "")
    if secret:
        return secret
    try:
        return str(st.secrets.get(OWNER_SECRET_KEY, "") or "")
    except Exception:  # noqa: BLE001 — no secrets file, or one that does not parse: no secret configured
        return ""


def shared_reason(secret: str, server_address: str | None, visitor_ip: str | None, headers) -> str:
    """Why a deployment is shared (empty for a local single-user run): an owner secret, a server address other than
    localhost, or a visitor from elsewhere (an IP address, forwarding headers or a Host other than this machine)."""
    if secret:
        return "an owner secret is configured"
    if (server_address or "") not in LOCAL_NAMES:
        return f"the app is served on {server_address}"
    if visitor_ip:
        return "you reach the app from another machine"
    headers = {str(name).lower(): str(value) for name, value in (headers or {}).items()}
    if any(name in headers for name in FORWARDING_HEADERS):
        return "you reach the app through a proxy"
    host = host_name(headers.get("host", ""))
    if host not in LOCAL_NAMES:
        return f"you reach the app as {host}"
    return ""


def host_name(host: str) -> str:
    """The name in a Host header, without its port (``[::1]:8501`` → ``[::1]``, ``localhost:8501`` →
    ``localhost``)."""
    host = host.strip().lower()
    if host.startswith("["):
        return host[: host.find("]") + 1]
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


def deployment_reason() -> str:
    """:func:`shared_reason` of this run (empty: a local single-user run)."""
    try:
        headers = dict(st.context.headers)
        visitor = st.context.ip_address
    except Exception:  # noqa: BLE001 — no browser session (a bare script run): local
        headers, visitor = {}, None
    visitor = visitor if isinstance(visitor, str) else None  # AppTest's stand-in client has no address
    return shared_reason(owner_secret(), st.get_option("server.address"), visitor, headers)


def may_change_settings() -> bool:
    """True on a local single-user run, or when the owner signed in to this session."""
    return not deployment_reason() or bool(st.session_state.get(SIGNED_IN))


def secret_matches(given: str, secret: str) -> bool:
    """The owner's secret, compared in constant time (never matches when no secret is configured)."""
    return bool(secret) and hmac.compare_digest(given.encode(), secret.encode())


def sign_in_box() -> None:
    """On a shared deployment: why the settings are read-only and the owner's sign-in (or sign-out)."""
    reason = deployment_reason()
    if not reason:
        return
    if st.session_state.get(SIGNED_IN):
        st.success("Signed in as the data owner: the budget settings below are yours to change.",
                   icon=":material/admin_panel_settings:")
        st.button("Sign out", key="owner_sign_out", on_click=lambda: st.session_state.pop(SIGNED_IN, None))
        return
    st.info(f"**Shared deployment** ({reason}): the budget settings are the data owner's and read-only here; "
            "releases spend within them as usual.", icon=":material/lock:")
    secret = owner_secret()
    if not secret:
        st.caption(f"No owner secret is configured ({OWNER_SECRET_ENV}, or {OWNER_SECRET_KEY} in Streamlit's "
                   "secrets): the settings are changed from the command line (`dphawkes ledger budget`).")
        return
    with st.form("owner_sign_in"):
        given = st.text_input("Owner secret", type="password", key="owner_secret")
        if st.form_submit_button("Sign in as the data owner"):
            if secret_matches(given, secret):
                st.session_state[SIGNED_IN] = True
                st.rerun()
            st.error("That is not the owner secret.", icon=":material/block:")


class ReadOnlySettings(LedgerStore):
    """A store whose owner's acts are refused (a visitor of a shared deployment): releases, looks and declarations
    go through as usual, and so does naming a data set or opening a new one at the default budget; a change of a
    budget or a public mark, a copy or a migration is refused with :data:`OWNER_ONLY`."""

    def __init__(self, store: LedgerStore):
        self.store = store
        self.shared = store.shared

    @property
    def address(self) -> str:
        return self.store.address

    def ledgers(self):
        return self.store.ledgers()

    def get(self, key):
        return self.store.get(key)

    def open(self, key, budget=None, label="", public=None, tool="python", note=""):
        if budget is not None or public is not None:
            raise DPHawkesError(OWNER_ONLY)
        return self.store.open(key, label=label, tool=tool)

    def charge(self, key, entry):
        return self.store.charge(key, entry)

    def settle(self, key, request, result, *, failed=False, mechanisms=None):
        return self.store.settle(key, request, result, failed=failed, mechanisms=mechanisms)

    def note_look(self, key, look):
        return self.store.note_look(key, look)

    def promise_person(self, key, promise):
        return self.store.promise_person(key, promise)

    def absorb(self, ledger, name):
        raise DPHawkesError(OWNER_ONLY)

    def merge(self, ledger):
        raise DPHawkesError(OWNER_ONLY)
