"""The rules a request must keep, on the neutral messages and on the exact wire body, checked as it is built.

Orphaned tool pairs are the most reported failure of agent runtimes (Claude Code, LangChain, the
OpenAI Agents SDK, pydantic-ai): once an illegal history is stored, every later turn gets a 400.
So every request is checked on the body that will be sent. The check is a fold over the request's
messages, one neutral message at a time (``feed``), that can be taken back to any earlier message
(``rewind``): a conversation only grows at its end, so each turn checks what was appended, not the
whole window again. ``check_anthropic_body`` and ``check_openai_body`` run the same folds over a
whole body (``lint``, tests).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from tiny_agent.providers.cache_rules import MAX_BREAKPOINTS
from tiny_agent.providers.prefix import MARK_KEYS
from tiny_agent.providers.responses.check import ResponsesCheck
from tiny_agent.types import Message, TextBlock, ToolResultBlock, message_from_dict

__all__ = [
    "AnthropicCheck",
    "MessageCheck",
    "OpenAICheck",
    "WireCheck",
    "check_anthropic_body",
    "check_messages",
    "check_openai_body",
    "count_marks",
]


@dataclass(frozen=True)
class _Fold:
    pending: tuple[str, ...] = ()
    role: str | None = None
    count: int = 0
    """Messages (neutral, or wire messages of the conversation) fed so far."""


@dataclass
class _Incremental:
    """Snapshots before each position, so a fold can be taken back to any of them."""

    fold: _Fold = field(default_factory=_Fold)
    before: list[_Fold] = field(default_factory=list)
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


class MessageCheck(_Incremental):
    """The neutral rules: the first and last message from the user, roles alternating, every tool_use
    answered in the next message (results first), no result without its call, no duplicate ids."""

    def feed(self, position: int, message: Message) -> None:
        self.start(position)
        i, fold = self.fold.count, self.fold
        if not message.content:
            self.report(position, f"messages[{i}] is empty")
        if any(isinstance(b, TextBlock) and not b.text.strip() for b in message.content):
            self.report(position, f"messages[{i}] has an empty text block")
        if i == 0 and message.role != "user":
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
            self.fold = _Fold(tuple(ids), "assistant", i + 1)
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
        self.fold = _Fold((), "user", i + 1)

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


class AnthropicCheck:
    """Messages API rules on the exact body: each wire message read back, then the neutral rules."""

    def __init__(self) -> None:
        self.messages = MessageCheck()

    def rewind(self, position: int) -> None:
        self.messages.rewind(position)

    def feed(self, position: int, wire: Sequence[Mapping[str, Any]]) -> None:
        for item in wire:  # one wire message per neutral message on this wire
            try:
                message = message_from_dict(item)
            except (KeyError, TypeError, ValueError) as exc:
                self.messages.start(position)
                self.messages.report(position, f"malformed message: {exc}")
                continue
            self.messages.feed(position, message)

    def finish(self, marks: int, max_marks: int) -> list[str]:
        """The problems found, with the body's ``cache_control`` markers counted (``count_marks``)."""
        problems = self.messages.finish()
        if marks > max_marks:
            problems.append(f"{marks} cache_control markers; at most {max_marks} are allowed")
        return problems


class OpenAICheck(_Incremental):
    """Chat Completions rules: system messages first, tool messages answer the assistant message right
    before them, roles alternate, the last message is a user or tool message."""

    def feed(self, position: int, wire: Sequence[Mapping[str, Any]]) -> None:
        self.start(position)
        for message in wire:
            self._one(position, message)

    def _one(self, position: int, msg: Mapping[str, Any]) -> None:
        fold = self.fold
        role = msg.get("role")
        i = fold.count
        if role == "system":
            self.report(position, "system messages must come before the conversation")
            return
        if role == "tool":
            call_id = msg.get("tool_call_id")
            if call_id not in fold.pending:
                self.report(position, f"tool message {i} ({call_id}) does not answer the preceding tool_calls")
                self.fold = _Fold(fold.pending, role, i + 1)
            else:
                self.fold = _Fold(tuple(x for x in fold.pending if x != call_id), role, i + 1)
            return
        if fold.pending:
            self.report(position, f"tool_call_ids without a response before message {i}: {list(fold.pending)}")
        if role == fold.role and role in ("user", "assistant"):
            self.report(position, f"message {i} repeats the role {role!r}")
        pending: tuple[str, ...] = ()
        if role == "assistant":
            pending = tuple(c["id"] for c in msg.get("tool_calls") or [])
        elif role != "user":
            self.report(position, f"message {i} has an unknown role {role!r}")
        self.fold = _Fold(pending, str(role), i + 1)

    def finish(self, marks: int = 0, max_marks: int = 0) -> list[str]:
        problems = [p for _, p in self.problems]
        if not self.fold.count:
            return [*problems, "no messages"]
        if self.fold.role not in ("user", "tool"):
            problems.append("the last message must be a user or tool message")
        if self.fold.pending:
            problems.append(f"tool_call_ids without a response at the end: {list(self.fold.pending)}")
        return problems


WireCheck = AnthropicCheck | OpenAICheck | ResponsesCheck


def count_marks(body: Mapping[str, Any]) -> int:
    """Cache markers anywhere in a body's tools, system and messages: Anthropic's ``cache_control``,
    OpenAI's ``prompt_cache_breakpoint`` (GPT-5.6+, on content parts)."""
    system = body.get("system")
    marks = sum(1 for b in system if _marked(b)) if isinstance(system, list) else 0
    marks += sum(1 for t in body.get("tools") or [] if _marked(t))
    for m in body.get("messages") or []:
        content = m.get("content") if isinstance(m, Mapping) else None
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


def check_anthropic_body(body: Mapping[str, Any], max_marks: int = MAX_BREAKPOINTS) -> list[str]:
    """Rules of the Anthropic Messages API on a whole body."""
    check = AnthropicCheck()
    for position, message in enumerate(body.get("messages") or []):
        check.feed(position, [message])
    return check.finish(count_marks(body), max_marks)


def check_openai_body(body: Mapping[str, Any]) -> list[str]:
    """Rules of OpenAI Chat Completions on a whole body (leading system messages allowed)."""
    messages = list(body.get("messages") or [])
    first = next((i for i, m in enumerate(messages) if m.get("role") != "system"), len(messages))
    check = OpenAICheck()
    for position, message in enumerate(messages[first:]):
        check.feed(position, [message])
    return check.finish()
