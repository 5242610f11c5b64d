"""The window: the part of the log the model sees, kept up to date as entries arrive.

What is sent is a projection of the log: the newest compaction's summary, the messages after its
cut, and each cleared tool result replaced by its stub. ``Window`` keeps that projection as a list
that only grows at its end between compactions and clearings (each of which rebuilds it), so the
message objects of a window stay the same objects from turn to turn: the renderer serialises and
hashes each one once. ``window`` is the same projection as a pure function, for a candidate
compaction the engine is weighing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from tiny_agent.context.shrink.compaction import Compaction
from tiny_agent.types import Message, TextBlock, ToolResultBlock, ToolSpec

__all__ = ["Window", "spec_dict", "spec_of", "system_blocks", "window"]


@dataclass
class Window:
    """The window's messages, position by position, beside the log messages they come from."""

    messages: list[Message] = field(default_factory=list)
    origins: list[Message] = field(default_factory=list)
    """The log's message at each position (the first one before its summary was merged in)."""
    compaction: Compaction | None = None
    stubs: Mapping[str, str] = field(default_factory=dict)

    def append(self, message: Message) -> None:
        if self.compaction is not None and message.role == "user" and self._summary_only():
            # Only the summary is left (a cut past every message): the new request joins it.
            self.origins, self.messages = [message], [self._shown(0, message)]
            return
        self.origins.append(message)
        self.messages.append(self._shown(len(self.origins) - 1, message))

    def _summary_only(self) -> bool:
        return len(self.origins) == 1 and self.origins[0] is self.messages[0]

    def replace_last(self, message: Message) -> None:
        self.origins[-1] = message
        self.messages[-1] = self._shown(len(self.origins) - 1, message)

    def rebuild(self, log_messages: Sequence[Message], compaction: Compaction | None, stubs: Mapping[str, str]) -> None:
        self.compaction, self.stubs = compaction, stubs
        self.origins = list(log_messages[compaction.cut if compaction else 0 :])
        self.messages = [self._shown(i, m) for i, m in enumerate(self.origins)]
        if compaction is not None and (not self.origins or self.origins[0].role != "user"):
            self.messages.insert(0, Message("user", (TextBlock(compaction.text()),)))
            self.origins.insert(0, self.messages[0])

    def _shown(self, position: int, message: Message) -> Message:
        if self.stubs:
            message = _with_stubs(message, self.stubs)
        if position == 0 and self.compaction is not None and message.role == "user":
            return Message("user", (TextBlock(self.compaction.text()), *message.content))
        return message


def window(log_messages: Sequence[Message], compaction: Compaction | None, stubs: Mapping[str, str]) -> list[Message]:
    """The window ``compaction`` would give (a pure function of the log's messages)."""
    view = Window()
    view.rebuild(log_messages, compaction, stubs)
    return view.messages


def _with_stubs(message: Message, stubs: Mapping[str, str]) -> Message:
    if message.role != "user" or not any(
        isinstance(b, ToolResultBlock) and b.tool_use_id in stubs for b in message.content
    ):
        return message
    blocks = tuple(
        ToolResultBlock(b.tool_use_id, stubs[b.tool_use_id], b.is_error)
        if isinstance(b, ToolResultBlock) and b.tool_use_id in stubs
        else b
        for b in message.content
    )
    return Message("user", blocks)


def spec_dict(spec: ToolSpec) -> dict[str, Any]:
    return {"name": spec.name, "description": spec.description, "input_schema": dict(spec.input_schema)}


def spec_of(data: Mapping[str, Any]) -> ToolSpec:
    return ToolSpec(str(data["name"]), str(data.get("description", "")), dict(data.get("input_schema") or {}))


def system_blocks(system: str, pins: Sequence[str]) -> tuple[str, ...]:
    """Stable first: the base system prompt, then the pinned constraints."""
    blocks = [system] if system else []
    if pins:
        lines = "\n".join(f"- {p}" for p in pins)
        blocks.append(f"<constraints>\nThe user set these constraints. They always apply:\n{lines}\n</constraints>")
    return tuple(blocks)
