"""Why did the cache miss? One test per cause, through the engine where the engine can produce it."""

from __future__ import annotations

from pathlib import Path

import pytest

from tiny_agent.agent.loop import TurnEvent
from tiny_agent.context.cache import fingerprint
from tiny_agent.context.diagnosis import Before, diagnose, first_difference
from tiny_agent.context.engine import Context, ContextConfig
from tiny_agent.context.render import Renderer
from tiny_agent.context.session import Session
from tiny_agent.observe.call_lines import format_event
from tiny_agent.providers.profile import profile_for
from tiny_agent.store.sqlite import SQLiteStore
from tiny_agent.testing import ScriptedProvider, tool_call
from tiny_agent.types import Message, ModelResponse, Prompt, ToolResultBlock, ToolSpec, ToolUseBlock, Usage

MODEL = "claude-sonnet-4-6"  # minimum cacheable prompt: 1,024 tokens
READ = ToolSpec("read_file", "Read a file", {"type": "object", "properties": {"path": {"type": "string"}}})
LIST = ToolSpec("list_dir", "List a folder", {"type": "object", "properties": {"path": {"type": "string"}}})
LONG_SYSTEM = "You are a careful agent. " * 250  # about 1,500 tokens: above the minimum


class Clock:
    def __init__(self) -> None:
        self.now = 1_000.0

    def __call__(self) -> float:
        return self.now


def context(system: str = LONG_SYSTEM, clock: Clock | None = None, tools: tuple[ToolSpec, ...] = (READ,)) -> Context:
    return Context(system, tools, config=ContextConfig(clear_after=None), clock=clock or Clock())


def turn(ctx: Context, provider: ScriptedProvider, result: str = "contents " * 40) -> str | None:
    """One model call that reads a file, then its result; returns the call's diagnosed miss."""
    ctx.complete(provider)
    call = ctx.ledger.calls[-1]
    for use in ctx.pending_calls:
        ctx.add_tool_result(ToolResultBlock(use.id, result))
    return call.miss


def reads(n: int) -> list[Message]:
    return [tool_call("read_file", f"c{i}", path=f"f{i}") for i in range(n)]


def test_a_steady_conversation_has_no_miss() -> None:
    ctx = context()
    ctx.add_user("go")
    provider = ScriptedProvider(reads(4), model=MODEL)
    assert [turn(ctx, provider) for _ in range(4)] == [None, None, None, None]


def test_a_timestamp_in_the_system_prompt_is_named_with_both_sides() -> None:
    ctx = context()
    ctx.add_user("go")
    provider = ScriptedProvider(reads(3), model=MODEL)
    ctx.system = "Current time: 2026-11-30T10:00:41Z. " + LONG_SYSTEM
    assert turn(ctx, provider) is None
    ctx.system = "Current time: 2026-11-30T10:01:03Z. " + LONG_SYSTEM
    miss = turn(ctx, provider)
    # len("Current time: 2026-11-30T10:0") == 29: the first character that differs is the minute's.
    assert miss is not None and miss.startswith("system prompt changed at character 29")
    assert "10:01:03" in miss and "10:00:41" in miss
    line = format_event(TurnEvent(2, ctx.ledger.calls[-1], 0, "tool_use"))
    assert "cache miss: system prompt changed" in line


@pytest.mark.parametrize(
    ("tools", "cause"),
    [
        ((LIST, READ), "tools changed: reordered: read_file, list_dir -> list_dir, read_file"),
        ((READ,), "tools changed: removed list_dir"),
        ((READ, LIST, ToolSpec("write_file", "Write", {"type": "object"})), "tools changed: added write_file"),
        ((READ, ToolSpec("list_dir", "List a folder, sorted", LIST.input_schema)), "list_dir's description changed"),
        (
            (READ, ToolSpec("list_dir", LIST.description, {"type": "object", "properties": {"deep": {}}})),
            "tools changed: list_dir's input schema changed",
        ),
    ],
)
def test_tools_added_removed_reordered_or_redefined(tools: tuple[ToolSpec, ...], cause: str) -> None:
    ctx = context(tools=(READ, LIST))
    ctx.add_user("go")
    provider = ScriptedProvider(reads(2), model=MODEL)
    turn(ctx, provider)
    ctx.tools = tools
    miss = turn(ctx, provider)
    assert miss is not None and cause in miss


def test_a_pin_added_between_calls() -> None:
    ctx = context()
    ctx.add_user("go")
    provider = ScriptedProvider(reads(2), model=MODEL)
    turn(ctx, provider)
    ctx.pin("never edit dev.mjs")
    # The pins are the last system block: a real cache reads only up to the tools' breakpoint.
    cold = ModelResponse(tool_call("read_file", "c1", path="x"), Usage(2_000, 10, 60, 1_940), "tool_use", MODEL)
    miss = turn(ctx, ScriptedProvider([cold], model=MODEL))
    assert miss is not None and miss.startswith("pinned constraints changed")


def test_a_compaction_is_an_expected_miss() -> None:
    ctx = context()
    ctx.add_user("go")
    provider = ScriptedProvider(reads(8), model=MODEL)
    for _ in range(7):
        turn(ctx, provider, "data " * 800)
    assert ctx.compact(lambda text: "summary", keep_turns=2) is not None
    miss = turn(ctx, provider)
    assert miss is not None and miss.startswith("a compaction replaced the conversation")


