"""The store where it meets other processes and a failing disk: one line that says what happened."""

from __future__ import annotations

import json
import os
import socket
import sqlite3
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from tests.expect import one_line
from tests.test_cli_sessions import Script, feed, script, store_path, workspace
from tiny_agent.cli import main
from tiny_agent.context.entries import CallOpened
from tiny_agent.context.session import Session
from tiny_agent.store.sqlite import SQLiteStore
from tiny_agent.types import Message, ToolUseBlock

__all__ = ["script", "workspace"]  # fixtures


def test_rm_refuses_a_session_a_live_process_holds(capsys: pytest.CaptureFixture[str]) -> None:
    with SQLiteStore(store_path()) as store:
        session = Session.start(store, workspace="/w", system="s")  # held open, as a running chat holds it
        session.context.add_user("a long task")
        sid = session.id
        assert main(["sessions", "rm", sid, "--yes"]) == 2
        one_line(capsys, sid[:12], f"pid {os.getpid()} on {socket.gethostname()}", "--force")
        assert store.get(sid).id == sid, "still there"
        assert main(["sessions", "rm", sid, "--yes", "--force"]) == 0
        assert f"removed {sid[:12]}" in capsys.readouterr().out
    with SQLiteStore(store_path()) as store:
        assert store.sessions() == []


def test_rm_removes_a_session_nobody_holds(capsys: pytest.CaptureFixture[str]) -> None:
    with SQLiteStore(store_path()) as store:
        session = Session.start(store, workspace="/w", system="s")
        session.close()
    assert main(["sessions", "rm", session.id, "--yes"]) == 0
    capsys.readouterr()
    with SQLiteStore(store_path()) as store:
        assert [s.id for s in store.sessions()] == []


class FailingConnection:
    """A real connection whose statements fail from the first that matches, as SQLite fails on a full disk."""

    def __init__(self, real: sqlite3.Connection, error: sqlite3.Error, at: str) -> None:
        self.real, self.error, self.at = real, error, at

    def execute(self, sql: str, *args: Any) -> Any:
        if self.at in sql:
            raise self.error
        return self.real.execute(sql, *args)

    def close(self) -> None:
        self.real.close()


def sqlite_error(message: str, code: int) -> sqlite3.Error:
    error = sqlite3.OperationalError(message)
    error.sqlite_errorcode = code  # type: ignore[attr-defined]
    return error


def failing(monkeypatch: pytest.MonkeyPatch, error: sqlite3.Error, at: str) -> None:
    connect = sqlite3.connect
    monkeypatch.setattr(sqlite3, "connect", lambda *a, **k: FailingConnection(connect(*a, **k), error, at))


def free_space(monkeypatch: pytest.MonkeyPatch, free_bytes: int) -> None:
    real = os.statvfs

    def statvfs(path: Any) -> Any:
        found = real(path)
        return SimpleNamespace(f_frsize=found.f_frsize, f_bavail=free_bytes // found.f_frsize, f_bfree=0)

    monkeypatch.setattr(os, "statvfs", statvfs)


@pytest.mark.parametrize(
    ("message", "code", "free"),
    [
        ("database or disk is full", sqlite3.SQLITE_FULL, 10**9),  # SQLite says so itself
        ("disk I/O error", sqlite3.SQLITE_IOERR | (3 << 8), 0),  # SQLITE_IOERR_WRITE, and nothing free
    ],
    ids=["SQLITE_FULL", "an I/O error with no space left"],
)
def test_an_existing_store_on_a_full_disk_says_the_disk_is_full(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], message: str, code: int, free: int
) -> None:
    SQLiteStore(store_path()).close()
    failing(monkeypatch, sqlite_error(message, code), "journal_mode")
    free_space(monkeypatch, free)
    assert main(["sessions", "list"]) == 2
    one_line(capsys, str(store_path()), "the disk is full", "--store")


