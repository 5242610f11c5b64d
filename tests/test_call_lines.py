"""Every billed call gets its line, with its purpose: the turns, and each summary call of a compaction
(one whose reply was a tool call and was asked again, the transcript fallback), also when the
compaction failed, in a run, in chat's /compact and in ``sessions show``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.test_chat_commands import converse
from tiny_agent.agent.loop import Agent, CallEvent, CompactionEvent, CompactionFailedEvent, Event, TurnEvent
from tiny_agent.context.engine import Context, ContextConfig
from tiny_agent.errors import ServerError
from tiny_agent.observe.call_lines import format_event
from tiny_agent.observe.history import history_lines
from tiny_agent.testing import ScriptedProvider, tool_call
from tiny_agent.tools.toolbox import Toolbox
from tiny_agent.tools.workspace import Workspace
from tiny_agent.types import Message, ToolResultBlock, ToolSpec

READ = ToolSpec("read_file", "Read a file", {"type": "object", "properties": {"path": {"type": "string"}}})
ASKED_AGAIN = [tool_call("read_file", "x1", path="a"), tool_call("read_file", "x2", path="b")]


def grown(provider: ScriptedProvider, config: ContextConfig | None = None) -> Context:
    """Eight turns of big reads: past a threshold of 4,000 tokens."""
    ctx = Context("system prompt " * 50, (READ,), config=config)
    ctx.add_user("read every file")
    for i in range(8):
        ctx.complete(provider)
        ctx.add_tool_result(ToolResultBlock(f"c{i}", f"line {i} of the file\n" * 300))
    return ctx


def reads() -> list[Message]:
    return [tool_call("read_file", f"c{i}", path=f"f{i}.txt") for i in range(8)]


def run(tmp_path: Path, replies: list[Any]) -> tuple[Agent, list[Event]]:
    provider = ScriptedProvider([*reads(), *replies])
    ctx = grown(provider, ContextConfig(compact_at=4_000, keep_turns=2, policy="fraction"))
    events: list[Event] = []
    agent = Agent(provider, Toolbox(Workspace(tmp_path).tools()), context=ctx, on_event=events.append)
    before = len(ctx.ledger.calls)
    result = agent.run("go on")
    assert result.stop == "done", result.message
    billed = ctx.ledger.calls[before:]
    lines = [e for e in events if isinstance(e, TurnEvent | CallEvent)]
    assert [e.call for e in lines] == billed, "one line per billed call, in order"
    return agent, events


def test_each_summary_call_of_a_compaction_gets_its_line(tmp_path: Path) -> None:
    agent, events = run(tmp_path, [*ASKED_AGAIN, Message.assistant("prose"), Message.assistant("done")])
    calls = [e for e in events if isinstance(e, CallEvent)]
    assert [(e.number, e.call.purpose) for e in calls] == [(1, "compaction"), (2, "compaction"), (3, "compaction")]
    printed = [format_event(e) for e in events]
    summaries = [line for line in printed if line.startswith("[summary ")]
    assert [line.split(" · ")[0] for line in summaries] == ["[summary 1", "[summary 2", "[summary 3"]
    assert "replied with a tool call" in summaries[0] and "replied with a tool call" not in summaries[2]
    (compacted,) = [e for e in events if isinstance(e, CompactionEvent)]
    assert compacted.calls == tuple(e.call for e in calls)
    assert events.index(compacted) > events.index(calls[-1]), "the calls' lines come first"
    assert len(agent.context.ledger.calls) == 8 + 3 + 1, "the totals count them all"


def test_a_failed_compaction_still_shows_the_calls_it_paid_for(tmp_path: Path) -> None:
    broken = ServerError("scripted: 500 server_error: down", status_code=500)
    _, events = run(tmp_path, [*ASKED_AGAIN, broken, Message.assistant("done")])
    calls = [e for e in events if isinstance(e, CallEvent)]
    assert [e.number for e in calls] == [1, 2], "the fallback failed: no reply, nothing billed to show"
    failed = [e for e in events if isinstance(e, CompactionFailedEvent)]
    assert failed and events.index(failed[0]) > events.index(calls[-1])


def test_chat_compact_prints_each_summary_call(capsys: pytest.CaptureFixture[str]) -> None:
    provider = ScriptedProvider([*reads(), Message.assistant("prose")])
    converse(grown(provider), provider, ["/compact 2"])
    err = capsys.readouterr().err
    assert "[summary 1 · in=" in err and "[compacted · 13 messages -> summary" in err


def test_sessions_show_has_a_line_for_each_summary_call(tmp_path: Path) -> None:
    agent, _ = run(tmp_path, [*ASKED_AGAIN, Message.assistant("prose"), Message.assistant("done")])
    shown = list(history_lines(agent.context.entries))
    assert [line.split(" · ")[0] for line in shown if line.startswith("[summary ")] == [
        "[summary 1",
        "[summary 2",
        "[summary 3",
    ]


def test_the_docs_show_the_thinking_of_a_call_as_the_line_prints_it() -> None:
    """Each ``out=N (...)`` a page shows is what ``format_usage`` prints for those counts."""
    import re

    from tiny_agent.observe.call_lines import format_usage
    from tiny_agent.types import Usage

    root = Path(__file__).resolve().parents[1]
    shown = [
        m
        for page in sorted((root / "docs").glob("*.md"))
        for m in re.findall(r"out=[\d,]+ \([^)]*\)", page.read_text())
    ]
    assert shown
    for example in shown:
        counts = [int(n.replace(",", "")) for n in re.findall(r"\d[\d,]*", example)]
        line = format_usage(Usage(1, counts[0], 0, 0, reasoning_tokens=counts[-1]))
        assert line.endswith(example), (example, line)
