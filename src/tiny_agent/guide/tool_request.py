"""Whether a request asks for a search, an edit or a shell command, and the one call that does it.

The 135M model cannot write a regular expression or an exact string to replace; the request usually
holds them: "search for croissant" (``search``), "replace 8am with 9am in hours.md" (``edit_file``),
"run `ls`" (``shell``, when the run offers it). The guide then offers that one call, its arguments
fixed, and after its result an answer that quotes it.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from typing import Any

from tiny_agent.guide.write_request import named_paths
from tiny_agent.types import Prompt, ToolSpec, ToolUseBlock

__all__ = ["asked_call", "asked_turn"]

_QUOTED = r"\"([^\"]+)\"|'([^']+)'|“([^”]+)”"
_WORD = r"([^\s\"'“”]+)"
_COMMAND = r"(?:^\s*|[.,!?;:\n]\s*|\b(?:please|and|then|now)\s+|\b(?:can|could|would|will)\s+you\s+(?:please\s+)?)"
"""Where a verb is a command (as in ``write_request``): "what did the search find?" asks for none."""
_SEARCH = re.compile(
    rf"{_COMMAND}(?:search|grep|find)\b(?!\s+out\b)(?:\s+\w+){{0,4}}?\s+(?:for\s+)?(?:{_QUOTED})"
    rf"|{_COMMAND}(?:search|grep|find)\b(?!\s+out\b)(?:\s+\w+){{0,4}}?\s+for\s+(?:(?:the|a|an)\s+)?"
    rf"(?:words?\s+)?{_WORD}",
    re.IGNORECASE,
)
""""search for "rye"", "find 'rye' in the notes", "grep the notes for rye": the pattern is the quoted
words, else the word after "for"."""
_EDIT = re.compile(
    rf"{_COMMAND}(?:replace|change)\s+(?:{_QUOTED}|{_WORD})\s+(?:with|to|by|into)\s+(?:{_QUOTED}|{_WORD})",
    re.IGNORECASE,
)
""""replace 8am with 9am", "change "Mon" to "Monday"": the old string, then the new."""
_BACKTICKS = re.compile(r"`([^`\n]+)`")
_FILE_NAME = re.compile(r"\.[A-Za-z]\w{0,4}$")
_TRAILING = ".,;:!?"
_NOT_A_STRING = frozenset({"a", "an", "the", "it", "this", "that", "them"})
""""change the port to 8080" names no string to replace."""


def asked_turn(
    prompt: Prompt, request_at: int | None, text: str
) -> tuple[tuple[ToolSpec, ...], dict[str, dict[str, Any]]] | None:
    """The tool and fixed arguments on offer when the request at ``request_at`` asks for one call
    (``asked_call``); no tool once that call was made (the reply is then an answer); None when the
    request asks for none of these calls."""
    files = prompt.tool_grammar.get("read_file", {}).get("properties", {}).get("path", {}).get("enum") or []
    asked = asked_call(text, [t.name for t in prompt.tools], files) if request_at is not None else None
    if asked is None:
        return None
    name, args = asked
    made = any(isinstance(b, ToolUseBlock) and b.name == name for m in prompt.messages[request_at:] for b in m.content)
    if made:
        return (), {}
    schema = {
        "type": "object",
        "properties": {key: {"type": "string", "enum": [value]} for key, value in args.items()},
        "required": list(args),
        "additionalProperties": False,
    }
    return tuple(t for t in prompt.tools if t.name == name), {name: schema}


def asked_call(text: str, tools: Collection[str], files: Collection[str]) -> tuple[str, dict[str, Any]] | None:
    """The one call ``text`` asks for among ``tools`` (``files``: the workspace's files, to tell
    which named file is meant), or None when it asks for none of them."""
    if "shell" in tools and (command := _BACKTICKS.search(text)) and re.search(r"\b(?:run|execute)\b", text, re.I):
        return "shell", {"command": command.group(1).strip()}
    if "edit_file" in tools and (edit := _EDIT.search(text)):
        groups = edit.groups()
        old, new = _first(groups[:4]), _first(groups[4:])
        path = _file_named(text[edit.end() :], files) or _file_named(text, files)
        if old and old.lower() not in _NOT_A_STRING and new is not None and path:
            return "edit_file", {"path": path, "old_string": old, "new_string": new}
    if "search" in tools and (found := _SEARCH.search(text)):
        what = _first(found.groups())
        if what:
            return "search", {"pattern": re.escape(what)}
    return None


def _first(groups: tuple[str | None, ...]) -> str | None:
    """The group that matched; a bare word loses its trailing full stop or comma."""
    for index, group in enumerate(groups):
        if group is not None:
            return group.rstrip(_TRAILING) if index == len(groups) - 1 else group
    return None


def _file_named(text: str, files: Collection[str]) -> str | None:
    """The file ``text`` names: an existing one first (``hours.md`` for staff/hours.md too), else a
    word written like a file name."""
    words = sorted(named_paths(text))
    for word in words:
        if word in files:
            return word
        inside = sorted(f for f in files if f.endswith(f"/{word}"))
        if inside:
            return inside[0]
    return next((w for w in words if _FILE_NAME.search(w) and not w.startswith("/")), None)
