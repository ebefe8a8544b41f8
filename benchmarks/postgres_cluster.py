"""A throwaway PostgreSQL cluster from Debian's package, for the PostgreSQL ledger's tests and benchmark.

``initdb`` in a temporary directory, the server listening on a unix socket in that directory only (no TCP port), run
as a non-root user (``postgres`` when this process is root: the server refuses root), trust authentication (the rights
under test are the database's roles and grants, not how a client proves who it is), stopped and removed at the end.
A server already running is used instead when ``DPHAWKES_TEST_PGHOST`` names its socket directory (``.ci/run`` starts
one; ``DPHAWKES_TEST_PGUSER`` its superuser, default ``owner``; ``DPHAWKES_TEST_PGPORT`` its port, default 5432).
"""

from __future__ import annotations

import contextlib
import glob
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

HOST_ENV, USER_ENV, PORT_ENV = "DPHAWKES_TEST_PGHOST", "DPHAWKES_TEST_PGUSER", "DPHAWKES_TEST_PGPORT"


class ClusterUnavailable(RuntimeError):
    """No PostgreSQL server can be started or reached here (the reason, in one line)."""


@dataclass(frozen=True)
class Server:
    """A running server: its socket directory, port and superuser."""

    host: str
    port: int
    superuser: str

    def url(self, user: str, database: str = "postgres") -> str:
        """A libpq URL as ``user`` on ``database`` (no password: trust authentication)."""
        return f"postgresql://{user}@/{database}?host={self.host}&port={self.port}"


def find_bindir() -> Path | None:
    """The newest installed PostgreSQL's binaries (Debian: ``/usr/lib/postgresql/N/bin``), or ``initdb`` on PATH."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(Path(p).parts[-3]))
    if found:
        return Path(found[-1]).parent
    on_path = shutil.which("initdb")
    return Path(on_path).parent if on_path else None


def given_server() -> Server | None:
    """The server named by ``DPHAWKES_TEST_PGHOST``, if any."""
    host = os.environ.get(HOST_ENV)
    if not host:
        return None
    return Server(host, int(os.environ.get(PORT_ENV, "5432")), os.environ.get(USER_ENV, "owner"))


@contextlib.contextmanager
def temporary_cluster(durable: bool = False):
    """Start a cluster in a temporary directory; yield its :class:`Server`; stop and remove it at the end.
    ``durable=False`` turns fsync off (tests: nothing here survives a machine crash anyway); a benchmark keeps it on.
    Raises :class:`ClusterUnavailable` with the reason when PostgreSQL is not installed or does not start."""
    bindir = find_bindir()
    if bindir is None:
        raise ClusterUnavailable("PostgreSQL is not installed (no initdb; Debian: apt-get install postgresql)")
    root = Path(tempfile.mkdtemp(prefix="dphawkes-pg-"))
    prefix: list[str] = []
    if os.geteuid() == 0:  # the server refuses to run as root: as the package's system user
        import pwd

        try:
            user = pwd.getpwnam("postgres")
        except KeyError:
            shutil.rmtree(root, ignore_errors=True)
            raise ClusterUnavailable("running as root and there is no 'postgres' user to run the server") from None
        os.chown(root, user.pw_uid, user.pw_gid)
        prefix = ["runuser", "-u", "postgres", "--"]
    options = f"-k {root} -c listen_addresses='' -c max_connections=60" + (
        "" if durable else " -c fsync=off -c synchronous_commit=off -c full_page_writes=off")

    def run(*argv: str) -> None:
        done = subprocess.run([*prefix, *argv], capture_output=True, text=True, timeout=120)
        if done.returncode != 0:
            raise ClusterUnavailable(f"{Path(argv[0]).name} failed: "
                                     f"{(done.stderr or done.stdout).strip().splitlines()[-1:]}")

    started = False
    try:
        run(str(bindir / "initdb"), "-D", str(root / "data"), "-A", "trust", "-U", "owner", "-E", "UTF8",
            "--locale=C", *([] if durable else ["--no-sync"]))
        run(str(bindir / "pg_ctl"), "-D", str(root / "data"), "-o", options, "-l", str(root / "log"), "-w", "start")
        started = True
        yield Server(str(root), 5432, "owner")
    finally:
        if started:
            subprocess.run([*prefix, str(bindir / "pg_ctl"), "-D", str(root / "data"), "-m", "immediate", "-w",
                            "stop"], capture_output=True, timeout=120)
        shutil.rmtree(root, ignore_errors=True)


def create_roles(server: Server, roles=("ledger_owner", "analyst")) -> None:
    """Login roles (no superuser, no role creation) for the owner and the analysts; existing ones are kept, including
    ones another process creates at the same moment (the test workers share CI's server)."""
    import psycopg

    with psycopg.connect(server.url(server.superuser), autocommit=True) as conn:
        for role in roles:
            exists = conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (role,)).fetchone()
            if not exists:
                try:
                    conn.execute(f'CREATE ROLE "{role}" LOGIN NOSUPERUSER NOCREATEROLE NOCREATEDB')
                except (psycopg.errors.DuplicateObject, psycopg.errors.UniqueViolation):
                    pass  # made in between by another process on the same server (a second test worker)


def create_database(server: Server, name: str, owner: str) -> None:
    """A new empty database owned by ``owner`` (who may then create the ledger's schema in it)."""
    import psycopg

    with psycopg.connect(server.url(server.superuser), autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}" OWNER "{owner}"')


def drop_database(server: Server, name: str) -> None:
    import psycopg

    with psycopg.connect(server.url(server.superuser), autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
