"""Token accounting: the size of the context now, and what every call so far has cost.

The size of the context is measured, not guessed, wherever a measurement exists: the last
response's usage says exactly how big the prompt was (all input, cached tokens included, plus the
output that is now part of the history). Only what was appended since is estimated, with a
characters-per-token ratio calibrated on the last measured request. The seed's version counted
Anthropic's ``input_tokens`` alone, which shrinks to almost nothing once the cache starts hitting.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from tiny_agent.providers.thinking import EarlierReasoning
from tiny_agent.types import REASONING_BLOCKS, Message, Prompt, ToolSpec, Usage

__all__ = [
    "CallRecord",
    "Serialized",
    "TokenLedger",
    "canonical",
    "head_chars",
    "loop_start",
    "prompt_chars",
    "same_layer",
    "server_compaction",
    "uncounted_reasoning_chars",
]

DEFAULT_CHARS_PER_TOKEN = 4.0


def canonical(payload: Any) -> str:
    """JSON with sorted keys and no spaces: what is hashed for a fingerprint and measured for an estimate."""
    return json.dumps(payload, ensure_ascii=False, sort_keys=True, separators=(",", ":"), default=str)


class Serialized:
    """Each message serialised once (its ``canonical`` JSON), remembered by the message object: a
    conversation re-sends every message on every turn, and each is measured and hashed only once."""

    def __init__(self) -> None:
        self._memo: dict[int, tuple[Message, str]] = {}

    def text(self, message: Message) -> str:
        found = self._memo.get(id(message))
        if found is not None and found[0] is message:
            return found[1]
        text = canonical(message.to_dict())
        self._memo[id(message)] = (message, text)
        return text

    def chars(self, messages: Sequence[Message], *, remember: bool = True) -> int:
        """The length the estimator measures for these messages (as one JSON list); ``remember=False``
        for messages made only to be measured (nothing of them is kept)."""
        if not messages:
            return 0
        measure = self.text if remember else (lambda m: canonical(m.to_dict()))
        return sum(len(measure(m)) for m in messages) + len(messages) + 1


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
    stop_reason: str | None = None
    miss: str | None = None
    """Why this call read less of the prompt cache than the previous request left there, if it did."""
    at: float | None = None
    """When the call finished (Unix time), from its log entry."""
    response_id: str | None = None
    provider_miss: str | None = None
    """The provider's own reason for the miss, where it says (Anthropic's cache diagnostics)."""

    def to_body(self) -> dict[str, Any]:
        """The ``call_done`` entry body fields of this record."""
        return {
            "usage": self.usage.to_dict(),
            "cost_usd": self.cost_usd,
            "seconds": round(self.seconds, 4),
            "model": self.model,
            "prefill_ms": self.prefill_ms,
            "purpose": self.purpose,
            "stop_reason": self.stop_reason,
            "miss": self.miss,
            "response_id": self.response_id,
            "provider_miss": self.provider_miss,
        }

    @staticmethod
    def from_body(body: Mapping[str, Any], at: float | None = None) -> CallRecord:
        cost, prefill = body.get("cost_usd"), body.get("prefill_ms")
        return CallRecord(
            usage=Usage.from_dict(body.get("usage") or {}),
            cost_usd=float(cost) if isinstance(cost, int | float) else None,
            seconds=float(body.get("seconds") or 0.0),
            model=str(body.get("model") or ""),
            prefill_ms=float(prefill) if isinstance(prefill, int | float) else None,
            purpose=str(body.get("purpose") or "turn"),
            stop_reason=body.get("stop_reason"),
            miss=body.get("miss"),
            at=at,
            response_id=body.get("response_id"),
            provider_miss=body.get("provider_miss"),
        )


def server_compaction(usage: Usage) -> tuple[int | None, int | None] | None:
    """The context's size (tokens) before and after the server compaction the call ran, each None
    where the provider did not say; None when it ran none (``usage.details["server_compaction"]``)."""
    found = usage.details.get("server_compaction")
    if not isinstance(found, Mapping):
        return None
    before, after = found.get("tokens_before"), found.get("tokens_after")
    return (before if isinstance(before, int) else None, after if isinstance(after, int) else None)


@dataclass
class TokenLedger:
    """Every call of a run, with totals. Costs that could not be priced stay None, never 0."""

    calls: list[CallRecord] = field(default_factory=list)
    ratios: dict[str, float] = field(default_factory=dict)
    """Characters per token by call purpose, calibrated on each call's rendered length and its
    reported input: a summary request's text must not skew the estimate of the turns'."""
    texts: Serialized = field(default_factory=Serialized, repr=False, compare=False)

    @property
    def chars_per_token(self) -> float:
        """The ratio the turns' estimates use."""
        return self.ratios.get("turn", DEFAULT_CHARS_PER_TOKEN)

    def record(self, call: CallRecord, *, chars: int | None = None) -> None:
        """Add a call; with its request's length, recalibrate that purpose's ratio (on the request
        alone: a server compaction's input sums two passes, the first of which read the request)."""
        self.calls.append(call)
        compacted = server_compaction(call.usage)
        tokens = compacted[0] if compacted is not None else call.usage.input_tokens
        if chars and tokens:
            self.ratios[call.purpose] = max(1.0, chars / tokens)

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
    def miss_disagreements(self) -> int:
        """Calls where the provider's reason for a miss and tiny-agent's name different layers (or only
        one of them saw a divergence in the request)."""
        return sum(1 for c in self.calls if c.provider_miss and not same_layer(c.miss, c.provider_miss))

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

    def estimate(self, messages: Sequence[Message], *, remember: bool = True) -> int:
        """Estimated tokens of these messages at the calibrated ratio (``remember``: see ``Serialized.chars``)."""
        if not messages:
            return 0
        return int(self.texts.chars(messages, remember=remember) / self.chars_per_token) + 1

    def estimate_chars(self, chars: int) -> int:
        """Estimated tokens of a prompt that measures ``chars`` (see ``prompt_chars``)."""
        return int(chars / self.chars_per_token) + 1

    def estimate_prompt(self, prompt: Prompt) -> int:
        """Estimated tokens of a whole prompt (system, tools, messages) at the calibrated ratio."""
        return self.estimate_chars(prompt_chars(prompt, self.texts))


