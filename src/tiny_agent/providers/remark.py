"""A recorded body's cache marks rewritten: another lifetime, none at all, or the engine's placement.

The bodies are another program's (``tiny-agent record``): each is copied, never changed. ``unmarked``
drops every mark (the wire's ``mark_field``, Anthropic's top-level ``cache_control`` too);
``with_ttl`` gives each mark the lifetime asked for, where the wire lets a request choose one;
``planned`` puts marks where a ``CachePlan`` says (the tools, the system prompt, the conversation's
messages by index), as the adapters place them: the last block a mark may go on (never a thinking
block), a plain string turned into one text block first. On OpenAI's wire the marks exist from
GPT-5.6 (the rules' explicit mode); before it caching is automatic and a body is left unmarked.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from typing import Any

from tiny_agent.errors import ConfigError
from tiny_agent.providers.anthropic.thinking import THINKING_TYPES
from tiny_agent.providers.cache_rules import OPENAI_EXPLICIT_TTL, CacheRules, Ttl
from tiny_agent.providers.openai.cache import BREAKPOINT, OPTIONS
from tiny_agent.providers.wire import wire_of
from tiny_agent.types import CachePlan

# The two wires whose marks this rewrites, from the registry (the one place a wire's module is named).
ANTHROPIC, OPENAI = wire_of("anthropic"), wire_of("openai")

__all__ = ["planned", "unmarked", "with_ttl"]


def unmarked(body: Mapping[str, Any], wire: str) -> dict[str, Any]:
    """A copy of ``body`` without a cache mark anywhere (and without OpenAI's mark options)."""
    out: dict[str, Any] = _without(body, wire_of(wire).mark_field)
    out.pop(OPTIONS, None)
    return out


def with_ttl(body: Mapping[str, Any], wire: str, ttl: Ttl) -> dict[str, Any]:
    """A copy of ``body`` with every mark asking for ``ttl``; as it was where the wire has one lifetime."""
    found = wire_of(wire)
    out = copy.deepcopy(dict(body))
    if ttl in found.ttls and len(found.ttls) > 1:
        for holder in _holders(out, found.mark_field):
            holder[found.mark_field] = {**holder[found.mark_field], "ttl": ttl}
    return out


def planned(body: Mapping[str, Any], wire: str, plan: CachePlan, rules: CacheRules, ttl: Ttl) -> dict[str, Any]:
    """A copy of ``body`` with only the marks ``plan`` places (its message indices count the
    conversation's messages, from ``conversation_start``), at most the rules' limit, newest kept."""
    place = _PLACERS.get(wire)
    if place is None:
        raise ConfigError(f"cache marks cannot be placed on a {wire} body")
    out = unmarked(body, wire)
    place(out, plan, rules, ttl)
    return out


def _without(value: Any, field: str) -> Any:
    if isinstance(value, Mapping):
        return {k: _without(v, field) for k, v in value.items() if k != field}
    if isinstance(value, list):
        return [_without(v, field) for v in value]
    return value


def _holders(value: Any, field: str) -> list[dict[str, Any]]:
    """Every dict in ``value`` that carries a mark (a dict) under ``field``."""
    found: list[dict[str, Any]] = []
    if isinstance(value, dict):
        if isinstance(value.get(field), dict):
            found.append(value)
        for v in value.values():
            found += _holders(v, field)
    elif isinstance(value, list):
        for v in value:
            found += _holders(v, field)
    return found


def _as_blocks(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content else []
    return [dict(b) if isinstance(b, Mapping) else b for b in content or []]


def _mark_last(holder: dict[str, Any], key: str, mark: Mapping[str, Any], markable: Callable[[Any], bool]) -> bool:
    """The mark on the last block of ``holder[key]`` that may carry it; whether there was one."""
    blocks = _as_blocks(holder.get(key))
    at = next((i for i in range(len(blocks) - 1, -1, -1) if markable(blocks[i])), None)
    if at is None:
        return False
    blocks[at] = {**blocks[at], **mark}
    holder[key] = blocks
    return True


def _conversation(body: dict[str, Any], wire: str, plan: CachePlan) -> list[dict[str, Any]]:
    """The messages the plan marks, oldest first."""
    messages = body.get("messages") or []
    start = wire_of(wire).conversation_start(body)
    count = len(messages) - start
    picked = sorted({i % count for i in plan.message_indices if -count <= i < count}) if count > 0 else []
    return [messages[start + i] for i in picked if isinstance(messages[start + i], dict)]


def _anthropic(body: dict[str, Any], plan: CachePlan, rules: CacheRules, ttl: Ttl) -> None:
    mark = {"cache_control": {"type": "ephemeral", **({"ttl": ttl} if ttl != "5m" else {})}}
    room = rules.max_breakpoints

    def markable(block: Any) -> bool:
        return isinstance(block, dict) and block.get("type") not in THINKING_TYPES

    tools = body.get("tools")
    if plan.tools and isinstance(tools, list) and tools and room:
        body["tools"] = [*tools[:-1], {**tools[-1], **mark}]
        room -= 1
    if plan.system and body.get("system") and room and _mark_last(body, "system", mark, markable):
        room -= 1
    messages = _conversation(body, ANTHROPIC.name, plan)
    for message in messages[max(0, len(messages) - room) :] if room else ():
        _mark_last(message, "content", mark, markable)


def _openai(body: dict[str, Any], plan: CachePlan, rules: CacheRules, ttl: Ttl) -> None:
    if rules.mode != "explicit":
        return  # automatic caching: nothing to place
    mark = {BREAKPOINT: {"mode": "explicit"}}
    room = rules.max_breakpoints

    def markable(part: Any) -> bool:
        return isinstance(part, dict) and part.get("type") == "text"

    messages = body.get("messages") or []
    start = OPENAI.conversation_start(body)
    marked = False
    if plan.system and start and room and _mark_last(messages[start - 1], "content", mark, markable):
        room, marked = room - 1, True
    chosen = _conversation(body, OPENAI.name, plan)
    for message in chosen[max(0, len(chosen) - room) :] if room else ():
        marked = _mark_last(message, "content", mark, markable) or marked
    if marked:
        body[OPTIONS] = {"mode": "explicit", "ttl": OPENAI_EXPLICIT_TTL}


_PLACERS: Mapping[str, Callable[[dict[str, Any], CachePlan, CacheRules, Ttl], None]] = {
    ANTHROPIC.name: _anthropic,
    OPENAI.name: _openai,
}
"""How each wire that a recording holds places a plan's marks on a body."""
