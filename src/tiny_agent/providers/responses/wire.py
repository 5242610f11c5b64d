"""The OpenAI Responses API as a value (``RESPONSES``): its prefix blocks, breakpoints, request check
and shape, for ``providers.wire.WIRES``.

A body's blocks in cache order: each tool, then each ``input`` item whole (the developer item
first, the system layer); an item with a ``prompt_cache_breakpoint`` on one of its blocks (a tool
output sent as blocks included) is a breakpoint at its end. Caching is Chat Completions' (the same
models, rules and marks), so the breakpoints and the cache rules are the Chat Completions wire's.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from tiny_agent.providers.cache_rules import DEFAULT_TTL, CacheRules, Ttl
from tiny_agent.providers.check import WireCheck
from tiny_agent.providers.openai.cache import BREAKPOINT, cache_marks
from tiny_agent.providers.openai.rules import openai_rules
from tiny_agent.providers.prefix import CacheMarks, Counter, Layer, PrefixBlock, canonical, tool_blocks, without_marks
from tiny_agent.providers.responses.check import ResponsesCheck, check_responses_body, count_breakpoints

__all__ = ["RESPONSES", "ResponsesWire", "count_marks", "is_body"]


class ResponsesWire:
    """The Responses API: whole input items as prefix blocks, Chat Completions' caching."""

    name = "responses"
    mark_field = BREAKPOINT
    marks_required = False
    ttls: tuple[Ttl, ...] = (DEFAULT_TTL,)
    adapter = "tiny_agent.providers.responses.adapter:ResponsesProvider"
    sdk_path = "/v1"

    def prefix_blocks(self, body: Mapping[str, Any], counter: Counter) -> list[PrefixBlock]:
        out = tool_blocks(body, counter)
        for i, item in enumerate(body.get("input") or []):
            marked = count_breakpoints([item]) > 0
            data = without_marks(item) if marked else item
            layer: Layer = "system" if item.get("role") in ("system", "developer") else "messages"
            key = f"item|{canonical(data)}"
            out.append(PrefixBlock(f"input[{i}]", data, counter(data), "5m" if marked else None, key, layer))
        return out

    def cache_marks(self, body: Mapping[str, Any], blocks: list[PrefixBlock], rules: CacheRules) -> CacheMarks:
        return cache_marks(body, blocks, rules)

    def cache_rules(self, profile: str, model: str, overrides: Mapping[str, int] | None) -> CacheRules:
        rules = openai_rules(profile, model, overrides)
        return dataclasses.replace(rules, wire=self.name) if hasattr(rules, "wire") else rules

    def check(self, body: Mapping[str, Any], max_marks: int | None) -> list[str]:
        problems = check_responses_body(body, max_marks if max_marks is not None else 10**9)
        if "messages" in body:
            problems.insert(0, "a Responses body carries its conversation in input, not messages")
        return problems

    def checker(self) -> WireCheck:
        return ResponsesCheck()

    def conversation_start(self, body: Mapping[str, Any]) -> int:
        return 0  # the conversation is in ``input``; ``messages`` has none

    def shows_in(self, part: Mapping[str, Any]) -> bool:
        """A body with ``input`` items, or an item only the Responses API has."""
        return isinstance(part.get("input"), list) or part.get("type") in (
            "function_call",
            "function_call_output",
            "reasoning",
        )

    def adapter_options(self, cache_ttl: Ttl, tool_grammar: bool) -> dict[str, Any]:
        return {}

    def body_headers(self, body: Mapping[str, Any], interleaved: bool) -> dict[str, str]:
        return {}


def count_marks(body: Mapping[str, Any]) -> int:
    raw = body.get("input")
    return count_breakpoints(x for x in raw if isinstance(x, Mapping)) if isinstance(raw, list) else 0


def is_body(body: Mapping[str, Any]) -> bool:
    """Whether ``body`` is a ``responses.create`` body."""
    return RESPONSES.shows_in(body)


RESPONSES = ResponsesWire()
