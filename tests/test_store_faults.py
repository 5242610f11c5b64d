"""The store where it meets other processes and a failing disk: one line that says what happened."""

from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest

from tiny_agent.cli import main
from tiny_agent.context.session import Session
from tiny_agent.store.sqlite import SQLiteStore


def store_path() -> Path:
    return Path(os.environ["TINY_AGENT_STORE"])


def one_line(capsys: pytest.CaptureFixture[str], *fragments: str) -> str:
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    for fragment in fragments:
        assert fragment in lines[0], (fragment, lines[0])
    return lines[0]


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
