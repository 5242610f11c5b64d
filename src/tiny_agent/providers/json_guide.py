"""What a small model may reply this turn: the grammar follows the request and the conversation.

The embedded 135M model cannot be told much; its decoding can be constrained instead. Starting from
this turn's workspace grammar (``Prompt.tool_grammar``: existing files for ``read_file``, folders for
``list_dir``), the guide narrows what the reply may be, measured on ``benchmarks/tool_choice.py``:

- The request names paths: then those are the paths on offer. A tool whose ``path`` is a list of
  existing paths keeps the named ones and is left out if none is its kind; ``write_file`` may only
  create the named files that do not exist yet, so a wrong choice never overwrites a file the user
  named to be read.
- No write unless the request asks for one (``asks_for_a_write``): a question that named no path
  left ``write_file`` on offer, and the model wrote ``path/to_output_file.txt`` when asked which
  license a project is under.
- Optional arguments are left out (the model filled ``start_line`` with numbers past the end).
- No answer before the first tool result: the model answered questions about files from its own
  imagination instead of reading them.
- A read that already succeeded since the request is not offered again: the model re-read the
  same file instead of answering.

All of it is decoding-side: the prompt text, and so the server's cached prefix, is the same.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tiny_agent.types import Message, Prompt, TextBlock, ToolResultBlock, ToolSpec, ToolUseBlock

__all__ = ["WRITE_TOOLS", "Guide", "asks_for_a_write", "guide", "named_paths"]

_PATH_WORD = re.compile(r"(?<![\w/.-])[\w-][\w.-]*(?:/[\w.-]+)*")
"""A word that could be a relative path: ``notes.txt``, ``docs``, ``recipes/bread/rye.md``."""
_FILE_NAME = re.compile(r"\.[A-Za-z]\w{0,4}$")
"""A new file is only recognised by its extension: ``todo.txt`` yes, ``todo`` no."""
_COMMAND_START = (
    r"(?:^\s*|[.!?;:\n]\s*|\b(?:and|then|also|now|please)\s+|\b(?:can|could|would|will)\s+you\s+(?:please\s+)?"
    r"|\blet(?:'s|\s+us)\s+|\b(?:want|need|like)\s+you\s+to\s+)"
)
"""Where a verb is a command: the start of a sentence, after "and", "please", "can you", "let's"...
Elsewhere ("Which files make up src?", "What should I write?") it is part of a question."""
_WRITE_COMMAND = re.compile(
    rf"{_COMMAND_START}(?:please\s+)?(?:write|create|save|make|add|put|append|store|record|note down|jot down)\b"
    r"(?!\s+(?:up|sure|sense)\b)",  # "add up the prices", "make sure": nothing to write
    re.IGNORECASE,
)
_A_FILE = re.compile(r"\bfiles?\b", re.IGNORECASE)
WRITE_TOOLS = frozenset({"write_file"})
"""Tools that change the workspace: offered only to a request that asks for a write."""
ROOT_WORDS = frozenset({"workspace"})
"""Words that name the root folder ``.``: the system prompt calls it "the workspace"."""
MAX_CALLS = 2
"""Successful tool calls per request before the model must answer."""
MAX_QUOTE = 400
"""Longest quote offered as an answer, in characters."""
MAX_QUOTES = 100
"""Most quotes offered; beyond it, the newest."""


@dataclass(frozen=True)
class Guide:
    """The replies allowed this turn."""

    tools: tuple[ToolSpec, ...]
    """The tools on offer, in the prompt's order."""
    grammar: Mapping[str, Mapping[str, Any]]
    """Their argument schemas for this turn."""
    answer: Mapping[str, Any] | None
    """The schema of the answer's text, or None when the reply must be a tool call."""


def guide(
    prompt: Prompt,
    *,
    follow_request: bool = True,
    required_only: bool = True,
    look_first: bool = True,
    no_repeat: bool = True,
    quote: bool = True,
    max_calls: int | None = MAX_CALLS,
    root_words: frozenset[str] = ROOT_WORDS,
    write_tools: frozenset[str] = WRITE_TOOLS,
) -> Guide:
    """The allowed replies for ``prompt``; each flag turns one narrowing on (see the module doc)."""
    schemas = {t.name: dict(prompt.tool_grammar.get(t.name, t.input_schema)) for t in prompt.tools}
    existing = {p for s in schemas.values() for p in _enum(s) or ()}
    request_at = _request_index(prompt.messages)
    if no_repeat:
        for name, path in _succeeded_since(prompt.messages, request_at):
            enum = _enum(schemas.get(name, {}))
            if enum is not None and path in enum:
                schemas[name] = _with_paths(schemas[name], [p for p in enum if p != path])
    if follow_request and request_at is not None:
        request = _text(prompt.messages[request_at])
        words = named_paths(request)
        if words & root_words:
            words.add(".")
        schemas = _follow(schemas, words, existing, _write_targets(request), write_tools)
    if required_only:
        schemas = {name: _required_only(schema) for name, schema in schemas.items()}
    offered = {name: s for name, s in schemas.items() if _enum(s) != []}
    if max_calls is not None and len(_succeeded_since(prompt.messages, request_at)) >= max_calls:
        offered = {}
    looked = any(isinstance(b, ToolResultBlock) and not b.is_error for m in prompt.messages for b in m.content)
    answer: dict[str, Any] | None = None
    if looked or not look_first or not offered:
        answer = {"type": "string"}
        quotes = _quotes(prompt.messages) if quote else []
        if quotes:
            answer["enum"] = quotes
    return Guide(tuple(t for t in prompt.tools if t.name in offered), offered, answer)


