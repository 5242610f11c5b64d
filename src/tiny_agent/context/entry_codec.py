"""Typed entries to and from their stored JSON (``"v": 1`` bodies).

The stored shape is the one sessions have always had: reading a body is the only migration a new
field needs (a missing field reads as its default), and an old ``config`` entry that mixed the
engine's settings with the run's reads as both. A body that cannot be read raises ``EntryError``
naming what is wrong; the caller names the store, the session and the entry.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tiny_agent.context.entries import (
    CallDone,
    CallFailed,
    CallOpened,
    Clearing,
    CompactionMark,
    ConfigChange,
    Decision,
    EntryError,
    FieldRefused,
    Note,
    PinChange,
    Response,
    RunChange,
    RunStop,
    ToolResult,
    TypedEntry,
    UserInput,
    split_settings,
)
from tiny_agent.context.tokens import CallRecord
from tiny_agent.errors import UnreadableEntry
from tiny_agent.redaction import redact_json
from tiny_agent.store.base import UNREADABLE, NewEntry
from tiny_agent.types import Block, Entry, ToolResultBlock, block_from_dict

__all__ = ["BODY_VERSION", "decode", "encode", "read"]

BODY_VERSION = 1


def encode(value: TypedEntry) -> NewEntry:
    """The entry to append: its kind and its JSON body."""
    body: dict[str, Any] = {"v": BODY_VERSION}
    match value:
        case UserInput(content=content):
            body["content"] = [b.to_dict() for b in content]
        case Response(content=content, call=call):
            body["content"] = [b.to_dict() for b in content]
            if call is not None:
                body["call"] = call
        case ToolResult(block=block):
            body["block"] = block.to_dict()
        case CompactionMark():
            body.update(
                cut=value.cut,
                messages=value.messages,
                summary=value.summary,
                record=value.record,
                tokens_before=value.tokens_before,
                tokens_after=value.tokens_after,
            )
            if value.manual:
                body.update(manual=True, keep_turns=value.keep_turns, summarizer=value.summarizer)
            if value.counted:
                body["counted"] = True
            if value.strategy:
                body["strategy"] = value.strategy
        case Clearing(stubs=stubs):
            body["stubs"] = dict(stubs)
        case Decision():
            body.update(policy=value.policy, action=value.action, tokens=value.tokens)
            body.update(threshold=value.threshold, ceiling=value.ceiling, window=value.window)
            body.update(keep_turns=value.keep_turns, prices=dict(value.prices), cut=value.cut)
            body.update(messages=value.messages, summarizer=value.summarizer)
            if value.failed_at is not None:
                body.update(failed_at=value.failed_at, error=value.error)
        case CallOpened():
            body.update(purpose=value.purpose, model=value.model, chars=value.chars)
            body.update(fingerprint=dict(value.fingerprint), provider=value.provider)
            if value.server:
                body["server"] = value.server
            body.update(changes=list(value.changes), shared_messages=value.shared_messages)
            body.update(window=value.window, threshold=value.threshold)
            if not value.decided:
                body["decided"] = False
            if value.request is not None:
                body["request"] = dict(value.request)
        case CallDone(call=call, record=record, reply=reply):
            body.update(call=call, **record.to_body())
            if reply is not None:
                body["reply"] = [b.to_dict() for b in reply]
        case CallFailed(call=call, error=error):
            body.update(call=call, error=error)
        case FieldRefused(model=model, field=field, error=error):
            body.update(model=model, field=field, error=error)
        case PinChange(add=add, remove=remove):
            body.update({k: v for k, v in (("add", add), ("remove", remove)) if v is not None})
        case ConfigChange(settings=settings) | RunChange(settings=settings):
            body["settings"] = redact_json(dict(settings))  # a URL's password is never stored
        case Note(text=text):
            body["text"] = text
        case RunStop(reason=reason, steps=steps, detail=detail):
            body.update(reason=reason, steps=steps, detail=detail)
    return value.kind, body


def read(entry: Entry) -> list[TypedEntry]:
    """``decode``, with an entry that cannot be read raised as ``UnreadableEntry`` (its seq and kind)."""
    try:
        return decode(entry)
    except EntryError as exc:
        raise UnreadableEntry(entry.seq, entry.kind, str(exc)) from exc


def decode(entry: Entry) -> list[TypedEntry]:
    """The typed values of a stored entry. Usually one; an old ``config`` entry that mixed engine and
    run settings reads as both. Raises ``EntryError`` for a body that cannot be read."""
    body = entry.body
    if not isinstance(body, Mapping):
        raise EntryError("its body is not a JSON object")
    if UNREADABLE in body:  # the store could not decode it (a lenient read)
        raise EntryError(str(body[UNREADABLE]))
    try:
        return _decode(entry.kind, body)
    except EntryError:
        raise
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        what = f"it has no field {exc}" if isinstance(exc, KeyError) else str(exc) or type(exc).__name__
        raise EntryError(what) from exc


def _decode(kind: str, body: Mapping[str, Any]) -> list[TypedEntry]:
    match kind:
        case "user":
            return [UserInput(_blocks(body))]
        case "response":
            call = body.get("call")
            return [Response(_blocks(body), int(call) if call is not None else None)]
        case "tool_result":
            block = block_from_dict(body["block"])
            if not isinstance(block, ToolResultBlock):
                raise EntryError(f"it holds a {block.type} block, not a tool result")
            return [ToolResult(block)]
        case "compaction":
            return [
                CompactionMark(
                    int(body["cut"]),
                    int(body.get("messages") or 0),
                    str(body["summary"]),
                    str(body["record"]),
                    _int(body.get("tokens_before")),
                    _int(body.get("tokens_after")),
                    bool(body.get("manual")),
                    _int(body.get("keep_turns")),
                    str(body.get("summarizer") or "provider"),
                    bool(body.get("counted")),
                    str(body.get("strategy") or ""),
                )
            ]
        case "clear":
            return [Clearing({str(k): str(v) for k, v in (body.get("stubs") or {}).items()})]
        case "decision":
            return [_decision(body)]
        case "call":
            shared = body.get("shared_messages")
            return [
                CallOpened(
                    str(body["purpose"]),
                    str(body["model"]),
                    int(body.get("chars") or 0),
                    dict(body.get("fingerprint") or {}),
                    str(body.get("server") or ""),
                    str(body.get("provider") or ""),
                    tuple(str(c) for c in body.get("changes") or ()),
                    int(shared) if shared is not None else None,
                    _int(body.get("window")),
                    _int(body.get("threshold")),
                    body.get("decided") is not False,
                    body["request"] if isinstance(body.get("request"), Mapping) else None,
                )
            ]
        case "call_done":
            reply = body.get("reply")
            blocks = tuple(block_from_dict(b) for b in reply) if isinstance(reply, list) else None
            return [CallDone(int(body["call"]), CallRecord.from_body(body), blocks)]
        case "call_failed":
            return [CallFailed(int(body["call"]), str(body.get("error") or ""))]
        case "refused":
            return [FieldRefused(str(body["model"]), str(body["field"]), str(body.get("error") or ""))]
        case "pin":
            add, remove = body.get("add"), body.get("remove")
            return [PinChange(None if add is None else str(add), None if remove is None else str(remove))]
        case "config":
            settings = dict(body.get("settings") or {})
            engine, run = split_settings(settings)
            return [*([ConfigChange(engine)] if engine or not run else []), *([RunChange(run)] if run else [])]
        case "run":
            return [RunChange(dict(body.get("settings") or {}))]
        case "note":
            return [Note(str(body.get("text") or ""))]
        case "stop":
            return [RunStop(str(body.get("reason") or ""), int(body.get("steps") or 0), str(body.get("detail") or ""))]
    raise EntryError(f"its kind {kind!r} is unknown to this tiny-agent (written by a newer one?)")


def _decision(body: Mapping[str, Any]) -> Decision:
    prices = body.get("prices") or {}
    return Decision(
        str(body["policy"]),
        str(body["action"]),
        int(body["tokens"]),
        _int(body.get("threshold")),
        _int(body.get("ceiling")),
        _int(body.get("window")),
        _int(body.get("keep_turns")),
        {str(k): float(v) for k, v in prices.items()},
        _int(body.get("cut")),
        int(body.get("messages") or 0),
        str(body.get("summarizer") or ""),
        _int(body.get("failed_at")),
        str(body.get("error") or ""),
    )


def _blocks(body: Mapping[str, Any]) -> tuple[Block, ...]:
    return tuple(block_from_dict(b) for b in body.get("content") or ())


def _int(value: Any) -> int | None:
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else None
