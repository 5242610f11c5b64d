"""The context engine: log vs window, compaction, pins, failed summaries, token accounting."""

from __future__ import annotations

import json

import pytest

from tiny_agent.context.engine import EMPTY_REPLY, Context, ContextConfig
from tiny_agent.context.legality import check_messages
from tiny_agent.context.shrink.compaction import SUMMARY_HEADER, choose_cut, flatten
from tiny_agent.errors import CompactionError, ConfigError, RateLimitError
from tiny_agent.testing import ScriptedProvider, tool_call
from tiny_agent.types import Message, ModelResponse, TextBlock, ToolResultBlock, ToolSpec, ToolUseBlock, Usage

READ = ToolSpec("read_file", "Read a file", {"type": "object", "properties": {"path": {"type": "string"}}})


def conversation(turns: int, config: ContextConfig | None = None) -> Context:
    """A task followed by ``turns`` read_file calls and their results (the last message is from the user)."""
    ctx = Context("system", (READ,), pins=["never edit dev.mjs"], config=config)
    ctx.add_user("summarise the repo")
    for i in range(turns):
        ctx.add_assistant(Message("assistant", (ToolUseBlock(f"c{i}", "read_file", {"path": f"f{i}.txt"}),)))
        ctx.add_tool_results([ToolResultBlock(f"c{i}", f"contents of file {i} " * 20)])
    return ctx


def test_compaction_keeps_the_log_and_shrinks_the_window() -> None:
    ctx = conversation(8)
    before = list(ctx.messages)
    compaction = ctx.compact(lambda text: "the agent read eight files", keep_turns=3)
    assert compaction is not None
    assert list(ctx.messages) == before, "the log is append-only: compaction deletes nothing"
    window = ctx.window()
    assert len(window) == 1 + 2 * 3
    assert window[0].role == "user" and window[0].text.startswith(SUMMARY_HEADER)
    assert [m.tool_uses[0].id for m in window if m.role == "assistant"] == ["c5", "c6", "c7"]


def test_summary_carries_an_engine_built_record() -> None:
    ctx = conversation(6)
    ctx.add_assistant(Message("assistant", (ToolUseBlock("w", "write_file", {"path": "out.md", "content": "x"}),)))
    ctx.add_tool_results([ToolResultBlock("w", "refused: out.md is protected", is_error=True)])
    ctx.add_assistant(Message("assistant", (ToolUseBlock("last", "read_file", {"path": "kept.txt"}),)))
    ctx.add_tool_results([ToolResultBlock("last", "kept verbatim")])
    ctx.compact(lambda text: "prose", keep_turns=1)
    summary = ctx.window()[0].text
    assert "summarise the repo" in summary, "the user's request survives compaction verbatim"
    assert "never edit dev.mjs" in summary
    assert "f0.txt" in summary and "f5.txt" in summary
    assert "read_file x6" in summary and "write_file x1" in summary
    assert "kept.txt" not in summary, "the kept turn is verbatim, not in the record"
    assert "refused: out.md is protected" in summary


def test_summary_input_is_readable_text_not_json() -> None:
    seen: list[str] = []
    ctx = conversation(5)
    ctx.compact(lambda text: seen.append(text) or "s", keep_turns=2)
    transcript = seen[0]
    assert 'ASSISTANT called read_file(path="f0.txt")' in transcript
    assert "RESULT of read_file (ok): contents of file 0" in transcript
    with pytest.raises(json.JSONDecodeError):
        json.loads(transcript)


@pytest.mark.parametrize("failure", [RuntimeError("boom"), RateLimitError("429", status_code=429)])
def test_a_failing_summary_leaves_history_unchanged(failure: Exception) -> None:
    ctx = conversation(6)
    messages, window = ctx.messages, ctx.window()
    provider = ScriptedProvider([failure])
    with pytest.raises(CompactionError):
        ctx.compact(ctx.summarizer(provider))
    assert ctx.messages == messages
    assert ctx.window() == window
    assert ctx.compactions == ()


def test_an_empty_summary_is_refused() -> None:
    ctx = conversation(6)
    window = ctx.window()
    with pytest.raises(CompactionError):
        ctx.compact(lambda text: "   ")
    assert ctx.window() == window


