"""Thinking that streams with no text (Claude's ``--thinking-display omitted``, a ``redacted_thinking``
block, the Responses API's encrypted reasoning) still has its folded line printed before the answer
it led to: the stream says it with a ``ThinkingDelta`` holding the placeholder, as soon as it knows."""

from __future__ import annotations

import io
import sys
from pathlib import Path

import pytest

from tests.test_printer import Screen, run_streamed
from tiny_agent.agent.loop import Agent, AgentConfig
from tiny_agent.cli.printer import Printer
from tiny_agent.providers.anthropic.reply import Accumulator as AnthropicAccumulator
from tiny_agent.providers.registry import resolve_provider
from tiny_agent.providers.responses.reply import Accumulator as ResponsesAccumulator
from tiny_agent.providers.thinking import parse_thinking
from tiny_agent.testing import BillingFake, Task
from tiny_agent.testing.responses_server import ResponsesServer
from tiny_agent.testing.thinking_server import ThinkingRules
from tiny_agent.tools.toolbox import Toolbox
from tiny_agent.tools.workspace import Workspace
from tiny_agent.types import (
    Block,
    Message,
    ReasoningBlock,
    RedactedThinkingBlock,
    TextBlock,
    TextDelta,
    ThinkingBlock,
    ThinkingDelta,
)

ENV = {"ANTHROPIC_API_KEY": "sk-a", "OPENAI_API_KEY": "sk-o"}
SEALED = ReasoningBlock(item={"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "e"}, model="m")


@pytest.mark.parametrize(
    ("block", "shown"),
    [
        (ThinkingBlock("", "sig"), "[thinking omitted]"),
        (RedactedThinkingBlock("data"), "[redacted thinking]"),
        (SEALED, "[encrypted reasoning]"),
    ],
)
def test_a_placeholder_line_is_printed_above_the_answer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, block: Block, shown: str
) -> None:
    text = run_streamed(tmp_path, monkeypatch, [Message("assistant", (block, TextBlock("Wednesday: Tom")))])
    assert text.count(f"thinking: {shown}") == 1, text
    assert text.index(f"thinking: {shown}") < text.index("Wednesday: Tom"), text


def test_a_placeholder_delta_goes_above_the_answer_on_the_printer() -> None:
    screen = Screen()
    printer = Printer(stream=True, out=screen.out)
    printer.err.file = screen.err
    try:
        printer.event(ThinkingDelta("[redacted thinking]"))
        printer.event(TextDelta("Hello."))
    finally:
        printer.close()
    assert screen.text.index("thinking: [redacted thinking]") < screen.text.index("Hello."), screen.text


def test_the_anthropic_stream_says_an_empty_or_redacted_block_before_the_text() -> None:
    acc = AnthropicAccumulator()
    acc.feed({"type": "message_start", "message": {"id": "m", "model": "claude-sonnet-5", "usage": {}}})
    opening = {"type": "content_block_start", "index": 0}
    assert acc.feed({**opening, "content_block": {"type": "thinking", "thinking": "", "signature": ""}}) == []
    signed = {"type": "signature_delta", "signature": "sig"}
    assert acc.feed({"type": "content_block_delta", "index": 0, "delta": signed}) == []
    assert acc.feed({"type": "content_block_stop", "index": 0}) == [ThinkingDelta("[thinking omitted]")]
    redacted = {"type": "content_block_start", "index": 1, "content_block": {"type": "redacted_thinking", "data": "d"}}
    assert acc.feed(redacted) == [ThinkingDelta("\n[redacted thinking]")]
    assert acc.feed({"type": "content_block_stop", "index": 1}) == []


def test_the_responses_stream_says_reasoning_without_a_summary_when_its_item_is_done() -> None:
    acc = ResponsesAccumulator()
    done = {"type": "response.output_item.done", "item": SEALED.item}
    assert acc.feed(done) == [ThinkingDelta("[encrypted reasoning]")]
    summarised = {"type": "reasoning", "id": "rs_2", "summary": [{"type": "summary_text", "text": "Weighing it."}]}
    summary = {"type": "response.reasoning_summary_text.delta", "item_id": "rs_2", "summary_index": 0}
    assert acc.feed({**summary, "delta": "Weighing it."}) == [ThinkingDelta("Weighing it.")]
    assert acc.feed({"type": "response.output_item.done", "item": summarised}) == []


def streamed(adapter: object, tmp_path: Path) -> tuple[list[object], str]:
    seen: list[object] = []
    screen = Screen()
    printer = Printer(stream=True, out=screen.out)
    printer.err.file = screen.err

    def both(event: object) -> None:
        seen.append(event)
        printer.event(event)  # type: ignore[arg-type]

    try:
        toolbox = Toolbox(Workspace(tmp_path).tools())
        agent = Agent(adapter, toolbox, config=AgentConfig(stream=True), on_event=both)  # type: ignore[arg-type]
        result = agent.run("please read a")
        printer.answer(result.answer)
    finally:
        printer.close()
    assert result.stop == "done", result.error
    return seen, screen.text


def first_of(seen: list[object], kind: type) -> int:
    return next(i for i, e in enumerate(seen) if isinstance(e, kind))


@pytest.mark.parametrize(
    ("rules", "display", "shown"),
    [(ThinkingRules(), "omitted", "[thinking omitted]"), (ThinkingRules(redact_every=1), None, "[redacted thinking]")],
)
def test_claude_streamed_through_the_fake_prints_the_placeholder_first(
    tmp_path: Path, rules: ThinkingRules, display: str | None, shown: str
) -> None:
    (tmp_path / "a.txt").write_text("alpha " * 40)
    task = Task("read a", [[("read_file", {"path": "a.txt"})]], "Read it.")
    with BillingFake([task], thinking=rules) as fake:
        thinking = parse_thinking("adaptive", display)
        url = fake.url("r", "anthropic")
        adapter = resolve_provider("anthropic", model="claude-sonnet-5", base_url=url, env=ENV, thinking=thinking)
        seen, screen = streamed(adapter, tmp_path)
    assert ThinkingDelta(shown) in seen and first_of(seen, ThinkingDelta) < first_of(seen, TextDelta), seen
    assert screen.index(f"thinking: {shown}") < screen.index("Read it."), screen


def test_responses_streamed_through_the_fake_prints_encrypted_reasoning_first(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("alpha " * 40)
    task = Task("read a", [[("read_file", {"path": "a.txt"})]], "Read it.")
    with ResponsesServer([task]) as server:
        adapter = resolve_provider("openai", api="responses", model="gpt-5.6", base_url=server.url("r"), env=ENV)
        seen, screen = streamed(adapter, tmp_path)
    assert ThinkingDelta("[encrypted reasoning]") in seen, seen
    assert first_of(seen, ThinkingDelta) < first_of(seen, TextDelta), seen
    assert screen.rindex("thinking: [encrypted reasoning]") < screen.index("Read it."), screen


def test_a_printer_without_streaming_is_unchanged(monkeypatch: pytest.MonkeyPatch) -> None:
    out = io.StringIO()
    monkeypatch.setattr(sys, "stderr", io.StringIO())
    printer = Printer(stream=False, out=out)
    try:
        printer.event(ThinkingDelta("[thinking omitted]"))
        printer.answer("Hello.")
    finally:
        printer.close()
    assert out.getvalue() == "Hello.\n"