def test_an_io_error_with_space_left_is_not_called_a_full_disk(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    SQLiteStore(store_path()).close()
    failing(monkeypatch, sqlite_error("disk I/O error", sqlite3.SQLITE_IOERR), "journal_mode")
    free_space(monkeypatch, 10**9)
    assert main(["sessions", "list"]) == 2
    line = one_line(capsys, str(store_path()), "disk I/O error")
    assert "full" not in line


def test_fork_past_the_end_says_where_it_forked(capsys: pytest.CaptureFixture[str]) -> None:
    with SQLiteStore(store_path()) as store:
        session = Session.start(store, workspace="/w", system="s")
        session.context.add_user("hello")
        session.close()
        head = store.get(session.id).head
    assert main(["sessions", "fork", session.id, "--at", str(head + 40)]) == 0
    out = capsys.readouterr()
    note = f"--at {head + 40} is past the end of session {session.id[:12]}: its last entry is #{head}, so the fork"
    assert note in out.err and f"at #{head}" in out.out
    assert main(["sessions", "fork", session.id, "--at", str(head + 40), "--json"]) == 0
    out = capsys.readouterr()
    forked = json.loads(out.out)
    assert forked["fork_seq"] == head and forked["at_asked"] == head + 40 and note in forked["note"]
    assert note in out.err
    assert main(["sessions", "fork", session.id, "--at", str(head), "--json"]) == 0
    out = capsys.readouterr()
    assert "note" not in json.loads(out.out) and out.err == "", "nothing to say when --at is in range"


def in_flight(store: SQLiteStore) -> Session:
    """A session whose process is alive and waiting for a reply: a call sent, a tool call not run."""
    session = Session.start(store, workspace=os.getcwd(), system="s")
    session.context.add_user("write a.txt")
    session.context.add_assistant(Message("assistant", (ToolUseBlock("w1", "write_file", {"path": "a.txt"}),)))
    session.context.append([CallOpened("turn", "m", 10, {})])
    return session


def test_a_session_taken_over_from_a_live_process_says_so(
    workspace: Path, script: Script, capsys: pytest.CaptureFixture[str]
) -> None:
    with SQLiteStore(store_path()) as first:
        sid = in_flight(first).id  # this process stays alive, holding the session
        feed(script, Message.assistant("ok"))
        assert main(["--resume", sid, "--force", "go on"]) == 0
        err = capsys.readouterr().err
    who = f"pid {os.getpid()} on {socket.gethostname()}"
    assert f"took this session over from {who}" in err, err
    assert "stopped" not in err
    with SQLiteStore(store_path()) as store:
        entries = store.entries(sid)
    (failed,) = [e.body["error"] for e in entries if e.kind == "call_failed"]
    assert "taken over" in failed and who in failed and "stopped" not in failed
    (result,) = [e.body["block"]["content"] for e in entries if e.kind == "tool_result"]
    assert "took this session over" in result and who in result


def test_a_session_whose_process_died_still_says_it_stopped(workspace: Path, script: Script) -> None:
    with SQLiteStore(store_path()) as first:
        sid = in_flight(first).id
        first._held.clear()  # no release: as if the process died
    with SQLiteStore(store_path()) as store:
        store._db.execute("UPDATE sessions SET writer = 'nohost:999999999:x', writer_seen_at = 0")
        session = Session.resume(store, sid)
        assert session.taken_from is None and session.lost_calls == 1
        failed = [e.body["error"] for e in session.context.entries if e.kind == "call_failed"]
        assert failed == ["the process stopped before the reply arrived"]
        session.close()


URL = "mysql://alice:s3cret-pw@db.example.com:5432/agent?sslpassword=other-s3cret"
PLACES = {
    "run --store": (["--store", URL, "a task"], {}),
    "chat --store": (["chat", "--store", URL], {}),
    "sessions --store": (["sessions", "list", "--store", URL], {}),
    "TINY_AGENT_STORE, run": (["a task"], {"TINY_AGENT_STORE": URL}),
    "TINY_AGENT_STORE, sessions": (["sessions", "show", "abc"], {"TINY_AGENT_STORE": URL}),
}


@pytest.mark.parametrize(("argv", "env"), PLACES.values(), ids=PLACES.keys())
def test_a_store_url_that_is_not_served_is_refused(
    argv: list[str],
    env: dict[str, str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    here = tmp_path / "cwd"
    here.mkdir()
    monkeypatch.chdir(here)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("TINY_AGENT_LLAMA_SERVER", "/nonexistent/llama-server")  # never start a model
    assert main(argv) == 2
    line = one_line(capsys, "mysql://db.example.com:5432/agent", "a file path or a postgresql:// URL")
    assert "s3cret" not in line and "alice" not in line
    assert list(here.iterdir()) == [], "nothing was created"
