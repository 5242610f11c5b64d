"""The window estimate counts earlier turns' reasoning as each provider does (reasoning facts, sections
1, 2 and 6), on the body our adapters actually render: DeepSeek ignores the reasoning_content of an
earlier turn that made no tool call but counts a tool-call turn's; Kimi keeps it all with
``keep: "all"`` and ignores earlier turns' without it; the Responses API renders earlier turns'
reasoning items back from GPT-5.6 on (``all_turns``), before it only the current turn's. The budget
guard prices the same figure.

The expected figure is computed from the body: the reasoning the provider's rule leaves out of that
body is taken out of the session, and what remains is estimated whole (no provider: nothing left out).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection, Mapping, Sequence
from typing import Any

from tiny_agent.agent.budget import Budget
from tiny_agent.context.engine import Context
from tiny_agent.context.tokens import canonical
from tiny_agent.providers.base import Provider
from tiny_agent.providers.registry import resolve_provider
from tiny_agent.providers.responses.adapter import ResponsesProvider
from tiny_agent.providers.thinking import parse_thinking
from tiny_agent.providers.thinking_caps import thinking_caps
from tiny_agent.testing import ScriptedProvider
from tiny_agent.types import (
    Block,
    Message,
    ModelResponse,
    ReasoningBlock,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolSpec,
    ToolUseBlock,
    Usage,
)

READ = ToolSpec("read_file", "Read a file", {"type": "object", "properties": {"path": {"type": "string"}}})
ENV = {"DEEPSEEK_API_KEY": "sk-test", "MOONSHOT_API_KEY": "sk-test"}
URL = "http://127.0.0.1:9"
# One reasoning text per assistant message: turn 1 made a tool call, turn 2 did not, turn 3 is the
# current tool loop.
THOUGHTS = {
    "t1-call": "I should read a.txt before I answer. " * 40,
    "t1-answer": "a.txt said alpha, so I can answer now. " * 40,
    "t2-answer": "Two and two make four; no tool is needed. " * 40,
    "t3-call": "The second task needs b.txt. " * 40,
}


def reasoning(key: str, wire: str, model: str) -> Block:
    """The reasoning ``key`` as the wire returns it: reasoning_content, a Responses reasoning item
    (``model`` wrote it), or an Anthropic thinking block."""
    text = THOUGHTS[key]
    if wire == "responses":
        item = {"type": "reasoning", "id": f"rs_{key}", "encrypted_content": text, "summary": []}
        return ReasoningBlock("", item, model)
    return ThinkingBlock(text, f"sig-{key}") if wire == "anthropic" else ReasoningBlock(text)


def session(wire: str = "openai", *, model: str = "", left_out: Collection[str] = ()) -> Context:
    """Three turns with reasoning on every assistant message, but the ``left_out`` ones."""

    def said(key: str, *rest: Block) -> Message:
        first = () if key in left_out else (reasoning(key, wire, model),)
        return Message("assistant", (*first, *rest))

    ctx = Context("system", (READ,))
    ctx.add_user("read a.txt")
    ctx.add_assistant(said("t1-call", ToolUseBlock("c1", "read_file", {"path": "a.txt"})))
    ctx.add_tool_results([ToolResultBlock("c1", "alpha " * 40)])
    ctx.add_assistant(said("t1-answer", TextBlock("a.txt says alpha")))
    ctx.add_user("what is 2 + 2?")
    ctx.add_assistant(said("t2-answer", TextBlock("4")))
    ctx.add_user("now read b.txt")
    ctx.add_assistant(said("t3-call", ToolUseBlock("c2", "read_file", {"path": "b.txt"})))
    ctx.add_tool_results([ToolResultBlock("c2", "beta " * 40)])
    return ctx


def chat_body(provider: Provider) -> dict[str, Any]:
    ctx = session()
    return ctx.legal(ctx.prompt(), provider, sending=False).body


def key_of(text: object) -> str | None:
    return next((k for k, t in THOUGHTS.items() if t == text), None)


def chat_turns(body: Mapping[str, Any]) -> list[list[Mapping[str, Any]]]:
    """The body's messages cut at each user message (tool results are ``tool`` messages)."""
    turns: list[list[Mapping[str, Any]]] = []
    for message in body["messages"]:
        if message["role"] == "user" or not turns:
            turns.append([])
        turns[-1].append(message)
    return turns


