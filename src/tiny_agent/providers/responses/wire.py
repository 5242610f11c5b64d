"""What a wire object needs of the Responses API, in one place: a body's prefix blocks (for the
billing simulator, ``lint`` and the miss diagnosis), its check, telling such a body from the
other wires', and a session exported as a request body.

A body's blocks in cache order: each tool, then each ``input`` item whole (the developer item
first); an item with a ``prompt_cache_breakpoint`` on one of its blocks is a breakpoint at its end.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from tiny_agent.providers import prefix
from tiny_agent.providers.prefix import Counter, PrefixBlock, block_tokens
from tiny_agent.providers.responses.check import ResponsesCheck, check_responses_body, count_breakpoints
from tiny_agent.types import Message

__all__ = ["ResponsesCheck", "check_responses_body", "count_marks", "export_request", "is_body", "prefix_blocks"]

SETTINGS = ("reasoning", "text", "parallel_tool_calls", "prompt_cache_key", "context_management")
"""Top-level fields that change the cached prefix (the caching guide's list; ``tool_choice`` is the
guide's way to keep it): the simulator seeds its prefix hash with them, a change of any is a miss."""


def prefix_blocks(body: Mapping[str, Any], counter: Counter = block_tokens) -> list[PrefixBlock]:
    return prefix.prefix_blocks(body, "responses", counter)


def count_marks(body: Mapping[str, Any]) -> int:
    raw = body.get("input")
    return count_breakpoints(x for x in raw if isinstance(x, Mapping)) if isinstance(raw, list) else 0


def is_body(body: Mapping[str, Any]) -> bool:
    """Whether ``body`` is a ``responses.create`` body (an ``input``, no ``messages``)."""
    return "input" in body and "messages" not in body


def export_request(model: str, system: str, messages: Sequence[Message]) -> dict[str, Any]:
    """A session as one stateless ``responses.create`` body (what ``export --format responses`` writes):
    every item as the log holds it, for ``model``."""
    from tiny_agent.providers.responses.items import render_message, system_item

    dropped: dict[str, int] = {}
    items = [system_item(system)] if system else []
    for message in messages:
        items.extend(render_message(message, model, dropped, parts=False))
    return {"model": model, "input": items, "store": False, "include": ["reasoning.encrypted_content"]}