def head_chars(system: Sequence[str], tools: Sequence[ToolSpec]) -> int:
    """The estimator's measure of a prompt's system and tools."""
    specs = [{"name": t.name, "description": t.description, "schema": t.input_schema} for t in tools]
    return len(canonical(list(system))) + len(canonical(specs))


def prompt_chars(prompt: Prompt, texts: Serialized | None = None) -> int:
    """The length the estimator measures for a prompt; the same measure calibrates and estimates."""
    return head_chars(prompt.system, prompt.tools) + (texts or Serialized()).chars(prompt.messages)


def loop_start(messages: Sequence[Message]) -> int:
    """Where the current turn starts: the last user message that is not only tool results (0 if none).
    The assistant messages from there on are the current tool loop."""
    for i in range(len(messages) - 1, -1, -1):
        m = messages[i]
        if m.role == "user" and not _only_results(m):
            return i
    return 0


def _only_results(message: Message) -> bool:
    return bool(message.content) and len(message.tool_results) == len(message.content)


def uncounted_reasoning_chars(messages: Sequence[Message], rule: EarlierReasoning, start: int = 0) -> int:
    """The estimator's measure of the reasoning blocks in ``messages[start:]`` (``start``: where a turn
    starts) that the provider leaves out of its count of the next request, by ``rule``
    (``ProviderProfile.earlier_reasoning``): none ("kept"), all ("none"), the earlier turns' ("stripped":
    the current tool loop's counts), or the earlier turns' that made no tool call ("tool_turns")."""
    if rule == "kept":
        return 0
    end = len(messages) if rule == "none" else max(start, loop_start(messages))
    chars = 0
    for turn in _turns(messages[start:end]):
        if rule == "tool_turns" and any(m.tool_uses for m in turn):
            continue
        for m in turn:
            if m.role == "assistant":
                chars += sum(len(canonical(b.to_dict())) + 1 for b in m.content if isinstance(b, REASONING_BLOCKS))
    return chars


def _turns(messages: Sequence[Message]) -> list[list[Message]]:
    """``messages`` cut where a user message that is not only tool results starts a new turn."""
    turns: list[list[Message]] = []
    for m in messages:
        if not turns or (m.role == "user" and not _only_results(m)):
            turns.append([])
        turns[-1].append(m)
    return turns


_LAYERS = {
    "model_changed": ("model changed",),
    "system_changed": ("system prompt changed", "pinned constraints changed"),
    "tools_changed": ("tools changed",),
    "messages_changed": ("message #", "a compaction", "clearing old tool output"),
    # The Responses API's reasons (prompt_cache_diagnostics)
    "input_changed": ("message #", "a compaction", "clearing old tool output"),
    "context_compacted": ("a compaction",),
    "reasoning_effort_changed": ("effort changed", "thinking settings changed"),
    "verbosity_changed": ("effort changed",),
    "text_format_changed": ("response format changed",),
    "prompt_cache_key_changed": ("cache key changed",),
}
_NO_COMPARISON = frozenset({"previous_message_not_found", "unavailable", "comparison_response_not_found", "cache_miss"})
"""What a provider says when it compared nothing (or gave no reason): nothing to agree or disagree with."""


def same_layer(ours: str | None, theirs: str) -> bool:
    """Whether tiny-agent's cause names the layer the provider's reason does. A reason not known here
    (``service_tier_changed``) names none of ours, so the line shows both."""
    kind = theirs.split(" ", 1)[0]
    if kind in _NO_COMPARISON:
        return True
    prefixes = _LAYERS.get(kind, ())
    return ours is not None and bool(prefixes) and ours.startswith(prefixes)
