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

from collections.abc import Sequence

from tiny_agent.types import CachePlan, Message

__all__ = ["plan_cache"]


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
