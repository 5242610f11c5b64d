"""Workspace-aware decoding grammars: each file tool's input schema narrowed to paths that can succeed.

A small local model decodes under a JSON-schema grammar (llama.cpp turns the schema into GBNF). Giving
``path`` the workspace's real paths moves it from guessing ``/workspace`` to naming files that exist.
The narrowed schemas are sound: they admit nothing the tool would refuse for its path (as far as a
cheap look can tell), and they are built fresh each turn from a bounded walk.

- ``read_file``: an enum of existing regular files, symlinks that stay inside the root included,
  minus secrets the user has not allowed, unreadable files and files the binary sniff refuses (the
  UTF-8 check would need the whole file, so a Latin-1 text file is still offered).
- ``list_dir``: an enum of folders, "." first.
- ``write_file``: any new relative path by a ``pattern`` that cannot start with "/", has no component
  starting with "." (so no "..", no .git, no hidden file), and no component that is a symlink, a
  folder the walk skipped, or a name a protection rule names; plus an enum of the existing files the
  pattern leaves out but writing may change. When a rule cannot be expressed without lookaround (a glob
  like ``*.lock``), only the enum is offered: a smaller grammar, still sound.

Hidden folders (``.git``, ``.venv``, caches) and ``node_modules``/``__pycache__`` are not walked:
they are large, rarely what a task is about, and would blow the bound in every repository. Hidden
files in walked folders are offered. Symlinked folders are offered to list_dir but not walked.
Beyond ``Limits`` (entries walked, enum size) a tool gets None: today's free string.
"""

from __future__ import annotations

import os
import re
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from tiny_agent.text import has_surrogates
from tiny_agent.tools.files import BINARY_SNIFF, looks_binary
from tiny_agent.tools.guards import Guards, fold
from tiny_agent.tools.path_pattern import new_path_pattern

__all__ = ["SKIPPED_FOLDERS", "Limits", "Tree", "new_path_pattern", "schema", "walk"]

SKIPPED_FOLDERS = frozenset({"node_modules", "__pycache__"})
"""Not walked, besides hidden folders: vendored or generated, and often huge."""


@dataclass(frozen=True)
class Limits:
    max_entries: int = 2_000
    """Directory entries a walk looks at before it gives up (the grammar is then None)."""
    max_paths: int = 200
    """Most values in one enum."""
    max_chars: int = 8_000
    """Most characters in one enum, values summed."""


@dataclass(frozen=True)
class Tree:
    """What one bounded walk saw, as relative POSIX paths."""

    files: tuple[str, ...]
    """Regular files, and symlinks to regular files inside the root."""
    folders: tuple[str, ...]
    """"." and every folder walked, plus symlinks to folders inside the root."""
    stop_names: frozenset[str] = field(default_factory=frozenset)
    """Folded names a new path must not pass through: symlinks, and folders not walked or not readable."""
    targets: Mapping[str, str] = field(default_factory=dict)
    """Where each symlink offered leads, relative to the root; every other path is its own target
    (the walk enters no symlinked folder)."""

    def candidates(self, rel: str) -> list[PurePosixPath]:
        """``rel`` as written and as resolved, as the tools check it."""
        target = self.targets.get(rel)
        return [PurePosixPath(rel)] if target is None else [PurePosixPath(rel), PurePosixPath(target)]


