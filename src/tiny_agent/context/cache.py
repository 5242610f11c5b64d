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


def fingerprint(prompt: Prompt) -> dict[str, Any]:
    """Hashes of a request's prefix layers, in cache order: tools, system, pins, then the messages.

    ``messages`` is a chain (each hash covers every message before it too), so two requests share a
    message prefix exactly as long as their chains agree. Kept on every call record: comparing it
    with the previous request's says which layer changed when a call reads less cache than expected.
    """
    tools = [{"name": t.name, "description": t.description, "schema": dict(t.input_schema)} for t in prompt.tools]
    system = prompt.system[0] if prompt.system and not prompt.system[0].startswith("<constraints>") else ""
    pins = prompt.system[-1] if prompt.system and prompt.system[-1].startswith("<constraints>") else ""
    chain: list[str] = []
    previous = ""
    for message in prompt.messages:
        previous = _digest([previous, message.to_dict()])
        chain.append(previous)
    return {
        "tools": _digest(tools),
        "tool_names": [t.name for t in prompt.tools],
        "system": _digest(system),
        "pins": _digest(pins),
        "messages": chain,
    }


def shared_layers(previous: Mapping[str, Any], current: Mapping[str, Any]) -> tuple[list[str], int]:
    """Which prefix layers two fingerprints share, in cache order, and how many messages.

    The cache reads a prefix, so the walk stops at the first layer that differs: if the system
    prompt changed, nothing after it (pins, messages) can be read, even if it is identical.
    """
    shared: list[str] = []
    for layer in ("tools", "system", "pins"):
        if previous.get(layer) != current.get(layer):
            return shared, 0
        shared.append(layer)
    before, now = list(previous.get("messages") or ()), list(current.get("messages") or ())
    count = 0
    for a, b in zip(before, now, strict=False):
        if a != b:
            break
        count += 1
    return shared, count
