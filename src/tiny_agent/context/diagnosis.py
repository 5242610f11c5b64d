"""Why did the cache miss? A miss never throws; it only shows on the invoice. So after every call
that read less of the prompt cache than the previous request left there, name the cause.

The causes are checked in prefix order, because the cache is a prefix: the first layer that
changed (tools, then the system prompt, then the pins, then the messages) decides, and whatever
follows it cannot be read however identical it is. Then what changes nothing in the bytes: the
entry expired (TTL), the previous request was below the model's minimum cacheable length, or the
newest breakpoint sits more than 20 blocks past the entry (Anthropic's lookback; GPT-5.6 has none).
What the provider says itself is kept beside this (Anthropic's cache diagnostics; Chat Completions
offers no such comparison: OpenAI's ``comparison_response_id`` is a Responses API field). What is left is
said plainly as unexplained (the provider evicted the entry, or routed the request elsewhere).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from tiny_agent.context.cache import shared_layers
from tiny_agent.context.render import Rendered
from tiny_agent.providers.profile import ProviderProfile
from tiny_agent.types import Message, Prompt, ToolSpec, Usage

__all__ = ["Before", "diagnose", "excerpt", "first_difference", "tool_changes", "where_text_changed"]

TOLERANCE = 0.9
"""A read of at least 90% of the previous request counts as a hit: chat templates re-render the last
reply a little differently on llama.cpp, and OpenAI counts cached tokens in steps of 128."""


@dataclass(frozen=True)
class Before:
    """What is known about the previous request."""

    at: float
    model: str
    fingerprint: Mapping[str, object]
    input_tokens: int | None
    prompt: Prompt | None
    """Its full text, when this process still has it (for the exact place and an excerpt)."""
    changes: Sequence[str] = ()
    """What the log recorded between it and now: "compaction", "clear"."""
    server: str = ""
    """The server that holds its cache, where that is one process (``OpenCall.server``)."""
    chain: Sequence[str] | None = None
    """Its message hash chain, when this process still has it (for the exact shared prefix)."""


def diagnose(
    before: Before | None, rendered: Rendered, profile: ProviderProfile, usage: Usage, now: float
) -> str | None:
    """The cause of a miss in one line, or None when the call read what it could (or cannot tell)."""
    if before is None or before.input_tokens is None or usage.cache_read_tokens is None:
        return None
    rules = profile.cache
    model, prompt, server = profile.model, rendered.prompt, profile.cache_home
    expected = before.input_tokens
    if expected >= rules.min_tokens and usage.cache_read_tokens >= TOLERANCE * expected - rules.increment:
        return None
    if model != before.model:
        return f"model changed: {before.model} -> {model}"
    if server and before.server and server != before.server:
        return (
            f"another server: the previous request went to {before.server}, this one to {server}, whose cache "
            "started empty (`tiny-agent local start` keeps one server, and its cache, between runs)"
        )
    layers, shared_messages = shared_layers(before.fingerprint, rendered.fingerprint, rendered.chain, before.chain)
    if "tools" not in layers:
        return "tools changed: " + _tools_change(before, prompt)
    if "system" not in layers:
        return "system prompt changed" + _text_change(before.prompt, prompt, 0)
    if "pins" not in layers:
        return "pinned constraints changed" + _text_change(before.prompt, prompt, -1)
    thinking = (before.fingerprint.get("thinking", "default"), rendered.fingerprint.get("thinking", "default"))
    if thinking[0] != thinking[1]:
        return f"thinking settings changed: {thinking[0]} -> {thinking[1]} (message cache breakpoints are rewritten)"
    for kind in ("compaction", "clear"):
        if kind in before.changes:
            what = "a compaction replaced" if kind == "compaction" else "clearing old tool output changed"
            return f"{what} the conversation (expected: the next request reads the new prefix)"
    count = before.fingerprint.get("messages")
    previous_messages = count if isinstance(count, int) else 0
    if shared_messages < previous_messages - 1:
        return f"message #{shared_messages + 1} changed" + _message_change(before.prompt, prompt, shared_messages)
    ttl_seconds = profile.lifetime
    if now - before.at > ttl_seconds:
        idle = now - before.at
        return f"the cache entry expired: {idle:,.0f}s since the previous request (lifetime {ttl_seconds:,.0f}s)"
    if expected < rules.min_tokens:
        return (
            f"below the minimum: the previous request ({expected:,} tokens) is shorter than {model}'s minimum "
            f"cacheable prompt ({rules.min_tokens:,} tokens), so nothing was cached"
        )
    if rules.mode == "explicit" and not rendered.marks:
        mark = profile.wire_format.mark_field
        return f"no cache breakpoint: the request marked nothing to cache ({mark}), so nothing was written"
    added = _blocks(prompt.messages) - _blocks(before.prompt.messages) if before.prompt else 0
    if rules.lookback_blocks > 1 and added >= rules.lookback_blocks:
        return (
            f"lookback: {added} new blocks since the previous request; the cache looks back only "
            f"{rules.lookback_blocks}"
        )
    return (
        f"unexplained: read {usage.cache_read_tokens:,} of the {expected:,} tokens the previous request sent, "
        "with an identical prefix (the provider may have evicted the entry)"
    )


def first_difference(before: str, now: str) -> int:
    """Index of the first character where two texts differ (the length of the shorter if one extends the other)."""
    for i, (a, b) in enumerate(zip(before, now, strict=False)):
        if a != b:
            return i
    return min(len(before), len(now))


def excerpt(text: str, at: int) -> str:
    """About 50 characters around ``at``, quoted, with "..." where it was cut (as the miss line shows it)."""
    start = max(0, at - 20)
    piece = text[start : at + 30].replace("\n", " ")
    return json.dumps(("..." if start else "") + piece + ("..." if at + 30 < len(text) else ""), ensure_ascii=False)


def _text_change(before: Prompt | None, prompt: Prompt, index: int) -> str:
    if before is None or not before.system or not prompt.system:
        return ""
    return where_text_changed(before.system[index], prompt.system[index])


def where_text_changed(old: str, new: str) -> str:
    """' at character N: now "...", was "..."': where two texts first differ, quoted."""
    at = first_difference(old, new)
    return f" at character {at}: now {excerpt(new, at)}, was {excerpt(old, at)}"


def _message_change(before: Prompt | None, prompt: Prompt, index: int) -> str:
    if before is None or index >= len(before.messages) or index >= len(prompt.messages):
        return ""
    old = json.dumps(before.messages[index].to_dict(), ensure_ascii=False)
    new = json.dumps(prompt.messages[index].to_dict(), ensure_ascii=False)
    at = first_difference(old, new)
    return f": now {excerpt(new, at)}, was {excerpt(old, at)}"


def _tools_change(before: Before, prompt: Prompt) -> str:
    if before.prompt is not None:
        return ", ".join(tool_changes(before.prompt.tools, prompt.tools)) or "a definition changed"
    names = before.fingerprint.get("tool_names")
    old = [str(n) for n in names] if isinstance(names, list) else []
    new = [t.name for t in prompt.tools]
    added, removed = [n for n in new if n not in old], [n for n in old if n not in new]
    if added or removed:
        return ", ".join([*(f"added {n}" for n in added), *(f"removed {n}" for n in removed)])
    if old != new:
        return f"reordered: {', '.join(old)} -> {', '.join(new)}"
    return "a definition changed (same names, same order)"


def tool_changes(before: Sequence[ToolSpec], now: Sequence[ToolSpec]) -> list[str]:
    """What differs between two tool lists, tool by tool: ``added x``, ``removed y``, ``z's
    description changed``, ``z's input schema changed``, then ``reordered: ...`` if that is all."""
    old, new = {t.name: t for t in before}, {t.name: t for t in now}
    out = [f"added {n}" for n in new if n not in old] + [f"removed {n}" for n in old if n not in new]
    for name, tool in new.items():
        was = old.get(name)
        if was is None:
            continue
        parts = ["description"] if was.description != tool.description else []
        if json.dumps(was.input_schema, ensure_ascii=False) != json.dumps(tool.input_schema, ensure_ascii=False):
            parts.append("input schema")
        if parts:
            out.append(f"{name}'s {' and '.join(parts)} changed")
    if not out and [t.name for t in before] != [t.name for t in now]:
        out.append(f"reordered: {', '.join(t.name for t in before)} -> {', '.join(t.name for t in now)}")
    return out


def _blocks(messages: Sequence[Message]) -> int:
    return sum(len(m.content) for m in messages)
