"""A request drawn as the blocks a prompt cache reads, and where two requests first part."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tiny_agent.context.diagnosis import excerpt
from tiny_agent.providers.cache_breaks import shared_blocks
from tiny_agent.providers.first_change import first_change
from tiny_agent.providers.prefix import PrefixBlock, canonical

__all__ = ["block_view", "divergence"]


def block_view(block: PrefixBlock) -> dict[str, Any]:
    return {
        "path": block.path,
        "layer": block.path.split("[")[0],
        "tokens": block.tokens,
        "mark": block.ttl,
        "label": _label(block.data),
    }


def _label(data: Any) -> str:
    """A block in a few words: its type or role and the start of its text."""
    if not isinstance(data, Mapping):
        return str(data)[:80]
    kind = str(data.get("type") or data.get("role") or "")
    text = data.get("text") or data.get("name") or data.get("content") or data.get("tool_use_id") or ""
    if not isinstance(text, str):
        text = canonical(text)
    text = " ".join(text.split())
    return f"{kind}: {text[:80]}{'...' if len(text) > 80 else ''}" if kind else text[:80]


def divergence(before: dict[str, Any], now: dict[str, Any]) -> dict[str, Any] | None:
    """The first block of ``now`` whose prefix key differs from ``before``'s, and the first character
    that differs in it (in its text where both are text, as the miss line counts; else in its JSON)."""
    old, new = before.pop("_blocks"), now.pop("_blocks")
    shared = shared_blocks(old, new)
    old_keys, new_keys = [b.key for b in old], [b.key for b in new]
    for side in (before, now):
        for i, block in enumerate(side["blocks"]):
            block["shared"] = i < shared
    if shared >= len(old_keys):
        return {"block": None, "shared_blocks": shared, "text": "none: this request extends the previous one"}
    if shared >= len(new_keys):
        return {"block": shared, "path": None, "shared_blocks": shared, "text": "this request is a prefix of the last"}
    at, old_text, new_text = first_change(old[shared].data, new[shared].data)
    path = now["blocks"][shared]["path"]
    now["blocks"][shared]["divergence"] = True
    before["blocks"][shared]["divergence"] = True
    return {
        "block": shared,
        "path": path,
        "character": at,
        "shared_blocks": shared,
        "now": excerpt(new_text, at),
        "was": excerpt(old_text, at),
        "text": f"{path} at character {at}",
    }
