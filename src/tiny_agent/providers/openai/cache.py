"""Prompt caching on Chat Completions: GPT-5.6's explicit breakpoints, the cache key, refused fields.

GPT-5.6 and later take ``prompt_cache_breakpoint: {"mode": "explicit"}`` on a content part (the
prefix up to the end of that part is written), ``prompt_cache_options: {"mode": "explicit", "ttl":
"30m"}`` (no implicit breakpoint of OpenAI's choosing: the four writes a request may make are all
ours) and ``prompt_cache_key`` (a session's requests routed to the same cache), with the names and
shapes of the ``openai`` SDK's ``completion_create_params`` and ``chat_completion_content_part_text_param``.
The marks go where the engine's cache plan says (``context.cache.plan_cache``, the same plan as
Anthropic's ``cache_control``): the system message (which covers the tools before it), and the newest
messages. A mark needs a content part, so on these models every message's text is sent as one text
part (a string and one part are the same text; keeping one form keeps the prefix's bytes stable).

Models before 5.6 keep automatic caching and get no 5.6-only field; every OpenAI model gets the key.
A model (or a proxy in front of it) that refuses one of these fields answers 400 naming it:
``refused_field`` finds which, and the engine sends the request again without it (``Prompt.omit``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from tiny_agent.errors import UnsupportedFieldError
from tiny_agent.providers.cache_rules import OPENAI_EXPLICIT_TTL, CacheRules, Ttl
from tiny_agent.providers.prefix import CacheMarks, PrefixBlock, breakpoints
from tiny_agent.types import ModelResponse, OnProviderEvent, Prompt, RetryNotice

__all__ = [
    "BREAKPOINT",
    "OPTIONAL_FIELDS",
    "OPTIONS",
    "as_parts",
    "cache_fields",
    "cache_marks",
    "dropping_refused",
    "mark_messages",
    "refused_field",
    "without_field",
]

BREAKPOINT = "prompt_cache_breakpoint"
OPTIONS = "prompt_cache_options"
KEY = "prompt_cache_key"
OPTIONAL_FIELDS = (BREAKPOINT, OPTIONS, KEY)
"""Fields tiny-agent sends only for caching: a request is as good without them, if dearer."""


def as_parts(message: dict[str, Any]) -> dict[str, Any]:
    """``message`` with its text content as one text part, the form a breakpoint can be put on."""
    content = message.get("content")
    if isinstance(content, str) and content:
        return {**message, "content": [{"type": "text", "text": content}]}
    return message


def mark_messages(
    prompt: Prompt, groups: Sequence[Sequence[dict[str, Any]]], head: list[dict[str, Any]], rules: CacheRules
) -> list[dict[str, Any]]:
    """The body's messages (``head``, the system message, then each neutral message's wire messages)
    with a breakpoint on the last part of each anchor the plan names: the system message first, then
    the newest planned messages within the four writes. Marks go on copies.

    A planned user message that is tool results followed by text (the summary request adds its
    instructions there) gets a second mark at the end of the results: the request before it ended
    there, and GPT-5.6 reads an entry only at a breakpoint, never looking back."""
    messages = [*head, *(m for group in groups for m in group)]
    if rules.mode != "explicit" or BREAKPOINT in prompt.omit:
        return messages
    room = rules.max_breakpoints
    anchors: list[int] = []
    if prompt.cache.system and head and _markable(head[-1]):
        anchors.append(len(head) - 1)
        room -= 1
    starts: list[int] = []
    start = len(head)
    for group in groups:
        starts.append(start)
        start += len(group)
    planned: list[int] = []
    for i in sorted({_index(i, len(groups)) for i in prompt.cache.message_indices}):
        group, first = groups[i], starts[i]
        roles = [m["role"] for m in group]
        ends = [first + j for j in range(len(roles) - 1) if roles[j] == "tool" and roles[j + 1] != "tool"]
        planned += [k for k in (*ends, first + len(group) - 1) if group and _markable(messages[k])]
    # The newest anchors cover the longest prefix: the oldest are the ones to give up.
    anchors.extend(planned[max(0, len(planned) - room) :] if room > 0 else ())
    for i in anchors:
        parts = messages[i]["content"]
        messages[i] = {**messages[i], "content": [*parts[:-1], {**parts[-1], BREAKPOINT: {"mode": "explicit"}}]}
    return messages


def cache_fields(prompt: Prompt, rules: CacheRules, messages: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The top-level cache fields of a request whose ``messages`` are marked: the key for OpenAI's
    models, the options on 5.6+ when a message carries a breakpoint."""
    fields: dict[str, Any] = {}
    if rules.cache_key and prompt.cache_key and KEY not in prompt.omit:
        fields[KEY] = prompt.cache_key
    # Explicit mode with no breakpoint caches nothing: without marks, OpenAI's implicit one is better.
    marked = any(isinstance(p, Mapping) and BREAKPOINT in p for m in messages for p in _parts(m))
    if rules.mode == "explicit" and OPTIONS not in prompt.omit and marked:
        fields[OPTIONS] = {"mode": "explicit", "ttl": OPENAI_EXPLICIT_TTL}
    return fields


