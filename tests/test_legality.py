"""Legal by construction: random conversations, compacted at random points, render legally for both
wire formats without needing repair; and repair turns random broken histories into legal ones."""

from __future__ import annotations

import contextlib
import json
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from tiny_agent.context.cache import plan_cache
from tiny_agent.context.engine import Context
from tiny_agent.context.legality import check_anthropic_body, check_messages, check_openai_body, repair
from tiny_agent.errors import CompactionError
from tiny_agent.providers.anthropic.adapter import AnthropicProvider
from tiny_agent.providers.openai.adapter import OpenAICompatProvider
from tiny_agent.types import Message, Prompt, TextBlock, ToolResultBlock, ToolSpec, ToolUseBlock

ANTHROPIC = AnthropicProvider(model="claude-sonnet-4-6", api_key="test")
OPENAI = OpenAICompatProvider(model="gpt-4o-mini", api_key="test")
OPENAI_JSON_TOOLS = OpenAICompatProvider(model="local", api_key="test", tool_mode="json_schema")
WIRES: list[tuple[Any, Any]] = [
    (ANTHROPIC, check_anthropic_body),
    (OPENAI, check_openai_body),
    (OPENAI_JSON_TOOLS, check_openai_body),
]

words = st.text(alphabet="abcdefgh ", min_size=1, max_size=12).filter(str.strip)


@st.composite
def events(draw: st.DrawFn) -> list[tuple[str, Any]]:
    """A script of what happens in a conversation: model turns with 0-3 parallel tool calls,
    user requests, and compaction attempts with a random keep size."""
    script: list[tuple[str, Any]] = []
    for _ in range(draw(st.integers(3, 24))):
        kind = draw(st.sampled_from(["turn", "turn", "turn", "request", "compact"]))
        if kind == "turn":
            # Models do return blank text beside tool calls; it must never reach a request.
            text = draw(st.one_of(words, st.sampled_from(["", "  ", "\n"])))
            script.append(("turn", (draw(st.integers(0, 3)), draw(st.booleans()), text)))
        elif kind == "request":
            script.append(("request", draw(words)))
        else:
            script.append(("compact", draw(st.integers(1, 4))))
    return script


def _play(script: list[tuple[str, Any]], pins: list[str]) -> tuple[Context, list[list[Message]]]:
    """Run the script on a Context; returns it and every window that would have been sent."""
    ctx = Context("system prompt", (ANTHROPIC_TOOL,), pins=pins)
    ctx.add_user("first request")
    sent: list[list[Message]] = []
    counter = 0
    for kind, arg in script:
        last_is_user = ctx.messages[-1].role == "user"
        if kind == "turn" and last_is_user:
            sent.append(ctx.window())
            n_calls, with_text, text = arg
            calls = [ToolUseBlock(f"id{counter + k}", "read_file", {"path": f"f{counter + k}"}) for k in range(n_calls)]
            counter += n_calls
            lead = (TextBlock(text),) if with_text or not calls else ()
            ctx.add_assistant(Message("assistant", lead + tuple(calls)))
            if calls:
                ctx.add_tool_results(
                    [ToolResultBlock(c.id, f"content of {c.input['path']} " * 40) for c in reversed(calls)]
                )
        elif kind == "request" and not last_is_user:
            ctx.add_user(arg)
        elif kind == "compact" and last_is_user:
            # A summary longer than what it replaces is refused, history unchanged: both are fine here.
            with contextlib.suppress(CompactionError):
                event("compacted" if ctx.compact(lambda transcript: "s", keep_turns=arg) else "nothing to compact")
    if ctx.messages[-1].role == "assistant":
        ctx.add_user("and then?")
    sent.append(ctx.window())
    return ctx, sent


ANTHROPIC_TOOL = ToolSpec(
    "read_file", "Read a file", {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}
)


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(script=events(), pins=st.lists(words, max_size=2))
def test_every_rendered_request_is_legal_for_both_wires(script: list[tuple[str, Any]], pins: list[str]) -> None:
    ctx, windows = _play(script, pins)
    for window in windows:
        assert check_messages(window) == []
        assert repair(window) == window, "legal by construction: repair must have nothing to do"
        prompt = Prompt(ctx.system_blocks(), ctx.tools, tuple(window), plan_cache(window))
        for provider, check in WIRES:
            body = provider.render(prompt)
            assert check(body) == [], body
            text = json.dumps(body)
            assert all(json.dumps(pin)[1:-1] in text for pin in pins)


