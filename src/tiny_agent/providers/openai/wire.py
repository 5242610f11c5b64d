"""The OpenAI Chat Completions wire as a value: its prefix blocks, breakpoints, request check and shape.

Everything outside this folder that must differ by wire asks this object (through
``providers.wire.wire_of``) instead of comparing the wire's name.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tiny_agent.providers.cache_rules import DEFAULT_TTL, CacheRules, Ttl
from tiny_agent.providers.check import WireCheck
from tiny_agent.providers.openai.cache import BREAKPOINT, cache_marks
from tiny_agent.providers.openai.check import OpenAICheck, check_openai_body
from tiny_agent.providers.openai.rules import openai_rules
from tiny_agent.providers.prefix import (
    CacheMarks,
    Counter,
    Layer,
    PrefixBlock,
    canonical,
    tool_blocks,
    without_marks,
)

__all__ = ["OPENAI", "OpenAIWire"]

SYSTEM_ROLES = ("system", "developer")


class OpenAIWire:
    """Chat Completions: whole messages as prefix blocks, automatic caching (GPT-5.6+: optional
    ``prompt_cache_breakpoint`` marks on content parts), request settings hashed ahead of the prefix."""

    name = "openai"
    mark_field = BREAKPOINT
    marks_required = False
    """Marks are optional: the rules' mode says whether the cache is automatic or explicit (GPT-5.6+)."""
    ttls: tuple[Ttl, ...] = (DEFAULT_TTL,)
    """One lifetime, the provider's (GPT-5.6+: 30 minutes)."""
    adapter = "tiny_agent.providers.openai.adapter:OpenAICompatProvider"
    sdk_path = "/v1"
    """The SDK's base URL ends in ``/v1``."""

    def prefix_blocks(self, body: Mapping[str, Any], counter: Counter) -> list[PrefixBlock]:
        """Each tool and each whole message."""
        out = tool_blocks(body, counter)
        out.extend(_message_block(f"messages[{i}]", m, counter) for i, m in enumerate(body.get("messages") or []))
        return out

    def cache_marks(self, body: Mapping[str, Any], blocks: list[PrefixBlock], rules: CacheRules) -> CacheMarks:
        return cache_marks(body, blocks, rules)

    def cache_rules(self, profile: str, model: str, overrides: Mapping[str, int] | None) -> CacheRules:
        return openai_rules(profile, model, overrides)

    def check(self, body: Mapping[str, Any], max_marks: int | None) -> list[str]:
        return check_openai_body(body)

    def checker(self) -> WireCheck:
        return OpenAICheck()

    def conversation_start(self, body: Mapping[str, Any]) -> int:
        """The leading system messages are the system prompt: the conversation starts after them."""
        messages = body.get("messages") or []
        return next((i for i, m in enumerate(messages) if m.get("role") != "system"), len(messages))

    def shows_in(self, part: Mapping[str, Any]) -> bool:
        """A body with function tools; a system, developer or tool message, or one with ``tool_calls``."""
        if any(isinstance(t, Mapping) and t.get("type") == "function" for t in part.get("tools") or []):
            return True
        return part.get("role") in (*SYSTEM_ROLES, "tool") or "tool_calls" in part

    def adapter_options(self, cache_ttl: Ttl, tool_grammar: bool) -> dict[str, Any]:
        return {"tool_mode": "json_schema"} if tool_grammar else {}

    def body_headers(self, body: Mapping[str, Any], interleaved: bool) -> dict[str, str]:
        return {}


def _message_block(path: str, message: Any, counter: Counter) -> PrefixBlock:
    """A whole Chat Completions message; a ``prompt_cache_breakpoint`` on one of its content parts
    makes it a breakpoint. OpenAI's marks take the request's lifetime: "5m" stands for it here, and the
    rules say how long that is (30 minutes on GPT-5.6+)."""
    content = message.get("content") if isinstance(message, Mapping) else None
    parts = content if isinstance(content, list) else []
    marked = any(isinstance(p, Mapping) and isinstance(p.get(BREAKPOINT), Mapping) for p in parts)
    data = without_marks(message) if marked else message
    role = message.get("role") if isinstance(message, Mapping) else None
    layer: Layer = "system" if role in SYSTEM_ROLES else "messages"
    return PrefixBlock(path, data, counter(data), "5m" if marked else None, f"message|{canonical(data)}", layer)


OPENAI = OpenAIWire()