@pytest.mark.parametrize("wire", ["anthropic", "openai"])
def test_pin_is_in_every_request_before_and_after_compaction(wire: str) -> None:
    pin = "NEVER edit apps/service-a/scripts/dev.mjs"
    replies = [tool_call("read_file", f"c{i}", path=f"f{i}") for i in range(6)]
    provider = ScriptedProvider([*replies, Message.assistant("summary prose"), Message.assistant("done")], wire=wire)  # type: ignore[arg-type]
    ctx = Context("system", (READ,), pins=[pin], config=ContextConfig(compact_at=1.0, keep_turns=2))
    ctx.add_user("go")
    for i in range(6):
        ctx.complete(provider)
        ctx.add_tool_results([ToolResultBlock(f"c{i}", "data " * 50)])
    assert ctx.compact(ctx.summarizer(provider)) is not None
    ctx.complete(provider)
    assert len(provider.requests) == 8
    for body in provider.requests:
        assert pin in json.dumps(body)
    first_after = provider.requests[-1]
    assert "summary prose" in json.dumps(first_after)


def test_summary_call_shares_the_turns_cached_prefix() -> None:
    """The compaction request keeps the same tools and system as the turns (a known peer bug)."""
    provider = ScriptedProvider([tool_call("read_file", "c0", path="a"), Message.assistant("prose")])
    ctx = Context("system", (READ,), pins=["p"])
    ctx.add_user("go")
    ctx.complete(provider)
    ctx.add_tool_results([ToolResultBlock("c0", "x " * 2000)])  # big enough that a summary saves space
    ctx.add_assistant(tool_call("read_file", "c1", path="b"))
    ctx.add_tool_results([ToolResultBlock("c1", "y")])
    ctx.compact(ctx.summarizer(provider), keep_turns=1)
    turn, summary = provider.requests
    assert summary["tools"] == turn["tools"]
    assert summary["system"] == turn["system"]
    assert summary["tool_choice"] == {"type": "none"}


def test_context_tokens_count_cached_input_and_estimate_only_the_new_part() -> None:
    usage = Usage(input_tokens=5000, output_tokens=100, cache_read_tokens=4600, cache_write_tokens=0)
    provider = ScriptedProvider([ModelResponse(tool_call("read_file", "c0", path="a"), usage, "tool_use", "m")])
    ctx = Context("policy. " * 2500, (READ,))  # 20,000 characters: about 5,000 tokens, as reported
    ctx.add_user("go")
    ctx.complete(provider)
    assert ctx.context_tokens() == 5100, "measured size: all input (cache included) plus the output now in history"
    ctx.add_tool_results([ToolResultBlock("c0", "z" * 4000)])
    grown = ctx.context_tokens()
    assert 5100 + 500 < grown < 5100 + 2000, "only the appended 4,000 characters are estimated, at ~4 per token"


def test_ledger_totals_keep_unknown_as_none() -> None:
    replies = [
        ModelResponse(Message.assistant("a"), Usage(100, 5, None, None), "end_turn", "m"),
        ModelResponse(Message.assistant("b"), Usage(200, 7, 150, None), "end_turn", "m"),
    ]
    provider = ScriptedProvider(replies)
    ctx = Context("s")
    ctx.add_user("x")
    ctx.complete(provider)
    ctx.add_user("y")
    ctx.complete(provider)
    total = ctx.ledger.total
    assert (total.input_tokens, total.output_tokens, total.cache_read_tokens) == (300, 12, 150)
    assert total.cache_write_tokens is None
    assert ctx.ledger.total_cost_usd is None


def test_maybe_compact_fires_past_the_threshold_only() -> None:
    ctx = conversation(8, ContextConfig(summary_max_tokens=64, policy="fraction", compact_at=0.6))
    provider = ScriptedProvider([Message.assistant("summary")], context_window=100_000)
    assert ctx.maybe_compact(provider) is None, "far below 60% of 100k"
    small = ScriptedProvider([Message.assistant("summary")], context_window=1_300)  # the summary request fits
    compaction = ctx.maybe_compact(small)
    assert compaction is not None
    assert ctx.context_tokens() < compaction.tokens_before  # type: ignore[operator]


