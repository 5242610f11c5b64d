"""Prompt-cache placement: which anchors get a breakpoint.

Prefix caches match byte for byte from the start, so the order is stable content first (tools,
system, pinned constraints), the conversation after. Breakpoints go on anchors that do not move:
the tools, the system block, the newest message, and where the previous request ended. The newest
message is a rolling anchor: the entry written there this turn is exactly the prefix the next turn
extends, so the next turn reads it. Below a model's minimum cacheable length (1,024 to 4,096
tokens on Anthropic) nothing is written at all, silently; the per-turn line shows it as
cache_write=0. A compaction rewrites the window and starts a new prefix; that miss is expected.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import Any

from tiny_agent.types import CachePlan, Message, Prompt

__all__ = ["fingerprint", "plan_cache", "shared_layers"]


def plan_cache(messages: Sequence[Message]) -> CachePlan:
    """Breakpoints on tools, system, the newest message, and where the previous request ended.

    The second message mark matters when one turn adds many blocks: Anthropic looks back only 20
    blocks from a breakpoint, so a turn with ten parallel calls would otherwise never find the
    entry the previous request wrote. Four marks in all, Anthropic's limit.
    """
    if not messages:
        return CachePlan()
    last = len(messages) - 1
    marks = (last - 2, last) if last >= 2 and messages[last - 1].role == "assistant" else (last,)
    return CachePlan(tools=True, system=True, message_indices=marks)


def _digest(payload: Any) -> str:
    text = json.dumps(payload, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def message_chain(messages: Sequence[Message]) -> list[str]:
    """A hash per message that covers every message before it too: two requests share a message
    prefix exactly as long as their chains agree."""
    chain: list[str] = []
    previous = ""
    for message in messages:
        previous = _digest([previous, message.to_dict()])
        chain.append(previous)
    return chain


def fingerprint(prompt: Prompt) -> dict[str, Any]:
    """Hashes of a request's prefix layers, in cache order: tools, system, pins, then the messages.

    Kept on every call record (a constant size, whatever the length of the conversation: the
    messages as a count and the last hash of their chain). Comparing it with the previous request's
    says which layer changed when a call reads less cache than expected.
    """
    tools = [{"name": t.name, "description": t.description, "schema": dict(t.input_schema)} for t in prompt.tools]
    system = prompt.system[0] if prompt.system and not prompt.system[0].startswith("<constraints>") else ""
    pins = prompt.system[-1] if prompt.system and prompt.system[-1].startswith("<constraints>") else ""
    chain = message_chain(prompt.messages)
    return {
        "tools": _digest(tools),
        "tool_names": [t.name for t in prompt.tools],
        "system": _digest(system),
        "pins": _digest(pins),
        "messages": len(chain),
        "chain": chain[-1] if chain else "",
    }


def shared_layers(
    previous: Mapping[str, Any], current: Prompt, previous_messages: Sequence[Message] | None = None
) -> tuple[list[str], int]:
    """Which prefix layers ``current`` shares with the request ``previous`` fingerprints, in cache
    order, and how many of its messages (exactly where the previous messages are at hand, else all
    or nothing).

    The cache reads a prefix, so the walk stops at the first layer that differs: if the system
    prompt changed, nothing after it (pins, messages) can be read, even if it is identical.
    """
    now = fingerprint(current)
    shared: list[str] = []
    for layer in ("tools", "system", "pins"):
        if previous.get(layer) != now.get(layer):
            return shared, 0
        shared.append(layer)
    count = previous.get("messages")
    chain = message_chain(current.messages)
    if isinstance(count, int) and 0 < count <= len(chain) and chain[count - 1] == previous.get("chain"):
        return shared, count
    if previous_messages is None:
        return shared, 0
    common = 0
    for a, b in zip(message_chain(previous_messages), chain, strict=False):
        if a != b:
            break
        common += 1
    return shared, common
