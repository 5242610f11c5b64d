"""A PostgreSQL store opened as a role that may only SELECT: every reading command works, writes say so.

Issue 30, finding 4: opening took the migration lock and ran ``CREATE TABLE IF NOT EXISTS``, which a
read-only role may not, so list, show, stats, replay and export all refused.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from tests.conftest import PgServer
from tests.test_cli_sessions import Script, feed, script, workspace
from tiny_agent.cli import main
from tiny_agent.errors import StoreError
from tiny_agent.store import open_store
from tiny_agent.testing import tool_call
from tiny_agent.types import Message

__all__ = ["script", "workspace"]  # fixtures


@pytest.fixture
def reader_url(pg_server: PgServer, pg_url: str) -> Iterator[str]:
    """The URL of ``pg_url`` as a new role granted SELECT on its tables and nothing else."""
    role, password = f"reader_{uuid.uuid4().hex[:8]}", uuid.uuid4().hex
    database = pg_url.rsplit("/", 1)[1]
    pg_server.admin.execute(f"CREATE ROLE {role} LOGIN PASSWORD '{password}'")
    try:
        yield f"postgresql://{role}:{password}@{pg_url.split('@', 1)[1].rsplit('/', 1)[0]}/{database}"
    finally:
        with psycopg.connect(pg_url, autocommit=True) as db:
            db.execute(f"DROP OWNED BY {role}")
        pg_server.admin.execute(f"DROP ROLE {role}")


def grant_select(pg_url: str, role: str) -> None:
    with psycopg.connect(pg_url, autocommit=True) as db:
        db.execute(f"GRANT SELECT ON ALL TABLES IN SCHEMA public TO {role}")


def test_a_select_only_role_reads_with_every_reading_command(
    pg_url: str, reader_url: str, workspace: Path, script: Script, capsys: pytest.CaptureFixture[str]
) -> None:
    feed(script, tool_call("read_file", "c1", path="notes.txt"), Message.assistant("buy milk"))
    assert main(["--store", pg_url, "--provider", "anthropic", "read notes"]) == 0
    role = reader_url.split("://", 1)[1].split(":", 1)[0]
    grant_select(pg_url, role)
    with open_store(reader_url) as store:
        assert store.read_only  # type: ignore[attr-defined]
        (info,) = store.sessions()
        with pytest.raises(StoreError, match="read-only"):
            store.create()
    sid = info.id
    capsys.readouterr()
    for argv in (
        ["sessions", "list"],
        ["sessions", "show", sid],
        ["stats"],
        ["replay", sid, "--provider", "anthropic"],
        ["sessions", "export", sid, "--format", "jsonl"],
        ["sessions", "export", sid, "--format", "anthropic"],
    ):
        assert main([*argv, "--store", reader_url]) == 0, (argv, capsys.readouterr().err)
        assert capsys.readouterr().out, argv
    for argv in (["sessions", "rm", sid, "--yes"], ["-c", "and now?"]):
        assert main([*argv, "--store", reader_url]) == 2, argv
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and "is read-only" in err[0] and "Traceback" not in err[0], (argv, err)
    with open_store(pg_url) as store:
        assert [s.id for s in store.sessions()] == [sid] and not store.read_only  # type: ignore[attr-defined]


def test_a_role_that_may_not_read_or_create_is_one_line(pg_url: str, reader_url: str) -> None:
    with open_store(pg_url):
        pass  # the schema exists, and the role may not even SELECT it
    with pytest.raises(StoreError) as caught:
        open_store(reader_url)
    assert "\n" not in str(caught.value) and "permission denied" in str(caught.value)


def test_a_role_whose_transactions_are_read_only_opens_for_reading(pg_url: str, reader_url: str) -> None:
    """A role granted every privilege but read-only by default (or a hot standby) cannot migrate either."""
    with open_store(pg_url):
        pass
    role = reader_url.split("://", 1)[1].split(":", 1)[0]
    with psycopg.connect(pg_url, autocommit=True) as db:
        db.execute(f"GRANT ALL ON ALL TABLES IN SCHEMA public TO {role}")
        db.execute(f"ALTER ROLE {role} SET default_transaction_read_only = on")
    with open_store(reader_url) as store:
        assert store.read_only and store.sessions() == []  # type: ignore[attr-defined]
        with pytest.raises(StoreError, match="read-only"):
            store.create()
