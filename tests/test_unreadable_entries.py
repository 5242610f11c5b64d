"""A stored entry that cannot be read back (its body is not JSON, or holds a block type this version
does not know) is one line naming the store, the session and the entry, exit 2, nothing sent; the
other sessions stay usable, and ``sessions show`` shows what it can read."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from tests.test_cli_sessions import Script, feed, script, sessions, store_path, workspace
from tiny_agent.cli import main
from tiny_agent.testing import tool_call
from tiny_agent.types import Message

__all__ = ["script", "workspace"]  # fixtures

UNKNOWN_BLOCK = json.dumps({"v": 1, "content": [{"type": "hologram", "data": "?"}], "call": 3})
BROKEN = {"not JSON": "{this is not json", "an unknown block type": UNKNOWN_BLOCK}


def two_sessions(script: Script, capsys: pytest.CaptureFixture[str]) -> tuple[str, str, int]:
    """A damaged session and a healthy one; the seq of the damaged session's first response."""
    feed(script, tool_call("read_file", "c1", path="notes.txt"), Message.assistant("buy milk"))
    assert main(["read notes"]) == 0
    feed(script, Message.assistant("hello"))
    assert main(["--no-session", "x"]) == 0
    feed(script, Message.assistant("fine"))
    assert main(["another"]) == 0
    capsys.readouterr()
    healthy, damaged = (s["id"] for s in sessions())  # newest first
    with sqlite3.connect(store_path()) as db:
        (seq,) = db.execute(
            "SELECT min(seq) FROM entries WHERE session_id = ? AND kind = 'response'", (damaged,)
        ).fetchone()
    return damaged, healthy, seq


def damage(session_id: str, seq: int, body: str) -> None:
    with sqlite3.connect(store_path()) as db:
        db.execute("UPDATE entries SET body = ? WHERE session_id = ? AND seq = ?", (body, session_id, seq))


def one_line(err: str, session_id: str, seq: int) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    line = lines[0]
    assert str(store_path()) in line and session_id[:12] in line and f"#{seq} (response)" in line, line
    return line


@pytest.mark.parametrize("body", BROKEN.values(), ids=BROKEN.keys())
def test_an_unreadable_entry_is_one_line_and_nothing_is_sent(
    workspace: Path, script: Script, capsys: pytest.CaptureFixture[str], body: str
) -> None:
    damaged, healthy, seq = two_sessions(script, capsys)
    damage(damaged, seq, body)
    asked = len(script)

    assert main(["--resume", damaged, "go on"]) == 2
    one_line(capsys.readouterr().err, damaged, seq)
    assert len(script) == asked, "no provider was built, nothing was sent"

    for fmt in ("jsonl", "anthropic", "openai"):
        assert main(["sessions", "export", damaged, "--format", fmt]) == 2, fmt
        out = capsys.readouterr()
        one_line(out.err, damaged, seq)
        assert out.out == "", "no partial export"

    assert main(["sessions", "show", damaged]) == 2
    out = capsys.readouterr()
    one_line(out.err, damaged, seq)
    assert "user: read notes" in out.out, "what can be read is shown"
    assert f"#{seq} [unreadable response entry" in out.out, out.out

    assert main(["sessions", "show", damaged, "--json"]) == 2
    out = capsys.readouterr()
    one_line(out.err, damaged, seq)
    rows = {row["seq"]: row for row in json.loads(out.out)["entries"]}
    assert "unreadable" in rows[seq] and rows[0]["kind"] == "config"

    # The rest of the store is fine: the other session, and a fork of what comes before the damage.
    assert main(["sessions", "show", healthy]) == 0
    assert main(["sessions", "list"]) == 0
    feed(script, Message.assistant("still fine"))
    assert main(["--resume", healthy, "and now?"]) == 0
    capsys.readouterr()
    assert main(["sessions", "fork", damaged, "--at", str(seq - 1), "--json"]) == 0
    fork = json.loads(capsys.readouterr().out)["id"]
    assert main(["sessions", "export", fork]) == 0
