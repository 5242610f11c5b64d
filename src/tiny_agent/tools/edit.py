"""The ``edit_file`` tool: replace an exact string in a file, shown as a unified diff.

The old string must occur exactly once (or ``replace_all``): a missing match and a non-unique one
are refused, saying how many there are and on which lines, so the model adds context rather than
editing the wrong place. The file keeps its encoding (UTF-8, a BOM, UTF-16, Windows-1252 or Latin-1,
as ``text.decode`` reads it) and its line endings: in a file whose lines all end in CRLF, the model's
LF strings match and the new text gets CRLF too. The write is atomic, and it obeys the protected
paths as write_file does; a secret-looking file is refused like a read, since the diff shows it.
"""

from __future__ import annotations

import contextlib
import difflib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from tiny_agent.text import decode
from tiny_agent.tools.files import BINARY_SNIFF, bom_encoding, looks_binary, with_note, write_atomic
from tiny_agent.tools.guards import Confined, protected_message, secret_message
from tiny_agent.tools.toolbox import Tool, ToolFailure

__all__ = ["MAX_EDIT_BYTES", "edit_file", "edit_tool"]

MAX_EDIT_BYTES = 8 * 1024 * 1024
"""A larger file is refused: the whole file is read, changed and written."""
_LINES_SHOWN = 20
"""At most this many line numbers in a refusal of a string that occurs more than once."""


def edit_file(ws: Confined, path: str, old: str, new: str, *, replace_all: bool = False) -> str:
    """Replace ``old`` by ``new`` in ``path``; the result says what changed, as a diff."""
    target = ws.resolve(path)
    _check_allowed(ws, path, target, old, new)
    body, encoding, crlf = _text_of(_read(target, path))
    if crlf:
        old, new = old.replace("\r\n", "\n"), new.replace("\r\n", "\n")
    count = body.count(old)
    if count == 0:
        raise ToolFailure(
            f"old_string was not found in {path}; it must match exactly, whitespace and indentation included "
            "(read_file shows the text as it is)"
            + ("; some of its lines end in CRLF and some in LF" if "\r\n" in body else "")
        )
    if count > 1 and not replace_all:
        lines = _lines_of(body, old)
        shown = ", ".join(map(str, lines[:_LINES_SHOWN])) + (", ..." if len(lines) > _LINES_SHOWN else "")
        raise ToolFailure(
            f"old_string occurs {count} times in {path} (lines {shown}); include more of the text around it "
            "so it matches once, or set replace_all to true to change every one"
        )
    changed = body.replace(old, new) if replace_all else body.replace(old, new, 1)
    written = changed.replace("\n", "\r\n") if crlf else changed
    try:
        encoded = written.encode(encoding)
    except UnicodeEncodeError as exc:
        raise ToolFailure(
            f"refused: {path} is {encoding} text, which cannot hold {written[exc.start : exc.end]!r} of new_string; "
            "use characters it has, or rewrite the file with write_file (as UTF-8)"
        ) from None
    with _os_errors(f"cannot write {path}"):
        write_atomic(target, encoded)
    kept = ([] if encoding == "utf-8" else [encoding]) + (["CRLF line endings"] if crlf else [])
    what = f"edited {path}: {count if replace_all else 1} replacement(s)" + (
        f" (kept {', '.join(kept)})" if kept else ""
    )
    return f"{what}\n{_diff(path, body, changed, ws.max_output_chars)}"


def _check_allowed(ws: Confined, path: str, target: Path, old: str, new: str) -> None:
    candidates = ws.candidates(path, target)
    refusal = ws.guards.protected(candidates)
    if refusal is not None:
        raise ToolFailure(protected_message(path, refusal))
    secret = ws.guards.secret(candidates)
    if secret is not None:
        raise ToolFailure(secret_message(path, secret))
    if not old:
        raise ToolFailure("refused: old_string is empty; to create a file or replace it whole, use write_file")
    if old == new:
        raise ToolFailure("refused: old_string and new_string are the same; nothing would change")


def _text_of(data: bytes) -> tuple[str, str, bool]:
    """The file's text (LF line endings when every line ends in CRLF), its encoding, and whether it did."""
    text = decode(data)
    crlf = "\r\n" in text and text.count("\n") == text.count("\r\n")
    return (str(text).replace("\r\n", "\n") if crlf else str(text)), text.encoding, crlf


def _diff(path: str, before: str, after: str, limit: int) -> str:
    diff = "".join(difflib.unified_diff(before.splitlines(True), after.splitlines(True), f"a/{path}", f"b/{path}", n=2))
    if len(diff) > limit:
        diff = with_note(diff[:limit], f"[... the diff is cut: {len(diff) - limit:,} more characters]")
    return diff


def edit_tool(ws: Confined) -> Tool:
    string = {"type": "string"}
    schema: dict[str, Any] = {
        "type": "object",
        "properties": {
            "path": {**string, "minLength": 1, "description": "File path, relative to the workspace."},
            "old_string": {**string, "minLength": 1, "description": "The exact text to replace (once in the file)."},
            "new_string": {**string, "description": "The text to put in its place."},
            "replace_all": {"type": "boolean", "description": "Replace every occurrence (default false)."},
        },
        "required": ["path", "old_string", "new_string"],
        "additionalProperties": False,
    }
    return Tool(
        "edit_file",
        "Replace an exact string in a text file and show the change as a diff. old_string must occur exactly "
        "once (include surrounding lines to make it unique) unless replace_all is true. The file keeps its "
        "encoding and line endings. For a new file, or to rewrite a file whole, use write_file.",
        schema,
        lambda a: edit_file(ws, a["path"], a["old_string"], a["new_string"], replace_all=bool(a.get("replace_all"))),
    )


def _read(target: Path, path: str) -> bytes:
    with _os_errors(f"cannot read {path}"):
        if not target.exists():
            raise ToolFailure(f"no such file: {path}; to create it, use write_file")
        if not target.is_file():
            raise ToolFailure(f"{path} is not a regular file; edit_file only edits text files")
        size = target.stat().st_size
        if size > MAX_EDIT_BYTES:
            raise ToolFailure(f"{path} has {size:,} bytes, more than edit_file takes ({MAX_EDIT_BYTES:,})")
        data = target.read_bytes()
    if bom_encoding(data[:4]) is None and looks_binary(data[:BINARY_SNIFF]):
        raise ToolFailure(f"{path} looks like a binary file; edit_file only edits text")
    return data


def _lines_of(text: str, needle: str) -> list[int]:
    lines, at = [], text.find(needle)
    while at != -1:
        lines.append(text.count("\n", 0, at) + 1)
        at = text.find(needle, at + len(needle))
    return lines


@contextlib.contextmanager
def _os_errors(doing: str) -> Iterator[None]:
    """An OSError becomes a ToolFailure for the model (as in the workspace tools)."""
    try:
        yield
    except OSError as exc:
        raise ToolFailure(f"{doing}: {exc.strerror or exc}") from exc