def test_maybe_compact_skips_a_summary_that_would_not_save_anything() -> None:
    ctx = conversation(8)  # the part to summarise is far smaller than a 1,024-token summary
    provider = ScriptedProvider([], context_window=1_000)
    assert ctx.needs_compaction(provider)
    assert ctx.maybe_compact(provider) is None
    assert provider.requests == [], "no summary call was paid for"


def test_a_failed_summary_is_not_retried_until_the_context_grows() -> None:
    ctx = conversation(8, ContextConfig(summary_max_tokens=64, compact_at=0.5))
    provider = ScriptedProvider([RuntimeError("down"), Message.assistant("summary")], context_window=1_700)
    with pytest.raises(CompactionError):
        ctx.maybe_compact(provider)
    assert ctx.maybe_compact(provider) is None and len(provider.requests) == 1, "no retry at the same size"
    for i in range(8, 12):
        ctx.add_assistant(Message("assistant", (ToolUseBlock(f"c{i}", "read_file", {"path": f"f{i}.txt"}),)))
        ctx.add_tool_results([ToolResultBlock(f"c{i}", f"contents of file {i} " * 20)])
    assert ctx.maybe_compact(provider) is not None, "retried once the context grew"


def test_compaction_keeps_fewer_turns_when_the_kept_ones_would_not_fit() -> None:
    ctx = conversation(8, ContextConfig(summary_max_tokens=64, keep_turns=4, context_window=1_500))
    compaction = ctx.compact(lambda text: "s", provider=ScriptedProvider([], context_window=1_500))
    assert compaction is not None
    kept_turns = sum(1 for m in ctx.window() if m.role == "assistant")
    assert 1 <= kept_turns < 4


def test_blank_text_never_reaches_the_log() -> None:
    ctx = Context("s")
    ctx.add_user("go")
    ctx.add_assistant(Message("assistant", (TextBlock("  "), ToolUseBlock("t", "read_file", {"path": "a"}))))
    ctx.add_tool_results([ToolResultBlock("t", "x")])
    ctx.add_assistant(Message("assistant", (TextBlock(""),)))
    ctx.add_user("and?")
    texts = [b for m in ctx.messages for b in m.content if isinstance(b, TextBlock)]
    assert all(b.text.strip() for b in texts)
    assert ctx.messages[3].text == EMPTY_REPLY


def test_choose_cut_never_splits_a_call_from_its_result() -> None:
    ctx = conversation(5)
    for keep in range(1, 7):
        cut = choose_cut(ctx.messages, keep)
        if cut is not None:
            assert not ctx.messages[cut].tool_results


def test_flatten_cuts_long_results_to_the_room_given_and_says_how_much() -> None:
    msgs = [Message("user", (ToolResultBlock("x", "a" * 5000),))]
    assert "[... 4000 more characters]" in flatten(msgs, 1000)


@pytest.mark.parametrize("bad", [{"compact_at": 0}, {"keep_turns": 0}, {"context_window": -5}])
def test_bad_config_is_a_config_error(bad: dict[str, float]) -> None:
    with pytest.raises(ConfigError):
        ContextConfig(**bad)  # type: ignore[arg-type]


def test_threshold_as_fraction_or_tokens() -> None:
    assert Context(config=ContextConfig(compact_at=0.5, context_window=10_000)).threshold() == 5_000
    assert Context(config=ContextConfig(compact_at=12_000)).threshold() == 12_000


def test_new_input_after_unanswered_results_joins_their_user_turn() -> None:
    ctx = conversation(2)  # ends with a user message carrying tool results
    ctx.add_user("now do something else")
    last = ctx.messages[-1]
    assert [b.type for b in last.content] == ["tool_result", "text"]
    assert check_messages(ctx.window()) == []


def test_the_compaction_line_reports_the_measured_sizes() -> None:
    from tiny_agent.agent.loop import CompactionEvent
    from tiny_agent.observe.call_lines import format_event

    ctx = conversation(8)
    compaction = ctx.compact(lambda text: "s", keep_turns=2)
    assert compaction is not None and compaction.tokens_before and compaction.tokens_after
    line = format_event(CompactionEvent(compaction))
    assert f"context {compaction.tokens_before:,} -> {compaction.tokens_after:,} tokens" in line
    assert compaction.tokens_after == ctx.context_tokens()