def _parts(message: Mapping[str, Any]) -> list[Any]:
    content = message.get("content")
    return content if isinstance(content, list) else []


def refused_field(status: int, body: object, detail: str) -> str | None:
    """The optional field a 400 refuses, named in its ``param`` or its message; None for any other error."""
    if status != 400:
        return None
    param = body.get("param") if isinstance(body, Mapping) else None
    said = f"{param if isinstance(param, str) else ''} {detail}"
    return next((name for name in OPTIONAL_FIELDS if name in said), None)


def without_field(body: Mapping[str, Any], name: str) -> dict[str, Any]:
    """``body`` without the optional field ``name``; without the breakpoints, without the options too
    (explicit mode with no breakpoint would cache nothing)."""
    drop = {name, OPTIONS} if name == BREAKPOINT else {name}
    out = {k: v for k, v in body.items() if k not in drop}
    for key in ("messages", "input"):  # Chat Completions' messages, the Responses API's input items
        if name == BREAKPOINT and isinstance(body.get(key), list):
            out[key] = [_unmarked(m) for m in body[key]]
    return out


def dropping_refused(
    body: dict[str, Any], attempt: Callable[[dict[str, Any]], ModelResponse], on_event: OnProviderEvent | None
) -> ModelResponse:
    """``attempt(body)``; when the model refuses one of the optional fields the body carries
    (``UnsupportedFieldError``), once more without it, as one line (a ``RetryNotice``). The response
    lists what was refused (``ModelResponse.refused``) so the engine leaves it out from then on."""
    refused: list[tuple[str, str]] = []
    while True:
        try:
            response = attempt(body)
        except UnsupportedFieldError as exc:
            lighter = without_field(body, exc.field) if exc.field else body
            if lighter == body:
                raise  # not ours to leave out (or already left out): the request itself is at fault
            refused.append((exc.field, str(exc)))
            body = lighter
            if on_event is not None:
                reason = f"{body.get('model')} does not take {exc.field} (400); sent without it from now on"
                on_event(RetryNotice(0, 0, 0.0, reason))  # a resend, not one of the retries
            continue
        return dataclasses.replace(response, refused=tuple(refused)) if refused else response


def _unmarked(message: Any) -> Any:
    key = "output" if isinstance(message, Mapping) and message.get("type") == "function_call_output" else "content"
    content = message.get(key) if isinstance(message, Mapping) else None
    if not isinstance(content, list):
        return message
    parts = [{k: v for k, v in p.items() if k != BREAKPOINT} if isinstance(p, Mapping) else p for p in content]
    return {**message, key: parts}


def _markable(message: Mapping[str, Any]) -> bool:
    content = message.get("content")
    return isinstance(content, list) and bool(content) and content[-1].get("type") == "text"


def _index(index: int, count: int) -> int:
    if not -count <= index < count:
        raise ValueError(f"cache plan marks message {index}, but the prompt has {count} messages")
    return index % count


def cache_marks(body: Mapping[str, Any], blocks: list[PrefixBlock], rules: CacheRules) -> CacheMarks:
    """GPT-5.6+: the request's breakpoints, the ones it writes (the latest four; in implicit mode
    the latest three and OpenAI's own), and the block of the implicit one; a read considers the
    latest ``rules.read_breakpoints`` of them.

    Where OpenAI puts its implicit breakpoint is not published: here at the last block, reading
    the longest live prefix before it, as the automatic caching before GPT-5.6 did."""
    marks = breakpoints(body, blocks)
    options = body.get("prompt_cache_options")
    explicit = isinstance(options, Mapping) and options.get("mode") == "explicit"
    room = rules.max_breakpoints
    if explicit or not blocks:
        written, implicit = (marks[-room:] if room else []), -1
    else:
        mark: tuple[int, Ttl] = (len(blocks) - 1, "5m")
        written = sorted({*marks[-(room - 1) :], mark}) if room > 1 else [mark]
        marks, implicit = sorted({*marks, mark}), mark[0]
    return CacheMarks(marks, marks[-rules.read_breakpoints :], written, implicit)
