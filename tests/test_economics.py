"""Issue 9's levers in the engine: the summary reads the cache, the cost policy, clearing, the budget."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tiny_agent.agent.loop import Agent, AgentConfig
from tiny_agent.context.engine import Context, ContextConfig
from tiny_agent.context.log import StoredLog
from tiny_agent.context.session import Session
from tiny_agent.context.shrink.compaction import SUMMARY_INSTRUCTIONS, SUMMARY_OPENING
from tiny_agent.errors import ConfigError
from tiny_agent.providers.prefix import without_marks
from tiny_agent.providers.pricing import TokenPrices
from tiny_agent.store.sqlite import SQLiteStore
from tiny_agent.testing import ScriptedProvider, tool_call
from tiny_agent.tools.toolbox import Toolbox
from tiny_agent.tools.workspace import Workspace
from tiny_agent.types import Message, ModelResponse, ToolResultBlock, ToolSpec, Usage

READ = ToolSpec("read_file", "Read a file", {"type": "object", "properties": {"path": {"type": "string"}}})


unmarked = without_marks


class Clock:
    def __init__(self) -> None:
        self.now = 1_000.0

    def __call__(self) -> float:
        return self.now


def grown(
    provider: ScriptedProvider, turns: int, config: ContextConfig | None = None, clock: Clock | None = None
) -> Context:
    """A context after ``turns`` read_file turns (each result ~1,500 tokens), ending with results."""
    ctx = Context("system prompt " * 50, (READ,), pins=["never edit dev.mjs"], config=config, clock=clock or Clock())
    ctx.add_user("read every file")
    for i in range(turns):
        ctx.complete(provider)
        ctx.add_tool_result(ToolResultBlock(f"c{i}", f"line {i} of the file\n" * 300))
    return ctx


def reads(n: int) -> list[Message]:
    return [tool_call("read_file", f"c{i}", path=f"f{i}.txt") for i in range(n)]


@pytest.mark.parametrize("wire", ["anthropic", "openai"])
def test_the_summary_request_is_the_previous_request_plus_the_instructions(wire: str) -> None:
    provider = ScriptedProvider([*reads(8), Message.assistant("the summary")], wire=wire)  # type: ignore[arg-type]
    ctx = grown(provider, 8)
    compaction = ctx.compact(provider=provider, keep_turns=2)
    assert compaction is not None and compaction.summary == "the summary"
    turn, summary = unmarked(provider.requests[-2]), unmarked(provider.requests[-1])
    assert {k: v for k, v in summary.items() if k not in ("messages", "max_tokens")} == {
        k: v for k, v in turn.items() if k not in ("messages", "max_tokens")
    }, "same tools, same tool_choice, same system: the cached prefix holds"
    if wire == "anthropic":
        assert summary["messages"][:-1] == turn["messages"][:-1]
        last_turn, last_summary = turn["messages"][-1]["content"], summary["messages"][-1]["content"]
        assert last_summary[:-1] == last_turn, "the last message only gains the instructions"
        assert last_summary[-1]["text"].startswith(SUMMARY_OPENING)
    else:
        assert summary["messages"][: len(turn["messages"])] == turn["messages"]
        assert summary["messages"][-1]["content"].startswith(SUMMARY_OPENING)
        assert len(summary["messages"]) == len(turn["messages"]) + 1


def test_a_summary_that_calls_a_tool_is_asked_again_then_falls_back() -> None:
    provider = ScriptedProvider(
        [
            *reads(8),
            tool_call("read_file", "x1", path="a"),
            tool_call("read_file", "x2", path="b"),
            Message.assistant("prose"),
        ]
    )
    ctx = grown(provider, 8)
    assert ctx.compact(provider=provider, keep_turns=2) is not None
    first, second, fallback = provider.requests[-3:]
    assert "Do not call any tool" not in json.dumps(first["messages"][-1])
    assert "Do not call any tool" in json.dumps(second["messages"][-1])
    assert SUMMARY_INSTRUCTIONS in json.dumps(fallback["messages"]), "the flattened transcript, the old way"
    assert fallback["tool_choice"] == {"type": "none"}
    assert ctx.compactions[-1].summary == "prose"


def test_a_window_too_big_to_send_whole_is_summarised_from_the_transcript() -> None:
    ctx = grown(ScriptedProvider(reads(8), context_window=100_000), 8, ContextConfig(summary_max_tokens=400))
    provider = ScriptedProvider([Message.assistant("prose")], context_window=12_500)  # the model switched
    assert ctx.context_tokens() + 400 > 12_500, "the window cannot be sent whole; its transcript can"
    ctx.compact(provider=provider, keep_turns=1)
    assert SUMMARY_INSTRUCTIONS in json.dumps(provider.requests[-1]["messages"])


def test_old_tool_output_is_cleared_in_a_batch_when_the_cache_is_cold() -> None:
    clock = Clock()
    config = ContextConfig(clear_after=3, clear_min_tokens=1000, compact_at=10**7, policy="fraction")
    provider = ScriptedProvider(reads(8), context_window=10**7)
    ctx = grown(provider, 8, config, clock)
    assert ctx.maybe_clear(provider) == 0, "warm cache: rewriting the prefix would cost more than it saves"
    clock.now += 600  # past the 5-minute lifetime: the next request rewrites everything anyway
    cleared = ctx.maybe_clear(provider)
    assert cleared == 5, "the results older than the newest 3 turns, all at once"
    window = json.dumps([m.to_dict() for m in ctx.window()])
    assert window.count("[cleared to save context: read_file(path=") == 5
    assert "call read_file again" in window
    assert sum("line 0 of the file" in b.content for m in ctx.messages for b in m.tool_results) == 1, "the log keeps it"
    assert ctx.maybe_clear(provider) == 0, "nothing new to clear"


def test_budget_stops_at_90_percent_and_the_session_resumes(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("hello\n")
    usage = Usage(100_000, 1_000, 0, 100_000)  # $0.39 a call at Sonnet prices

    def reply(message: Message) -> ModelResponse:
        return ModelResponse(message, usage, "tool_use" if message.tool_uses else "end_turn", "claude-sonnet-4-6")

    sonnet = TokenPrices(input=3e-6, read=3e-6, write=3.75e-6, write_1h=6e-6, output=15e-6)

    def Priced(replies: list[ModelResponse]) -> ScriptedProvider:
        return ScriptedProvider(replies, prices=sonnet)

    toolbox = Toolbox(Workspace(tmp_path).tools())
    with SQLiteStore(tmp_path / "s.db") as store:
        session = Session.start(store, tools=toolbox.specs, system="s")
        provider = Priced([reply(m) for m in reads(10)])
        result = Agent(provider, toolbox, context=session.context, config=AgentConfig(budget_usd=1.0)).run("go")
        assert result.stop == "budget"
        spent = session.context.ledger.total_cost_usd
        assert spent is not None and spent <= 1.0
        assert len(provider.requests) == 2, "a third call would pass 90%: stopped before it, not after"
        session.close()
        again = Session.resume(store, session.id, tools=toolbox.specs)
        provider = Priced([reply(Message.assistant("done"))])
        more = Agent(provider, toolbox, context=again.context, config=AgentConfig(budget_usd=3.0)).run("go on")
        assert more.stop == "done"
        assert again.context.ledger.total_cost_usd == pytest.approx((spent or 0) + provider.profile.price(usage))  # type: ignore[operator]


def test_a_budget_needs_a_priced_model() -> None:
    with pytest.raises(ConfigError, match="no known price"):
        Agent(ScriptedProvider([]), Toolbox(), config=AgentConfig(budget_usd=1.0))


def test_the_record_stays_bounded_over_thousands_of_turns() -> None:
    ctx = Context("s", (READ,), config=ContextConfig(clear_after=None))
    for i in range(2_000):
        ctx.add_user(f"request number {i}: " + "please look at this carefully " * 20)
        ctx.add_assistant(tool_call("read_file", f"c{i}", path=f"dir{i % 300}/file{i}.txt"))
        ctx.add_tool_result(ToolResultBlock(f"c{i}", "x" * 50))
        ctx.add_assistant(Message.assistant("ok"))
    first = ctx.compact(lambda text: "summary", keep_turns=2)
    assert first is not None and len(first.record) < 12_000
    assert "The first request (the task): request number 0: " in first.record and "earlier)" in first.record


def test_a_stored_context_rebuilds_ratios_per_purpose(tmp_path: Path) -> None:
    with SQLiteStore(tmp_path / "s.db") as store:
        session = Session.start(store, tools=[READ], system="s")
        provider = ScriptedProvider([*reads(6), Message.assistant("summary")])
        ctx = session.context
        ctx.add_user("go")
        for i in range(6):
            ctx.complete(provider)
            ctx.add_tool_result(ToolResultBlock(f"c{i}", "data " * 400))
        ctx.compact(ctx.summarizer(provider), keep_turns=2)
        assert set(ctx.ledger.ratios) == {"turn", "compaction"}
        rebuilt = Context(log=StoredLog(store, session.id, store.entries(session.id)))
        assert rebuilt.ledger.ratios == ctx.ledger.ratios


def test_a_provider_whose_prompt_ignores_tool_choice_gets_a_summary_call_without_tools() -> None:
    """The local model's JSON mode: forbidding tools changes only the decoding, so the summary forbids them."""

    provider = ScriptedProvider(
        [*reads(8), Message.assistant("the summary")], wire="openai", tool_choice_keeps_prefix=True
    )
    ctx = grown(provider, 8)
    assert ctx.compact(provider=provider, keep_turns=2) is not None
    turn, summary = provider.requests[-2], provider.requests[-1]
    assert summary["tool_choice"] == "none" and "tool_choice" not in turn
    assert unmarked(summary)["messages"][: len(turn["messages"])] == unmarked(turn)["messages"]
