"""Issue 27: ``sessions export --format anthropic|responses`` writes the next request body tiny-agent
would send, its thinking settings included: a session recorded for real (official SDKs, the billing
fake's thinking rules, the Responses server), its export beside the last request the server got."""

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
from tiny_agent.testing.responses_server import ResponsesServer
from tiny_agent.testing.thinking_server import ThinkingRules

ENV = {"ANTHROPIC_API_KEY": "sk-test-1", "OPENAI_API_KEY": "sk-test-2"}
WIRE_EXTRAS = ("messages", "input", "diagnostics", "prompt_cache_key", "prompt_cache_options", "stream")
"""What a live request adds that an export of the conversation does not: the engine's cache marks on
the messages, the conversation's cache key, Anthropic's diagnostics, the choice to stream."""


def task(ws: Path) -> Task:
    for i in range(3):
        (ws / f"p{i}.txt").write_text(f"words of file {i} " * 40)
    return Task("read", [[("read_file", {"path": f"p{i}.txt"})] for i in range(3)], "Done.")


def exported(tmp_path: Path, settings: RunSettings, fmt: str, capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    with SQLiteStore(tmp_path / "s.db") as store, Run.open(store, settings=settings, env=ENV) as run:
        assert run.agent.run("Please read the files").stop == "done"
        assert run.session is not None
        sid = run.session.id
    capsys.readouterr()
    assert main(["sessions", "export", sid[:12], "--format", fmt, "--store", str(tmp_path / "s.db")]) == 0
    body: dict[str, Any] = json.loads(capsys.readouterr().out)
    return body


def same_settings(body: dict[str, Any], sent: dict[str, Any]) -> None:
    assert {k: v for k, v in body.items() if k not in WIRE_EXTRAS} == {
        k: v for k, v in sent.items() if k not in WIRE_EXTRAS
    }


def test_an_anthropic_export_keeps_the_thinking_budget(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    rules = ThinkingRules()
    with BillingFake([task(ws)], thinking=rules) as fake:
        settings = RunSettings(
            provider="anthropic", model="claude-sonnet-4-6", base_url=fake.url("r", "anthropic"), workspace=str(ws),
            code_tools=False, thinking="2048", max_tokens=3000,
        )  # fmt: skip
        body = exported(tmp_path, settings, "anthropic", capsys)
        sent = dict(fake.bills("r")[-1].body)
    assert rules.rejected == []
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 2048} == sent["thinking"]
    assert body["max_tokens"] == sent["max_tokens"]
    same_settings(body, sent)
    thoughts = [b for m in body["messages"] for b in m["content"] if isinstance(m["content"], list)]
    assert any(b.get("type") == "thinking" for b in thoughts), "the thinking blocks go back too"


def test_a_responses_export_keeps_the_effort(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    with ResponsesServer([task(ws)]) as server:
        settings = RunSettings(
            provider="openai", api="responses", model="gpt-5.6", base_url=server.url("r"), workspace=str(ws),
            code_tools=False, effort="high",
        )  # fmt: skip
        body = exported(tmp_path, settings, "responses", capsys)
        sent = dict(server.bills("r")[-1].body)
    assert sent["reasoning"]["effort"] == "high"
    assert body["reasoning"] == sent["reasoning"]
    same_settings(body, sent)


def test_an_export_to_a_wire_that_sends_no_thinking_settings_says_what_it_left_out(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    with BillingFake([task(ws)], thinking=ThinkingRules()) as fake:
        settings = RunSettings(
            provider="anthropic", model="claude-sonnet-5", base_url=fake.url("r", "anthropic"), workspace=str(ws),
            code_tools=False, thinking="adaptive",
        )  # fmt: skip
        with SQLiteStore(tmp_path / "s.db") as store, Run.open(store, settings=settings, env=ENV) as run:
            assert run.agent.run("Please read the files").stop == "done"
            assert run.session is not None
            sid = run.session.id
    capsys.readouterr()
    assert main(["sessions", "export", sid[:12], "--format", "openai", "--store", str(tmp_path / "s.db")]) == 0
    out = capsys.readouterr()
    body = json.loads(out.out)
    assert "thinking" not in body and body["messages"]
    assert out.err.splitlines() == [
        "tiny-agent: the body has no thinking settings (the session's: adaptive): tiny-agent sends claude-sonnet-5's "
        "on the Messages API (--provider anthropic) only",
        "tiny-agent: the body leaves out 3 thinking blocks (anthropic's own; the openai format takes none)",
    ]
