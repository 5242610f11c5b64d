"""What a run's reasoning settings come to on a model, as its requests send them: the output room
the reasoning takes."""

from __future__ import annotations

from tiny_agent.providers.thinking import Thinking, ThinkingCaps, is_on

__all__ = ["REASONING_ROOM", "reasoning_room"]

REASONING_ROOM = 4096
"""Output tokens held for reasoning that no budget bounds (adaptive thinking, DeepSeek, Kimi, OpenAI's
efforts), beside a short answer's own room (a summary call's)."""


def reasoning_room(thinking: Thinking, caps: ThinkingCaps) -> int:
    """The tokens of ``max_tokens`` a request leaves for reasoning beside its answer: every model here
    counts its reasoning inside its output cap. The budget of manual thinking; ``REASONING_ROOM``
    where the model reasons by its own measure; 0 when it does not reason."""
    if thinking.mode == "enabled" and thinking.budget:
        return thinking.budget
    reasons = is_on(thinking, caps) or (caps.effort_only and thinking.mode != "off")
    return REASONING_ROOM if reasons else 0
