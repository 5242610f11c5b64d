"""Why did the cache miss? A miss never throws; it only shows on the invoice. So after every call
that read less of the prompt cache than the previous request left there, name the cause.

The cause in the bytes comes from the one simulator ``lint`` and the view run too
(``providers.cache_breaks.prefix_breaks`` on the previous request's body and this one): its leading
break in prefix order (tools, system, messages), in the per-call line's words, with its position at
the end (`` [RULE at PATH, character N]``, see ``byte_cause``). Where the previous body is not at hand,
the fingerprints say the first layer that changed (tools, system prompt, pins, messages). Then what
changes nothing in the bytes: the entry expired (TTL), the previous request was below the model's
minimum cacheable length, nothing was marked, or the newest breakpoint sits more than 20 blocks past
the entry (Anthropic's lookback; GPT-5.6 has none: the simulator's ``breakpoint-lookback``). What the
provider says itself is kept beside this (Anthropic's cache diagnostics; Chat Completions offers no
such comparison: OpenAI's ``comparison_response_id`` is a Responses API field). What is left is said
plainly as unexplained (the provider evicted the entry, or routed the request elsewhere).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tiny_agent.context.byte_cause import (
    LOOKBACK,
    MESSAGE_EDITS,
    Side,
    cause_words,
    leading_break,
    position,
    thinking_consequence,
)
from tiny_agent.context.cache import shared_layers
from tiny_agent.context.miss_text import excerpt, first_difference, tool_changes, where_text_changed
from tiny_agent.context.render import Rendered
from tiny_agent.providers.cache_breaks import Break, prefix_breaks
from tiny_agent.providers.cache_expiry import expired
from tiny_agent.providers.cache_rules import CacheRules
from tiny_agent.providers.profile import ProviderProfile
from tiny_agent.types import Message, Prompt, Usage

__all__ = ["Before", "diagnose", "excerpt", "first_difference", "read_enough", "tool_changes", "where_text_changed"]

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
    body: Mapping[str, Any] | None = None
    """The body it sent (or, after a resume, the body re-rendered from the log): with it the cause in
    the bytes is the simulator's (``providers.cache_breaks``), as ``lint`` and the view find it."""
    wire: str = ""
    """The wire of ``body``."""


def read_enough(read: int, left: int, rules: CacheRules) -> bool:
    """Whether a request read what the one before it left cached: ``TOLERANCE`` of it, less one step of
    the provider's read granularity."""
    return read >= TOLERANCE * left - rules.increment


def diagnose(
    before: Before | None, rendered: Rendered, profile: ProviderProfile, usage: Usage, now: float
) -> str | None:
    """The cause of a miss in one line, or None when the call read what it could (or cannot tell).

    Where the previous body is at hand, the cause in the bytes is the simulator's leading break,
    its position at the end of the line (``byte_cause``); else the fingerprints say the layer."""
    if before is None or before.input_tokens is None or usage.cache_read_tokens is None:
        return None
    rules, model = profile.cache, profile.model
    expected = before.input_tokens
    read = usage.cache_read_tokens
    # Below the minimum nothing the previous request sent was cached, unless the call read it anyway
    # (a stream cut after the server wrote its prefix): a read that covers it is no miss.
    if read_enough(read, expected, rules) and (expected >= rules.min_tokens or read > 0):
        return None
    breaks = _simulated(before, rendered, profile)
    lead = leading_break(breaks, profile.wire) if breaks is not None else None
    if model != before.model:
        where = position(lead) if lead is not None and lead.rule == "model-changed" else ""
        return f"model changed: {before.model} -> {model}{where}"
    server = profile.cache_home
    if server and before.server and server != before.server:
        return (
            f"another server: the previous request went to {before.server}, this one to {server}, whose cache "
            "started empty (`tiny-agent local start` keeps one server, and its cache, between runs)"
        )
    if breaks is not None:
        cause = _in_bytes(before, rendered, lead, profile.wire)
    else:
        cause = _in_fingerprints(before, rendered, profile.wire)
    return cause or _beside_bytes(before, rendered, profile, usage, now, lead)


def _simulated(before: Before, rendered: Rendered, profile: ProviderProfile) -> list[Break] | None:
    """The simulator's breaks between the two bodies; None when the previous body is not at hand
    (or was sent on another wire)."""
    if before.body is None or before.wire != profile.wire or "previous_response_id" in rendered.body:
        return None  # a stateful Responses body carries only what is new: not a prefix of the one before
    return prefix_breaks(before.body, rendered.body, profile.wire, profile.cache)


