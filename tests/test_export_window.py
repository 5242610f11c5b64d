"""``sessions export --format anthropic`` of a compacted session with preserved thinking: the body is
the window the engine would send next (summary, pins, kept turns), which the thinking rules accept,
not the whole log, whose later blocks are bound to the summary's prefix; and ``lint`` of the log's
requests followed by a body that moved a block to another prefix names that block."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tiny_agent.agent.run import Run
from tiny_agent.agent.settings import RunSettings
from tiny_agent.cli import main
from tiny_agent.observe.lint import lint_bodies, lint_session
from tiny_agent.observe.view.data import SessionView
from tiny_agent.providers.anthropic.thinking import betas_for
from tiny_agent.store.sqlite import SQLiteStore
from tiny_agent.testing import BillingFake, Task
from tiny_agent.testing.thinking_server import ThinkingRules

ENV = {"ANTHROPIC_API_KEY": "sk-test-1"}
PIN = "never edit dev.mjs"


def reads(ws: Path, files: int = 11) -> Task:
    for i in range(files):
        (ws / f"part{i:02d}.txt").write_text(f"line {i} of a long file with words " * 120)
    return Task("read", [[("read_file", {"path": f"part{i:02d}.txt"})] for i in range(files)], "All read.")


def unmarked(data: Any) -> Any:
    """``data`` without its cache breakpoints (they move from request to request)."""
    if isinstance(data, dict):
        return {k: unmarked(v) for k, v in data.items() if k != "cache_control"}
    if isinstance(data, list):
        return [unmarked(v) for v in data]
    return data


def blocks(body: dict[str, Any]) -> list[dict[str, Any]]:
    return [b for m in body["messages"] if isinstance(m["content"], list) for b in m["content"]]


def compacted(
    tmp_path: Path, rules: ThinkingRules, binding: str | None = None, **config: Any
) -> tuple[str, list[dict[str, Any]]]:
    """A compacted claude-sonnet-5 session with thinking on: its id and the bodies the server got."""
    ws = tmp_path / "ws"
    ws.mkdir()
    with BillingFake([reads(ws)], thinking=rules) as fake:
        settings = RunSettings(
            provider="anthropic", model="claude-sonnet-5", base_url=fake.url("r", "anthropic"), workspace=str(ws),
            code_tools=False, thinking="adaptive", thinking_binding=binding,
        )  # fmt: skip
        config = {"compact_at": 9000, "keep_turns": 2, **config}
        with (
            SQLiteStore(tmp_path / "s.db") as store,
            Run.open(store, settings=settings, config=config, pins=[PIN], env=ENV) as run,
        ):
            assert run.agent.run("Please read the files one by one").stop == "done"
            assert len(run.agent.context.state.compactions) >= 1
            assert run.session is not None
            sid = run.session.id
        sent = [dict(b.body) for b in fake.bills("r")]
    assert rules.rejected == []
    return sid, sent


def export(tmp_path: Path, sid: str, capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    capsys.readouterr()
    assert main(["sessions", "export", sid[:12], "--format", "anthropic", "--store", str(tmp_path / "s.db")]) == 0
    out = capsys.readouterr()
    assert out.err == ""
    body: dict[str, Any] = json.loads(out.out)
    return body


def test_the_export_of_a_compacted_thinking_session_is_the_window_the_server_takes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rules = ThinkingRules(redact_every=4)
    sid, sent = compacted(tmp_path, rules)
    body = export(tmp_path, sid, capsys)
    admitted = rules.admit_anthropic(body, ",".join(betas_for(body, interleaved=False)))
    assert admitted.error is None and admitted.transformations == ()
    last = sent[-1]  # the request that asked for the last answer: the window, summary first
    assert any(b["type"] in ("thinking", "redacted_thinking") for b in blocks(last)), "blocks made after the cut"
    assert unmarked(body["messages"]) == unmarked(last["messages"])
    assert unmarked(body["system"]) == unmarked(last["system"]) and PIN in json.dumps(body["system"])
    assert len(body["messages"]) < 22, "the summary stands for the turns before the cut"


def test_lint_names_a_thinking_block_moved_onto_another_prefix(tmp_path: Path) -> None:
    rules = ThinkingRules()
    sid, sent = compacted(tmp_path, rules)
    with SQLiteStore(tmp_path / "s.db") as store:
        assert not [f for f in lint_session(store, sid) if f.rule == "thinking-rebound"], "the fold keeps the rules"
    last = sent[-1]
    moved = {**last, "messages": [{"role": "user", "content": "Another start."}, *last["messages"][1:]]}
    assert rules.admit_anthropic(moved, "").error is not None, "the server refuses it"
    found = [f for f in lint_bodies([last, moved]) if f.rule == "thinking-rebound"]
    assert [(f.severity, f.request) for f in found] == [("error", 1)]
    assert found[0].path.startswith("messages[") and ".content[" in found[0].path
    assert "bound to" in found[0].message
    dropping = {**moved, "thinking": {**moved["thinking"], "block_binding": {"prefix_mismatch_behavior": "drop_block"}}}
    assert not [f for f in lint_bodies([last, dropping]) if f.rule == "thinking-rebound"], "the API drops them"


def test_a_drop_block_session_is_redrawn_with_its_binding_and_lints_clean(tmp_path: Path) -> None:
    rules = ThinkingRules()
    sid, sent = compacted(tmp_path, rules, "drop_block", policy="fraction")
    assert any(rules.transformations), "the kept turns' blocks were dropped by the API"
    with SQLiteStore(tmp_path / "s.db") as store:
        redrawn = [body for _, body, _ in SessionView.of(store.get(sid), store.entries(sid)).timed_bodies()]
        findings = lint_session(store, sid)
    assert [b["thinking"] for b in redrawn] == [b["thinking"] for b in sent], "the binding is sent on every request"
    assert not [f for f in findings if f.rule == "thinking-rebound"]


def test_the_export_of_a_drop_block_session_names_the_header_its_body_needs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``thinking.block_binding`` is a beta field: the body is refused without its header, which a body
    file cannot carry, so the export says which header to send it with."""
    sid, _ = compacted(tmp_path, ThinkingRules(), "drop_block", policy="fraction")
    capsys.readouterr()
    assert main(["sessions", "export", sid[:12], "--format", "anthropic", "--store", str(tmp_path / "s.db")]) == 0
    out = capsys.readouterr()
    body = json.loads(out.out)
    assert body["thinking"]["block_binding"] == {"prefix_mismatch_behavior": "drop_block"}
    beta = "thinking-binding-controls-2026-08-01"
    assert out.err.splitlines() == [
        f"tiny-agent: send the body with the header anthropic-beta: {beta} (its fields need it)"
    ]
    assert betas_for(body, False) == [beta]
