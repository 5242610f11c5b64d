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
from collections.abc import Mapping, Sequence
from typing import Any

from tiny_agent.context.tokens import Serialized, canonical
from tiny_agent.types import CachePlan, Message, Prompt

__all__ = [
    "chain_step",
    "fingerprint",
    "head_fingerprint",
    "message_chain",
    "plan_cache",
    "shared_layers",
    "shared_messages",
]


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
    return hashlib.sha256(canonical(payload).encode("utf-8", "surrogatepass")).hexdigest()[:16]


def chain_step(previous: str, text: str) -> str:
    """The chain's hash after a message whose ``canonical`` JSON is ``text``: the digest of
    ``[previous, message]``, built from the message's serialisation instead of serialising it again."""
    return hashlib.sha256(f'["{previous}",{text}]'.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def message_chain(messages: Sequence[Message], texts: Serialized | None = None) -> list[str]:
    """A hash per message that covers every message before it too: two requests share a message
    prefix exactly as long as their chains agree."""
    texts = texts or Serialized()
    chain: list[str] = []
    previous = ""
    for message in messages:
        previous = chain_step(previous, texts.text(message))
        chain.append(previous)
    return chain


def head_fingerprint(prompt: Prompt) -> dict[str, Any]:
    """The prefix layers before the messages: tools, their names, system, pins."""
    tools = [{"name": t.name, "description": t.description, "schema": dict(t.input_schema)} for t in prompt.tools]
    system = prompt.system[0] if prompt.system and not prompt.system[0].startswith("<constraints>") else ""
    pins = prompt.system[-1] if prompt.system and prompt.system[-1].startswith("<constraints>") else ""
    return {
        "tools": _digest(tools),
        "tool_names": [t.name for t in prompt.tools],
        "system": _digest(system),
        "pins": _digest(pins),
    }


def fingerprint(prompt: Prompt, chain: Sequence[str] | None = None) -> dict[str, Any]:
    """Hashes of a request's prefix layers, in cache order: tools, system, pins, then the messages.

    Kept on every call record (a constant size, whatever the length of the conversation: the
    messages as a count and the last hash of their chain). Comparing it with the previous request's
    says which layer changed when a call reads less cache than expected.
    """
    chain = message_chain(prompt.messages) if chain is None else chain
    return {**head_fingerprint(prompt), "messages": len(chain), "chain": chain[-1] if chain else ""}


def shared_layers(
    previous: Mapping[str, Any],
    current: Mapping[str, Any],
    chain: Sequence[str],
    previous_chain: Sequence[str] | None = None,
) -> tuple[list[str], int]:
    """Which prefix layers the request fingerprinted ``current`` (its message chain ``chain``) shares
    with the one fingerprinted ``previous``, in cache order, and how many of its messages (exactly
    where the previous chain is at hand, else all or nothing).

    The cache reads a prefix, so the walk stops at the first layer that differs: if the system
    prompt changed, nothing after it (pins, messages) can be read, even if it is identical.
    """
    shared: list[str] = []
    for layer in ("tools", "system", "pins"):
        if previous.get(layer) != current.get(layer):
            return shared, 0
        shared.append(layer)
    return shared, shared_messages(previous, chain, previous_chain) or 0


def shared_messages(
    previous: Mapping[str, Any], chain: Sequence[str], previous_chain: Sequence[str] | None = None
) -> int | None:
    """How many leading messages a request (its message chain ``chain``) shares with the request
    fingerprinted ``previous``: exactly where the previous chain is at hand, else all of them when the
    fingerprint's chain matches, else None (unknown: the fingerprint cannot say how many)."""
    count = previous.get("messages")
    if isinstance(count, int) and 0 < count <= len(chain) and chain[count - 1] == previous.get("chain"):
        return count
    if previous_chain is None:
        return None
    common = 0
    for a, b in zip(previous_chain, chain, strict=False):
        if a != b:
            break
        common += 1
    return common
