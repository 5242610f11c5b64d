"""The reasoning rules of each wire, by wire: one table, so the check of a body with thinking is found
the same way for every wire (``ProviderProfile.finish_check`` and ``lint`` call ``reasoning_problems``)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from tiny_agent.providers.anthropic import thinking as anthropic_thinking
from tiny_agent.providers.openai import reasoning as openai_reasoning

__all__ = ["RULES", "reasoning_problems"]

_CHECKS: Mapping[str, Callable[[Mapping[str, Any], bool], list[str]]] = {
    "anthropic": lambda body, thinks: anthropic_thinking.thinking_problems(body),
    "openai": openai_reasoning.reasoning_problems,
}
RULES: Mapping[str, str] = {**anthropic_thinking.RULES, **openai_reasoning.RULES}
"""Every reasoning rule id -> what it says (``lint`` reports them by id)."""


def reasoning_problems(wire: str, body: Mapping[str, Any], thinks: bool) -> list[str]:
    """What ``wire``'s reasoning rules refuse in ``body``; ``thinks``: the model reasons in this run."""
    check = _CHECKS.get(wire)
    return check(body, thinks) if check is not None else []
