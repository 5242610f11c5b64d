"""Thinking blocks go back exactly as received (reasoning facts, section 1: "`thinking` or
`redacted_thinking` blocks in the latest assistant message cannot be modified"; the SDK: "pass them
back exactly as received"). One body cannot show an edit, a sequence can: a thinking block where the
previous accepted body had another one, which neither body holds elsewhere (a block a compaction
moved is ``binding``'s question), was modified. ``Resent`` feeds a sequence to both checks.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from tiny_agent.providers.anthropic.binding import Bindings
from tiny_agent.providers.anthropic.thinking import is_thinking, thinking_blocks
from tiny_agent.providers.first_change import first_difference
from tiny_agent.providers.prefix import canonical

__all__ = ["RULES", "Resent", "modified"]

RULES = {"thinking-modified": "a thinking block goes back exactly as received: its text, signature and data unchanged"}

_FIELDS = ("thinking", "signature", "data")
_PLACE = re.compile(r"messages\[(\d+)\]\.content\[(\d+)\]")


class Resent:
    """Anthropic's rules over a sequence of bodies: each thinking block sent back as it was sent before
    (``thinking-modified``) and after the prefix it was made on (``thinking-rebound``)."""

    def __init__(self) -> None:
        self._bindings = Bindings()
        self._last: Mapping[str, Any] | None = None

    def feed(self, body: Mapping[str, Any], model: str, accepted: bool = True) -> list[str]:
        """What ``body`` breaks after the accepted bodies before it; ``accepted``: the API took it, so it
        is what the next body is held to (a refused body was never the conversation)."""
        problems = modified(self._last, body) if self._last is not None else []
        edited = min((_place(p) for p in problems), default=None)
        # every block after an edited one follows another prefix: the edit is the fault to name
        problems += [p for p in self._bindings.feed(body, model, accepted) if edited is None or _place(p) < edited]
        if accepted:
            self._last = body
        return problems


def modified(before: Mapping[str, Any], after: Mapping[str, Any]) -> list[str]:
    """``thinking-modified`` for each thinking block of ``after`` that differs from the one at its place
    in ``before``, where neither block is found elsewhere in the other body."""
    earlier, later = dict(thinking_blocks(before)), dict(thinking_blocks(after))
    kept, sent = {_key(b) for b in earlier.values()}, {_key(b) for b in later.values()}
    problems = []
    for (i, j), block in later.items():
        old = earlier.get((i, j))
        if old is None or _key(block) in kept or _key(old) in sent:
            continue
        if _rest(before, i) != _rest(after, i):
            continue  # another message at that place (a compaction moved the turns): not an edit
        problems.append(
            f"thinking-modified: messages[{i}].content[{j}] is not the block sent there before ({_what(old, block)}): "
            "the API refuses a thinking block that does not go back exactly as it came"
        )
    return problems


def _rest(body: Mapping[str, Any], i: int) -> list[str]:
    """Message ``i`` of ``body`` without its thinking and cache markers: the turn a block belongs to."""
    content = body["messages"][i].get("content")
    blocks = content if isinstance(content, list) else [content]
    return [canonical(b) for b in blocks if not is_thinking(b)]


def _place(problem: str) -> tuple[int, int]:
    """(message, block) of the place a problem names."""
    found = _PLACE.search(problem)
    return (int(found[1]), int(found[2])) if found else (0, 0)


def _key(block: Mapping[str, Any]) -> str:
    """The block as the API verifies it: its type and what it signed (a cache marker is another rule's)."""
    return json.dumps([block.get("type"), *(block.get(f) for f in _FIELDS)])


def _what(old: Mapping[str, Any], new: Mapping[str, Any]) -> str:
    if old.get("type") != new.get("type"):
        return f"{old.get('type')} then, {new.get('type')} now"
    changed = [f for f in _FIELDS if old.get(f) != new.get(f)]
    said = []
    for field in changed:
        if field == "signature" and not new.get(field):
            said.append("its signature is gone")
        elif field == "thinking":
            said.append(f"its text {_text_change(str(old.get(field) or ''), str(new.get(field) or ''))}")
        else:
            said.append(f"its {field} changed")
    return ", ".join(said)


def _text_change(old: str, new: str, width: int = 24) -> str:
    """Where two texts first differ, with a little of each from there: at character 22, 'forty' -> '40'."""
    at = first_difference(old, new)
    start = max(0, at - 8)
    return f"at character {at}, {old[start : at + width]!r} -> {new[start : at + width]!r}"
