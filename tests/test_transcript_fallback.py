"""The transcript fallback (a model that answers every summary request with a tool call, a window too
big to send whole) never loses the earlier summary, the task or the pins, and keeps as much of the
tool results as the summary request's window holds, the newest longest: a task whose facts sit deep
in its results still finishes."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from tiny_agent.agent.loop import Agent, AgentConfig
from tiny_agent.context.engine import Context, ContextConfig
from tiny_agent.context.shrink.compaction import RESULT_HEAD, SUMMARY_OPENING, flatten, result_limits
from tiny_agent.context.shrink.transcript import transcript_prompt
from tiny_agent.testing import ScriptedProvider, tool_call
from tiny_agent.tools.toolbox import Toolbox
from tiny_agent.tools.workspace import Workspace
from tiny_agent.types import Message, TextBlock, ToolResultBlock, ToolSpec

READ = ToolSpec("read_file", "Read a file", {"type": "object", "properties": {"path": {"type": "string"}}})
TASK = "Read the twelve files part00.txt to part11.txt, one at a time, then list the secret word of each."
PIN = "Quote every secret word exactly as written."
FILES = 12
SECRETS = [f"SECRET{i:02d}X" for i in range(FILES)]


def file_text(i: int) -> str:
    """About 3,800 characters, the secret word halfway: past the first 1,500."""
    lines = [
        f"filler line {n} of part{i:02d}.txt about rivers, stones and lanterns, nothing to note." for n in range(40)
    ]
    lines.insert(21, f"The secret word of part{i:02d}.txt is {SECRETS[i]}.")
    return "\n".join(lines) + "\n"


def texts(body: dict[str, Any]) -> str:
    return json.dumps(body, ensure_ascii=False)


def asks_summary(body: dict[str, Any]) -> bool:
    last = body["messages"][-1]["content"]
    blocks = [last] if isinstance(last, str) else [b.get("text", "") for b in last if b.get("type") == "text"]
    return any(SUMMARY_OPENING in b for b in blocks)


def forgetful_model(body: dict[str, Any]) -> Message:
    """A model that knows only what the request shows: it reads the first file whose secret word it
    cannot see, summarises with the words it sees, and answers every summary request that lets it
    call a tool with a tool call (so each summary comes from the transcript)."""
    seen = [i for i, word in enumerate(SECRETS) if word in texts(body)]
    unseen = [i for i in range(FILES) if i not in seen]
    forbidden = body.get("tool_choice") == {"type": "none"}
    if asks_summary(body) and forbidden:
        listed = "; ".join(f"part{i:02d}.txt: {SECRETS[i]}" for i in seen)
        return Message.assistant(f"Files read and their secret words: {listed}. Not read yet: {unseen}.")
    if unseen:
        return tool_call("read_file", path=f"part{unseen[0]:02d}.txt")
    return Message.assistant("All secret words: " + ", ".join(SECRETS))


def test_a_model_that_calls_tools_instead_of_summarising_still_finishes_the_task(tmp_path: Path) -> None:
    for i in range(FILES):
        (tmp_path / f"part{i:02d}.txt").write_text(file_text(i))
    provider = ScriptedProvider([forgetful_model] * 200)
    config = ContextConfig(compact_at=4500, keep_turns=2, policy="fraction", clear_after=None)
    agent = Agent(
        provider, Toolbox(Workspace(tmp_path).tools()), config=AgentConfig(max_steps=60), context_config=config
    )
    agent.context.pin(PIN)
    result = agent.run(TASK)
    assert len(agent.context.compactions) >= 3
    assert result.stop == "done" and result.answer == "All secret words: " + ", ".join(SECRETS)
    reads = [b.input["path"] for m in agent.context.messages for b in m.tool_uses]
    assert len(reads) == FILES, "no file read twice"
    fallbacks = [b for b in provider.requests if b.get("tool_choice") == {"type": "none"}]
    assert len(fallbacks) == len(agent.context.compactions)
    for before, body in zip(agent.context.compactions, fallbacks[1:], strict=False):
        sent = texts(body)
        assert json.dumps(before.text(), ensure_ascii=False)[1:-1] in sent, "the earlier summary goes whole"
        assert TASK in sent and PIN in sent


def test_results_fit_the_room_and_the_newest_keep_the_most() -> None:
    assert result_limits([100, 200], 300) == [100, 200], "all fit: all whole"
    limits = result_limits([4000] * 5, 10_000)
    head = min(RESULT_HEAD, 10_000 // 10)
    assert limits == [head, head, head, 10_000 - 3 * head - 4000, 4000], "every one its head, the newest whole"
    assert limits == sorted(limits), "the newer a result, the more of it is kept"
    assert result_limits([4000] * 5, 0) == [0] * 5
    assert result_limits([], -5) == []


def test_flatten_keeps_results_whole_unless_given_a_room_and_says_what_it_cut() -> None:
    msgs = [Message("user", (ToolResultBlock("x", "a" * 5000), ToolResultBlock("y", "b" * 5000)))]
    assert "more characters" not in flatten(msgs)
    cut = flatten(msgs, 7000)
    assert "[... 3000 more characters]" in cut and "b" * 5000 in cut


def summary_or_tool_call(body: dict[str, Any]) -> Message:
    """A model that calls a tool whenever it may, even when asked for a summary."""
    if body.get("tool_choice") == {"type": "none"}:
        return Message.assistant("prose")
    return tool_call("read_file", path="part00.txt")


def grown(turns: int) -> Context:
    ctx = Context("system prompt", (READ,), pins=[PIN], config=ContextConfig(summary_max_tokens=500))
    ctx.add_user(TASK)
    for i in range(turns):
        ctx.add_assistant(tool_call("read_file", f"c{i}", path=f"part{i:02d}.txt"))
        ctx.add_tool_result(ToolResultBlock(f"c{i}", file_text(i)))
    return ctx


@pytest.mark.parametrize("window", [200_000, 6_000], ids=["roomy", "tight"])
def test_the_fallback_request_keeps_the_earlier_summary_and_fits_the_window(window: int) -> None:
    ctx = grown(4)
    earlier = "Files read and their secret words: " + "; ".join(SECRETS[:4]) + ". " + " ".join(["detail"] * 400)
    ctx.compact(lambda transcript: earlier, keep_turns=1)
    for i in range(4, 10):
        ctx.add_assistant(tool_call("read_file", f"c{i}", path=f"part{i:02d}.txt"))
        ctx.add_tool_result(ToolResultBlock(f"c{i}", file_text(i)))
    provider = ScriptedProvider([summary_or_tool_call] * 3, context_window=window)
    assert ctx.compact(provider=provider, keep_turns=1) is not None
    *asked, fallback = provider.requests
    assert len(asked) == (2 if window == 200_000 else 0), "too tight to send whole: the transcript at once"
    sent = texts(fallback)
    assert fallback["tool_choice"] == {"type": "none"}
    assert earlier in sent and TASK in sent and PIN in sent
    words = [w for w in SECRETS[4:9] if w in sent]
    if window == 200_000:
        assert words == SECRETS[4:9] and "more characters" not in sent, "it all fits: nothing is cut"
    else:
        assert SECRETS[8] in words and SECRETS[4] not in words, "the newest whole, the oldest cut to its head"
        assert re.search(r"\[\.\.\. \d+ more characters\]", sent), "it says what it left out"
        assert "filler line 0 of part04.txt" in sent, "the oldest keeps its head"
        # It was sent: the size guard found it fits, with room for the reply.


def test_the_transcript_prompt_forbids_tools_and_keeps_the_system_and_tools() -> None:
    ctx = grown(1)
    prompt = transcript_prompt(ctx, "the transcript", "keep the secret words")
    assert prompt.tool_choice == "none" and prompt.tools == (READ,) and PIN in "".join(prompt.system)
    (message,) = prompt.messages
    assert isinstance(message.content[0], TextBlock) and message.content[0].text.endswith("</transcript>")
