"""OpenAI Chat Completions' request rules on the exact body: system messages first, tool messages answering
the assistant message right before them, roles alternating, a user or tool message last."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from tiny_agent.providers.check import Fold, Incremental

__all__ = ["OpenAICheck", "check_openai_body"]


class OpenAICheck(Incremental):
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
                self.fold = Fold(fold.pending, role, i + 1)
            else:
                self.fold = Fold(tuple(x for x in fold.pending if x != call_id), role, i + 1)
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
        self.fold = Fold(pending, str(role), i + 1)

    def finish(self, marks: int = 0, max_marks: int = 0) -> list[str]:
        problems = [p for _, p in self.problems]
        if not self.fold.count:
            return [*problems, "no messages"]
        if self.fold.role not in ("user", "tool"):
            problems.append("the last message must be a user or tool message")
        if self.fold.pending:
            problems.append(f"tool_call_ids without a response at the end: {list(self.fold.pending)}")
        return problems


def check_openai_body(body: Mapping[str, Any]) -> list[str]:
    """Rules of OpenAI Chat Completions on a whole body (leading system messages allowed)."""
    messages = list(body.get("messages") or [])
    first = next((i for i, m in enumerate(messages) if m.get("role") != "system"), len(messages))
    check = OpenAICheck()
    for position, message in enumerate(messages[first:]):
        check.feed(position, [message])
    return check.finish()
