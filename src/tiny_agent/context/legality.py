"""Protocol legality: check every request before it is sent, and repair what can be repaired.

Orphaned tool pairs are the most reported failure of agent runtimes (Claude Code, LangChain, the
OpenAI Agents SDK, pydantic-ai): once an illegal history is stored, every later turn gets a 400.
So the rules are checked twice: on the provider-neutral messages (``check_messages``), and on the
exact wire body that will be sent (``check_anthropic_body``, ``check_openai_body``). ``repair`` is
deterministic, so the same broken history always becomes the same legal one and the prompt cache
still matches on the next turn.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from tiny_agent.types import Block, Message, TextBlock, ToolResultBlock, ToolUseBlock, message_from_dict

__all__ = ["INTERRUPTED", "check_anthropic_body", "check_messages", "check_openai_body", "drop_empty_text", "repair"]

INTERRUPTED = "[no result: this tool call was interrupted before it finished]"


def check_messages(messages: Sequence[Message]) -> list[str]:
    """Every rule a request's messages must satisfy; returns the violations (empty = legal)."""
    problems: list[str] = []
    if not messages:
        return ["no messages"]
    if messages[0].role != "user":
        problems.append("the first message must come from the user")
    if messages[-1].role != "user":
        problems.append("the last message must come from the user")
    pending: set[str] = set()
    seen_ids: set[str] = set()
    for i, msg in enumerate(messages):
        if not msg.content:
            problems.append(f"messages[{i}] is empty")
        if any(isinstance(b, TextBlock) and not b.text.strip() for b in msg.content):
            problems.append(f"messages[{i}] has an empty text block")
        if i and msg.role == messages[i - 1].role:
            problems.append(f"messages[{i}] repeats the role {msg.role!r}")
        if msg.role == "assistant":
            if pending:
                problems.append(f"messages[{i}]: tool_use ids without a result: {sorted(pending)}")
            if msg.tool_results:
                problems.append(f"messages[{i}]: tool_result inside an assistant message")
            ids = [b.id for b in msg.tool_uses]
            dup = {x for x in ids if ids.count(x) > 1 or x in seen_ids}
            if dup:
                problems.append(f"messages[{i}]: duplicate tool_use ids {sorted(dup)}")
            seen_ids.update(ids)
            pending = set(ids)
            continue
        answered = [b.tool_use_id for b in msg.tool_results]
        orphans = [x for x in answered if x not in pending]
        if orphans:
            problems.append(f"messages[{i}]: tool_result without its tool_use: {orphans}")
        missing = pending - set(answered)
        if missing:
            problems.append(f"messages[{i - 1}]: tool_use ids without a result: {sorted(missing)}")
        first_other = next((k for k, b in enumerate(msg.content) if not isinstance(b, ToolResultBlock)), None)
        if first_other is not None and any(isinstance(b, ToolResultBlock) for b in msg.content[first_other:]):
            problems.append(f"messages[{i}]: tool_result blocks must come first")
        pending = set()
    if pending:
        problems.append(f"messages[{len(messages) - 1}]: tool_use ids without a result: {sorted(pending)}")
    return problems


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


def check_anthropic_body(body: Mapping[str, Any]) -> list[str]:
    """Rules of the Anthropic Messages API on the exact body that will be sent."""
    problems: list[str] = []
    try:
        messages = [message_from_dict(m) for m in body.get("messages", [])]
    except (KeyError, TypeError, ValueError) as exc:
        return [f"malformed message: {exc}"]
    problems.extend(check_messages(messages))
    marks = sum(1 for b in body.get("system", []) if isinstance(b, dict) and "cache_control" in b)
    marks += sum(1 for t in body.get("tools", []) if "cache_control" in t)
    for m in body.get("messages", []):
        content = m["content"]
        if isinstance(content, list):
            marks += sum(1 for b in content if "cache_control" in b)
    if marks > 4:
        problems.append(f"{marks} cache_control markers; at most 4 are allowed")
    return problems


def check_openai_body(body: Mapping[str, Any]) -> list[str]:
    """Rules of OpenAI Chat Completions: tool messages answer the assistant message right before them."""
    problems: list[str] = []
    messages = list(body.get("messages", []))
    first = next((i for i, m in enumerate(messages) if m.get("role") != "system"), len(messages))
    convo = messages[first:]
    if any(m.get("role") == "system" for m in convo):
        problems.append("system messages must come before the conversation")
    if not convo:
        return [*problems, "no messages"]
    if convo[-1].get("role") not in ("user", "tool"):
        problems.append("the last message must be a user or tool message")
    pending: list[str] = []
    prev_role = None
    for i, msg in enumerate(convo):
        role = msg.get("role")
        if role == "tool":
            call_id = msg.get("tool_call_id")
            if call_id not in pending:
                problems.append(f"tool message {i} ({call_id}) does not answer the preceding tool_calls")
            else:
                pending.remove(call_id)
        else:
            if pending:
                problems.append(f"tool_call_ids without a response before message {i}: {pending}")
                pending = []
            if role == prev_role and role in ("user", "assistant"):
                problems.append(f"message {i} repeats the role {role!r}")
            if role == "assistant":
                pending = [c["id"] for c in msg.get("tool_calls") or []]
            elif role != "user":
                problems.append(f"message {i} has an unknown role {role!r}")
        prev_role = role
    if pending:
        problems.append(f"tool_call_ids without a response at the end: {pending}")
    return problems
