"""Fixtures of every test: a privacy ledger of its own, and empty Streamlit caches on request (every app test gets
them: ``tests/app/conftest.py``). Nothing to import here: ``import conftest`` finds the conftest of the directory
collected last, so shared helpers live in ``tests/references.py`` (imported as ``tests.references``) and, for the
app tests, in ``tests/app/conftest.py``."""

import pytest
import streamlit as st


@pytest.fixture(scope="session", autouse=True)
def session_ledger_file(tmp_path_factory):
    """Servers started by module-scoped fixtures (the browser tests) keep their privacy ledger in a tmp dir too."""
    path = tmp_path_factory.mktemp("ledger") / "ledger.json"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("DPHAWKES_LEDGER", str(path))
        yield path


@pytest.fixture(autouse=True)
def private_ledger_file(tmp_path, monkeypatch):
    """Every test keeps its privacy ledger in its own tmp dir (never the user's ``~/.dphawkes``)."""
    path = tmp_path / "ledger.json"
    monkeypatch.setenv("DPHAWKES_LEDGER", str(path))
    return path


@pytest.fixture
def clear_streamlit_caches():
    """``st.cache_data`` is process-global: start and end every app test with empty caches."""
    st.cache_data.clear()
    st.cache_resource.clear()
    yield
    st.cache_data.clear()
    st.cache_resource.clear()


# --- a real PostgreSQL server for the ledger's database store ----------------------------------------------------


def _postgres_unavailable(reason: str):
    """Skip with the reason — but fail in CI (``CI=true``), where the server must run (``.ci/run`` starts it)."""
    import os

    if os.environ.get("CI") == "true":
        pytest.fail(f"the PostgreSQL tests cannot run in CI: {reason}", pytrace=False)
    pytest.skip(f"no PostgreSQL server: {reason}")


@pytest.fixture(scope="session")
def postgres_server():
    """A PostgreSQL server with the login roles ``ledger_owner`` and ``analyst`` (no superuser): the one whose socket
    directory ``DPHAWKES_TEST_PGHOST`` names (CI starts it), or a throwaway cluster started here
    (:mod:`benchmarks.postgres_cluster`)."""
    try:
        import psycopg  # noqa: F401
    except ImportError:
        _postgres_unavailable("the psycopg driver is not installed (pip install 'dphawkes[postgres]')")
    from benchmarks.postgres_cluster import ClusterUnavailable, create_roles, given_server, temporary_cluster

    server = given_server()
    if server is not None:
        try:
            create_roles(server)
        except Exception as exc:  # noqa: BLE001 — any failure to reach the given server is the reason
            _postgres_unavailable(f"the server in {server.host} cannot be reached ({exc})")
        yield server
        return
    try:
        cluster = temporary_cluster()
        server = cluster.__enter__()
    except ClusterUnavailable as exc:
        _postgres_unavailable(str(exc))
    try:
        create_roles(server)
        yield server
    finally:
        cluster.__exit__(None, None, None)


class LedgerDatabase:
    """A fresh database holding the ledger's schema, owned by ``ledger_owner``, with ``analyst`` granted the
    analysts' rights: its URLs for each role, and plain SQL as either role."""

    def __init__(self, server, name: str):
        self.server, self.name = server, name
        self.owner_url = server.url("ledger_owner", name)
        self.analyst_url = server.url("analyst", name)

    def sql(self, role: str, statement: str, params=()):
        """Run ``statement`` as ``role`` in its own transaction; the rows it returns (``None`` for none)."""
        import psycopg

        with psycopg.connect(self.server.url(role, self.name)) as conn:
            cursor = conn.execute(statement, params)
            return cursor.fetchall() if cursor.description else None


@pytest.fixture
def ledger_database(postgres_server):
    """A new database per test with the ledger installed by its owner's role (``dphawkes ledger init``)."""
    import uuid

    from benchmarks.postgres_cluster import create_database, drop_database
    from dphawkes_core.release.ledger_postgres import PostgresLedger

    name = f"ledger_{uuid.uuid4().hex[:12]}"
    create_database(postgres_server, name, "ledger_owner")
    database = LedgerDatabase(postgres_server, name)
    PostgresLedger(database.owner_url).initialise(["analyst"])
    yield database
    drop_database(postgres_server, name)
