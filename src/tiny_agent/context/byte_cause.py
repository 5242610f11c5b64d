"""The cause of a miss that is in the request bytes, found by the one simulator ``lint`` and the view
run too (``providers.cache_breaks.prefix_breaks`` on the previous request's body and this one), in the
per-call line's words.

Each rule has its family of words (``observe.causes.miss_cause`` maps them to a category):
``model-changed`` "model changed: ..."; the ``tool-*`` rules "tools changed: ..."; ``system-changed``
"system prompt changed at character N: now ..., was ..." (or "pinned constraints changed ..." when
the fingerprints say only the pins changed); ``message-edited`` and ``message-removed`` "message #N
changed: ..."; ``thinking-changed`` "thinking settings changed: ..."; ``tool-choice-changed``
"tool_choice changed: ..."; ``effort-changed`` "effort changed: ..."; ``response-format-changed``
"response format changed: ..."; ``cache-key-changed`` "cache key changed: ..."; ``breakpoint-lookback``
"lookback: ...". The line then ends with the simulator's position, `` [RULE at PATH]`` or
`` [RULE at PATH, character N]`` (``observe.view.data.diagnosed_break`` reads it back), so a line
can be matched to lint's finding and to the view's break: the same rule, path and character.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tiny_agent.context.miss_text import excerpt, tool_changes
from tiny_agent.providers.break_settings import (
    LEVELS,
    consequence,
    settings_consequence,
    wire_breaks,
)
from tiny_agent.providers.cache_breaks import Break
from tiny_agent.providers.first_change import first_change
from tiny_agent.providers.wire import prefix_blocks, wire_of
from tiny_agent.types import Prompt

__all__ = ["LOOKBACK", "MESSAGE_EDITS", "Side", "cause_words", "leading_break", "position", "thinking_consequence"]

LOOKBACK = "breakpoint-lookback"
MESSAGE_EDITS = ("message-edited", "message-removed")
_SETTING_WORDS = {
    "tool-choice-changed": "tool_choice changed",
    "effort-changed": "effort changed",
    "response-format-changed": "response format changed",
    "cache-key-changed": "cache key changed",
}
_MESSAGE_INDEX = re.compile(r"^(?:messages|input)\[(\d+)\]")


@dataclass(frozen=True)
class Side:
    """One of the two requests compared: its body, its prompt and its fingerprint."""

    body: Mapping[str, Any]
    prompt: Prompt | None
    fingerprint: Mapping[str, Any]


def leading_break(breaks: Sequence[Break], wire: str) -> Break | None:
    """The break a miss line names: the one that invalidates the prefix from its earliest level
    (tools, then system, then messages), the first listed among equals; a lookback only when it is
    the only one (the simulator reports it only when no block changed). A setting that changed with
    another (``Break.follows``: the effort with the thinking switch) is not the cause: that one is,
    at the earlier level of the two (``Break.level``)."""
    causes = [b for b in breaks if not b.follows] or list(breaks)
    return min(causes, key=lambda b: _rank(b, wire)) if causes else None


def position(found: Break) -> str:
    """`` [RULE at PATH]``, or `` [RULE at PATH, character N]`` where the break names a character."""
    at = f", character {found.character}" if found.character is not None else ""
    return f" [{found.rule} at {found.path}{at}]"


def cause_words(found: Break, before: Side, after: Side, wire: str) -> str:
    """The per-call line for ``found``, in its rule's family of words (without the position)."""
    rule = found.rule
    if rule == "model-changed":
        return f"model changed: {before.body.get('model')} -> {after.body.get('model')}"
    if rule.startswith("tool") and rule != "tool-choice-changed":
        return "tools changed: " + _tools(found, before, after)
    if rule == "system-changed":
        old, new = before.fingerprint, after.fingerprint
        pins = old.get("system") == new.get("system") and old.get("pins") != new.get("pins")
        return ("pinned constraints changed" if pins else "system prompt changed") + _where(found, before, after, wire)
    if rule in MESSAGE_EDITS:
        number = _message_number(found.path, after.body if rule == "message-edited" else before.body, wire)
        if rule == "message-removed":
            return f"message #{number} changed: it is gone from this request"
        where = _where(found, before, after, wire)
        return f"message #{number} changed" + (where[where.index(":") :] if where else "")
    if rule == "thinking-changed":
        old_key = before.fingerprint.get("thinking", "default")
        new_key = after.fingerprint.get("thinking", "default")
        shown = f"{old_key} -> {new_key}" if old_key != new_key else found.excerpt
        cost = consequence(found.level) if found.level else thinking_consequence(wire)
        return f"thinking settings changed: {shown} ({cost})"
    if rule == LOOKBACK:
        return f"lookback: {found.message}"
    if rule in _SETTING_WORDS:
        return f"{_SETTING_WORDS[rule]}: {found.excerpt}"
    return f"{rule}: {found.message}"


def thinking_consequence(wire: str, *, switch: bool = True, effort: bool = False) -> str:
    """What a change of the thinking settings costs on ``wire``, in its table's words: the earliest
    level's among what changed, the ``switch`` and the ``effort`` (DeepSeek's effort, which
    ``--thinking off`` drops, is keyed with the tools); the effort's where it is the switch (OpenAI's
    Responses API has no other)."""
    changed = [rule for rule, did in (("thinking-changed", switch), ("effort-changed", effort)) if did]
    found = settings_consequence(wire, *changed) or settings_consequence(wire, "thinking-changed")
    return found or settings_consequence(wire, "effort-changed") or consequence("messages")


def _rank(found: Break, wire: str) -> int:
    if found.rule == LOOKBACK:
        return len(LEVELS)
    if found.level is not None:
        return LEVELS.index(found.level)
    for setting in wire_breaks(wire).settings:
        if (setting.rule, setting.path) == (found.rule, found.path):
            return LEVELS.index(setting.level)
    if found.path.startswith("tools"):
        return LEVELS.index("tools")
    return LEVELS.index("system" if found.rule == "system-changed" else "messages")


def _tools(found: Break, before: Side, after: Side) -> str:
    if before.prompt is not None and after.prompt is not None:
        said = tool_changes(before.prompt.tools, after.prompt.tools)
        if said:
            return ", ".join(said)
    return found.message.split(":", 1)[0]


def _where(found: Break, before: Side, after: Side, wire: str) -> str:
    """`` at character N: now "...", was "..."`` for the text at the break's path in both bodies."""
    old, new = _block_at(before.body, found.path, wire), _block_at(after.body, found.path, wire)
    if old is None or new is None or found.character is None:
        return ""
    at, was, now = first_change(old, new)
    return f" at character {at}: now {excerpt(now, at)}, was {excerpt(was, at)}"


def _block_at(body: Mapping[str, Any], path: str, wire: str) -> Any:
    return next((b.data for b in prefix_blocks(body, wire) if b.path == path), None)


def _message_number(path: str, body: Mapping[str, Any], wire: str) -> int:
    """The conversation message's number (1 for the first), from a path such as ``messages[2].content[0]``."""
    found = _MESSAGE_INDEX.match(path)
    index = int(found.group(1)) if found else 0
    return max(1, index - wire_of(wire).conversation_start(body) + 1)
