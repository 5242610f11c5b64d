"""Chat commands without a terminal: a Ctrl-C during /compact cancels the command, not the chat."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from tiny_agent.agent.loop import DEFAULT_SYSTEM, Agent
from tiny_agent.cli.chat import _converse
from tiny_agent.cli.printer import Printer
from tiny_agent.context.engine import Context
from tiny_agent.providers.registry import resolve_provider
from tiny_agent.testing import BillingFake, ScriptedProvider, tool_call
from tiny_agent.tools.toolbox import Toolbox
from tiny_agent.tools.workspace import Workspace
from tiny_agent.types import Message, ToolResultBlock, ToolSpec

from .recorded import ENV, MODELS, tour

READ = ToolSpec("read_file", "Read a file", {"type": "object", "properties": {"path": {"type": "string"}}})


def grown_context(provider: ScriptedProvider) -> Context:
    ctx = Context("system", (READ,))
    for i in range(4):
        ctx.add_user(f"read f{i}")
        ctx.complete(provider)
        ctx.add_tool_result(ToolResultBlock(f"c{i}", "line\n" * 200))
        ctx.complete(provider)
    return ctx


def converse(ctx: Context, provider: ScriptedProvider, typed: list[str]) -> None:
    """Run the chat over ``typed`` lines (then end of input), with no terminal and no session."""
    runtime = SimpleNamespace(context=ctx, provider=provider, session=None, agent=None, keepalive=None)
    lines = iter(typed)

    def read() -> str:
        try:
            return next(lines)
        except StopIteration:
            raise EOFError from None

    printer = Printer()
    try:
        _converse(runtime, printer, read)  # type: ignore[arg-type]
    finally:
        printer.close()


def test_ctrl_c_during_compact_leaves_the_conversation_as_it_was(capsys: pytest.CaptureFixture[str]) -> None:
    def interrupted(body: dict[str, Any]) -> Message:
        raise KeyboardInterrupt

    replies: list[Any] = []
    for i in range(4):
        replies += [tool_call("read_file", f"c{i}", path=f"f{i}"), Message.assistant(f"done {i}")]
    provider = ScriptedProvider([*replies, interrupted])
    ctx = grown_context(provider)
    entries = len(ctx.entries)
    converse(ctx, provider, ["/compact 1", "/cost"])
    err = capsys.readouterr().err
    assert "(/compact interrupted; the conversation is as it was)" in err
    assert "calls" in err, "the chat went on to the next command"
    assert not ctx.compactions and all(e.kind != "compaction" for e in ctx.entries[entries:])


def test_what_the_keepalive_did_while_the_user_was_away_is_printed_when_the_chat_ends(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Its lines wait for the next message; a chat closed instead must not drop them (they were billed)."""
    import contextlib

    from tiny_agent.agent.events import KeepaliveNote

    keepalive = SimpleNamespace(on_event=None)

    @contextlib.contextmanager
    def idle() -> Any:
        keepalive.on_event(KeepaliveNote("pinged once while you were away"))  # type: ignore[misc]
        yield

    keepalive.idle = idle
    provider = ScriptedProvider([])
    runtime = SimpleNamespace(context=Context("system", (READ,)), provider=provider, session=None, agent=None)
    runtime.keepalive = keepalive

    def read() -> str:
        raise EOFError

    printer = Printer()
    try:
        _converse(runtime, printer, read)  # type: ignore[arg-type]
    finally:
        printer.close()
    assert "pinged once while you were away" in capsys.readouterr().err


def _toured_then_compacted(
    tmp_path: Path, provider: Any, capsys: pytest.CaptureFixture[str]
) -> tuple[Context, int, str]:
    """A tour of the doc files, then ``/compact 1``: the context, its calls before, and what went to stderr."""
    toolbox = Toolbox(Workspace(tmp_path).tools())
    agent = Agent(provider, toolbox, context=Context(DEFAULT_SYSTEM, toolbox.specs))
    assert agent.run("tour the doc files").stop == "done"
    calls = len(agent.context.ledger.calls)
    capsys.readouterr()
    converse(agent.context, provider, ["/compact 1"])
    return agent.context, calls, capsys.readouterr().err


def test_a_manual_compact_reads_the_cache_as_the_automatic_one_does(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 30, finding 3: /compact went through a transcript summarizer of its own, which rewrote
    the prefix (cache_read 0) and printed a cache-miss line; it now takes the engine's one path."""
    with BillingFake([tour(tmp_path, "doc", 3)]) as fake:
        provider = resolve_provider(
            "anthropic", model=MODELS["anthropic"], base_url=fake.url("chat", "anthropic"), env=ENV
        )
        ctx, calls, err = _toured_then_compacted(tmp_path, provider, capsys)
    assert ctx.compactions, err
    summary = [c for c in ctx.ledger.calls[calls:] if c.purpose == "compaction"]
    assert summary and summary[0].usage.cache_read_tokens > 0, "the summary call read the cached prefix"
    assert "cache miss" not in err, err


def test_the_compact_line_is_the_runs_and_names_the_thinking_strategy(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The chat's /compact line said only the sizes; a run's compaction line and ``sessions show``
    name how the thinking rules were kept. One formatter (``format_event``) now makes all three."""
    from tiny_agent.agent.events import CompactionEvent
    from tiny_agent.observe.call_lines import format_event
    from tiny_agent.testing.thinking_server import ThinkingRules

    with BillingFake([tour(tmp_path, "doc", 3)], thinking=ThinkingRules()) as fake:
        url = fake.url("chat", "anthropic")
        provider = resolve_provider("anthropic", model="claude-sonnet-5", base_url=url, env=ENV, thinking="adaptive")
        ctx, calls, err = _toured_then_compacted(tmp_path, provider, capsys)
    assert ctx.compactions, err
    summary = tuple(c for c in ctx.ledger.calls[calls:] if c.purpose == "compaction")
    line = format_event(CompactionEvent(ctx.compactions[-1], summary))
    assert "(thinking: kept turns folded in)" in line
    assert line in err, err
