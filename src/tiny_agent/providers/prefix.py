"""A request's prefix as a prompt cache sees it: its blocks in order, canonical bytes, token estimates.

Shared by the billing simulator (``cache_sim``), ``lint`` and anything that fingerprints a prefix:
one definition of what a block is, what its bytes are, and what it is estimated to cost.

The estimator: a block costs ceil(len(canonical JSON) / 4) tokens, where the canonical JSON is the
block without ``cache_control``, keys sorted, no spaces. It is not any provider's tokenizer (Claude's
runs nearer 3.4 characters a token on prose); it is deterministic and the same for every policy, so
ratios between policies are fair.

The blocks, in cache order (tools -> system -> messages): on Anthropic each tool, each system block
and each message content block (a string content counts as one text block); on OpenAI each tool and
each whole message (on the Responses API, each whole input item). A block's key is its role and
canonical JSON: two requests share a prefix up to the first block whose key differs. The marks
(Anthropic's ``cache_control``, OpenAI's ``prompt_cache_breakpoint`` on a content part) are not
part of a block's bytes; an OpenAI message carrying a mark on any of its parts is a breakpoint at
its end (tiny-agent marks the last part).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from tiny_agent.providers.cache_rules import Ttl
from tiny_agent.types import Wire

__all__ = [
    "CHARS_PER_TOKEN",
    "MARK_KEYS",
    "Counter",
    "PrefixBlock",
    "block_tokens",
    "breakpoints",
    "canonical",
    "prefix_blocks",
    "ttls_in_order",
    "without_marks",
]

CHARS_PER_TOKEN = 4
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


def prefix_blocks(body: Mapping[str, Any], wire: Wire, counter: Counter = block_tokens) -> list[PrefixBlock]:
    """The blocks of ``body`` in the order a prefix cache reads them: tools, system, messages;
    ``counter`` gives a block's tokens (this module's estimator by default)."""

    def _block(path: str, data: Any, role: Any) -> PrefixBlock:
        return _counted(path, data, role, counter)

    out = [_block(f"tools[{i}]", t, "tool") for i, t in enumerate(body.get("tools") or [])]
    if wire == "responses":  # each input item whole, as a Chat Completions message
        out.extend(_message_block(f"input[{i}]", m, counter) for i, m in enumerate(body.get("input") or []))
        return out
    if wire == "anthropic":
        system = body.get("system")
        if isinstance(system, str):
            out.append(_block("system", {"type": "text", "text": system}, "system"))
        else:
            out.extend(_block(f"system[{i}]", b, "system") for i, b in enumerate(system or []))
        for i, msg in enumerate(body.get("messages") or []):
            content = msg.get("content")
            if isinstance(content, str):
                out.append(_block(f"messages[{i}].content", {"type": "text", "text": content}, msg.get("role")))
            else:
                out.extend(_block(f"messages[{i}].content[{j}]", b, msg.get("role")) for j, b in enumerate(content))
    else:
        out.extend(_message_block(f"messages[{i}]", m, counter) for i, m in enumerate(body.get("messages") or []))
    return out


def _counted(path: str, data: Any, role: Any, counter: Counter) -> PrefixBlock:
    mark = data.get("cache_control") if isinstance(data, Mapping) else None
    ttl: Ttl | None = None
    if isinstance(mark, Mapping):
        ttl = "1h" if mark.get("ttl") == "1h" else "5m"
    return PrefixBlock(path, data, counter(data), ttl, f"{role}|{canonical(data)}")


def _message_block(path: str, message: Any, counter: Counter) -> PrefixBlock:
    """A whole Chat Completions message; a ``prompt_cache_breakpoint`` on one of its content parts
    makes it a breakpoint. OpenAI's marks take the request's lifetime: "5m" stands for it here, and the
    rules say how long that is (30 minutes on GPT-5.6+)."""
    content = message.get("content") if isinstance(message, Mapping) else None
    if isinstance(message, Mapping) and message.get("type") == "function_call_output":
        content = message.get("output")  # a Responses tool output sent as blocks
    parts = content if isinstance(content, list) else []
    marked = any(isinstance(p, Mapping) and isinstance(p.get("prompt_cache_breakpoint"), Mapping) for p in parts)
    data = without_marks(message) if marked else message
    return PrefixBlock(path, data, counter(data), "5m" if marked else None, f"message|{canonical(data)}")


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
