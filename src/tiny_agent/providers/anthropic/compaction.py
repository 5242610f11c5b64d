"""Anthropic's server-side compaction (``compact_20260112``, beta ``compact-2026-01-12``; reasoning
facts, section 5): the request field, the reply's ``compaction`` block, and its usage.

Past the trigger the API summarises the conversation in a pass of its own and opens the assistant
content with a ``compaction`` block (``content`` the summary, or null when it failed;
``encrypted_content`` opaque). The block is kept raw in a ``ReasoningBlock(item=...)`` and goes
back byte for byte. The API drops every message block before the newest compaction block, so every
request starts there: the first message is then the assistant message the block opens. The
top-level usage leaves the compaction pass out; ``usage.iterations`` has both passes, and their sum
is what is billed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from tiny_agent.errors import ConfigError
from tiny_agent.providers.decode import count
from tiny_agent.providers.settings_check import checked_threshold

__all__ = [
    "COMPACTION_BETA",
    "MIN_TRIGGER",
    "billed_usage",
    "checked_trigger",
    "compaction_fields",
    "is_compaction",
    "server_compaction",
    "since_compaction",
]

COMPACTION_BETA = "compact-2026-01-12"
EDIT_TYPE = "compact_20260112"
MIN_TRIGGER = 50_000
"""The smallest trigger the API takes (input tokens)."""
_COUNTS = ("input_tokens", "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")


def checked_trigger(threshold: int | None, model: str) -> int | None:
    """``threshold``, or one line before any call when the API would refuse it (or it is no count)."""
    threshold = checked_threshold(threshold)
    if threshold is not None and threshold < MIN_TRIGGER:
        raise ConfigError(
            f"{model}: the server compacts at {MIN_TRIGGER:,} input tokens at the least, not {threshold:,}"
            " (--server-compact-at)"
        )
    return threshold


def compaction_fields(threshold: int | None) -> dict[str, Any]:
    """The ``context_management`` field that asks for compaction past ``threshold`` input tokens."""
    if not threshold:
        return {}
    trigger = {"type": "input_tokens", "value": threshold}
    return {"context_management": {"edits": [{"type": EDIT_TYPE, "trigger": trigger}]}}


def asks_compaction(body: Mapping[str, Any]) -> bool:
    management = body.get("context_management")
    edits = management.get("edits") if isinstance(management, Mapping) else None
    return any(isinstance(e, Mapping) and e.get("type") == EDIT_TYPE for e in edits or ())


def is_compaction(block: object) -> bool:
    """A Messages ``compaction`` block (a Responses compaction item has an ``id`` and no ``content``)."""
    return isinstance(block, Mapping) and block.get("type") == "compaction" and "content" in block


def since_compaction(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The messages from the newest compaction block on, that message's blocks before it left out. A
    failed one (``content`` null) is a no-op: it stands for nothing, and stays where it is."""
    for i in range(len(messages) - 1, -1, -1):
        content = messages[i].get("content")
        if not isinstance(content, list):
            continue
        found = (j for j in range(len(content) - 1, -1, -1) if is_compaction(content[j]) and content[j]["content"])
        at = next(found, None)
        if at is not None:
            return [{**messages[i], "content": content[at:]}, *messages[i + 1 :]]
    return messages


def billed_usage(raw: Mapping[str, Any]) -> Mapping[str, Any]:
    """The usage to bill: with ``iterations``, their sum (the top-level counts leave the compaction
    pass out); otherwise ``raw`` as it is."""
    iterations = [i for i in raw.get("iterations") or () if isinstance(i, Mapping)]
    if not iterations:
        return raw
    summed: dict[str, Any] = dict(raw)
    for key in _COUNTS:
        values = [count(i.get(key)) for i in iterations]
        if any(v is not None for v in values):
            summed[key] = sum(v or 0 for v in values)
    creations = [c for c in (i.get("cache_creation") for i in iterations) if isinstance(c, Mapping)]
    if len(creations) == len(iterations):
        keys = sorted({k for c in creations for k in c})
        summed["cache_creation"] = {k: sum(count(c.get(k)) or 0 for c in creations) for k in keys}
    return summed


def server_compaction(content: Sequence[Any], raw_usage: object) -> dict[str, int | None] | None:
    """The context's size before and after a server compaction the reply carries (None: none ran):
    the compaction pass's input, and the message pass's (the summary and what follows it)."""
    if not any(is_compaction(b) for b in content):
        return None
    iterations = raw_usage.get("iterations") if isinstance(raw_usage, Mapping) else None
    passes = [i for i in iterations or () if isinstance(i, Mapping)]
    sizes = {str(i.get("type")): _input(i) for i in passes}
    return {"tokens_before": sizes.get("compaction"), "tokens_after": sizes.get("message")}


def _input(iteration: Mapping[str, Any]) -> int | None:
    parts = [
        count(iteration.get(k)) for k in ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")
    ]
    return None if parts[0] is None else sum(p or 0 for p in parts)