def _quotes(messages: Sequence[Message]) -> list[str]:
    """Each tool result whole (if short) and each of its lines, newest kept when there are too many."""
    found: dict[str, None] = {}
    for m in messages:
        for b in m.content:
            if isinstance(b, ToolResultBlock):
                text = b.content.strip()
                if len(text) <= MAX_QUOTE:
                    found[text] = None
                for line in text.splitlines():
                    if line.strip() and len(line.strip()) <= MAX_QUOTE:
                        found[line.strip()] = None
    return list(found)[-MAX_QUOTES:]


def named_paths(text: str) -> set[str]:
    """Words of ``text`` that could name a path, a trailing full stop dropped."""
    return {word.rstrip(".") for word in _PATH_WORD.findall(text)} - {""}


def asks_for_a_write(text: str) -> bool:
    """Whether ``text`` asks for a file to be written: a write verb where a command stands, followed
    by a file name or the word "file" ("Write a file todo.txt", "can you save it to list.txt").
    A story to tell ("Write a long story") is an answer, not a file."""
    return _write_targets(text) is not None


def _write_targets(text: str) -> set[str] | None:
    """The file names after the first write command of ``text``; None when it asks for no write."""
    for command in _WRITE_COMMAND.finditer(text):
        rest = text[command.end() :]
        files = {w for w in named_paths(rest) if _FILE_NAME.search(w) and not w.startswith("/")}
        if files or _A_FILE.search(rest):
            return files
    return None


def _follow(
    schemas: dict[str, dict[str, Any]],
    words: set[str],
    existing: set[str],
    targets: set[str] | None,
    write_tools: frozenset[str],
) -> dict[str, dict[str, Any]]:
    if targets is None:
        schemas = {name: s for name, s in schemas.items() if name not in write_tools}
    named = {name: [p for p in enum if p in words] for name, s in schemas.items() if (enum := _enum(s)) is not None}
    # A name missing from the lists may still exist (a binary or secret file, a workspace past the
    # grammar's bound): only a file the write command names is offered to write_file.
    new_files = sorted((targets or set()) - existing)
    if not words & existing and not new_files:
        return schemas  # the request names no path: every path stays on offer
    out: dict[str, dict[str, Any]] = {}
    for name, schema in schemas.items():
        if name in write_tools:
            out[name] = _with_paths(schema, new_files)
        elif name in named and words & existing:
            # Only an existing path narrows the reads: a word like "Node.js" is no reason to stop reading.
            out[name] = _with_paths(schema, named[name])
        else:
            out[name] = schema
    return out


def _request_index(messages: Sequence[Message]) -> int | None:
    """The newest user message with text: the request the model is working on."""
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if message.role == "user" and any(isinstance(b, TextBlock) and b.text.strip() for b in message.content):
            return index
    return None


def _text(message: Message) -> str:
    return " ".join(b.text for b in message.content if isinstance(b, TextBlock))


def _succeeded_since(messages: Sequence[Message], start: int | None) -> list[tuple[str, str]]:
    """(tool, path) of the calls after the request whose results came back without an error."""
    later = messages[(start or 0) :]
    failed = {b.tool_use_id for m in later for b in m.content if isinstance(b, ToolResultBlock) and b.is_error}
    answered = {b.tool_use_id for m in later for b in m.content if isinstance(b, ToolResultBlock)}
    return [
        (b.name, str(b.input.get("path", ".")))
        for m in later
        for b in m.content
        if isinstance(b, ToolUseBlock) and b.id in answered and b.id not in failed
    ]


def _enum(schema: Mapping[str, Any]) -> list[str] | None:
    enum = schema.get("properties", {}).get("path", {}).get("enum")
    return list(enum) if isinstance(enum, list) else None


def _with_paths(schema: Mapping[str, Any], paths: list[str]) -> dict[str, Any]:
    properties = dict(schema["properties"])
    path = {k: v for k, v in properties["path"].items() if k != "minLength"}
    properties["path"] = {**path, "enum": paths}
    required = list(schema.get("required", []))
    return {**schema, "properties": properties, "required": required if "path" in required else ["path", *required]}


def _required_only(schema: Mapping[str, Any]) -> dict[str, Any]:
    required = list(schema.get("required", []))
    properties = {k: v for k, v in schema.get("properties", {}).items() if k in required}
    return {**schema, "properties": properties, "additionalProperties": False}
