"""Neutral messages as Responses API input items, made legal by construction.

- A user's text is one ``message`` item (``input_text``); each tool result a ``function_call_output``
  with the ``call_id`` of its call, results first (the order the call's turn needs).
- An assistant's blocks keep their order: text is a ``message`` item (the SDK's ``EasyInputMessage``:
  its text as a string, which no breakpoint can be put on, and its ``phase``); a call a
  ``function_call`` item (no ``id``: under ``store: false`` an id names nothing, and a ``msg_`` id
  there is the "Expected an ID that begins with 'fc'" 400); a ``ReasoningBlock``
  holding an item is that item as received (``summary`` added when missing: the API requires it).
- Encrypted items go only to the model that wrote them; another model's are left out
  (``unreadable`` counts them, from the messages alone: rendering has no side effect, so a window
  rendered twice is not counted twice). A reasoning item with nothing after it in its message (a
  reply cut at its limit) is left out too: the API refuses a reasoning item without its following item.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, assert_never

from tiny_agent.types import (
    Message,
    ReasoningBlock,
    RedactedThinkingBlock,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolSpec,
    ToolUseBlock,
)

__all__ = [
    "after_last_answer",
    "cannot_read",
    "compaction_at",
    "render_message",
    "since_compaction",
    "system_item",
    "tool",
    "unreadable",
]


def system_item(text: str) -> dict[str, Any]:
    return {"type": "message", "role": "developer", "content": [{"type": "input_text", "text": text}]}


def tool(spec: ToolSpec) -> dict[str, Any]:
    return {
        "type": "function",
        "name": spec.name,
        "description": spec.description,
        "parameters": dict(spec.input_schema),
        "strict": False,
    }


def render_message(message: Message, model: str, *, parts: bool) -> list[dict[str, Any]]:
    """``message`` as input items for ``model``; ``parts``: tool output as a list of ``input_text``
    blocks (the form a breakpoint can be put on; GPT-5.6+) rather than a string. Pure."""
    if message.role == "user":
        return _user(message, parts=parts)
    out: list[dict[str, Any]] = []
    pending: list[dict[str, Any]] = []  # reasoning items waiting for their following item
    for block in message.content:
        match block:
            case ReasoningBlock(item=item, model=writer) if item is not None:
                if not _readable(writer, model):
                    continue
                pending.append({"summary": [], **dict(item)} if item.get("type") == "reasoning" else dict(item))
            case TextBlock(text=text, phase=phase):
                item = {"type": "message", "role": "assistant", "content": text}
                out.extend([*pending, {**item, "phase": phase} if phase else item])
                pending = []
            case ToolUseBlock(id=id_, name=name, input=input_):
                call = {"type": "function_call", "call_id": id_, "name": name, "arguments": json.dumps(dict(input_))}
                out.extend([*pending, call])
                pending = []
            case ReasoningBlock() | ThinkingBlock() | RedactedThinkingBlock():
                pass  # another wire's reasoning: the Responses API has no field for it
            case ToolResultBlock():
                raise ValueError("an assistant message cannot carry tool_result blocks")
            case _:
                assert_never(block)
    out.extend(p for p in pending if p.get("type") == "compaction")  # a compaction item stands alone
    return out


def _readable(writer: str, model: str) -> bool:
    """Whether ``model`` can read encrypted content ``writer`` wrote (unnamed: as old logs have it)."""
    return not writer or writer == model


def unreadable(messages: Sequence[Message], model: str) -> dict[str, int]:
    """The encrypted items of ``messages`` that ``render_message`` leaves out for ``model`` because
    another model wrote them, counted by that model: each item once, however often it is rendered."""
    counts: dict[str, int] = {}
    for message in messages:
        for block in message.content:
            if isinstance(block, ReasoningBlock) and block.item is not None and not _readable(block.model, model):
                counts[block.model] = counts.get(block.model, 0) + 1
    return counts


def cannot_read(model: str, counts: Mapping[str, int]) -> str:
    """``unreadable``'s counts in words, the same for a run and an export:
    ``encrypted reasoning items gpt-5.5 cannot read: 3 of gpt-5.6``."""
    said = ", ".join(f"{n} of {writer}" for writer, n in sorted(counts.items()))
    return f"encrypted reasoning items {model} cannot read: {said}"


def _user(message: Message, *, parts: bool) -> list[dict[str, Any]]:
    results: list[dict[str, Any]] = []
    texts: list[str] = []
    for block in message.content:
        if isinstance(block, ToolResultBlock):
            content = block.content
            if block.is_error and not content.startswith("ERROR: "):
                content = "ERROR: " + content  # the output has no error flag; the model must see the failure
            output: Any = [{"type": "input_text", "text": content}] if parts and content else content
            results.append({"type": "function_call_output", "call_id": block.tool_use_id, "output": output})
        elif isinstance(block, TextBlock):
            texts.append(block.text)
        elif isinstance(block, ToolUseBlock):
            raise ValueError("a user message cannot carry tool_use blocks")
    if texts:
        text = {"type": "input_text", "text": "\n\n".join(texts)}
        results.append({"type": "message", "role": "user", "content": [text]})
    return results


def after_last_answer(groups: Sequence[Sequence[Mapping[str, Any]]]) -> list[dict[str, Any]]:
    """The items after the last assistant message: all a stateful request sends (the server has the rest)."""
    flat = [dict(item) for group in groups for item in group]
    last = max((i for i, x in enumerate(flat) if _from_model(x)), default=-1)
    return flat[last + 1 :]


def _from_model(item: Mapping[str, Any]) -> bool:
    kind = item.get("type")
    return kind in ("function_call", "reasoning", "compaction") or item.get("role") == "assistant"


def since_compaction(groups: list[list[dict[str, Any]]]) -> list[list[dict[str, Any]]]:
    """The groups from the newest server compaction item on: the item stands for everything before
    it ("you can drop items that came before the most recent compaction item"); earlier groups are
    left empty, so positions still match the messages."""
    g = compaction_at(groups)
    cuts = [i for i, item in enumerate(groups[g]) if item.get("type") == "compaction"] if groups else []
    return [[] for _ in groups[:g]] + [groups[g][cuts[-1] :]] + groups[g + 1 :] if cuts else groups


def compaction_at(groups: Sequence[Sequence[Mapping[str, Any]]]) -> int:
    """The position of the newest group holding a server compaction item; 0 when none does."""
    for g in range(len(groups) - 1, -1, -1):
        if any(item.get("type") == "compaction" for item in groups[g]):
            return g
    return 0
