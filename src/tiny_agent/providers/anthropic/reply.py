"""Reading an Anthropic Messages answer: the one ``process`` for whole and streamed answers.

A stream's events are folded by ``Accumulator`` into the shape of a whole answer, which ``process``
then reads, so a streamed reply and a whole one give the same ``ModelResponse``. Every shape is
checked (``decode.expect``); a wrong one raises ``ShapeError``, which the adapter's boundary turns
into ``ProviderResponseError``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from tiny_agent.providers.anthropic.compaction import billed_usage, is_compaction, server_compaction
from tiny_agent.providers.decode import ShapeError, count, expect, optional, scrub, tool_input
from tiny_agent.providers.http_errors import response_error
from tiny_agent.providers.reasoning_shown import OMITTED, REDACTED
from tiny_agent.types import (
    Block,
    Message,
    ModelResponse,
    ReasoningBlock,
    RedactedThinkingBlock,
    TextBlock,
    TextDelta,
    ThinkingBlock,
    ThinkingDelta,
    ToolUseBlock,
    Usage,
)

__all__ = ["STOP_REASONS", "Accumulator", "cache_miss_reason", "normalise_usage", "process"]

STOP_REASONS = {
    "end_turn": "end_turn",
    "stop_sequence": "end_turn",
    "tool_use": "tool_use",
    "max_tokens": "max_tokens",
    "model_context_window_exceeded": "max_tokens",
    "refusal": "refusal",
}
"""Anthropic's stop reasons in tiny-agent's words; any other is kept as it is (``pause_turn``)."""


def process(data: Mapping[str, Any], model: str) -> ModelResponse:
    """The one reading of a Messages answer, whole or accumulated from a stream."""
    data = scrub(data)
    blocks: list[Block] = []
    for i, item in enumerate(expect(data.get("content"), list, "'content'")):
        item = expect(item, dict, f"content[{i}]")
        kind = item.get("type")
        # Server-tool blocks are not part of tiny-agent's message model; thinking is, byte for byte.
        if kind == "thinking":
            signature = optional(item.get("signature"), str, f"content[{i}].signature")
            if signature:  # an unsigned block (a cut stream) can never be sent back
                blocks.append(ThinkingBlock(expect(item.get("thinking", ""), str, f"content[{i}].thinking"), signature))
        elif kind == "redacted_thinking":
            blocks.append(RedactedThinkingBlock(expect(item.get("data"), str, f"content[{i}].data")))
        elif is_compaction(item):  # the server's summary: kept raw, sent back byte for byte
            summary = optional(item.get("content"), str, f"content[{i}].content")
            blocks.append(ReasoningBlock(summary or "", dict(item), str(data.get("model") or model)))
        elif kind == "text":
            text = expect(item.get("text"), str, f"content[{i}].text")
            if text.strip():  # the API returns "" beside tool_use; sending it back is a 400
                blocks.append(TextBlock(text))
        elif kind == "tool_use":
            call_id = expect(item.get("id"), str, f"content[{i}].id")
            name = expect(item.get("name"), str, f"content[{i}].name")
            blocks.append(ToolUseBlock(call_id, name, tool_input(item.get("input"))))
    stop = optional(data.get("stop_reason"), str, "'stop_reason'")
    found_model = data.get("model")
    found_id = data.get("id")
    usage = normalise_usage(data.get("usage"))
    compacted = server_compaction(data["content"], data.get("usage"))
    if compacted is not None:  # named on the call line, in the view and in stats
        usage = dataclasses.replace(usage, details={**usage.details, "server_compaction": compacted})
    transformations = data.get("input_transformations")
    if isinstance(transformations, list) and transformations:
        # What the API did to the request's thinking blocks (drop_block): kept on the call record.
        usage = dataclasses.replace(usage, details={**usage.details, "input_transformations": transformations})
    return ModelResponse(
        message=Message("assistant", tuple(blocks)),
        usage=usage,
        stop_reason=STOP_REASONS.get(stop, stop) if stop else "unknown",
        model=found_model if isinstance(found_model, str) else model,
        response_id=found_id if isinstance(found_id, str) else None,
        provider_miss=cache_miss_reason(data.get("diagnostics")),
    )


def cache_miss_reason(diagnostics: object) -> str | None:
    """Anthropic's cache diagnostics (beta) in one phrase: ``system_changed (~1,200 tokens)``; None when
    nothing diverged, or the answer is still being worked out (inconclusive, not a hit)."""
    if not isinstance(diagnostics, Mapping):
        return None
    reason = diagnostics.get("cache_miss_reason")
    if not isinstance(reason, Mapping) or not isinstance(reason.get("type"), str):
        return None
    missed = count(reason.get("cache_missed_input_tokens"))
    return f"{reason['type']}" + (f" (~{missed:,} tokens)" if missed else "")


def normalise_usage(raw: object) -> Usage:
    """Missing, null or partial usage gives None for what is unknown, never a made-up 0. With
    ``iterations`` (a server compaction ran), the counts are their sum: what is billed."""
    if not isinstance(raw, Mapping):
        return Usage()
    raw = billed_usage(raw)
    uncached = count(raw.get("input_tokens"))
    read = count(raw.get("cache_read_input_tokens"))
    write = count(raw.get("cache_creation_input_tokens"))  # llama.cpp's /v1/messages never sends it
    details = raw.get("output_tokens_details")
    return Usage(
        input_tokens=None if uncached is None else uncached + (read or 0) + (write or 0),
        output_tokens=count(raw.get("output_tokens")),
        cache_read_tokens=read,
        cache_write_tokens=write,
        details=dict(raw),
        reasoning_tokens=count(details.get("thinking_tokens")) if isinstance(details, Mapping) else None,
    )


class Accumulator:
    """Stream events folded into the shape of a whole answer, for ``process``.

    Order: ``message_start`` (id, model, input usage), per block ``content_block_start`` / ``_delta``
    / ``_stop``, ``message_delta`` (stop reason, final usage, the thinking blocks the API dropped),
    ``message_stop``."""

    def __init__(self) -> None:
        self.message: dict[str, Any] | None = None
        self.content: list[dict[str, Any] | None] = []
        self.partial_json: dict[int, str] = {}
        self.thought = False
        """Whether some thinking was given out already (a placeholder after it starts a new line)."""

    def feed(self, payload: object) -> list[TextDelta | ThinkingDelta]:
        """Take one event; return the answer or thinking text it adds, if any."""
        event = expect(payload, dict, "a stream event")
        kind = event.get("type")
        if kind == "message_start":
            self.message = dict(expect(event.get("message"), dict, "message_start.message"))
            self.message["usage"] = dict(optional(self.message.get("usage"), dict, "message_start usage") or {})
            return []
        if self.message is None:
            raise ShapeError(f"the stream sent {kind!r} before message_start")
        if kind == "content_block_start":
            index = expect(event.get("index"), int, f"{kind}.index")
            self.content.extend([None] * (index + 1 - len(self.content)))
            self.content[index] = opened = dict(expect(event.get("content_block"), dict, f"{kind}.content_block"))
            return self._placeholder(REDACTED) if opened.get("type") == "redacted_thinking" else []
        if kind == "content_block_stop":
            index = expect(event.get("index"), int, f"{kind}.index")
            block = self.content[index] if index < len(self.content) else None
            # Only at its end is a thinking block known to have streamed no text (display: omitted).
            empty = block is not None and block.get("type") == "thinking" and not block.get("thinking")
            return self._placeholder(OMITTED) if empty else []
        if kind == "content_block_delta":
            added = self._delta(expect(event.get("index"), int, f"{kind}.index"), event.get("delta"))
            return [added] if added is not None else []
        if kind == "message_delta":
            delta = expect(event.get("delta"), dict, "message_delta.delta")
            if delta.get("stop_reason") is not None:
                self.message["stop_reason"] = delta["stop_reason"]
            usage = optional(event.get("usage"), dict, "message_delta.usage") or {}
            self.message["usage"].update({k: v for k, v in usage.items() if v is not None})
            # The blocks the API dropped (drop_block) may come here; when they do they replace
            # message_start's, as the SDK's own accumulator has it.
            if event.get("input_transformations") is not None:
                self.message["input_transformations"] = event["input_transformations"]
        return []  # message_stop and unknown events add nothing

    def _placeholder(self, text: str) -> list[TextDelta | ThinkingDelta]:
        """Thinking with no text to stream, said when it is known, on a line of its own."""
        said, self.thought = self.thought, True
        return [ThinkingDelta("\n" + text if said else text)]

    def _delta(self, index: int, raw: object) -> TextDelta | ThinkingDelta | None:
        delta = expect(raw, dict, "content_block_delta.delta")
        block = self.content[index] if index < len(self.content) else None
        if block is None:
            raise ShapeError(f"a delta for block {index}, which never started")
        if delta.get("type") == "text_delta":
            text = expect(delta.get("text"), str, "text_delta.text")
            block["text"] = expect(block.get("text", ""), str, f"content[{index}].text") + text
            return TextDelta(scrub(text))
        if delta.get("type") == "thinking_delta":
            text = expect(delta.get("thinking"), str, "thinking_delta.thinking")
            block["thinking"] = expect(block.get("thinking", ""), str, f"content[{index}].thinking") + text
            self.thought = self.thought or bool(text)
            return ThinkingDelta(scrub(text))
        if delta.get("type") == "signature_delta":
            piece = expect(delta.get("signature"), str, "signature_delta.signature")
            block["signature"] = expect(block.get("signature", ""), str, f"content[{index}].signature") + piece
            return None
        if delta.get("type") == "compaction_delta":
            # One delta carries the whole block (the SDK's own assembly sets its fields from it).
            block.update({k: v for k, v in delta.items() if k != "type"})
            return None
        if delta.get("type") == "input_json_delta":
            piece = expect(delta.get("partial_json"), str, "input_json_delta.partial_json")
            self.partial_json[index] = self.partial_json.get(index, "") + piece
        return None

    def result(self, provider: str) -> dict[str, Any]:
        """The whole answer; a stream that ended before its stop reason raises (a cut stream)."""
        if self.message is None:
            raise response_error(provider, "the stream ended before its first event")
        if not self.message.get("stop_reason"):
            raise response_error(provider, "the stream ended before the reply did (no stop reason); nothing was kept")
        for index, raw in self.partial_json.items():
            block = self.content[index]
            if block is not None:
                block["input"] = raw  # the whole JSON text; process reads it like any input
        return {**self.message, "content": [b for b in self.content if b is not None]}
