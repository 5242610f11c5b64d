"""A reply cut at its output limit while the model was still thinking (DeepSeek's finish_reason
"length" with only reasoning_content): the run stops with max_tokens (exit 4, "raise --max-tokens"),
not as an empty reply; a summary call cut the same way says it was the output limit, and a summary
call on a thinking model leaves its thinking room beside the summary's."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx2
import pytest

from tiny_agent.agent.loop import Agent
from tiny_agent.context.engine import Context
from tiny_agent.errors import CompactionError
from tiny_agent.providers.registry import resolve_provider
from tiny_agent.providers.thinking import parse_thinking
from tiny_agent.providers.thinking_sent import REASONING_ROOM
from tiny_agent.testing import ScriptedProvider
from tiny_agent.tools.toolbox import Toolbox
from tiny_agent.tools.workspace import Workspace
from tiny_agent.types import Message, ModelResponse, ReasoningBlock, Usage

ENV = {"DEEPSEEK_API_KEY": "sk-test"}
ADAPTIVE = parse_thinking("adaptive")


def reply(message: dict[str, Any], finish: str) -> dict[str, Any]:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1,
        "model": "deepseek-v4-flash",
        "choices": [{"index": 0, "message": {"role": "assistant", **message}, "finish_reason": finish}],
        "usage": {"prompt_tokens": 900, "completion_tokens": 64, "total_tokens": 964},
    }


class Server:
    def __init__(self, replies: list[dict[str, Any]]) -> None:
        self.replies, self.seen = replies, []  # type: ignore[var-annotated]

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        self.seen.append(json.loads(request.content))
        return httpx2.Response(200, json=self.replies.pop(0))


def test_a_reply_cut_while_thinking_stops_at_the_output_limit_not_as_empty(tmp_path: Path) -> None:
    server = Server([reply({"content": "", "reasoning_content": "Let me look at the files one"}, "length")])
    client = httpx2.Client(transport=httpx2.MockTransport(server))
    provider = resolve_provider("deepseek", env=ENV, http_client=client, max_retries=0)
    result = Agent(provider, Toolbox(Workspace(tmp_path).tools())).run("list every secret word")
    assert result.stop == "max_tokens"
    assert "raise --max-tokens" in result.message and "still thinking" in result.message


def test_a_cut_reply_without_thinking_or_text_is_the_output_limit_too(tmp_path: Path) -> None:
    cut = ModelResponse(Message("assistant", ()), Usage(), "max_tokens", "m")
    result = Agent(ScriptedProvider([cut]), Toolbox(Workspace(tmp_path).tools())).run("hi")
    assert result.stop == "max_tokens" and "thinking" not in result.message


def thinking_cut() -> ModelResponse:
    return ModelResponse(
        Message("assistant", (ReasoningBlock("I should summarise the", None, "m"),)), Usage(), "max_tokens", "m"
    )


def test_a_summary_call_cut_at_its_output_limit_says_so() -> None:
    ctx = Context("s", ())
    for i in range(4):
        ctx.add_user(f"question {i} " * 200)
        ctx.add_assistant(Message.assistant(f"answer {i} " * 200))
    provider = ScriptedProvider([thinking_cut(), thinking_cut(), thinking_cut()])
    with pytest.raises(CompactionError) as caught:
        ctx.compact(provider=provider, keep_turns=1)
    assert "output limit" in str(caught.value) and "max_tokens 1,024" in str(caught.value)


def compacted_request(provider: ScriptedProvider) -> dict[str, Any]:
    ctx = Context("s", ())
    for i in range(4):
        ctx.add_user(f"question {i} " * 200)
        ctx.add_assistant(Message.assistant(f"answer {i} " * 200))
    assert ctx.compact(provider=provider, keep_turns=1) is not None
    return provider.requests[0]


def test_a_summary_call_on_a_thinking_model_leaves_room_for_the_thinking() -> None:
    summary = Message.assistant("the summary")
    deepseek = ScriptedProvider([summary], wire="openai", name="deepseek", model="deepseek-v4-flash")
    assert compacted_request(deepseek)["max_tokens"] == 1024 + REASONING_ROOM
    plain = ScriptedProvider([summary], wire="openai", name="openai", model="gpt-4o")
    assert compacted_request(plain)["max_tokens"] == 1024, "a model that does not think: the summary's room alone"


def cut_summary(provider: ScriptedProvider) -> str:
    ctx = Context("s", ())
    for i in range(4):
        ctx.add_user(f"question {i} " * 200)
        ctx.add_assistant(Message.assistant(f"answer {i} " * 200))
    with pytest.raises(CompactionError) as caught:
        ctx.compact(provider=provider, keep_turns=1)
    return str(caught.value)


def test_a_summary_call_cut_while_thinking_names_what_to_change() -> None:
    deepseek = ScriptedProvider([thinking_cut()], wire="openai", name="deepseek", model="deepseek-v4-flash")
    line = cut_summary(deepseek)
    assert f"(max_tokens {1024 + REASONING_ROOM:,}: 1,024 for the summary, {REASONING_ROOM:,} for the thinking)" in line
    assert "ContextConfig.summary_max_tokens" in line and "no flag" in line
    assert line.endswith("or let the model think less (--effort low)"), line
    claude = ScriptedProvider([thinking_cut()], name="anthropic", model="claude-sonnet-4-6", thinking=ADAPTIVE)
    assert "(--thinking N bounds it, or --effort low)" in cut_summary(claude)


def test_a_summary_call_cut_on_a_model_that_does_not_think_names_only_the_summary_room() -> None:
    line = cut_summary(ScriptedProvider([thinking_cut()]))
    assert "(max_tokens 1,024)" in line
    assert line.endswith(
        "raise ContextConfig.summary_max_tokens (set in Python: no flag or tiny-agent.toml key sets it)"
    )
