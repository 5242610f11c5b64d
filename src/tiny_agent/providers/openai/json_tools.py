"""Tool calls for models that cannot make them: grammar-constrained JSON over Chat Completions.

A small local model (the embedded SmolLM2-135M) answers tool requests in prose. llama.cpp can
constrain decoding to a JSON schema (``response_format``), so the model is made to answer with
exactly one of ``{"tool": <name>, "arguments": {...}}`` or ``{"answer": "..."}``; this module maps
that back to tool_use and text blocks. The history is rendered in the same JSON the model writes,
and tool results as user turns, so a chat template without tool support still reads it.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping, Sequence
from typing import Any

from tiny_agent.types import INVALID_JSON_KEY, Block, Message, TextBlock, ToolResultBlock, ToolSpec, ToolUseBlock

__all__ = [
    "ANY_ANSWER",
    "SCHEMA_NAME",
    "parse_reply",
    "render_message",
    "response_format",
    "tool_instructions",
]

SCHEMA_NAME = "tool_or_answer"
ANY_ANSWER: Mapping[str, Any] = {"type": "string"}


def response_format(
    tools: Sequence[ToolSpec],
    grammar: Mapping[str, Mapping[str, Any]] | None = None,
    *,
    answer: Mapping[str, Any] | None = ANY_ANSWER,
) -> dict[str, Any]:
    """One object per tool, plus the final answer: the grammar admits nothing else. ``grammar``
    narrows a tool's arguments for this turn (``Prompt.tool_grammar``); ``answer`` is the schema of
    the answer's text, None to leave the answer out (the reply must then be a tool call)."""
    grammar = grammar or {}
    options: list[dict[str, Any]] = [
        {
            "type": "object",
            "properties": {"tool": {"const": t.name}, "arguments": dict(grammar.get(t.name, t.input_schema))},
            "required": ["tool", "arguments"],
            "additionalProperties": False,
        }
        for t in tools
    ]
    if answer is not None or not options:
        options.append(
            {
                "type": "object",
                "properties": {"answer": dict(answer or ANY_ANSWER)},
                "required": ["answer"],
                "additionalProperties": False,
            }
        )
    schema = {"oneOf": options}
    return {"type": "json_schema", "json_schema": {"name": SCHEMA_NAME, "strict": True, "schema": schema}}


def tool_instructions(tools: Sequence[ToolSpec]) -> str:
    """The part of the system prompt that tells the model the JSON it must write."""
    lines = [
        "Reply with one JSON object and nothing else.",
        'To use a tool: {"tool": "<name>", "arguments": {...}}. When you have the answer: {"answer": "<text>"}.',
        "Tools:",
    ]
    for t in tools:
        params = ", ".join(t.input_schema.get("properties", {}))
        lines.append(f"- {t.name}({params}): {t.description}")
    return "\n".join(lines)


def render_message(message: Message, names: dict[str, str]) -> dict[str, Any]:
    """A chat message without tool roles: calls as the JSON the model wrote, results as user turns;
    ``names`` (tool_use id -> tool name so far) gains its calls."""
    parts: list[str] = []
    for block in message.content:
        if isinstance(block, TextBlock):
            parts.append(json.dumps({"answer": block.text}) if message.role == "assistant" else block.text)
        elif isinstance(block, ToolUseBlock):
            names[block.id] = block.name
            parts.append(json.dumps({"tool": block.name, "arguments": dict(block.input)}))
        elif isinstance(block, ToolResultBlock):
            status = "error" if block.is_error else "result"
            parts.append(f"[{names.get(block.tool_use_id, 'tool')} {status}]\n{block.content}")
    return {"role": message.role, "content": "\n\n".join(parts)}


def parse_reply(text: str) -> tuple[Block, ...]:
    """The model's JSON as blocks; anything unexpected is kept as plain text, never dropped."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        return (TextBlock(text),) if text else ()
    if isinstance(data, dict) and isinstance(data.get("tool"), str):
        arguments = data.get("arguments")
        call_input = arguments if isinstance(arguments, dict) else {INVALID_JSON_KEY: json.dumps(arguments)}
        return (ToolUseBlock(f"call_{uuid.uuid4().hex[:16]}", data["tool"], call_input),)
    if isinstance(data, dict) and isinstance(data.get("answer"), str):
        return (TextBlock(data["answer"]),)
    return (TextBlock(text),)
