"""A request's prefix as a prompt cache sees it: its blocks in order, canonical bytes, token estimates.

Shared by the billing simulator (``cache_sim``), ``lint`` and anything that fingerprints a prefix:
one definition of what a block is, what its bytes are, and what it is estimated to cost.

The estimator: a block costs ceil(len(canonical JSON) / 4) tokens, where the canonical JSON is the
block without ``cache_control``, keys sorted, no spaces. It is not any provider's tokenizer (Claude's
runs nearer 3.4 characters a token on prose); it is deterministic and the same for every policy, so
ratios between policies are fair.

The blocks, in cache order (tools -> system -> messages): on Anthropic each tool, each system block
and each message content block (a string content counts as one text block); on OpenAI each tool and
each whole message. A block's key is its role and canonical JSON: two requests share a prefix up to
the first block whose key differs. The marks (Anthropic's ``cache_control``, OpenAI's
``prompt_cache_breakpoint`` on a content part) are not part of a block's bytes; an OpenAI message
carrying a mark on any of its parts is a breakpoint at its end (tiny-agent marks the last part).
Which blocks a body has is its wire's to say (``WireFormat.prefix_blocks``, or ``providers.wire.prefix_blocks``
by the wire's name); this module holds what every wire's blocks share.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from tiny_agent.providers.cache_rules import Ttl

__all__ = [
    "CHARS_PER_TOKEN",
    "MARK_KEYS",
    "CacheMarks",
    "Counter",
    "Layer",
    "PrefixBlock",
    "SimulationError",
    "block_tokens",
    "breakpoints",
    "canonical",
    "counted_block",
    "tool_blocks",
    "ttls_in_order",
    "without_marks",
]

CHARS_PER_TOKEN = 4
Layer = Literal["tools", "system", "messages"]
Counter = Callable[[Any], int]
"""Tokens of one block of a request."""

MARK_KEYS = frozenset({"cache_control", "prompt_cache_breakpoint"})
"""The cache markers of both wires: Anthropic's on blocks, OpenAI's (GPT-5.6+) on content parts."""


def without_marks(data: Any) -> Any:
    """A body (or any part of one) without its cache markers (``cache_control``,
    ``prompt_cache_breakpoint``), which move to the newest message on every request: what two
    requests must share for one to extend the other's prefix."""
    if isinstance(data, Mapping):
        return {k: without_marks(v) for k, v in data.items() if k not in MARK_KEYS}
    if isinstance(data, list):
        return [without_marks(v) for v in data]
    return data


def canonical(block: Any) -> str:
    """The block as the cache sees it: without ``cache_control``, keys sorted, compact."""
    if isinstance(block, Mapping):
        block = {k: v for k, v in block.items() if k != "cache_control"}
    return json.dumps(block, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def block_tokens(block: Any) -> int:
    """The estimator: ceil(characters of the canonical JSON / 4), at least 1."""
    return max(1, math.ceil(len(canonical(block)) / CHARS_PER_TOKEN))


@dataclass(frozen=True)
class PrefixBlock:
    """One block of a request's prefix, in cache order."""

    path: str
    """JSON path in the body, e.g. ``messages[3].content[0]``."""
    data: Any
    tokens: int
    ttl: Ttl | None
    """The breakpoint's TTL if the block carries ``cache_control``, else None."""
    key: str
    """What the block contributes to the prefix hash (its role and canonical JSON)."""
    layer: Layer = "messages"
    """Which part of the prefix it is in: the tools, the system prompt (on OpenAI's wire, the leading
    system and developer messages), or the conversation."""


@dataclass(frozen=True)
class CacheMarks:
    """A request's breakpoints as a cache reads and writes them: (block index, TTL) pairs in order."""

    all: list[tuple[int, Ttl]]
    read: list[tuple[int, Ttl]]
    """The breakpoints a read tries (OpenAI GPT-5.6+: the latest 80)."""
    written: list[tuple[int, Ttl]]
    implicit: int = -1
    """The block of a breakpoint the provider adds itself, read without a lookback limit (-1: none)."""


class SimulationError(ValueError):
    """The request would be rejected by the provider (too many breakpoints, TTLs out of order)."""


def counted_block(path: str, data: Any, role: Any, counter: Counter, layer: Layer) -> PrefixBlock:
    """The block at ``path``: its tokens by ``counter``, its TTL if it carries ``cache_control``."""
    mark = data.get("cache_control") if isinstance(data, Mapping) else None
    ttl: Ttl | None = None
    if isinstance(mark, Mapping):
        ttl = "1h" if mark.get("ttl") == "1h" else "5m"
    return PrefixBlock(path, data, counter(data), ttl, f"{role}|{canonical(data)}", layer)


def tool_blocks(body: Mapping[str, Any], counter: Counter) -> list[PrefixBlock]:
    """The tools, first in every wire's prefix."""
    return [counted_block(f"tools[{i}]", t, "tool", counter, "tools") for i, t in enumerate(body.get("tools") or [])]


def breakpoints(body: Mapping[str, Any], blocks: list[PrefixBlock]) -> list[tuple[int, Ttl]]:
    """(block index, TTL) of every cache breakpoint, in order; a top-level ``cache_control`` (Anthropic's
    automatic caching) marks the last block."""
    marks: list[tuple[int, Ttl]] = [(i, b.ttl) for i, b in enumerate(blocks) if b.ttl]
    auto = body.get("cache_control")
    if isinstance(auto, Mapping) and blocks:
        marks.append((len(blocks) - 1, "1h" if auto.get("ttl") == "1h" else "5m"))
    return sorted(marks)


def ttls_in_order(marks: list[tuple[int, Ttl]]) -> bool:
    """Anthropic's rule: every 1h breakpoint comes before every 5m one."""
    ttls = [t for _, t in marks]
    return "1h" not in ttls or "5m" not in ttls[: len(ttls) - ttls[::-1].index("1h")]
