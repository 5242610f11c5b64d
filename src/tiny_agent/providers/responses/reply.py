"""Reading a Responses API answer: the one ``process`` for whole and streamed answers.

The answer's ``output`` is a list of items, decoded in order into one assistant message: a
``message`` item's text becomes a ``TextBlock`` (its ``phase`` kept), a ``function_call`` a
``ToolUseBlock`` whose id is the item's ``call_id``, and a ``reasoning`` or ``compaction`` item a
``ReasoningBlock`` holding the item exactly as received, with the model that wrote it (its
encrypted content can only be read by that model). Usage: ``input_tokens`` is the whole prompt,
cached tokens included; the cache read and write are in ``input_tokens_details``, the reasoning in
``output_tokens_details.reasoning_tokens`` (already part of ``output_tokens``). The server's own
cache-miss reason (``prompt_cache_diagnostics``) becomes ``ModelResponse.provider_miss``.

A stream's events are folded by ``Accumulator``: the ``response.completed`` event carries the
whole response, which ``process`` then reads, so a stream and a whole answer give the same reply.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tiny_agent.providers.decode import ShapeError, count, expect, optional, scrub, tool_input
from tiny_agent.providers.http_errors import response_error
from tiny_agent.providers.reasoning_shown import shown_reasoning
from tiny_agent.types import (
    Block,
    Message,
    ModelResponse,
    ReasoningBlock,
    TextBlock,
    TextDelta,
    ThinkingDelta,
    ToolUseBlock,
    Usage,
)

__all__ = ["OPAQUE_ITEMS", "Accumulator", "cache_miss_reason", "normalise_usage", "process"]

OPAQUE_ITEMS = frozenset({"reasoning", "compaction"})
"""Output items kept raw in a ``ReasoningBlock`` and sent back as received."""


def process(data: Mapping[str, Any], model: str) -> ModelResponse:
    """The one reading of a Responses answer, whole or accumulated from a stream."""
    data = scrub(data)
    found_model = data.get("model")
    writer = found_model if isinstance(found_model, str) else model
    blocks: list[Block] = []
    for i, raw in enumerate(expect(data.get("output"), list, "'output'")):
        item = expect(raw, dict, f"output[{i}]")
        kind = item.get("type")
        if kind == "message":
            phase = optional(item.get("phase"), str, f"output[{i}].phase") or ""
            for j, part in enumerate(optional(item.get("content"), list, f"output[{i}].content") or []):
                part = expect(part, dict, f"output[{i}].content[{j}]")
                text = part.get("text") if part.get("type") == "output_text" else part.get("refusal")
                if isinstance(text, str) and text.strip():
                    blocks.append(TextBlock(text, phase=phase))
        elif kind == "function_call":
            call_id = expect(item.get("call_id"), str, f"output[{i}].call_id")
            name = expect(item.get("name"), str, f"output[{i}].name")
            blocks.append(ToolUseBlock(call_id, name, tool_input(item.get("arguments"))))
        elif kind in OPAQUE_ITEMS:
            summary = optional(item.get("summary"), list, f"output[{i}].summary") or []
            text = "\n".join(p.get("text", "") for p in summary if isinstance(p, Mapping))
            blocks.append(ReasoningBlock(text, dict(item), writer))
    found_id = data.get("id")
    return ModelResponse(
        message=Message("assistant", tuple(blocks)),
        usage=normalise_usage(data.get("usage")),
        stop_reason=_stop_reason(data, blocks),
        model=writer,
        response_id=found_id if isinstance(found_id, str) else None,
        provider_miss=cache_miss_reason(data.get("prompt_cache_diagnostics")),
    )


def _stop_reason(data: Mapping[str, Any], blocks: list[Block]) -> str:
    status = data.get("status")
    if status == "incomplete":
        details = data.get("incomplete_details")
        reason = details.get("reason") if isinstance(details, Mapping) else None
        return "max_tokens" if reason in (None, "max_output_tokens") else "refusal"
    if any(isinstance(b, ToolUseBlock) for b in blocks):
        return "tool_use"
    return "end_turn" if status in (None, "completed") else str(status)


def cache_miss_reason(diagnostics: object) -> str | None:
    """The server's reason for a miss (``prompt_cache_diagnostics.reason``), or its type when the
    comparison could not be made; None on a hit or when no diagnosis was asked for."""
    if not isinstance(diagnostics, Mapping):
        return None
    kind = diagnostics.get("type")
    if kind == "cache_miss":
        reason = diagnostics.get("reason")
        return reason if isinstance(reason, str) else "cache_miss"
    return kind if isinstance(kind, str) and kind != "cache_hit" else None


def normalise_usage(raw: object) -> Usage:
    """Missing, null or partial usage gives None for what is unknown, never a made-up 0."""
    if not isinstance(raw, Mapping):
        return Usage()
    details = raw.get("input_tokens_details")
    details = details if isinstance(details, Mapping) else {}
    out = raw.get("output_tokens_details")
    out = out if isinstance(out, Mapping) else {}
    return Usage(
        input_tokens=count(raw.get("input_tokens")),
        output_tokens=count(raw.get("output_tokens")),
        cache_read_tokens=count(details.get("cached_tokens")),
        cache_write_tokens=count(details.get("cache_write_tokens")),
        details=dict(raw),
        reasoning_tokens=count(out.get("reasoning_tokens")),
    )


class Accumulator:
    """Stream events folded into the whole response, for ``process``.

    ``response.output_text.delta`` carries the text as it comes; ``response.output_item.done`` each
    finished item; ``response.completed`` (or ``response.incomplete``) the whole response. A stream
    that ends before one of those two was cut: nothing of it is kept."""

    def __init__(self) -> None:
        self.items: list[dict[str, Any]] = []
        self.final: dict[str, Any] | None = None
        self.started = False
        self.summarised: set[object] = set()
        """The reasoning items whose summary (or placeholder) was given out."""

    def feed(self, payload: object) -> list[TextDelta | ThinkingDelta]:
        event = expect(payload, dict, "a stream event")
        self.started = True
        kind = event.get("type")
        if kind == "response.output_text.delta":
            return [TextDelta(scrub(optional(event.get("delta"), str, "a text delta") or ""))]
        if kind == "response.reasoning_summary_text.delta":  # the readable part of a reasoning item
            self.summarised.add(event.get("item_id"))
            return [ThinkingDelta(scrub(optional(event.get("delta"), str, "a reasoning summary delta") or ""))]
        if kind == "response.output_item.done":
            item = expect(event.get("item"), dict, "a finished item")
            self.items.append(item)
            return self._unsummarised(item)
        if kind in ("response.completed", "response.incomplete"):
            self.final = expect(event.get("response"), dict, "the completed response")
        elif kind in ("response.failed", "error"):
            raise ShapeError(f"the stream failed: {_error_text(event)}")
        return []

    def _unsummarised(self, item: Mapping[str, Any]) -> list[TextDelta | ThinkingDelta]:
        """A finished reasoning item whose summary did not stream: what it shows (its placeholder,
        mostly), before the message items that follow it."""
        if item.get("type") != "reasoning" or item.get("id") in self.summarised:
            return []
        said = bool(self.summarised)
        self.summarised.add(item.get("id"))
        shown = shown_reasoning(ReasoningBlock(item=item)) or ""
        return [ThinkingDelta(scrub("\n" + shown if said else shown))]

    def result(self, provider: str) -> dict[str, Any]:
        if not self.started:
            raise response_error(provider, "the stream ended before its first event")
        if self.final is None:
            raise response_error(
                provider, "the stream ended before the reply did (no response.completed); nothing was kept"
            )
        if not self.final.get("output") and self.items:
            return {**self.final, "output": self.items}  # some servers leave the items out of the last event
        return self.final


def _error_text(event: Mapping[str, Any]) -> str:
    response = event.get("response")
    error = response.get("error") if isinstance(response, Mapping) else event.get("error", event)
    message = error.get("message") if isinstance(error, Mapping) else None
    return str(message or error)
