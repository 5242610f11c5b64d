"""The Anthropic Messages wire as a value: its prefix blocks, breakpoints, request check and shape.

Everything outside this folder that must differ by wire asks this object (through
``providers.wire.wire_of``) instead of comparing the wire's name.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tiny_agent.providers.anthropic.betas import request_betas
from tiny_agent.providers.anthropic.check import AnthropicCheck, check_anthropic_body
from tiny_agent.providers.cache_rules import TTLS, CacheRules, Ttl, min_cacheable_tokens
from tiny_agent.providers.check import WireCheck
from tiny_agent.providers.prefix import (
    CacheMarks,
    Counter,
    PrefixBlock,
    SimulationError,
    breakpoints,
    counted_block,
    tool_blocks,
    ttls_in_order,
)

__all__ = ["ANTHROPIC", "AnthropicWire"]


class AnthropicWire:
    """Anthropic Messages: system blocks and content blocks, ``cache_control`` breakpoints (at most four,
    longer lifetimes first), a 20-block lookback; the settings a cache keys on are in ``breaks``."""

    name = "anthropic"
    mark_field = "cache_control"
    marks_required = True
    """Nothing is cached but at the request's own breakpoints."""
    ttls: tuple[Ttl, ...] = TTLS
    adapter = "tiny_agent.providers.anthropic.adapter:AnthropicProvider"
    sdk_path = ""
    """The SDK adds ``/v1`` to a base URL itself."""

    def prefix_blocks(self, body: Mapping[str, Any], counter: Counter) -> list[PrefixBlock]:
        """Each tool, each system block and each message content block (a string content is one text block)."""
        out = tool_blocks(body, counter)
        system = body.get("system")
        if isinstance(system, str):
            out.append(counted_block("system", {"type": "text", "text": system}, "system", counter, "system"))
        else:
            out.extend(
                counted_block(f"system[{i}]", b, "system", counter, "system") for i, b in enumerate(system or [])
            )
        for i, msg in enumerate(body.get("messages") or []):
            content, role = msg.get("content"), msg.get("role")
            if isinstance(content, str):
                text = {"type": "text", "text": content}
                out.append(counted_block(f"messages[{i}].content", text, role, counter, "messages"))
            else:
                out.extend(
                    counted_block(f"messages[{i}].content[{j}]", b, role, counter, "messages")
                    for j, b in enumerate(content)
                )
        return out

    def cache_marks(self, body: Mapping[str, Any], blocks: list[PrefixBlock], rules: CacheRules) -> CacheMarks:
        """The ``cache_control`` breakpoints, each read and written; a request with too many, or a 1h
        one after a 5m one, is refused (``SimulationError``)."""
        marks = breakpoints(body, blocks)
        if len(marks) > rules.max_breakpoints:
            raise SimulationError(f"{len(marks)} cache breakpoints; at most {rules.max_breakpoints} are allowed")
        if not ttls_in_order(marks):
            raise SimulationError("a 1h cache breakpoint comes after a 5m one; longer TTLs must come first")
        return CacheMarks(marks, marks, marks)

    def cache_rules(self, profile: str, model: str, overrides: Mapping[str, int] | None) -> CacheRules:
        return CacheRules(self.name, model, min_cacheable_tokens(model, self.name, overrides))

    def check(self, body: Mapping[str, Any], max_marks: int | None) -> list[str]:
        return check_anthropic_body(body, max_marks)

    def checker(self) -> WireCheck:
        return AnthropicCheck()

    def conversation_start(self, body: Mapping[str, Any]) -> int:
        """The system prompt is not a message: the conversation is ``messages`` from the first."""
        return 0

    def shows_in(self, part: Mapping[str, Any]) -> bool:
        """A body with ``system``, tools with ``input_schema`` or a top-level ``cache_control``; a message
        with tool_use, tool_result or marked content blocks."""
        if "system" in part or "cache_control" in part:
            return True
        if any(isinstance(t, Mapping) and "input_schema" in t for t in part.get("tools") or []):
            return True
        content = part.get("content")
        return isinstance(content, list) and any(
            isinstance(b, Mapping) and (b.get("type") in ("tool_use", "tool_result") or "cache_control" in b)
            for b in content
        )

    def adapter_options(self, cache_ttl: Ttl, tool_grammar: bool) -> dict[str, Any]:
        return {"cache_ttl": cache_ttl}

    def body_headers(self, body: Mapping[str, Any], interleaved: bool) -> dict[str, str]:
        betas = request_betas(body, interleaved)
        return {"anthropic-beta": ",".join(betas)} if betas else {}


ANTHROPIC = AnthropicWire()
