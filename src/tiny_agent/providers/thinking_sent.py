"""What a run's reasoning settings come to on a model, as its requests send them: the switches in
effect (two spellings of one request compare equal) and the output room the reasoning takes inside
``max_tokens`` (a summary call's, ``reasoning_room``; any request's under a budget, ``sent_max_tokens``)."""

from __future__ import annotations

from dataclasses import dataclass

from tiny_agent.providers.thinking import Thinking, ThinkingCaps, is_on, sent_effort

__all__ = ["REASONING_ROOM", "Switches", "reasoning_room", "sent_max_tokens", "sent_switches"]

REASONING_ROOM = 4096
"""Output tokens held for reasoning that no budget bounds (adaptive thinking, DeepSeek, Kimi, OpenAI's
efforts), beside a short answer's own room (a summary call's)."""


@dataclass(frozen=True)
class Switches:
    """The reasoning a request asks of the model, in effect."""

    shape: str
    """``default`` (no switch sent: the model's own default), ``off``; when it thinks, ``on`` where the
    model has no mode or budget to choose, else ``adaptive``, the budget, or ``default`` (a Claude 5
    model left to think by its own default)."""
    display: str | None = None
    effort: str | None = None
    """As sent (an effort-only model's ``--thinking off`` is its off effort)."""
    binding: str = "strict"


def sent_switches(thinking: Thinking, caps: ThinkingCaps) -> Switches:
    """What ``thinking`` asks of a model with ``caps``, however it was spelled: equal switches are the
    same request in effect (DeepSeek's default and ``adaptive`` both mean on). Claude's default and
    ``off`` differ: ``off`` is a switch of its own in the request, which the cache keys on."""
    effort = sent_effort(thinking, caps)
    if not is_on(thinking, caps):
        return Switches("off" if thinking.mode == "off" else "default", effort=effort)
    shape = thinking.label if caps.manual or caps.adaptive else "on"
    if thinking.shapes_default:
        shape = "adaptive"
    return Switches(shape, thinking.display, effort, thinking.binding)


def reasoning_room(thinking: Thinking, caps: ThinkingCaps) -> int:
    """The tokens of ``max_tokens`` a request leaves for reasoning beside its answer: every model here
    counts its reasoning inside its output cap. The budget of manual thinking; ``REASONING_ROOM``
    where the model reasons by its own measure; 0 when it does not reason."""
    if thinking.mode == "enabled" and thinking.budget:
        return thinking.budget
    reasons = is_on(thinking, caps) or (caps.effort_only and thinking.mode != "off")
    return REASONING_ROOM if reasons else 0


def sent_max_tokens(max_tokens: int, thinking: Thinking, caps: ThinkingCaps) -> int:
    """The ``max_tokens`` a request sends for an output cap of ``max_tokens``: a thinking budget counts
    inside it and the API takes one only below it, so a cap at or under the budget gets the budget's
    room beside it and the answer keeps its own, up to the model's output limit (``max_output``). A
    summary call's cap already holds the room."""
    budget = reasoning_room(thinking, caps) if thinking.mode == "enabled" and caps.thinks else 0
    if max_tokens > budget:
        return max_tokens
    return min(max_tokens + budget, caps.max_output) if caps.max_output else max_tokens + budget
