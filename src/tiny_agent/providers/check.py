"""The rules every request keeps whatever its wire, checked as it is built, and the shape of a wire's check.

Orphaned tool pairs are the most reported failure of agent runtimes (Claude Code, LangChain, the
OpenAI Agents SDK, pydantic-ai): once an illegal history is stored, every later turn gets a 400.
So every request is checked on the body that will be sent. The check is a fold over the request's
messages, one neutral message at a time (``feed``), that can be taken back to any earlier message
(``rewind``): a conversation only grows at its end, so each turn checks what was appended, not the
whole window again. Each wire's own check lives in its folder (``anthropic/check.py``,
``openai/check.py``) and is reached through its wire object (``providers.wire``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from tiny_agent.providers.prefix import MARK_KEYS
from tiny_agent.types import Message, TextBlock, ToolResultBlock

__all__ = ["Fold", "Incremental", "MessageCheck", "WireCheck", "check_messages", "count_marks"]


class WireCheck(Protocol):
    """An incremental check of one wire's request: wire messages fed by the neutral message they render."""

    def rewind(self, position: int) -> None:
        """Forget every position from ``position`` on."""

    def feed(self, position: int, wire: Sequence[Mapping[str, Any]]) -> None:
        """The wire messages of the neutral message at ``position``."""

    def finish(self, marks: int, max_marks: int) -> list[str]:
        """The problems found, with the body's cache marks (``count_marks``) held to ``max_marks``."""
        ...


@dataclass(frozen=True)
class Fold:
    pending: tuple[str, ...] = ()
    role: str | None = None
    count: int = 0
    """Messages (neutral, or wire messages of the conversation) fed so far."""


@dataclass
class Incremental:
    """Snapshots before each position, so a fold can be taken back to any of them."""

    fold: Fold = field(default_factory=Fold)
    before: list[Fold] = field(default_factory=list)
    problems: list[tuple[int, str]] = field(default_factory=list)
    seen: dict[str, int] = field(default_factory=dict)
    """tool_use ids by the position that introduced them (duplicates across the window are refused)."""

    def rewind(self, position: int) -> None:
        """Forget every position from ``position`` on."""
        if position >= len(self.before):
            return
        self.fold = self.before[position]
        del self.before[position:]
        self.problems = [p for p in self.problems if p[0] < position]
        self.seen = {k: v for k, v in self.seen.items() if v < position} if self.seen else self.seen

    def start(self, position: int) -> None:
        if position != len(self.before):
            raise ValueError(f"feed position {position} after {len(self.before)} positions")
        self.before.append(self.fold)

    def report(self, position: int, problem: str) -> None:
        self.problems.append((position, problem))


class MessageCheck(Incremental):
    """The neutral rules: the first and last message from the user, roles alternating, every tool_use
    answered in the next message (results first), no result without its call, no duplicate ids."""

    def feed(self, position: int, message: Message, *, resumed: bool = False) -> None:
        """``resumed``: the message opens with a server's summary of all before it (it may come first)."""
        self.start(position)
        i, fold = self.fold.count, self.fold
        if not message.content:
            self.report(position, f"messages[{i}] is empty")
        if any(isinstance(b, TextBlock) and not b.text.strip() for b in message.content):
            self.report(position, f"messages[{i}] has an empty text block")
        if i == 0 and message.role != "user" and not resumed:
            self.report(position, "the first message must come from the user")
        if i and message.role == fold.role:
            self.report(position, f"messages[{i}] repeats the role {message.role!r}")
        if message.role == "assistant":
            if fold.pending:
                self.report(position, f"messages[{i}]: tool_use ids without a result: {sorted(fold.pending)}")
            if message.tool_results:
                self.report(position, f"messages[{i}]: tool_result inside an assistant message")
            ids = [b.id for b in message.tool_uses]
            dup = {x for x in ids if ids.count(x) > 1 or x in self.seen}
            if dup:
                self.report(position, f"messages[{i}]: duplicate tool_use ids {sorted(dup)}")
            for x in ids:
                self.seen.setdefault(x, position)
            self.fold = Fold(tuple(ids), "assistant", i + 1)
            return
        answered = [b.tool_use_id for b in message.tool_results]
        orphans = [x for x in answered if x not in fold.pending]
        if orphans:
            self.report(position, f"messages[{i}]: tool_result without its tool_use: {orphans}")
        missing = set(fold.pending) - set(answered)
        if missing:
            self.report(position, f"messages[{i - 1}]: tool_use ids without a result: {sorted(missing)}")
        first_other = next((k for k, b in enumerate(message.content) if not isinstance(b, ToolResultBlock)), None)
        if first_other is not None and any(isinstance(b, ToolResultBlock) for b in message.content[first_other:]):
            self.report(position, f"messages[{i}]: tool_result blocks must come first")
        self.fold = Fold((), "user", i + 1)

    def finish(self) -> list[str]:
        problems = [p for _, p in self.problems]
        if not self.fold.count:
            return ["no messages"]
        if self.fold.role != "user":
            problems.append("the last message must come from the user")
        if self.fold.pending:
            problems.append(
                f"messages[{self.fold.count - 1}]: tool_use ids without a result: {sorted(self.fold.pending)}"
            )
        return problems


def count_marks(body: Mapping[str, Any]) -> int:
    """Cache markers anywhere in a body's tools, system and messages: Anthropic's ``cache_control``,
    OpenAI's ``prompt_cache_breakpoint`` (GPT-5.6+, on content parts)."""
    system = body.get("system")
    marks = sum(1 for b in system if _marked(b)) if isinstance(system, list) else 0
    marks += sum(1 for t in body.get("tools") or [] if _marked(t))
    for m in [*(body.get("messages") or []), *(body.get("input") or [])]:  # input: the Responses API's items
        content = m.get("content") if isinstance(m, Mapping) else None
        if isinstance(m, Mapping) and m.get("type") == "function_call_output":
            content = m.get("output")
        if isinstance(content, list):
            marks += sum(1 for b in content if _marked(b))
    return marks


def _marked(block: object) -> bool:
    return isinstance(block, Mapping) and not MARK_KEYS.isdisjoint(block)


def check_messages(messages: Sequence[Message]) -> list[str]:
    """Every rule a request's neutral messages must keep; returns the violations (empty = legal)."""
    check = MessageCheck()
    for position, message in enumerate(messages):
        check.feed(position, message)
    return check.finish()
