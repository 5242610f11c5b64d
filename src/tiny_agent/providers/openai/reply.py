"""Reading a Chat Completions answer: the one ``process`` for whole and streamed answers.

A stream's chunks are folded by ``Accumulator`` into the shape of a whole ``chat.completion``,
which ``process`` then reads, so a streamed reply and a whole one give the same ``ModelResponse``.
The endpoints' usage quirks are read here in one place (``normalise_usage``): the cached part of the
prompt is ``prompt_tokens_details.cached_tokens`` (OpenAI, llama.cpp), DeepSeek's
``prompt_cache_hit_tokens`` (with ``prompt_cache_miss_tokens`` the rest of the prompt), or Moonshot's
top-level ``cached_tokens`` (Kimi K2.5 reports ``prompt_tokens_details.cached_tokens``: both are
read); GPT-5.6+ report their writes in ``prompt_tokens_details.cache_write_tokens``; llama.cpp also
reports how long it spent reading the prompt in ``timings.prompt_ms``.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import Any

from tiny_agent.providers.decode import (
    AnswerText,
    ShapeError,
    count,
    expect,
    optional,
    scrub,
    scrub_blocks,
    tool_input,
)
from tiny_agent.providers.http_errors import response_error
from tiny_agent.providers.openai import json_tools
from tiny_agent.providers.openai.reasoning import reasoning_of
from tiny_agent.types import Block, Message, ModelResponse, TextBlock, TextDelta, ThinkingDelta, ToolUseBlock, Usage

__all__ = ["FINISH_REASONS", "Accumulator", "normalise_usage", "process"]

FINISH_REASONS = {
    "stop": "end_turn",
    "tool_calls": "tool_use",
    "function_call": "tool_use",
    "length": "max_tokens",
    "content_filter": "refusal",
}
"""Chat Completions' finish reasons in tiny-agent's words; any other is kept as it is."""


def process(data: Mapping[str, Any], model: str, *, json_tools_mode: bool = False) -> ModelResponse:
    """The one reading of a Chat Completions answer, whole or accumulated from a stream.

    ``json_tools_mode``: the reply is the JSON of ``json_tools`` (a tool call or an answer)."""
    data = scrub(data)
    choices = expect(data.get("choices"), list, "'choices'")
    if not choices:
        raise ShapeError("the answer has no choices")
    choice = expect(choices[0], dict, "choices[0]")
    message = expect(choice.get("message"), dict, "choices[0].message")
    text = _text(message.get("content"))
    found_model = data.get("model")
    reasoning = reasoning_of(message, found_model if isinstance(found_model, str) else model)
    blocks: list[Block] = [TextBlock(text)] if text else []
    for j, raw in enumerate(optional(message.get("tool_calls"), list, "message.tool_calls") or []):
        call = expect(raw, dict, f"tool_calls[{j}]")
        if call.get("type", "function") != "function":
            continue  # a custom tool type tiny-agent never declares
        function = expect(call.get("function"), dict, f"tool_calls[{j}].function")
        name = expect(function.get("name"), str, f"tool_calls[{j}].function.name")
        found_id = call.get("id")
        call_id = found_id if isinstance(found_id, str) and found_id else f"call_{uuid.uuid4().hex[:16]}"
        blocks.append(ToolUseBlock(call_id, name, tool_input(function.get("arguments"))))
    finish = optional(choice.get("finish_reason"), str, "choices[0].finish_reason")
    stop = FINISH_REASONS.get(finish, finish) if finish else "unknown"
    refusal = optional(message.get("refusal"), str, "message.refusal")
    if refusal:
        stop = "refusal"
        if not text:
            blocks.insert(0, TextBlock(refusal))
    elif json_tools_mode:
        blocks = list(scrub_blocks(json_tools.parse_reply(text or "")))
        if stop == "end_turn" and any(isinstance(b, ToolUseBlock) for b in blocks):
            stop = "tool_use"
    timings = data.get("timings")
    prefill_ms = timings.get("prompt_ms") if isinstance(timings, Mapping) else None
    return ModelResponse(
        message=Message("assistant", (*reasoning, *blocks)),
        usage=normalise_usage(data.get("usage")),
        stop_reason=stop,
        model=found_model if isinstance(found_model, str) else model,
        prefill_ms=float(prefill_ms) if isinstance(prefill_ms, int | float) else None,
    )


def _text(content: object) -> str:
    """``content`` as text: a string, None, or a list of text parts (some servers send parts)."""
    if content is None or isinstance(content, str):
        return content or ""
    parts = expect(content, list, "message.content")
    return "".join(
        expect(p.get("text"), str, "a content part's text") if isinstance(p, dict) else expect(p, str, "a part")
        for p in parts
    )


def normalise_usage(raw: object) -> Usage:
    """Missing, null or partial usage gives None for what is unknown, never a made-up 0.

    ``input_tokens`` is the whole prompt, cached tokens included (``prompt_tokens``; on DeepSeek,
    where it is missing, hit + miss). The cache read is the largest count of the fields an endpoint
    reports it in (Moonshot may send two; a 0 in one is the other's default, not a second opinion)."""
    if not isinstance(raw, Mapping):
        return Usage()
    details = raw.get("prompt_tokens_details")
    details = details if isinstance(details, Mapping) else {}
    hit, miss = count(raw.get("prompt_cache_hit_tokens")), count(raw.get("prompt_cache_miss_tokens"))
    reported = [count(x) for x in (details.get("cached_tokens"), hit, raw.get("cached_tokens"))]
    cache_read = max((n for n in reported if n is not None), default=None)
    prompt = count(raw.get("prompt_tokens"))
    completion = raw.get("completion_tokens_details")
    if prompt is None and hit is not None and miss is not None:
        prompt = hit + miss
    return Usage(
        input_tokens=prompt,
        output_tokens=count(raw.get("completion_tokens")),
        cache_read_tokens=cache_read,
        cache_write_tokens=count(details.get("cache_write_tokens")),
        details=dict(raw),
        reasoning_tokens=count(completion.get("reasoning_tokens")) if isinstance(completion, Mapping) else None,
    )


class Accumulator:
    """Stream chunks folded into the shape of a whole ``chat.completion``, for ``process``.

    Usage comes in a last chunk with no choices, sent only when the request asked for it
    (``stream_options.include_usage``); llama.cpp adds its ``timings`` to the last chunks."""

    def __init__(self, *, json_tools_mode: bool = False) -> None:
        self.head: dict[str, Any] | None = None
        self.content: list[str] = []
        self.reasoning: list[str] = []
        self.refusal: list[str] = []
        self.calls: dict[int, dict[str, Any]] = {}
        self.finish: str | None = None
        self.extra: dict[str, Any] = {}
        self.answer = AnswerText() if json_tools_mode else None

    def feed(self, payload: object) -> list[TextDelta | ThinkingDelta]:
        """Take one chunk; return the reasoning and answer text it adds. In the JSON tool mode the
        answer text is the decoded text of ``{"answer": ...}``, and nothing for a tool call."""
        chunk = expect(payload, dict, "a stream chunk")
        if self.head is None:
            self.head = {k: chunk[k] for k in ("id", "object", "created", "model") if k in chunk}
        for key in ("usage", "timings"):
            if chunk.get(key) is not None:
                self.extra[key] = chunk[key]
        added: list[TextDelta | ThinkingDelta] = []
        for i, raw in enumerate(optional(chunk.get("choices"), list, "'choices'") or []):
            choice = expect(raw, dict, f"choices[{i}]")
            if choice.get("index", 0) != 0:
                continue
            delta = optional(choice.get("delta"), dict, "choices[0].delta") or {}
            thought = optional(delta.get("reasoning_content"), str, "delta.reasoning_content")
            if thought:
                self.reasoning.append(thought)
                added.append(ThinkingDelta(scrub(thought)))
            piece = optional(delta.get("content"), str, "delta.content")
            if piece:
                self.content.append(piece)
                added.append(TextDelta(self.answer.feed(piece) if self.answer is not None else scrub(piece)))
            refusal = optional(delta.get("refusal"), str, "delta.refusal")
            if refusal:
                self.refusal.append(refusal)
            for j, call in enumerate(optional(delta.get("tool_calls"), list, "delta.tool_calls") or []):
                self._call(j, expect(call, dict, f"delta.tool_calls[{j}]"))
            finish = optional(choice.get("finish_reason"), str, "choices[0].finish_reason")
            self.finish = finish or self.finish
        return added

    def _call(self, position: int, call: dict[str, Any]) -> None:
        found = call.get("index")
        index = found if isinstance(found, int) else position
        slot = self.calls.setdefault(index, {"type": "function", "function": {"name": "", "arguments": ""}})
        if isinstance(call.get("id"), str) and call["id"]:
            slot["id"] = call["id"]
        function = optional(call.get("function"), dict, "a tool call's function") or {}
        name = optional(function.get("name"), str, "a tool call's name")
        if name and name != slot["function"]["name"]:  # sent once, in pieces, or (some servers) repeated
            slot["function"]["name"] += name
        arguments = function.get("arguments")
        if isinstance(arguments, str):
            slot["function"]["arguments"] += arguments
        elif arguments is not None:
            slot["function"]["arguments"] = arguments  # an object, from a server that does not stream it

    def result(self, provider: str) -> dict[str, Any]:
        """The whole answer; a stream that ended before its finish reason raises (a cut stream)."""
        if self.head is None:
            raise response_error(provider, "the stream ended before its first event")
        if self.finish is None:
            raise response_error(provider, "the stream ended before the reply did (no finish reason); nothing was kept")
        message: dict[str, Any] = {"role": "assistant", "content": "".join(self.content) if self.content else None}
        if self.reasoning:
            message["reasoning_content"] = "".join(self.reasoning)
        if self.refusal:
            message["refusal"] = "".join(self.refusal)
        if self.calls:
            message["tool_calls"] = [self.calls[k] for k in sorted(self.calls)]
        choice = {"index": 0, "message": message, "finish_reason": self.finish}
        return {**self.head, "choices": [choice], **self.extra}
