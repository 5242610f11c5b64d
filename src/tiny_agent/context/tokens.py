"""Token accounting: the size of the context now, and what every call so far has cost.

The size of the context is measured, not guessed, wherever a measurement exists: the last
response's usage says exactly how big the prompt was (all input, cached tokens included, plus the
output that is now part of the history). Only what was appended since is estimated, with a
characters-per-token ratio calibrated on the last measured request. The seed's version counted
Anthropic's ``input_tokens`` alone, which shrinks to almost nothing once the cache starts hitting.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from tiny_agent.types import Message, Prompt, Usage

__all__ = ["CallRecord", "TokenLedger", "prompt_chars"]

DEFAULT_CHARS_PER_TOKEN = 4.0


@dataclass(frozen=True)
class CallRecord:
    """One model call: its usage, cost and timing."""

    usage: Usage
    cost_usd: float | None
    seconds: float
    model: str
    prefill_ms: float | None = None
    purpose: str = "turn"
    """"turn" for the agent's own calls, "compaction" for summary calls."""


@dataclass
class TokenLedger:
    """Every call of a run, with totals. Costs that could not be priced stay None, never 0."""

    calls: list[CallRecord] = field(default_factory=list)
    chars_per_token: float = DEFAULT_CHARS_PER_TOKEN
    """Calibrated after each call from the rendered request's length and its reported input tokens."""

    def record(self, call: CallRecord, prompt: Prompt | None = None) -> None:
        """Add a call; with its prompt, recalibrate the estimate against the measured input size."""
        self.calls.append(call)
        if prompt is not None and call.usage.input_tokens:
            self.chars_per_token = max(1.0, prompt_chars(prompt) / call.usage.input_tokens)

    @property
    def total(self) -> Usage:
        total = Usage()
        for call in self.calls:
            total = total + call.usage
        return total

    @property
    def total_cost_usd(self) -> float | None:
        """Sum of the priced calls; None if no call could be priced."""
        known = [c.cost_usd for c in self.calls if c.cost_usd is not None]
        return sum(known) if known else None

    @property
    def unpriced_calls(self) -> int:
        return sum(1 for c in self.calls if c.cost_usd is None)

    @property
    def cache_hit_ratio(self) -> float | None:
        """Share of all input tokens that were read from the cache, or None if unknown."""
        total = self.total
        if not total.input_tokens or total.cache_read_tokens is None:
            return None
        return total.cache_read_tokens / total.input_tokens

    def estimate(self, messages: Sequence[Message]) -> int:
        """Estimated tokens of these messages at the calibrated ratio."""
        if not messages:
            return 0
        return int(_chars([m.to_dict() for m in messages]) / self.chars_per_token) + 1

    def estimate_prompt(self, prompt: Prompt) -> int:
        """Estimated tokens of a whole prompt (system, tools, messages) at the calibrated ratio."""
        return int(prompt_chars(prompt) / self.chars_per_token) + 1


def _chars(payload: Any) -> int:
    return len(json.dumps(payload, ensure_ascii=False, default=str))


def prompt_chars(prompt: Prompt) -> int:
    """The length the estimator measures for a prompt; the same measure calibrates and estimates."""
    tools = [{"name": t.name, "description": t.description, "schema": t.input_schema} for t in prompt.tools]
    return _chars(list(prompt.system)) + _chars(tools) + _chars([m.to_dict() for m in prompt.messages])
