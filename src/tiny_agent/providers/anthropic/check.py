"""The Anthropic Messages API's request rules on the exact body: each wire message read back, then the neutral rules."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from tiny_agent.providers.anthropic.compaction import is_compaction
from tiny_agent.providers.cache_rules import MAX_BREAKPOINTS
from tiny_agent.providers.check import MessageCheck, count_marks
from tiny_agent.types import message_from_dict

__all__ = ["AnthropicCheck", "check_anthropic_body"]


class AnthropicCheck:
    """Messages API rules on the exact body: each wire message read back, then the neutral rules."""

    def __init__(self) -> None:
        self.messages = MessageCheck()

    def rewind(self, position: int) -> None:
        self.messages.rewind(position)

    def feed(self, position: int, wire: Sequence[Mapping[str, Any]]) -> None:
        for item in wire:  # one wire message per neutral message on this wire
            content = item.get("content")
            opens = isinstance(content, list) and bool(content) and is_compaction(content[0])
            if isinstance(content, list) and any(is_compaction(b) for b in content):
                item = {**item, "content": [b for b in content if not is_compaction(b)]}  # the server's block
            try:
                message = message_from_dict(item)
            except (KeyError, TypeError, ValueError) as exc:
                self.messages.start(position)
                self.messages.report(position, f"malformed message: {exc}")
                continue
            # The API drops what comes before a compaction block: a body may start at one.
            self.messages.feed(position, message, resumed=opens)

    def finish(self, marks: int, max_marks: int) -> list[str]:
        """The problems found, with the body's ``cache_control`` markers counted (``count_marks``)."""
        problems = self.messages.finish()
        if marks > max_marks:
            problems.append(f"{marks} cache_control markers; at most {max_marks} are allowed")
        return problems


def check_anthropic_body(body: Mapping[str, Any], max_marks: int | None = MAX_BREAKPOINTS) -> list[str]:
    """Rules of the Anthropic Messages API on a whole body (``max_marks`` None: its markers not counted)."""
    check = AnthropicCheck()
    for position, message in enumerate(body.get("messages") or []):
        check.feed(position, [message])
    return check.finish(count_marks(body), max_marks) if max_marks is not None else check.messages.finish()
