"""``lint`` of a stored session or an export whose log holds a thinking block the engine would refuse
to send (an unsigned one): each request is rendered as the log has it and the rule is a finding
(``thinking-unsigned``), with --json's one object, not a refusal that stops lint."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tiny_agent.agent.run import Run
from tiny_agent.agent.settings import RunSettings
from tiny_agent.cli import main
from tiny_agent.store.sqlite import SQLiteStore
from tiny_agent.testing import BillingFake, Task
from tiny_agent.testing.thinking_server import ThinkingRules


def blocks_of(data: Any) -> list[dict[str, Any]]:
    """Every dict inside ``data`` that has a ``type``, in order."""
    if isinstance(data, dict):
        return ([data] if "type" in data else []) + [b for v in data.values() for b in blocks_of(v)]
    if isinstance(data, list):
        return [b for v in data for b in blocks_of(v)]
    return []


@pytest.fixture
def thought(tmp_path: Path) -> tuple[Path, str]:
    """A two-step session with thinking, its export with the first reply's signature emptied."""
    ws = tmp_path / "ws"
    ws.mkdir()
    for name in ("a.txt", "b.txt"):
        (ws / name).write_text(f"{name} holds a line\n")
    steps = [[("read_file", {"path": "a.txt"})], [("read_file", {"path": "b.txt"})]]
    with BillingFake([Task("read the files", steps, "Both read.")], thinking=ThinkingRules()) as fake:
        settings = RunSettings(
            provider="anthropic", model="claude-sonnet-5", base_url=fake.url("r", "anthropic"), workspace=str(ws),
            code_tools=False, thinking="adaptive",
        )  # fmt: skip
        with (
            SQLiteStore(tmp_path / "s.db") as store,
            Run.open(store, settings=settings, env={"ANTHROPIC_API_KEY": "sk-test-1"}) as run,
        ):
            assert run.agent.run("Please read the files").stop == "done"
            assert run.session is not None
            sid = run.session.id
    out = tmp_path / "s.jsonl"
    assert main(["sessions", "export", sid, "-o", str(out), "--store", str(tmp_path / "s.db")]) == 0
    lines = out.read_text().splitlines()
    first = next(i for i, line in enumerate(lines) if '"signature"' in line)
    entry = json.loads(lines[first])
    (block,) = [b for b in blocks_of(entry) if b.get("type") == "thinking"][:1]
    block["signature"] = ""
    lines[first] = json.dumps(entry)
    out.write_text("\n".join(lines) + "\n")
    return out, sid


@pytest.fixture
def imported(thought: tuple[Path, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[Path, str, Path]:
    """The export with its unsigned block, imported into a store of its own: (export, session, store)."""
    export, sid = thought
    db = tmp_path / "imported.db"
    assert main(["sessions", "import", str(export), "--store", str(db)]) == 0
    capsys.readouterr()
    return export, sid, db


def test_an_unsigned_block_in_a_stored_session_or_an_export_is_a_finding(
    imported: tuple[Path, str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    export, sid, db = imported
    assert main(["lint", "--session", sid[:8], "--store", str(db), "--json"]) == 1
    out = capsys.readouterr()
    report = json.loads(out.out)
    assert report["clean"] is False and "illegal request" not in out.err
    unsigned_ = [f for f in report["findings"] if f["rule"] == "thinking-unsigned"]
    assert unsigned_ and all(f["severity"] == "error" for f in unsigned_)
    assert main(["lint", str(export)]) == 1
    out = capsys.readouterr()
    assert "error thinking-unsigned: messages[1].content[0] has no signature" in out.out
    assert "illegal request" not in out.err


def test_replay_of_such_a_session_says_what_to_do_in_one_line(
    imported: tuple[Path, str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    _, sid, db = imported
    assert main(["replay", sid[:8], "--store", str(db)]) == 2
    said = [line for line in capsys.readouterr().err.splitlines() if line.startswith("tiny-agent: ")]
    assert said == [
        f"tiny-agent: session {sid[:12]} cannot be replayed: its log holds a request the API refuses "
        "(thinking-unsigned: messages[1].content[0] has no signature); lint names the call: "
        f"tiny-agent lint --session {sid[:12]}"
    ]