def walk(root: Path, limits: Limits) -> Tree | None:
    """The workspace breadth first, or None after ``limits.max_entries`` entries."""
    files: list[str] = []
    folders: list[str] = ["."]
    stop: set[str] = set()
    targets: dict[str, str] = {}
    seen = 0
    queue: deque[tuple[Path, str]] = deque([(root, "")])
    while queue:
        folder, rel = queue.popleft()
        entries: list[os.DirEntry[str]] = []
        try:
            with os.scandir(folder) as scan:
                for entry in scan:  # counted as they come: one huge folder must not be read whole
                    seen += 1
                    if seen > limits.max_entries:
                        return None
                    entries.append(entry)
        except OSError:
            stop.add(fold(PurePosixPath(rel).name))
            continue
        for entry in sorted(entries, key=lambda e: e.name):
            if has_surrogates(entry.name):  # not UTF-8: no grammar can offer it (list_dir shows it escaped)
                continue
            path = f"{rel}/{entry.name}" if rel else entry.name
            try:
                if entry.is_symlink():
                    stop.add(fold(entry.name))
                    target = Path(entry.path).resolve()
                    if not target.is_relative_to(root):
                        continue
                    targets[path] = target.relative_to(root).as_posix()
                    if target.is_dir():
                        if not entry.name.startswith("."):
                            folders.append(path)
                    elif target.is_file():
                        files.append(path)
                elif entry.is_dir(follow_symlinks=False):
                    if entry.name.startswith("."):
                        continue
                    if entry.name in SKIPPED_FOLDERS:
                        stop.add(fold(entry.name))
                        continue
                    folders.append(path)
                    queue.append((Path(entry.path), path))
                elif entry.is_file(follow_symlinks=False):
                    files.append(path)
            except (OSError, RuntimeError):  # vanished, unreadable, a symlink loop: offer nothing
                stop.add(fold(entry.name))
    return Tree(tuple(sorted(files)), tuple(folders), frozenset(stop), targets)


def readable_files(root: Path, tree: Tree, guards: Guards, most: int | None = None) -> list[str]:
    """Files read_file would read: no secret unless allowed, readable, not binary by the sniff. Stops
    after ``most`` + 1: enough to tell the enum is too large."""
    out: list[str] = []
    for rel in tree.files:
        if most is not None and len(out) > most:
            break
        path = root / rel
        if guards.secret(tree.candidates(rel)) is not None or not os.access(path, os.R_OK):
            continue
        try:
            with open(path, "rb") as file:
                if looks_binary(file.read(BINARY_SNIFF)):
                    continue
        except OSError:
            continue
        out.append(rel)
    return out


def writable_files(tree: Tree, guards: Guards, pattern: str | None) -> list[str]:
    """Existing files write_file would overwrite and ``pattern`` does not already admit."""
    admitted = re.compile(pattern) if pattern is not None else None
    out: list[str] = []
    for rel in tree.files:
        if admitted is not None and admitted.fullmatch(rel):
            continue
        if guards.protected(tree.candidates(rel)) is None:
            out.append(rel)
    return out


def schema(tool: str, base: Mapping[str, Any], root: Path, guards: Guards, limits: Limits) -> dict[str, Any] | None:
    """``base`` (the tool's input schema) with ``path`` narrowed for this turn, or None."""
    tree = walk(root, limits)
    if tree is None:
        return None
    if tool == "read_file":
        path = _enum(readable_files(root, tree, guards, most=limits.max_paths), limits)
    elif tool == "list_dir":
        path = _enum(list(tree.folders), limits)
    elif tool == "write_file":
        pattern = new_path_pattern(guards.write_rules, tree.stop_names)
        existing = writable_files(tree, guards, pattern)
        options = [] if pattern is None else [{"type": "string", "pattern": pattern}]
        if existing:
            enum = _enum(existing, limits)
            if enum is None:
                return None
            options.insert(0, enum)
        path = None if not options else options[0] if len(options) == 1 else {"anyOf": options}
    else:
        return None
    return None if path is None else _narrowed(base, path)


def _narrowed(base: Mapping[str, Any], path: dict[str, Any]) -> dict[str, Any]:
    """``base`` with ``path`` replaced (its description kept) and required."""
    properties = dict(base["properties"])
    description = properties["path"].get("description")
    properties["path"] = {**path, "description": description} if description else path
    required = ["path", *(name for name in base["required"] if name != "path")]
    return {**base, "properties": properties, "required": required}


def _enum(values: list[str], limits: Limits) -> dict[str, Any] | None:
    if not values or len(values) > limits.max_paths or sum(len(v) for v in values) > limits.max_chars:
        return None
    return {"type": "string", "enum": values}
