"""An independent legality check of a Chat Completions body: the official SDK's own request types.

Nothing here comes from tiny-agent's own checks (``providers/*/check.py``): the body is validated against the
``openai`` SDK's ``CompletionCreateParamsNonStreaming`` TypedDict by a pydantic ``TypeAdapter``, with
every nested TypedDict closed to unknown keys (a misspelt ``prompt_cache_breakpoints`` fails), and
every lazily validated ``Iterable`` drained so its items are checked too. The pairing rules, which
no type can express, are checked by hand: each assistant ``tool_calls`` answered by the tool
messages right after it, no tool message without its call, the last message a user or tool one.
"""

from __future__ import annotations

import typing
from collections.abc import Iterator, Mapping
from typing import Any

from openai.types.chat.completion_create_params import CompletionCreateParamsNonStreaming
from pydantic import ConfigDict, TypeAdapter
from typing_extensions import is_typeddict

__all__ = ["EXPLICIT_FIELDS", "marks", "pairing_problems", "sdk_validate"]

EXPLICIT_FIELDS = ("prompt_cache_breakpoint", "prompt_cache_options")
"""GPT-5.6-only fields: older models refuse them with a 400."""


def _typeddicts(tp: Any, seen: set[Any]) -> None:
    if is_typeddict(tp):
        if tp not in seen:
            seen.add(tp)
            for hint in typing.get_type_hints(tp, include_extras=True).values():
                _typeddicts(hint, seen)
        return
    for arg in typing.get_args(tp):
        _typeddicts(arg, seen)


def _closed_adapter(request: Any = CompletionCreateParamsNonStreaming) -> TypeAdapter[Any]:
    """The SDK's request type with unknown keys refused at every level. The config is set on the SDK's
    classes only while the schema is built, and taken off again."""
    classes: set[Any] = set()
    _typeddicts(request, classes)
    for cls in classes:
        cls.__pydantic_config__ = ConfigDict(extra="forbid")
    try:
        return TypeAdapter(request)
    finally:
        for cls in classes:
            del cls.__pydantic_config__


_ADAPTER = _closed_adapter()


def _drain(value: Any) -> Any:
    """Every lazily validated iterable consumed (pydantic checks an ``Iterable``'s items as it is read)."""
    if isinstance(value, Mapping):
        return {k: _drain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_drain(v) for v in value]
    if isinstance(value, Iterator) or type(value).__name__ == "ValidatorIterator":
        return [_drain(v) for v in value]
    return value


def sdk_validate(body: Mapping[str, Any]) -> dict[str, Any]:
    """``body`` as the SDK's request type reads it; ``pydantic.ValidationError`` when it is not one."""
    return _drain(_ADAPTER.validate_python(dict(body)))  # type: ignore[no-any-return]


def pairing_problems(body: Mapping[str, Any]) -> list[str]:
    """What breaks the tool-call pairing of Chat Completions (empty: none)."""
    problems: list[str] = []
    pending: list[str] = []
    messages = list(body["messages"])
    start = next((i for i, m in enumerate(messages) if m["role"] not in ("system", "developer")), len(messages))
    for i, message in enumerate(messages[start:], start):
        role = message["role"]
        if role in ("system", "developer"):
            problems.append(f"messages[{i}]: a {role} message inside the conversation")
        elif role == "tool":
            if message["tool_call_id"] not in pending:
                problems.append(f"messages[{i}]: tool message for {message['tool_call_id']} answers no pending call")
            else:
                pending.remove(message["tool_call_id"])
        else:
            if pending:
                problems.append(f"messages[{i}]: calls {pending} were not answered before it")
            pending = [c["id"] for c in message.get("tool_calls") or []] if role == "assistant" else []
            if len(set(pending)) != len(pending):
                problems.append(f"messages[{i}]: duplicate tool call ids")
    if pending:
        problems.append(f"calls {pending} were never answered")
    if messages and messages[-1]["role"] not in ("user", "tool"):
        problems.append("the last message is not a user or tool message")
    return problems


def marks(body: Mapping[str, Any]) -> list[int]:
    """Indices of the messages with a ``prompt_cache_breakpoint`` on a content part."""
    found = []
    for i, message in enumerate(body["messages"]):
        content = message.get("content")
        if isinstance(content, list) and any("prompt_cache_breakpoint" in part for part in content):
            found.append(i)
    return found
