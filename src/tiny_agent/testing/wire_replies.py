"""What the billing fake answers on each wire: whole replies, their streamed events, the HTTP around them."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from typing import Any

from tiny_agent.providers.base import Wire
from tiny_agent.providers.cache_sim import SimCall
from tiny_agent.types import Block, TextBlock, ToolUseBlock

__all__ = ["SPOKEN", "Speaks", "send", "send_stream", "speaking"]


def _anthropic(number: int, model: str, blocks: Sequence[Block], stop: str, call: SimCall) -> dict[str, Any]:
    return {
        "id": f"msg_fake{number:05d}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [b.to_dict() for b in blocks],
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": {
            "input_tokens": call.uncached,
            "cache_read_input_tokens": call.cache_read,
            "cache_creation_input_tokens": call.cache_write,
            "cache_creation": {
                "ephemeral_5m_input_tokens": call.cache_write_5m,
                "ephemeral_1h_input_tokens": call.cache_write_1h,
            },
            "output_tokens": call.output_tokens,
        },
    }


def _openai(number: int, model: str, blocks: Sequence[Block], stop: str, call: SimCall) -> dict[str, Any]:
    text = "\n\n".join(b.text for b in blocks if isinstance(b, TextBlock))
    calls = [
        {"id": b.id, "type": "function", "function": {"name": b.name, "arguments": json.dumps(dict(b.input))}}
        for b in blocks
        if isinstance(b, ToolUseBlock)
    ]
    message: dict[str, Any] = {"role": "assistant", "content": text or None, "refusal": None}
    if calls:
        message["tool_calls"] = calls
    details: dict[str, Any] = {"cached_tokens": call.cache_read}
    if call.cache_write:
        details["cache_write_tokens"] = call.cache_write
    return {
        "id": f"chatcmpl-fake{number:05d}",
        "object": "chat.completion",
        "created": int(call.at),
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": _finish(calls, stop)}],
        "usage": {
            "prompt_tokens": call.input_tokens,
            "completion_tokens": call.output_tokens,
            "total_tokens": call.input_tokens + call.output_tokens,
            "prompt_tokens_details": details,
        },
    }


def _finish(calls: Sequence[Any], stop: str) -> str:
    return "tool_calls" if calls else ("length" if stop == "max_tokens" else "stop")


Event = tuple[str | None, Any]


def _anthropic_events(message: Mapping[str, Any], body: Mapping[str, Any]) -> Iterator[Event]:
    usage = dict(message["usage"])
    # The dropped thinking blocks (input_transformations) go on message_delta, which the SDK's event
    # type carries them on: a client that reads only message_start loses them.
    head = {k: v for k, v in message.items() if k != "input_transformations"}
    start = {**head, "content": [], "stop_reason": None, "usage": {**usage, "output_tokens": 1}}
    yield "message_start", {"type": "message_start", "message": start}
    for index, block in enumerate(message["content"]):
        if block["type"] == "tool_use":
            opening = {**block, "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        elif block["type"] == "redacted_thinking":
            opening, delta = block, None
        elif block["type"] == "compaction":  # one delta carries the whole block
            opening = {"type": "compaction", "content": None, "encrypted_content": None}
            delta = {"type": "compaction_delta", **{k: v for k, v in block.items() if k != "type"}}
        elif block["type"] == "thinking":
            opening = {"type": "thinking", "thinking": "", "signature": ""}
            delta = {"type": "thinking_delta", "thinking": block["thinking"]}
            signed = {"type": "signature_delta", "signature": block["signature"]}
            yield "content_block_start", {"type": "content_block_start", "index": index, "content_block": opening}
            yield "content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}
            yield "content_block_delta", {"type": "content_block_delta", "index": index, "delta": signed}
            yield "content_block_stop", {"type": "content_block_stop", "index": index}
            continue
        else:
            opening = {"type": "text", "text": ""}
            delta = {"type": "text_delta", "text": block["text"]}
        yield "content_block_start", {"type": "content_block_start", "index": index, "content_block": opening}
        if delta is not None:
            yield "content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}
        yield "content_block_stop", {"type": "content_block_stop", "index": index}
    delta_usage = {
        "output_tokens": usage["output_tokens"],
        **{k: v for k, v in usage.items() if k.endswith("_details") or k == "iterations"},
    }
    ending: dict[str, Any] = {"type": "message_delta", "delta": {"stop_reason": message["stop_reason"]}}
    ending["usage"] = delta_usage
    if "input_transformations" in message:
        ending["input_transformations"] = message["input_transformations"]
    yield "message_delta", ending
    yield "message_stop", {"type": "message_stop"}


def _openai_chunks(completion: Mapping[str, Any], body: Mapping[str, Any]) -> Iterator[Event]:
    head = {k: completion[k] for k in ("id", "created", "model")} | {"object": "chat.completion.chunk"}
    choice = completion["choices"][0]
    message = choice["message"]

    def chunk(delta: dict[str, Any], finish: str | None = None) -> Event:
        return None, {**head, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

    yield chunk({"role": "assistant", "content": ""})
    if message.get("reasoning_content"):
        yield chunk({"reasoning_content": message["reasoning_content"]})
    if message.get("content"):
        yield chunk({"content": message["content"]})
    for k, call in enumerate(message.get("tool_calls") or []):
        yield chunk({"tool_calls": [{"index": k, **call}]})
    yield chunk({}, choice["finish_reason"])
    if (body.get("stream_options") or {}).get("include_usage"):
        yield None, {**head, "choices": [], "usage": completion["usage"]}
    yield None, "[DONE]"


def send(http: BaseHTTPRequestHandler, status: int, payload: Mapping[str, Any]) -> None:
    data = json.dumps(payload).encode()
    http.send_response(status)
    http.send_header("content-type", "application/json")
    http.send_header("content-length", str(len(data)))
    http.end_headers()
    http.wfile.write(data)


def send_stream(
    http: BaseHTTPRequestHandler, events: Iterator[Event], hold: Callable[[], object] | None = None
) -> None:
    """The events as server-sent events, in one write; with ``hold``, each one chunked and written as
    it comes, and ``hold()`` called before the last (a test sees what the client has by then)."""
    data = [
        ((f"event: {name}\n" if name else "") + f"data: {d if isinstance(d, str) else json.dumps(d)}\n\n").encode()
        for name, d in events
    ]
    http.send_response(200)
    http.send_header("content-type", "text/event-stream")
    if hold is None:
        http.send_header("content-length", str(sum(map(len, data))))
        http.end_headers()
        http.wfile.write(b"".join(data))
        return
    http.send_header("transfer-encoding", "chunked")
    http.end_headers()
    for i, piece in enumerate(data):
        if i == len(data) - 1:
            hold()
        http.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
        http.wfile.flush()
    http.wfile.write(b"0\r\n\r\n")


@dataclass(frozen=True)
class Speaks:
    """How the fake speaks one wire: the path it answers, its tool call ids, its answers whole and streamed."""

    path: tuple[str, ...]
    call_ids: str
    reply: Callable[[int, str, Sequence[Block], str, SimCall], dict[str, Any]]
    stream: Callable[[Mapping[str, Any], Mapping[str, Any]], Iterator[Event]]


SPOKEN: Mapping[Wire, Speaks] = {
    "anthropic": Speaks(("v1", "messages"), "toolu", _anthropic, _anthropic_events),
    "openai": Speaks(("v1", "chat", "completions"), "call", _openai, _openai_chunks),
}
"""The wires the fake speaks, by name."""


def speaking(wire: Wire) -> Speaks:
    found = SPOKEN.get(wire)
    if found is None:
        raise ValueError(f"the billing fake speaks {', '.join(SPOKEN)}, not {wire!r}")
    return found
