"""Answers as the two APIs send them: whole JSON bodies, and the same answers as streams of events.

``anthropic_message`` / ``openai_completion`` build a whole answer; ``anthropic_events`` /
``openai_chunks`` cut one into the events a streaming API sends for it, in the documented order, so
a test can check that the stream and the whole answer give the same ``ModelResponse``.
"""

from __future__ import annotations

import json
from typing import Any

Event = tuple[str | None, Any]
"""``(event name or None, data)``; data is a JSON value, or a str sent as it is ("[DONE]")."""

PIECE = 7
"""Characters per text delta: small, so every answer streams in several pieces."""


def pieces(text: str, size: int = PIECE) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


def anthropic_message(
    content: Any, usage: Any = None, stop_reason: Any = "end_turn", *, drop: tuple[str, ...] = ()
) -> dict[str, Any]:
    """A whole Messages answer; ``usage`` None means the common ``{input_tokens: 25, output_tokens: 9}``."""
    body: dict[str, Any] = {
        "id": "msg_01XFDUDYJgAACzvnptvVoYEL",
        "type": "message",
        "role": "assistant",
        "model": "claude-haiku-4-5-20251001",
        "content": content,
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": {"input_tokens": 25, "output_tokens": 9} if usage is None else usage,
    }
    for key in drop:
        body.pop(key)
    return body


def text_block(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def tool_use(name: str, tool_input: Any, call_id: str = "toolu_01A09q90qw90lq917835lq9") -> dict[str, Any]:
    return {"type": "tool_use", "id": call_id, "name": name, "input": tool_input}


def anthropic_events(message: dict[str, Any]) -> list[Event]:
    """``message`` as the Messages API streams it: message_start (input usage), the blocks, a ping,
    message_delta (stop reason, output usage), message_stop."""
    usage = message.get("usage")
    start_usage = None
    if isinstance(usage, dict):
        start_usage = {k: v for k, v in usage.items() if k != "output_tokens"}
        if "output_tokens" in usage:
            start_usage["output_tokens"] = 1
    start = {**message, "content": [], "stop_reason": None, "usage": start_usage}
    events: list[Event] = [("message_start", {"type": "message_start", "message": start})]
    for index, block in enumerate(message["content"]):
        if block.get("type") == "tool_use":
            opening = {**block, "input": {}}
            # A str input is sent as the JSON text itself: that is what a call cut by max_tokens streams.
            text = block["input"] if isinstance(block["input"], str) else json.dumps(block["input"])
            deltas = [{"type": "input_json_delta", "partial_json": p} for p in ["", *pieces(text)]]
        elif block.get("type") == "text":
            opening = {"type": "text", "text": ""}
            deltas = [{"type": "text_delta", "text": p} for p in pieces(block["text"])]
        else:  # thinking: sent whole in its start event, enough for these tests
            opening, deltas = block, []
        events.append(
            ("content_block_start", {"type": "content_block_start", "index": index, "content_block": opening})
        )
        if index == 0:
            events.append(("ping", {"type": "ping"}))
        events.extend(
            ("content_block_delta", {"type": "content_block_delta", "index": index, "delta": d}) for d in deltas
        )
        events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
    delta: dict[str, Any] = {"type": "message_delta", "delta": {"stop_reason": message["stop_reason"]}}
    if isinstance(usage, dict) and "output_tokens" in usage:
        delta["usage"] = {"output_tokens": usage["output_tokens"]}
    events.append(("message_delta", delta))
    events.append(("message_stop", {"type": "message_stop"}))
    return events


def anthropic_error_event(kind: str = "overloaded_error", message: str = "Overloaded") -> Event:
    return ("error", {"type": "error", "error": {"type": kind, "message": message}})


def openai_completion(
    content: Any = "Hello!",
    *,
    tool_calls: list[dict[str, Any]] | None = None,
    finish_reason: Any = "stop",
    usage: Any = None,
    refusal: str | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """A whole ``chat.completion``; ``usage`` None means ``{prompt_tokens: 19, completion_tokens: 10}``."""
    message: dict[str, Any] = {"role": "assistant", "content": content, "refusal": refusal}
    if tool_calls is not None:
        message["tool_calls"] = tool_calls
    return {
        "id": "chatcmpl-B9MBs8CjcvOU2jLn4n570S5qMJKcT",
        "object": "chat.completion",
        "created": 1741569952,
        "model": "gpt-4o-mini-2024-07-18",
        "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": finish_reason}],
        "usage": {"prompt_tokens": 19, "completion_tokens": 10, "total_tokens": 29} if usage is None else usage,
        **extra,
    }


def function_call(name: str, arguments: str, call_id: str = "call_abc123") -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def openai_chunks(completion: dict[str, Any], *, include_usage: bool = True) -> list[Event]:
    """``completion`` as Chat Completions streams it: a role chunk, content / refusal / tool-call
    argument pieces, a finish chunk, then (when asked for) a usage chunk with no choices, [DONE]."""
    head = {k: completion[k] for k in ("id", "created", "model")} | {"object": "chat.completion.chunk"}
    choice = completion["choices"][0]
    message = choice["message"]

    def chunk(delta: dict[str, Any], finish: Any = None) -> Event:
        return (None, {**head, "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}]})

    chunks = [chunk({"role": "assistant", "content": ""})]
    if message.get("content"):
        chunks.extend(chunk({"content": p}) for p in pieces(message["content"]))
    if message.get("refusal"):
        chunks.extend(chunk({"refusal": p}) for p in pieces(message["refusal"]))
    for k, call in enumerate(message.get("tool_calls") or []):
        function = call["function"]
        opening = {
            "index": k,
            "id": call["id"],
            "type": "function",
            "function": {"name": function["name"], "arguments": ""},
        }
        chunks.append(chunk({"tool_calls": [opening]}))
        chunks.extend(
            chunk({"tool_calls": [{"index": k, "function": {"arguments": p}}]}) for p in pieces(function["arguments"])
        )
    chunks.append(chunk({}, choice["finish_reason"]))
    extra = {k: v for k, v in completion.items() if k == "timings"}
    if include_usage and completion.get("usage") is not None:
        chunks.append((None, {**head, "choices": [], "usage": completion["usage"], **extra}))
    chunks.append((None, "[DONE]"))
    return chunks


def openai_error_chunk(kind: str = "server_error", message: str = "The server had an error") -> Event:
    return (None, {"error": {"message": message, "type": kind, "param": None, "code": None}})


def sse(events: list[Event]) -> bytes:
    """Events in the ``text/event-stream`` format, their JSON in raw UTF-8 as the APIs send it (so
    U+2028 and its kin stand unescaped inside strings; a lone surrogate, which UTF-8 cannot carry,
    stays escaped)."""
    out = []
    for name, data in events:
        text = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)
        if any("\ud800" <= c <= "\udfff" for c in text):
            text = json.dumps(data)
        out.append((f"event: {name}\n" if name else "") + f"data: {text}\n\n")
    return "".join(out).encode()
