"""The reasoning rules of each wire, by wire: one table, so the check of a body with thinking is found
the same way for every wire (``ProviderProfile.finish_check`` and ``lint`` call ``reasoning_problems``;
``lint`` feeds a sequence of bodies to ``reasoning_sequence``)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

from tiny_agent.providers.anthropic import binding as anthropic_binding
from tiny_agent.providers.anthropic import resent as anthropic_resent
from tiny_agent.providers.anthropic import thinking as anthropic_thinking
from tiny_agent.providers.openai import reasoning as openai_reasoning
from tiny_agent.providers.thinking import NO_THINKING, Thinking, ThinkingCaps
from tiny_agent.providers.thinking_caps import thinking_caps

__all__ = ["RULES", "Sequenced", "body_problems", "reasoning_problems", "reasoning_sequence", "sent_thinking"]


class Sequenced(Protocol):
    """A wire's reasoning rules over a sequence of bodies: ``feed`` each in order, hear what it refuses
    in that body given the accepted ones before it (each problem starts with its rule id); ``accepted``:
    the API took the body (a refused one is checked, not held against the next)."""

    def feed(self, body: Mapping[str, Any], model: str, accepted: bool = True) -> list[str]: ...


class _NoRules:
    def feed(self, body: Mapping[str, Any], model: str, accepted: bool = True) -> list[str]:
        return []


_CHECKS: Mapping[str, Callable[[Mapping[str, Any], bool | None, ThinkingCaps], list[str]]] = {
    "anthropic": lambda body, thinks, caps: anthropic_thinking.thinking_problems(
        body, unasked=caps.default_on and not caps.own_measure
    ),
    "openai": openai_reasoning.reasoning_problems,
}
_SEQUENCES: Mapping[str, Callable[[], Sequenced]] = {"anthropic": anthropic_resent.Resent}
_RENDERED: Mapping[str, Callable[[Thinking, ThinkingCaps, Sequence[Any]], Thinking]] = {
    "anthropic": anthropic_thinking.rendered_thinking
}
RULES: Mapping[str, str] = {
    **anthropic_thinking.RULES,
    **anthropic_binding.RULES,
    **anthropic_resent.RULES,
    **openai_reasoning.RULES,
}
"""Every reasoning rule id -> what it says (``lint`` reports them by id)."""


def reasoning_problems(
    wire: str, body: Mapping[str, Any], thinks: bool | None, caps: ThinkingCaps = NO_THINKING
) -> list[str]:
    """What ``wire``'s reasoning rules refuse in ``body`` for a model with ``caps``; ``thinks``: the model
    reasons in this run (None: read from the body and ``caps``)."""
    check = _CHECKS.get(wire)
    return check(body, thinks, caps) if check is not None else []


def body_problems(wire: str, body: Mapping[str, Any], model: str) -> list[str]:
    """What ``wire``'s reasoning rules refuse in a body seen on its own (``lint``): the model's declared
    capabilities, and whether it thinks read from the body's own switch, else the model's default."""
    return reasoning_problems(wire, body, None, thinking_caps(wire, model, wire))


def reasoning_sequence(wire: str) -> Sequenced:
    """``wire``'s rules over a sequence of bodies (none on a wire that has none)."""
    return _SEQUENCES.get(wire, _NoRules)()


def sent_thinking(wire: str, body: Mapping[str, Any], thinking: Thinking, caps: ThinkingCaps) -> Thinking:
    """The settings ``body`` was rendered with for ``thinking``: off where ``wire`` holds thinking back
    for this request (Claude's, inside a tool loop begun without it), else ``thinking``."""
    rendered = _RENDERED.get(wire)
    return rendered(thinking, caps, body.get("messages") or []) if rendered is not None else thinking