def sent_reasoning(turns: Sequence[Sequence[Mapping[str, Any]]]) -> list[str]:
    return [k for turn in turns for m in turn if (k := key_of(m.get("reasoning_content")))]


def deepseek_ignores(body: Mapping[str, Any]) -> set[str]:
    """DeepSeek's rule on the body: an earlier turn (between two user messages) that made no tool call
    has its reasoning_content ignored; a tool-call turn's is counted on every later request."""
    earlier = chat_turns(body)[:-1]
    plain = [turn for turn in earlier if not any(m.get("tool_calls") for m in turn)]
    return set(sent_reasoning(plain))


def deepseek(**kwargs: Any) -> Provider:
    return resolve_provider("deepseek", model="deepseek-v4-flash", base_url=URL, env=ENV, **kwargs)


def kimi(**kwargs: Any) -> Provider:
    return resolve_provider("moonshot", model="kimi-k2.6", base_url=URL, env=ENV, **kwargs)


def test_deepseek_counts_earlier_tool_call_turns_reasoning_and_not_a_plain_turns() -> None:
    provider = deepseek()
    body = chat_body(provider)
    assert sent_reasoning(chat_turns(body)) == list(THOUGHTS), "the render sends every turn's reasoning back"
    ignored = deepseek_ignores(body)
    assert ignored == {"t2-answer"}
    assert session().context_tokens(provider) == session(left_out=ignored).context_tokens()
    assert session().context_tokens(provider) < session().context_tokens(), "the plain turn's is left out"


def test_kimi_with_keep_all_counts_every_turns_reasoning() -> None:
    provider = kimi()
    body = chat_body(provider)
    assert body["thinking"] == {"type": "enabled", "keep": "all"}
    assert sent_reasoning(chat_turns(body)) == list(THOUGHTS)
    assert session().context_tokens(provider) == session().context_tokens(), "keep all: nothing left out"


def test_kimi_without_keep_all_counts_only_the_current_loops_reasoning() -> None:
    provider = kimi()
    profile = provider.profile
    caps = dataclasses.replace(profile.thinking_caps, keep_all=False, earlier_reasoning="stripped")
    provider._profile = dataclasses.replace(profile, thinking_caps=caps)  # type: ignore[attr-defined]
    body = chat_body(provider)
    assert body.get("thinking") is None, "no keep: the server ignores historical reasoning_content"
    turns = chat_turns(body)
    assert sent_reasoning(turns) == list(THOUGHTS)
    ignored = set(sent_reasoning(turns[:-1]))
    assert ignored == {"t1-call", "t1-answer", "t2-answer"}
    assert session().context_tokens(provider) == session(left_out=ignored).context_tokens()


def test_with_thinking_off_no_reasoning_goes_back_and_none_is_counted() -> None:
    for provider in (kimi(thinking=parse_thinking("off")), deepseek(thinking=parse_thinking("off"))):
        body = chat_body(provider)
        assert body["thinking"] == {"type": "disabled"}
        assert sent_reasoning(chat_turns(body)) == [], "reasoning_content goes back only while thinking is on"
        assert session().context_tokens(provider) == session(left_out=THOUGHTS).context_tokens()


def responses_items(model: str) -> list[str]:
    provider = ResponsesProvider(model=model, api_key="sk-test")
    ctx = session("responses", model=model)
    body = ctx.legal(ctx.prompt(), provider, sending=False).body
    assert "context" not in (body.get("reasoning") or {}), "the model's default reasoning.context applies"
    return [str(item["id"])[3:] for item in body["input"] if item.get("type") == "reasoning"]


