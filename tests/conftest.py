"""Every test keeps its sessions, state and data in its own temporary folders, never the user's.

PostgreSQL: ``scripts/test`` starts a throwaway cluster and passes its URL in ``TINY_AGENT_TEST_PG``;
then a test that needs the server fails if it cannot have it. Without the variable, the first such
test starts a cluster itself when the server is installed (stopped when the tests end), and the tests
are skipped, with the reason, only when it is not.

Ctrl-C: a test run started in the background by a shell without job control inherits SIGINT
ignored; Python then installs no KeyboardInterrupt handler, in this process or in the tiny-agent
processes the tests start, and every Ctrl-C test would wait forever. The handler is put back here.
"""

from __future__ import annotations

import os
import signal
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.pg_cluster import Cluster, why_not

if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

PG_ENV = "TINY_AGENT_TEST_PG"
"""The URL (with its password) of a PostgreSQL server the tests may create databases on."""


@pytest.fixture(autouse=True)
def private_dirs(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("TINY_AGENT_STORE", str(home / "sessions.db"))
    for variable in ("XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME"):
        monkeypatch.setenv(variable, str(home / variable.lower()))
    return home


class PgServer:
    """A server the tests own: each test gets a database of its own on it."""

    def __init__(self, url: str) -> None:
        import psycopg

        self.url = url
        self.admin = psycopg.connect(url, autocommit=True)

    def database_url(self, name: str) -> str:
        return self.url.rsplit("/", 1)[0] + "/" + name

    def create(self) -> str:
        name = f"t_{uuid.uuid4().hex[:12]}"
        self.admin.execute(f"CREATE DATABASE {name}")
        return name

    def drop(self, name: str) -> None:
        self.admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


@pytest.fixture(scope="session")
def pg_server() -> Iterator[PgServer]:
    given = os.environ.get(PG_ENV)
    if given:  # scripts/test started it: CI must run these tests, so nothing here may skip
        server = PgServer(given)
        yield server
        server.admin.close()
        return
    reason = why_not()
    try:
        import psycopg  # noqa: F401
    except ImportError:
        reason = reason or "psycopg is not installed (pip install 'tiny-agent[postgres]')"
    if reason:
        pytest.skip(f"no PostgreSQL server for this test: {reason}")
    cluster = Cluster(Path(tempfile.mkdtemp(prefix="tiny-agent-pg-"))).start(fsync=False)
    try:
        server = PgServer(cluster.url())
        yield server
        server.admin.close()
    finally:
        cluster.stop()


@pytest.fixture
def pg_url(pg_server: PgServer) -> Iterator[str]:
    """The URL of a new, empty database (with the password in it), dropped after the test."""
    name = pg_server.create()
    yield pg_server.database_url(name)
    pg_server.drop(name)


@pytest.fixture(params=["sqlite", "postgresql"])
def store_at(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """Where a new, empty store is: a SQLite file, or a PostgreSQL database. A test that takes it runs
    once with each backend."""
    if request.param == "sqlite":
        return str(tmp_path / "s.db")
    return str(request.getfixturevalue("pg_url"))


@pytest.fixture
def own_cluster() -> Iterator[Cluster]:
    """A PostgreSQL cluster of this test's own, to stop or restart in the middle of a run."""
    reason = why_not()
    if reason:
        if os.environ.get(PG_ENV):
            pytest.fail(f"{PG_ENV} is set, yet no cluster can be started here: {reason}")
        pytest.skip(f"no PostgreSQL server for this test: {reason}")
    cluster = Cluster(Path(tempfile.mkdtemp(prefix="tiny-agent-pg-"))).start(fsync=False)
    try:
        yield cluster
    finally:
        cluster.stop()
