"""The ``search`` tool: a regular expression over the workspace's files, or file names by glob.

``search(pattern)`` answers ``path:line:text`` for every matching line, sorted by path then line;
``search(glob="**/*.py")`` alone lists the files whose path matches; both together search only those
files. What is walked is what the user would call the project: ``.gitignore`` files are obeyed (with
git's own semantics, through ``pathspec``; a nested .gitignore applies below its folder), hidden
and build folders are skipped as the file tools' grammar skips them, and secret-looking files are
never read. Results are bounded (matches, line length, characters) and always in the same order, so
the same search on the same files gives the same bytes (the cached prefix stays valid).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

import pathspec

from tiny_agent.text import decode, has_surrogates, shown_name
from tiny_agent.tools.files import BINARY_SNIFF, looks_binary, with_note
from tiny_agent.tools.grammar import SKIPPED_FOLDERS
from tiny_agent.tools.guards import Confined
from tiny_agent.tools.toolbox import Tool, ToolFailure

__all__ = ["MAX_FILE_BYTES", "MAX_LINE_CHARS", "MAX_MATCHES", "search", "search_tool"]

MAX_MATCHES = 200
"""Matching lines (or file names) shown at most."""
MAX_LINE_CHARS = 200
"""A matching line is cut to this many characters."""
MAX_FILE_BYTES = 2 * 1024 * 1024
"""A larger file is not searched (it is counted as skipped)."""


@dataclass
class _Found:
    lines: list[str]
    more: int = 0
    skipped: int = 0


def search(ws: Confined, pattern: str | None, glob: str | None = None, path: str = ".") -> str:
    """See the module doc; the answer is text for the model, with a note when something was left out."""
    if not pattern and not glob:
        raise ToolFailure("give a pattern (a regular expression) to search file contents, or a glob to find files")
    try:
        regex = re.compile(pattern) if pattern else None
    except re.error as exc:
        raise ToolFailure(f"pattern is not a valid regular expression: {exc}") from None
    base = ws.resolve(path)
    if not base.exists():
        raise ToolFailure(f"no such file or directory: {path}")
    names = pathspec.GitIgnoreSpec.from_lines([glob]) if glob else None
    found = _Found([])
    for rel, full in _files(ws, base):
        if names is not None and not names.match_file(rel):
            continue
        if regex is None:
            _add(found, shown_name(rel))
            continue
        _grep(ws, found, regex, rel, full)
    if not found.lines:
        if not pattern:
            return f"[no file matches {glob}]"
        return f"[no match for /{pattern}/{f' in files matching {glob}' if glob else ''}]"
    out = "\n".join(found.lines)
    notes = []
    if found.more:
        notes.append(f"{found.more} more not shown (at most {MAX_MATCHES}); narrow the pattern, the glob or the path")
    if found.skipped:
        notes.append(f"{found.skipped} file(s) not searched (binary, over {MAX_FILE_BYTES:,} bytes, or secret)")
    if len(out) > ws.max_output_chars:
        out = out[: ws.max_output_chars]
        notes.append("cut at the output limit")
    return with_note(out, f"[{'; '.join(notes)}]") if notes else out


def search_tool(ws: Confined) -> Tool:
    schema: dict[str, Any] = {
        "type": "object",
        "properties": {
            "pattern": {"type": "string", "description": "Python regular expression searched in each line."},
            "glob": {"type": "string", "description": "Only files whose path matches, like '*.py' or 'src/**'."},
            "path": {"type": "string", "description": "Folder (or file) to search, relative to the workspace."},
        },
        "required": [],
        "additionalProperties": False,
    }
    return Tool(
        "search",
        "Search the workspace: with pattern, every line matching the regular expression, as path:line:text "
        f"(at most {MAX_MATCHES}, sorted by path and line); with glob alone, the files whose path matches. "
        "Files ignored by .gitignore, hidden and build folders, binary files and secrets are skipped.",
        schema,
        lambda a: search(ws, a.get("pattern") or None, a.get("glob") or None, a.get("path") or "."),
    )


def _add(found: _Found, line: str) -> None:
    if len(found.lines) < MAX_MATCHES:
        found.lines.append(line)
    else:
        found.more += 1


def _grep(ws: Confined, found: _Found, regex: re.Pattern[str], rel: str, full: Path) -> None:
    if ws.guards.secret([PurePosixPath(rel)]) is not None:
        found.skipped += 1
        return
    try:
        if full.stat().st_size > MAX_FILE_BYTES:
            found.skipped += 1
            return
        data = full.read_bytes()
    except OSError:
        found.skipped += 1
        return
    if looks_binary(data[:BINARY_SNIFF]):
        found.skipped += 1
        return
    shown = shown_name(rel)
    for number, line in enumerate(str(decode(data)).splitlines(), 1):
        if regex.search(line[: MAX_LINE_CHARS * 20]):
            text = line if len(line) <= MAX_LINE_CHARS else f"{line[:MAX_LINE_CHARS]}..."
            _add(found, f"{shown}:{number}:{text}")


def _files(ws: Confined, base: Path) -> Iterator[tuple[str, Path]]:
    """(relative POSIX path, full path) of each file under ``base``, sorted, ignored ones left out."""
    root = ws.root
    if base.is_file():
        yield base.relative_to(root).as_posix(), base
        return
    ignores: list[tuple[str, pathspec.GitIgnoreSpec]] = []
    for parent in [*reversed(base.relative_to(root).parents), base.relative_to(root)]:
        _load_ignore(root / parent, parent.as_posix(), ignores)
    yield from _walk(root, base, ignores)


def _walk(root: Path, folder: Path, ignores: list[tuple[str, pathspec.GitIgnoreSpec]]) -> Iterator[tuple[str, Path]]:
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except OSError:
        return
    for entry in entries:
        full = Path(entry.path)
        rel = full.relative_to(root).as_posix()
        try:
            is_dir = entry.is_dir(follow_symlinks=False)
            if entry.is_symlink() and not full.resolve().is_relative_to(root):
                continue
        except OSError:
            continue
        if _ignored(rel, is_dir, ignores):
            continue
        if is_dir:
            if entry.name.startswith(".") or entry.name in SKIPPED_FOLDERS:
                continue
            own = list(ignores)
            _load_ignore(full, rel, own)
            yield from _walk(root, full, own)
        elif entry.is_file():
            yield rel, full


def _load_ignore(folder: Path, rel: str, ignores: list[tuple[str, pathspec.GitIgnoreSpec]]) -> None:
    try:
        data = (folder / ".gitignore").read_bytes()
    except OSError:
        return
    lines = [line for line in str(decode(data)).splitlines() if not has_surrogates(line)]
    ignores.append(("" if rel == "." else rel, pathspec.GitIgnoreSpec.from_lines(lines)))


def _ignored(rel: str, is_dir: bool, ignores: list[tuple[str, pathspec.GitIgnoreSpec]]) -> bool:
    for where, spec in ignores:
        if where and not rel.startswith(f"{where}/"):
            continue
        inside = rel[len(where) + 1 :] if where else rel
        if spec.match_file(f"{inside}/" if is_dir else inside):
            return True
    return False
