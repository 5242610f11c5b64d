"""Preserved thinking across requests: each block is bound to the prefix it was made on (system + tools
+ every message and block before it, cache marks aside). A later request that sends it after another
prefix is refused, "bound to a different conversation", and so is every thinking block after it;
unless the request asks for them to be dropped (``drop_block``). Reasoning facts, section 1.

One body cannot show this (a signature is opaque); a sequence can: the first body that holds a block
holds it after the prefix it was made on. ``lint`` feeds a sequence's bodies in order (``resent.Resent``).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Mapping
from typing import Any

from tiny_agent.providers.anthropic.thinking import THINKING_TYPES
from tiny_agent.providers.thinking_caps import thinking_caps
from tiny_agent.providers.wire import prefix_blocks

__all__ = ["RULES", "Bindings"]

RULES = {"thinking-rebound": "a thinking block goes back only after the prefix it was made on"}


class Bindings:
    """The prefix each thinking block was first sent after, over a sequence of bodies."""

    def __init__(self) -> None:
        self._made_on: dict[str, str] = {}

    def feed(self, body: Mapping[str, Any], model: str, accepted: bool = True) -> list[str]:
        """The first thinking block of ``body`` that an earlier body held after another prefix, on a
        model whose blocks are bound to it (the API refuses it and every later block); else empty.
        ``accepted``: the API took ``body``; a refused one sent no block anywhere, so is not remembered."""
        blocks = list(_bound(body))
        problems = [] if _unbound(body, model) else _rebound(blocks, self._made_on)
        for key, _, prefix in blocks if accepted else ():
            self._made_on.setdefault(key, prefix)
        return problems


def _unbound(body: Mapping[str, Any], model: str) -> bool:
    """No block of ``body`` is refused for its prefix: the model does not bind them, or the request
    asks for such blocks to be dropped (the answer lists them in ``input_transformations``)."""
    config = body.get("thinking")
    binding = config.get("block_binding") if isinstance(config, Mapping) else None
    if isinstance(binding, Mapping) and binding.get("prefix_mismatch_behavior") == "drop_block":
        return True
    return not thinking_caps("anthropic", model, "anthropic").preserved


def _rebound(blocks: list[tuple[str, str, str]], made_on: Mapping[str, str]) -> list[str]:
    for key, path, prefix in blocks:
        if made_on.get(key, prefix) != prefix:
            return [
                f"thinking-rebound: {path} follows another prefix than when it was first sent: the block is "
                "bound to the prefix it was made on, so the API refuses it (and every later thinking block)"
            ]
    return []


def _bound(body: Mapping[str, Any]) -> Iterator[tuple[str, str, str]]:
    """(a hash of the block, its path, a hash of everything before it) of each thinking block of ``body``."""
    running = hashlib.sha256()
    for block in prefix_blocks(body, "anthropic", lambda _: 0):
        key = block.key.encode("utf-8", "surrogatepass")
        if isinstance(block.data, Mapping) and block.data.get("type") in THINKING_TYPES:
            yield hashlib.sha256(key).hexdigest(), block.path, running.hexdigest()
        running.update(key)
