"""The answers of ``testing.responses_server``: a response with its usage, the server's cache
diagnosis (a request's fingerprint compared with the named response's), and the stream's events."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Mapping
from typing import Any

from tiny_agent.providers.cache_sim import SimCall
from tiny_agent.providers.prefix import block_tokens, canonical, without_marks

__all__ = ["Event", "diagnose", "events", "fingerprint", "response"]


def response(number: int, model: str, items: list[dict[str, Any]], call: SimCall, thinking: int) -> dict[str, Any]:
    details: dict[str, Any] = {"cached_tokens": call.cache_read, "cache_write_tokens": call.cache_write}
    return {
        "id": f"resp_{number:05d}",
        "object": "response",
        "created_at": int(call.at),
        "status": "completed",
        "model": model,
        "output": items,
        "usage": {
            "input_tokens": call.input_tokens,
            "input_tokens_details": details,
            "output_tokens": call.output_tokens,
            "output_tokens_details": {"reasoning_tokens": thinking},
            "total_tokens": call.input_tokens + call.output_tokens,
        },
    }


def fingerprint(body: Mapping[str, Any]) -> dict[str, Any]:
    def digest(value: Any) -> str:
        return hashlib.sha256(canonical(value).encode()).hexdigest()[:16]

    reasoning = body.get("reasoning")
    items = [digest(_unmarked(x)) for x in body.get("input") or []]
    return {
        "model_changed": body.get("model"),
        "prompt_cache_key_changed": body.get("prompt_cache_key"),
        "tools_changed": digest(body.get("tools") or []),
        "text_format_changed": digest(body.get("text") or {}),
        "reasoning_effort_changed": reasoning.get("effort") if isinstance(reasoning, Mapping) else None,
        "context_compacted": any(x.get("type") == "compaction" for x in body.get("input") or []),
        "items": items,
        "tokens": [block_tokens(_unmarked(x)) for x in body.get("input") or []],
    }


def _unmarked(item: Any) -> Any:
    return without_marks(item)


def diagnose(before: Mapping[str, Any] | None, now: Mapping[str, Any]) -> dict[str, Any]:
    """The server's comparison with the named response's request: the first layer that diverged."""
    if before is None:
        return {"type": "comparison_response_not_found"}
    total = sum(now["tokens"])
    for reason in (
        "model_changed",
        "prompt_cache_key_changed",
        "tools_changed",
        "text_format_changed",
        "reasoning_effort_changed",
    ):
        if before[reason] != now[reason]:
            return {"type": "cache_miss", "reason": reason, "cache_missed_tokens": total}
    if now["context_compacted"] and not before["context_compacted"]:
        return {"type": "cache_miss", "reason": "context_compacted", "cache_missed_tokens": total}
    shared = next((i for i, (a, b) in enumerate(zip(before["items"], now["items"], strict=False)) if a != b), None)
    if shared is None:
        return {"type": "cache_hit"}
    missed = sum(now["tokens"][shared:])
    reusable = sum(before["tokens"][:shared])
    return {
        "type": "cache_miss",
        "reason": "input_changed",
        "cache_missed_tokens": missed,
        "comparison_reusable_tokens": reusable,
    }


Event = tuple[str, Mapping[str, Any]]


def events(reply: Mapping[str, Any]) -> Iterator[Event]:
    started = {**reply, "status": "in_progress", "output": [], "usage": None}
    yield "response.created", {"type": "response.created", "response": started}
    for index, item in enumerate(reply["output"]):
        opening = {**item, "content": []} if item["type"] == "message" else item
        added = {"type": "response.output_item.added", "output_index": index, "item": opening}
        yield "response.output_item.added", added
        if item["type"] == "message":
            for part in item["content"]:
                delta = {
                    "type": "response.output_text.delta",
                    "output_index": index,
                    "item_id": item["id"],
                    "content_index": 0,
                    "delta": part["text"],
                }
                yield "response.output_text.delta", delta
        yield "response.output_item.done", {"type": "response.output_item.done", "output_index": index, "item": item}
    yield "response.completed", {"type": "response.completed", "response": reply}