def _in_bytes(before: Before, rendered: Rendered, lead: Break | None, wire: str) -> str | None:
    """The leading break in its words; a compaction's or clearing's edit of the messages is expected."""
    if lead is None or lead.rule == LOOKBACK:
        return _expected(before.changes)
    if lead.rule in MESSAGE_EDITS:
        expected = _expected(before.changes, position(lead))
        if expected is not None:
            return expected
    old = Side(before.body or {}, before.prompt, before.fingerprint)
    new = Side(rendered.body, rendered.prompt, rendered.fingerprint)
    return cause_words(lead, old, new, wire) + position(lead)


def _expected(changes: Sequence[str], where: str = "") -> str | None:
    for kind in ("compaction", "clear"):
        if kind in changes:
            what = "a compaction replaced" if kind == "compaction" else "clearing old tool output changed"
            return f"{what} the conversation (expected: the next request reads the new prefix){where}"
    return None


def _in_fingerprints(before: Before, rendered: Rendered, wire: str) -> str | None:
    """Without the previous body: the first layer whose fingerprint changed, in prefix order."""
    prompt = rendered.prompt
    layers, shared_messages = shared_layers(before.fingerprint, rendered.fingerprint, rendered.chain, before.chain)
    if "tools" not in layers:
        return "tools changed: " + _tools_change(before, prompt)
    if "system" not in layers:
        return "system prompt changed" + _text_change(before.prompt, prompt, 0)
    if "pins" not in layers:
        return "pinned constraints changed" + _text_change(before.prompt, prompt, -1)
    thinking = (before.fingerprint.get("thinking", "default"), rendered.fingerprint.get("thinking", "default"))
    if thinking[0] != thinking[1]:
        effort = _key_effort(thinking[0]) != _key_effort(thinking[1])
        return (
            f"thinking settings changed: {thinking[0]} -> {thinking[1]} ({thinking_consequence(wire, effort=effort)})"
        )
    expected = _expected(before.changes)
    if expected is not None:
        return expected
    count = before.fingerprint.get("messages")
    previous_messages = count if isinstance(count, int) else 0
    if shared_messages < previous_messages - 1:
        return f"message #{shared_messages + 1} changed" + _message_change(before.prompt, prompt, shared_messages)
    return None


def _key_effort(key: object) -> str:
    """The effort a fingerprint's thinking key names (``default//low``: ``low``)."""
    return [*str(key).split("/"), "", ""][2]


def _beside_bytes(
    before: Before, rendered: Rendered, profile: ProviderProfile, usage: Usage, now: float, lead: Break | None
) -> str:
    """What changes nothing in the bytes: the entry's lifetime, the minimum, no breakpoint, the lookback."""
    rules, expected = profile.cache, before.input_tokens or 0
    idle = now - before.at
    if before.body is not None and before.wire == profile.wire:
        gone = expired(before.body, idle, profile.wire, rules)
        if gone is not None:
            return gone.message + position(gone)
    elif idle > profile.lifetime:
        return f"the cache entry expired: {idle:,.0f}s since the previous request (lifetime {profile.lifetime:,.0f}s)"
    if expected < rules.min_tokens:
        return (
            f"below the minimum: the previous request ({expected:,} tokens) is shorter than {profile.model}'s minimum "
            f"cacheable prompt ({rules.min_tokens:,} tokens), so nothing was cached"
        )
    if rules.mode == "explicit" and not rendered.marks:
        mark = profile.wire_format.mark_field
        return f"no cache breakpoint: the request marked nothing to cache ({mark}), so nothing was written"
    if lead is not None and lead.rule == LOOKBACK:
        return f"lookback: {lead.message}{position(lead)}"
    prompt = rendered.prompt
    added = _blocks(prompt.messages) - _blocks(before.prompt.messages) if before.prompt else 0
    if before.body is None and rules.lookback_blocks > 1 and added >= rules.lookback_blocks:
        return (
            f"lookback: {added} new blocks since the previous request; the cache looks back only "
            f"{rules.lookback_blocks}"
        )
    return (
        f"unexplained: read {usage.cache_read_tokens:,} of the {expected:,} tokens the previous request sent, "
        "with an identical prefix (the provider may have evicted the entry)"
    )


def _text_change(before: Prompt | None, prompt: Prompt, index: int) -> str:
    if before is None or not before.system or not prompt.system:
        return ""
    return where_text_changed(before.system[index], prompt.system[index])


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


def _blocks(messages: Sequence[Message]) -> int:
    return sum(len(m.content) for m in messages)
