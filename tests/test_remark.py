"""A recorded body's cache marks rewritten (``providers.remark``): on copies, where each wire takes a
mark, within the wire's limit, never on a thinking block; OpenAI's marks only where GPT-5.6 reads them."""

from __future__ import annotations

import copy
from typing import Any

from tiny_agent.providers.registry import offline_profile
from tiny_agent.providers.remark import planned, unmarked, with_ttl
from tiny_agent.types import CachePlan

EPHEMERAL = {"type": "ephemeral"}


def _anthropic_body() -> dict[str, Any]:
    return {
        "model": "claude-sonnet-4-6",
        "max_tokens": 100,
        "cache_control": EPHEMERAL,
        "tools": [{"name": "read", "input_schema": {}}, {"name": "write", "input_schema": {}}],
        "system": "You analyse agreements.",
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "one", "cache_control": EPHEMERAL}]},
            {"role": "assistant", "content": [{"type": "text", "text": "a"}, {"type": "thinking", "thinking": "t"}]},
            {"role": "user", "content": "two"},
        ],
    }


def test_unmarked_drops_every_mark_and_leaves_the_body_as_it_was() -> None:
    body = _anthropic_body()
    kept = copy.deepcopy(body)
    out = unmarked(body, "anthropic")
    assert "cache_control" not in str(out) and body == kept
    assert out["messages"][0]["content"] == [{"type": "text", "text": "one"}]


def test_with_ttl_asks_every_mark_for_the_lifetime_where_the_wire_has_a_choice() -> None:
    out = with_ttl(_anthropic_body(), "anthropic", "1h")
    assert out["cache_control"] == out["messages"][0]["content"][0]["cache_control"] == {**EPHEMERAL, "ttl": "1h"}
    chat = {"model": "gpt-5.6", "messages": [{"role": "user", "content": [{"type": "text", "text": "x"}]}]}
    chat["messages"][0]["content"][0]["prompt_cache_breakpoint"] = {"mode": "explicit"}
    assert with_ttl(chat, "openai", "1h") == chat, "one lifetime on OpenAI: nothing to choose"


def test_planned_marks_anthropic_where_the_plan_says_within_four() -> None:
    rules = offline_profile("anthropic", "claude-sonnet-4-6").cache
    out = planned(_anthropic_body(), "anthropic", CachePlan(message_indices=(0, 1, 2)), rules, "1h")
    mark = {**EPHEMERAL, "ttl": "1h"}
    assert "cache_control" not in out and "cache_control" not in out["tools"][0]
    assert out["tools"][-1]["cache_control"] == mark
    assert out["system"] == [{"type": "text", "text": "You analyse agreements.", "cache_control": mark}]
    first, answer, newest = (m["content"] for m in out["messages"])
    assert "cache_control" not in first[0], "four marks: the oldest message gives way"
    assert answer[0]["cache_control"] == mark and "cache_control" not in answer[1], "never on a thinking block"
    assert newest == [{"type": "text", "text": "two", "cache_control": mark}]


def test_planned_marks_openai_only_from_gpt_5_6() -> None:
    body = {
        "model": "gpt-5.6",
        "messages": [
            {"role": "system", "content": "You analyse agreements."},
            {"role": "user", "content": "one"},
            {"role": "assistant", "content": "a"},
            {"role": "user", "content": "two"},
        ],
    }
    plan = CachePlan(message_indices=(0, 2))
    out = planned(body, "openai", plan, offline_profile("openai", "gpt-5.6").cache, "5m")
    marked = [i for i, m in enumerate(out["messages"]) if "prompt_cache_breakpoint" in str(m)]
    assert marked == [0, 1, 3], "the system message, then the plan's, counted from the conversation's start"
    assert out["prompt_cache_options"]["mode"] == "explicit"
    automatic = planned(
        {**body, "model": "gpt-4o-mini"}, "openai", plan, offline_profile("openai", "gpt-4o-mini").cache, "5m"
    )
    assert automatic == {**body, "model": "gpt-4o-mini"}
