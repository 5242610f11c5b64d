"""Protocol legality: repair what can be repaired, deterministically.

The rules themselves are facts of the wire and live with it (the neutral ``check_messages`` in
``providers.check``, the exact-body ``check_anthropic_body`` / ``check_openai_body`` in each wire's
folder, re-exported here); the engine checks every request before it is sent. ``repair`` is deterministic, so the same
broken history always becomes the same legal one and the prompt cache still matches on the next turn.
"""

from __future__ import annotations

from collections.abc import Sequence

from tiny_agent.providers.anthropic.check import check_anthropic_body
from tiny_agent.providers.check import check_messages
from tiny_agent.providers.openai.check import check_openai_body
from tiny_agent.types import Block, Message, TextBlock, ToolResultBlock, ToolUseBlock

__all__ = ["INTERRUPTED", "check_anthropic_body", "check_messages", "check_openai_body", "drop_empty_text", "repair"]

INTERRUPTED = "[no result: this tool call was interrupted before it finished]"


def repair(messages: Sequence[Message]) -> list[Message]:
    """The nearest legal sequence, deterministically.

    Drops orphan results, answers unanswered calls with an "interrupted" error result, puts results
    first, merges same-role neighbours and drops empty messages. A trailing assistant text turn
    cannot be repaired without inventing user input, so it is left for ``check_messages`` to report.
    """
    fixed: list[Message] = []
    pending: list[str] = []
    for msg in map(drop_empty_text, messages):
        if msg.role == "assistant":
            if pending:
                fixed.append(_results_only(pending, ()))
            blocks = tuple(b for b in msg.content if not isinstance(b, ToolResultBlock))
            pending = [b.id for b in blocks if isinstance(b, ToolUseBlock)]
            _append(fixed, Message("assistant", blocks))
            continue
        results = [b for b in msg.content if isinstance(b, ToolResultBlock) and b.tool_use_id in pending]
        others = tuple(b for b in msg.content if not isinstance(b, ToolResultBlock))
        if pending:
            fixed.append(_results_only(pending, results, others))
            pending = []
        else:
            _append(fixed, Message("user", others))
    if pending:
        fixed.append(_results_only(pending, ()))
    fixed = [m for m in fixed if m.content]
    merged: list[Message] = []
    for msg in fixed:
        _append(merged, msg)
    if merged and merged[0].role == "assistant":
        merged.insert(0, Message.user("(continuing the conversation)"))
    return merged


def drop_empty_text(message: Message) -> Message:
    """The message without empty or blank text blocks (Anthropic rejects them with a 400)."""
    kept = tuple(b for b in message.content if not (isinstance(b, TextBlock) and not b.text.strip()))
    return message if len(kept) == len(message.content) else Message(message.role, kept)


def _results_only(
    pending: Sequence[str], results: Sequence[ToolResultBlock], others: tuple[Block, ...] = ()
) -> Message:
    """The results in the order given (first one wins on a duplicate), then one for each missing call."""
    by_id: dict[str, ToolResultBlock] = {}
    for r in results:
        by_id.setdefault(r.tool_use_id, r)
    missing = tuple(ToolResultBlock(i, INTERRUPTED, is_error=True) for i in pending if i not in by_id)
    return Message("user", tuple(by_id.values()) + missing + others)


def _append(out: list[Message], msg: Message) -> None:
    if not msg.content:
        return
    if out and out[-1].role == msg.role:
        prev = out[-1]
        blocks = prev.content + msg.content
        if msg.role == "user":
            # Results must stay first in a user message, ahead of any text merged into it.
            blocks = tuple(b for b in blocks if isinstance(b, ToolResultBlock)) + tuple(
                b for b in blocks if not isinstance(b, ToolResultBlock)
            )
        out[-1] = Message(msg.role, blocks)
    else:
        out.append(msg)
