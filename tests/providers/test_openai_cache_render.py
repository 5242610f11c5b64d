"""Chat Completions bodies for each model family, checked by the official SDK's request types.

Every body is rendered by the real engine and adapter, as a user's run would build them (the
provider from ``resolve_provider``, the request from ``Context``), and checked by ``sdk_wire``: the
``openai`` SDK's own ``CompletionCreateParamsNonStreaming`` with unknown keys refused, plus the pairing
rules, none of it from the wires' own checks (``providers/*/check.py``).
"""

from __future__ import annotations

import itertools
import json
from typing import Any

import pytest
from pydantic import ValidationError

from tests.providers.sdk_wire import EXPLICIT_FIELDS, marks, pairing_problems, sdk_validate
from tiny_agent.context.engine import Context
from tiny_agent.providers.base import Provider
from tiny_agent.providers.cache_sim import Simulator
from tiny_agent.providers.prefix import without_marks
from tiny_agent.providers.registry import resolve_provider
from tiny_agent.testing import ScriptedProvider, tool_call
from tiny_agent.types import CachePlan, Message, Prompt, TextBlock, ToolResultBlock, ToolSpec, ToolUseBlock

READ = ToolSpec("read_file", "Read a file.", {"type": "object", "properties": {"path": {"type": "string"}}})
LIST = ToolSpec("list_files", "List files.", {"type": "object", "properties": {}})
ENV = {"OPENAI_API_KEY": "sk-o", "DEEPSEEK_API_KEY": "sk-d", "MOONSHOT_API_KEY": "sk-m"}

FAMILIES = {
    "gpt-4o (automatic)": ("openai", "gpt-4o", None),
    "gpt-5.5 (automatic)": ("openai", "gpt-5.5", None),
    "gpt-5.6 (explicit)": ("openai", "gpt-5.6", None),
    "deepseek": ("deepseek", "deepseek-chat", None),
    "moonshot": ("moonshot", "kimi-k2-0905-preview", None),
    "llama.cpp as --provider openai --base-url": ("openai", "SmolLM2-135M-Instruct.Q4_1", "http://127.0.0.1:8080"),
}


def conversation() -> Context:
    """Text, parallel tool calls, an error result, a reply, a follow-up: every shape a turn takes."""
    ctx = Context("You are terse.", (READ, LIST), pins=["Never edit dev.mjs."])
    ctx.add_user("What is in the workspace?")
    calls = (ToolUseBlock("call_1", "list_files", {}), ToolUseBlock("call_2", "read_file", {"path": "a.txt"}))
    ctx.add_assistant(Message("assistant", (TextBlock("Looking."), *calls)))
    ctx.add_tool_results([ToolResultBlock("call_1", "a.txt\nb.txt"), ToolResultBlock("call_2", "no", is_error=True)])
    ctx.add_assistant(Message("assistant", (ToolUseBlock("call_3", "read_file", {"path": "b.txt"}),)))
    ctx.add_tool_results([ToolResultBlock("call_3", "hello")])
    ctx.add_assistant(Message.assistant("b.txt says hello."))
    ctx.add_user("And a.txt?")
    return ctx


def family(name: str) -> Provider:
    profile, model, url = FAMILIES[name]
    chat = {"api": "chat"} if profile == "openai" else {}  # gpt-5* would default to the Responses API
    return resolve_provider(profile, model=model, base_url=url, env=ENV, **chat)


@pytest.mark.parametrize("name", list(FAMILIES))
def test_each_family_renders_a_body_the_sdk_accepts(name: str) -> None:
    body = conversation().render(family(name))
    sdk_validate(body)
    assert pairing_problems(body) == []
    text = json.dumps(body)
    explicit = name.startswith("gpt-5.6")
    assert all((field in text) is explicit for field in EXPLICIT_FIELDS), "5.6-only fields go to 5.6 only"
    openai_model = name.startswith("gpt-")
    assert ("prompt_cache_key" in body) is openai_model, "a cache key for OpenAI's own models only"


def test_the_gpt_5_6_body_marks_the_plan_and_asks_for_explicit_caching() -> None:
    ctx = conversation()
    body = ctx.render(family("gpt-5.6 (explicit)"))
    assert body["prompt_cache_options"] == {"mode": "explicit", "ttl": "30m"}
    assert body["prompt_cache_key"] == f"tiny-agent-{ctx.entries[0].id}"
    roles = [m["role"] for m in body["messages"]]
    assert roles == ["system", "user", "assistant", "tool", "tool", "assistant", "tool", "assistant", "user"]
    # The plan: the system message (the tools come before it), the end of the user turn before the
    # newest reply (here the tool message answering call_3: where the previous request ended), the newest.
    assert marks(body) == [0, 6, 8]
    for i in marks(body):
        assert body["messages"][i]["content"][-1]["prompt_cache_breakpoint"] == {"mode": "explicit"}


def test_the_sdk_check_can_fail() -> None:
    """The independent check is a check: each broken body below is refused."""
    good = conversation().render(family("gpt-5.6 (explicit)"))
    sdk_validate(good)
    misspelt = {**good, "prompt_cache_option": good["prompt_cache_options"]}
    bad_mode = json.loads(json.dumps(good).replace('"mode": "explicit"}}', '"mode": "implicit"}}', 1))
    bad_ttl = {**good, "prompt_cache_options": {"mode": "explicit", "ttl": "5m"}}
    for broken in (misspelt, bad_mode, bad_ttl):
        with pytest.raises(ValidationError):
            sdk_validate(broken)
    orphan = {**good, "messages": [*good["messages"], {"role": "tool", "tool_call_id": "call_9", "content": "x"}]}
    assert pairing_problems(orphan) == ["messages[9]: tool message for call_9 answers no pending call"]