def test_the_entry_expired() -> None:
    clock = Clock()
    ctx = context(clock=clock)
    ctx.add_user("go")
    first = ScriptedProvider(reads(1), model=MODEL)
    turn(ctx, first)
    clock.now += 400  # past the 5-minute lifetime
    cold = ModelResponse(tool_call("read_file", "c1", path="x"), Usage(2_000, 10, 0, 2_000), "tool_use", MODEL)
    miss = turn(ctx, ScriptedProvider([cold], model=MODEL))
    assert miss is not None and miss.startswith("the cache entry expired: 400s since the previous request")


def test_a_prefix_below_the_minimum() -> None:
    ctx = context(system="Be brief.")
    ctx.add_user("go")
    provider = ScriptedProvider(reads(2), model=MODEL)
    turn(ctx, provider)
    cold = ModelResponse(tool_call("read_file", "c1", path="x"), Usage(300, 10, 0, 0), "tool_use", MODEL)
    miss = turn(ctx, ScriptedProvider([cold], model=MODEL))
    assert miss is not None and miss.startswith("below the minimum")
    assert "1,024 tokens" in miss


def test_a_read_that_covers_a_prefix_below_the_minimum_is_no_miss() -> None:
    """An interrupted stream can leave a longer prefix cached on the server than the last answered
    request sent: a call that reads all the previous request sent (and more) missed nothing."""
    ctx = context(system="Be brief.")
    ctx.add_user("go")
    turn(ctx, ScriptedProvider(reads(1), model=MODEL))
    sent = ctx.ledger.calls[-1].usage.input_tokens
    warm = ModelResponse(tool_call("read_file", "c1", path="x"), Usage(sent + 100, 10, sent + 95, 5), "tool_use", MODEL)
    assert turn(ctx, ScriptedProvider([warm], model=MODEL)) is None


def test_more_blocks_than_the_lookback() -> None:
    ctx = context()
    ctx.add_user("go")
    many = Message("assistant", tuple(ToolUseBlock(f"p{i}", "read_file", {"path": f"p{i}"}) for i in range(12)))
    provider = ScriptedProvider([*reads(1), many], model=MODEL)
    turn(ctx, provider)
    assert turn(ctx, provider, "x") is None
    # 12 calls and 12 results, then a reply and a new request: the breakpoint the plan puts two messages
    # before the newest is on the 12 results, 24 blocks past the entry the previous request wrote.
    ctx.add(Message.assistant("noted"))
    ctx.add_user("go on")
    cold = ModelResponse(Message.assistant("done"), Usage(2_500, 5, 0, 2_500), "end_turn", MODEL)
    miss = turn(ctx, ScriptedProvider([cold], model=MODEL))
    assert miss is not None and miss.startswith("lookback: the breakpoint at block")
    assert miss.endswith(
        "the cache looks back only 20: add a breakpoint nearer [breakpoint-lookback at messages[6].content[0]]"
    )


def test_an_unexplained_miss_says_so() -> None:
    ctx = context()
    ctx.add_user("go")
    turn(ctx, ScriptedProvider(reads(1), model=MODEL))
    cold = ModelResponse(tool_call("read_file", "c1", path="x"), Usage(2_000, 10, 0, 2_000), "tool_use", MODEL)
    miss = turn(ctx, ScriptedProvider([cold], model=MODEL))
    assert miss is not None and miss.startswith("unexplained: read 0 of the")


def test_a_changed_model_and_a_changed_message() -> None:
    profile = profile_for("anthropic", "anthropic", MODEL)
    old = Prompt(("s" * 5000,), (READ,), (Message.user("hello there"), Message.assistant("hi"), Message.user("go")))
    new = Prompt(old.system, old.tools, (Message.user("hello here"), Message.assistant("hi"), Message.user("go on")))
    rendered = Renderer().render(new, ScriptedProvider([], model=MODEL))
    before = Before(0.0, MODEL, fingerprint(old), 2_000, old)
    usage = Usage(2_100, 5, 0, 2_100)
    assert diagnose(before, rendered, profile_for("anthropic", "anthropic", "claude-opus-4-8"), usage, 1.0) == (
        f"model changed: {MODEL} -> claude-opus-4-8"
    )
    miss = diagnose(before, rendered, profile, usage, 1.0)
    assert miss is not None and miss.startswith("message #1 changed")
    assert "hello here" in miss and "hello there" in miss
    hit = Usage(2_100, 5, 1_990, 110)
    assert diagnose(before, rendered, profile, hit, 1.0) is None


def test_first_difference() -> None:
    assert first_difference("abcdef", "abXdef") == 2
    assert first_difference("abc", "abcd") == 3


def OneServer(replies: list[Message | ModelResponse], cache_home: str) -> ScriptedProvider:
    """A provider whose cache lives in one server process, like the local llama.cpp server."""
    return ScriptedProvider(replies, model=MODEL, cache_home=cache_home)


def test_a_new_server_is_named_as_the_miss_even_after_a_resume(tmp_path: Path) -> None:
    with SQLiteStore(tmp_path / "s.db") as store:
        session = Session.start(store, workspace=str(tmp_path), system=LONG_SYSTEM, tools=(READ,))
        session.context.add_user("go")
        turn(session.context, OneServer(reads(1), "http://127.0.0.1:41001"))
        session.close()
        again = Session.resume(store, session.id)
        cold = ModelResponse(tool_call("read_file", "c1", path="x"), Usage(2_000, 10, 0, 2_000), "tool_use", MODEL)
        miss = turn(again.context, OneServer([cold], "http://127.0.0.1:52002"))
        assert miss is not None and miss.startswith(
            "another server: the previous request went to http://127.0.0.1:41001"
        )
        warm = OneServer([cold], "http://127.0.0.1:52002")
        assert turn(again.context, warm) is not None and not again.context.ledger.calls[-1].miss.startswith("another")
        again.close()