def test_responses_counts_earlier_reasoning_items_from_gpt_5_6_on() -> None:
    assert responses_items("gpt-5.6") == list(THOUGHTS), "every turn's reasoning item is sent back"
    kept = ResponsesProvider(model="gpt-5.6", api_key="sk-test")
    full = session("responses", model="gpt-5.6")
    assert full.context_tokens(kept) == full.context_tokens(), "all_turns: every item counts"
    assert responses_items("gpt-5.5") == list(THOUGHTS)
    current = ResponsesProvider(model="gpt-5.5", api_key="sk-test")
    earlier = {"t1-call", "t1-answer", "t2-answer"}
    stripped = session("responses", model="gpt-5.5", left_out=earlier).context_tokens()
    assert session("responses", model="gpt-5.5").context_tokens(current) == stripped, "current_turn"


def test_deepseek_after_a_measured_call() -> None:
    """The measured request counted its turn's reasoning; once a new user message makes it an earlier
    turn, a plain turn's drops out and a tool-call turn's stays."""
    thought = ReasoningBlock(THOUGHTS["t2-answer"])
    usage = Usage(5000, 900, 0, 0, reasoning_tokens=800)

    def answered(*replies: Message) -> tuple[Context, ScriptedProvider]:
        answers = [
            ModelResponse(r, usage, "tool_use" if r.tool_uses else "end_turn", "deepseek-v4-flash") for r in replies
        ]
        provider = ScriptedProvider(answers, wire="openai", model="deepseek-v4-flash", name="deepseek")
        ctx = Context("system", (READ,))
        ctx.add_user("q1")
        ctx.complete(provider)
        if replies[0].tool_uses:
            ctx.add_tool_results([ToolResultBlock("c1", "alpha")])
            ctx.complete(provider)
        ctx.add_user("q2")
        return ctx, provider

    plain, provider = answered(Message("assistant", (thought, TextBlock("4"))))
    dropped = int((len(canonical(thought.to_dict())) + 1) / plain.ledger.chars_per_token)
    assert plain.context_tokens() - plain.context_tokens(provider) == dropped
    tool = Message("assistant", (thought, ToolUseBlock("c1", "read_file", {"path": "a"})))
    looped, provider = answered(tool, Message("assistant", (TextBlock("done"),)))
    assert looped.context_tokens(provider) == looped.context_tokens(), "a tool-call turn's reasoning stays"


def test_the_budget_guard_leaves_earlier_thinking_out_on_a_model_that_strips_it() -> None:
    def next_call(model: str, left_out: Collection[str] = ()) -> float:
        provider = ScriptedProvider([], model=model, pricing_id="anthropic")
        return Budget(1.0, provider).next_call(session("anthropic", left_out=left_out))

    earlier = {"t1-call", "t1-answer", "t2-answer"}
    assert next_call("claude-sonnet-4-5") == next_call("claude-sonnet-4-5", earlier), "stripped"
    assert next_call("claude-sonnet-5") > next_call("claude-sonnet-5", earlier), "kept and billed as input"


def test_each_model_declares_how_its_earlier_reasoning_counts() -> None:
    declared = {
        ("anthropic", "claude-3-7-sonnet-20250219"): "stripped",
        ("anthropic", "claude-sonnet-4-20250514"): "stripped",
        ("anthropic", "claude-opus-4-1-20250805"): "stripped",
        ("anthropic", "claude-sonnet-4-5"): "stripped",
        ("anthropic", "claude-haiku-4-5"): "stripped",
        ("anthropic", "claude-opus-4-5"): "kept",
        ("anthropic", "claude-sonnet-4-6"): "kept",
        ("anthropic", "claude-fable-5-1"): "kept",
        ("deepseek", "deepseek-v4-flash"): "tool_turns",
        ("moonshot", "kimi-k2.6"): "kept",
        ("openai", "gpt-5.5"): "stripped",
        ("openai", "gpt-5.6-mini"): "kept",
        ("openai", "gpt-6"): "kept",
    }
    assert {key: thinking_caps(*key).earlier_reasoning for key in declared} == declared