def test_the_cache_key_is_the_sessions_and_a_model_that_refused_it_is_not_sent_it() -> None:
    ctx = conversation()
    provider = family("gpt-4o (automatic)")
    assert ctx.render(provider)["prompt_cache_key"] == ctx.render(provider)["prompt_cache_key"]
    assert conversation().render(provider)["prompt_cache_key"] != ctx.render(provider)["prompt_cache_key"]
    ctx.state.refused["gpt-4o"] = frozenset({"prompt_cache_key"})
    assert "prompt_cache_key" not in ctx.render(provider)


# -- a 30-turn gpt-5.6 conversation ----------------------------------------------------------------

SYSTEM = "You are a careful engineer. " * 200
"""About 5,600 characters: the system message alone passes the 1,024-token minimum."""


def thirty_turns() -> list[dict[str, Any]]:
    replies = [tool_call("read_file", f"call_{n}", text=f"Reading part {n}.", path=f"part{n}.txt") for n in range(30)]
    provider = ScriptedProvider(replies, wire="openai", model="gpt-5.6", name="openai")
    ctx = Context(SYSTEM, (READ, LIST), pins=["Do not add new dependencies."])
    ctx.add_user("Read the thirty parts, one by one.")
    for n in range(30):
        response = ctx.complete(provider)
        [call] = response.message.tool_uses
        ctx.add_tool_results([ToolResultBlock(call.id, f"part {n}: " + "lorem ipsum " * 60)])
    assert len(ctx.compactions) == 0, "no compaction: every request extends the one before"
    return provider.requests


def test_thirty_turns_of_gpt_5_6_carry_marks_options_and_the_key() -> None:
    bodies = thirty_turns()
    assert len(bodies) == 30
    keys = {body["prompt_cache_key"] for body in bodies}
    assert len(keys) == 1 and keys.pop().startswith("tiny-agent-")
    for body in bodies:
        sdk_validate(body)
        assert pairing_problems(body) == []
        assert body["prompt_cache_options"] == {"mode": "explicit", "ttl": "30m"}
        assert 1 <= len(marks(body)) <= 4, "at most four writes a request"
        assert marks(body)[0] == 0 and marks(body)[-1] == len(body["messages"]) - 1


def test_each_gpt_5_6_request_reads_what_the_one_before_wrote() -> None:
    """Turn N+1 repeats turn N's prefix up to N's newest breakpoint byte for byte and marks the same
    message (GPT-5.6 reads only at a breakpoint, no lookback); the simulator then bills that prefix
    as a read."""
    bodies = thirty_turns()
    for before, after in itertools.pairwise(bodies):
        last = marks(before)[-1]
        assert without_marks(after["messages"][: last + 1]) == without_marks(before["messages"][: last + 1])
        assert last in marks(after), "the newest entry of the previous request is a breakpoint again"
        assert (after["tools"], after["prompt_cache_key"]) == (before["tools"], before["prompt_cache_key"])
    sim = Simulator("openai", "gpt-5.6")
    calls = [sim.send(60.0 * n, body, 20) for n, body in enumerate(bodies)]
    assert calls[0].cache_read == 0 and calls[0].cache_write == calls[0].input_tokens
    for before, after in itertools.pairwise(calls):
        assert after.cache_read == before.input_tokens, "the write of turn N is read at turn N+1"
        assert after.cache_write == after.input_tokens - before.input_tokens
        assert after.miss is None


def test_the_cached_summary_request_on_gpt_5_6_reads_what_the_turns_wrote() -> None:
    """The summary is asked at the end of the window as an earlier request sent it, with the
    instructions after the tool results: the end of the results is marked too, because GPT-5.6
    reads only at a breakpoint (Anthropic would find it by looking back one block)."""
    replies: list[Any] = [tool_call("read_file", f"call_{n}", path=f"part{n}.txt") for n in range(6)]
    provider = ScriptedProvider([*replies, Message.assistant("The summary.")], wire="openai", model="gpt-5.6")
    ctx = Context(SYSTEM, (READ, LIST))
    ctx.add_user("Read the six parts.")
    for n in range(6):
        [call] = ctx.complete(provider).message.tool_uses
        ctx.add_tool_results([ToolResultBlock(call.id, f"part {n}: " + "lorem ipsum " * 60)])
    compaction = ctx.compact(provider=provider, keep_turns=1)
    assert compaction is not None and compaction.summary == "The summary."
    summary = provider.requests[-1]
    sdk_validate(summary)
    assert summary["messages"][-1]["role"] == "user" and summary["messages"][-2]["role"] == "tool"
    assert len(marks(summary)) == 4 and len(summary["messages"]) - 2 in marks(summary)
    sim = Simulator("openai", "gpt-5.6")
    calls = [sim.send(10.0 * n, body, 20) for n, body in enumerate(provider.requests)]
    # The newest turn (its call and result) is left out of the summary request, so its results end
    # where the last turn's request ended: all of that request is read.
    assert calls[-1].cache_read == calls[-2].input_tokens and calls[-1].miss is None


def test_a_gpt_5_6_request_with_nothing_to_mark_stays_in_openais_implicit_mode() -> None:
    """Explicit mode with no breakpoint would cache nothing at all: without a mark, no options."""
    provider = family("gpt-5.6 (explicit)")
    bare = provider.render(Prompt((), (), (Message.user("Hello."),), CachePlan()))
    assert marks(bare) == [] and "prompt_cache_options" not in bare
    system = provider.render(Prompt(("Be brief.",), (), (Message.user("Hello."),), CachePlan()))
    assert marks(system) == [0] and system["prompt_cache_options"] == {"mode": "explicit", "ttl": "30m"}
