"""Prompt-cache placement: which anchors get a breakpoint.

Prefix caches match byte for byte from the start, so the order is stable content first (tools,
system, pinned constraints), the conversation after. Breakpoints go on anchors that do not move:
the tools, the system block, and the newest message. The newest message is a rolling anchor: the
entry written there this turn is exactly the prefix the next turn extends, so the next turn reads
it. A compaction rewrites the window and starts a new prefix; that miss is expected and reported.
"""

from __future__ import annotations

from collections.abc import Sequence

from tiny_agent.types import CachePlan, Message

__all__ = ["plan_cache"]


def plan_cache(messages: Sequence[Message]) -> CachePlan:
    """Breakpoints on tools, system and the newest message (3 of the 4 Anthropic allows)."""
    return CachePlan(tools=True, system=True, message_indices=(len(messages) - 1,) if messages else ())