@st.composite
def broken_histories(draw: st.DrawFn) -> list[Message]:
    """Arbitrary block soup: orphans, unanswered calls, misplaced results, repeated roles."""
    ids = [f"t{i}" for i in range(5)]
    block = st.one_of(
        words.map(TextBlock),
        st.sampled_from(ids).map(lambda i: ToolUseBlock(i, "read_file", {"path": i})),
        st.sampled_from(ids).map(lambda i: ToolResultBlock(i, "result")),
    )
    msgs = [
        Message(draw(st.sampled_from(["user", "assistant"])), tuple(draw(st.lists(block, max_size=4))))
        for _ in range(draw(st.integers(1, 8)))
    ]
    msgs.append(Message.user(draw(words)))
    return msgs


@settings(max_examples=1000, deadline=None)
@given(broken_histories())
def test_repair_makes_any_history_legal(history: list[Message]) -> None:
    # Tool-use ids must be unique across a conversation; repair does not invent new ids, so give
    # each assistant block its own id first (the generator reuses ids on purpose for orphans).
    seen: set[str] = set()
    unique: list[Message] = []
    for m in history:
        blocks = []
        for b in m.content:
            if isinstance(b, ToolUseBlock):
                if b.id in seen:
                    continue
                seen.add(b.id)
            blocks.append(b)
        unique.append(Message(m.role, tuple(blocks)))
    fixed = repair(unique)
    assert check_messages(fixed) == []
    assert repair(fixed) == fixed, "repair is idempotent"


def _m(role: str, *blocks: Any) -> Message:
    return Message(role, tuple(TextBlock(b) if isinstance(b, str) else b for b in blocks))  # type: ignore[arg-type]


USE = ToolUseBlock("a", "read_file", {"path": "x"})
RESULT = ToolResultBlock("a", "ok")


@pytest.mark.parametrize(
    ("messages", "fragment"),
    [
        ([_m("user", "hi"), _m("assistant", USE), _m("user", "no result")], "without a result"),
        ([_m("user", "hi"), _m("assistant", "text"), _m("user", RESULT)], "without its tool_use"),
        ([_m("user", "hi"), _m("assistant", USE), _m("user", "note", RESULT)], "must come first"),
        ([_m("user", "hi"), _m("user", "again")], "repeats the role"),
        ([_m("user", "hi"), _m("assistant", "bye")], "last message"),
        ([_m("assistant", "hi"), _m("user", "x")], "first message"),
    ],
)
def test_the_checker_finds_each_illegal_shape(messages: list[Message], fragment: str) -> None:
    problems = check_messages(messages)
    assert any(fragment in p for p in problems), problems
    assert check_anthropic_body(ANTHROPIC.render(_prompt(messages))) != []
    # The OpenAI body puts tool messages first by its very shape, and accepts an assistant opening.
    if fragment not in ("must come first", "first message"):
        assert check_openai_body(OPENAI.render(_prompt(messages))) != []


def _prompt(messages: list[Message]) -> Prompt:
    return Prompt(("s",), (), tuple(messages))


def test_openai_check_rejects_a_tool_message_without_its_call() -> None:
    body = {"messages": [{"role": "user", "content": "x"}, {"role": "tool", "tool_call_id": "c1", "content": "r"}]}
    assert any("does not answer" in p for p in check_openai_body(body))


def test_repair_answers_an_interrupted_call_and_drops_an_orphan() -> None:
    broken = [_m("user", "hi"), _m("assistant", USE), _m("user", ToolResultBlock("zzz", "orphan"), "next")]
    fixed = repair(broken)
    assert check_messages(fixed) == []
    results = fixed[2].tool_results
    assert [r.tool_use_id for r in results] == ["a"]
    assert results[0].is_error
    assert fixed[2].text == "next"
