"""One neutral message as Chat Completions messages: text and tool calls in one assistant message, each
tool result its own ``tool`` message."""

from __future__ import annotations

import json
from typing import Any, assert_never

from tiny_agent.types import (
    Message,
    ReasoningBlock,
    RedactedThinkingBlock,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
)

__all__ = ["chat_messages"]


def chat_messages(message: Message) -> list[dict[str, Any]]:
    """One of our messages as Chat Completions messages: tool results become ``tool`` messages."""
    texts: list[str] = []
    calls: list[dict[str, Any]] = []
    results: list[dict[str, Any]] = []
    for block in message.content:
        match block:
            case TextBlock(text=text):
                texts.append(text)
            case ToolUseBlock(id=id_, name=name, input=input_):
                call = {"name": name, "arguments": json.dumps(dict(input_))}
                calls.append({"id": id_, "type": "function", "function": call})
            case ToolResultBlock(tool_use_id=tool_use_id, content=content, is_error=is_error):
                if is_error and not content.startswith("ERROR: "):
                    # The tool message has no error flag; the model must still see the failure.
                    content = "ERROR: " + content
                results.append({"role": "tool", "tool_call_id": tool_use_id, "content": content})
            case ThinkingBlock() | RedactedThinkingBlock() | ReasoningBlock():
                pass  # Chat Completions has no field for another wire's reasoning
            case _:
                assert_never(block)
    text = "\n\n".join(texts)
    if message.role == "user":
        if calls:
            raise ValueError("a user message cannot carry tool_use blocks")
        return [*results, {"role": "user", "content": text}] if texts or not results else results
    if results:
        raise ValueError("an assistant message cannot carry tool_result blocks")
    rendered: dict[str, Any] = {"role": "assistant", "content": text or None}
    if calls:
        rendered["tool_calls"] = calls
    elif not text:
        rendered["content"] = ""  # an assistant message needs content or tool_calls
    return [rendered]
