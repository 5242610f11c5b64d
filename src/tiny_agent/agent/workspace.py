"""The file tools (read_file, write_file, list_dir), confined to one workspace directory.

Every path is checked on its fully resolved location (symlinks followed, dangling ones too), so no
``..``, absolute path or symlink reaches outside the root. ``--protect`` patterns are enforced here,
in code, because a rule that lives only in the conversation can drop out of it: that is how
``dev.mjs`` got rewritten in the seed story. Checks run before the write; a symlink swapped in by
another process between check and write is out of scope.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from fnmatch import fnmatchcase
from pathlib import Path, PurePosixPath
from typing import Any

from tiny_agent.agent.tools import Tool, ToolFailure
from tiny_agent.errors import ConfigError

__all__ = ["Workspace"]

GRAMMAR_MAX_PATHS = 200
"""Beyond this many files or folders, the tool grammar falls back to a free ``path`` string."""

_BINARY_SNIFF = 8192
"""A NUL byte in this many leading bytes marks a file as binary (the same test git uses)."""


@dataclass(frozen=True)
class _Pattern:
    """One ``--protect`` glob, with .gitignore-like anchoring."""

    text: str
    """As the user gave it, for messages."""
    glob: str
    anchored: bool
    """True if the pattern has a "/" before its end: match the whole relative path, else any name."""

    @staticmethod
    def parse(text: str, root: Path) -> _Pattern:
        glob = text.strip()
        if glob.startswith("/"):
            if not Path(glob).is_relative_to(root):
                raise ConfigError(f"--protect {text!r} is outside the workspace ({root}); use a pattern relative to it")
            glob = Path(glob).relative_to(root).as_posix()
            anchored = True
        else:
            anchored = "/" in glob.rstrip("/")
        while glob.startswith("./"):
            glob = glob[2:]
        glob = glob.removesuffix("/**").rstrip("/")
        if glob in ("", "."):
            glob, anchored = "*", False
        return _Pattern(text, glob, anchored)

    def matches(self, rel: PurePosixPath) -> bool:
        """True if ``rel`` or one of its parent directories matches."""
        for candidate in (rel, *rel.parents[:-1]):
            if not self.anchored:
                if fnmatchcase(candidate.name, self.glob):
                    return True
            elif fnmatchcase(str(candidate), self.glob) or (
                self.glob.startswith("**/") and fnmatchcase(str(candidate), self.glob[3:])
            ):
                return True
        return False


class Workspace:
    """A directory the model may read and write, minus the protected paths."""

    def __init__(self, root: str | Path, *, protect: Sequence[str] = (), max_output_chars: int = 20_000) -> None:
        resolved = Path(root).resolve()
        if not resolved.is_dir():
            what = "is not a directory" if resolved.exists() else "does not exist"
            raise ConfigError(f"workspace root {str(root)!r} {what}")
        if max_output_chars < 1:
            raise ConfigError(f"max_output_chars must be at least 1, got {max_output_chars}")
        if isinstance(protect, str):
            protect = (protect,)
        self.root = resolved
        """Absolute and resolved once; every tool path must resolve inside it."""
        self.protect = tuple(protect)
        self.max_output_chars = max_output_chars
        self._patterns = tuple(_Pattern.parse(p, resolved) for p in self.protect)

    def __repr__(self) -> str:
        return f"Workspace({str(self.root)!r}, protect={self.protect!r})"

    def resolve(self, path: str) -> Path:
        """The resolved absolute path, or ToolFailure if it is empty or lands outside the root."""
        if not path.strip():
            raise ToolFailure(f"refused: empty path; give a path relative to the workspace ({self.root})")
        if "\0" in path:
            raise ToolFailure(f"refused: {path!r} contains a NUL character")
        try:
            resolved = (self.root / path).resolve()
        except (OSError, RuntimeError) as exc:  # RuntimeError is a symlink loop before Python 3.13
            raise ToolFailure(f"cannot resolve {path!r}: {exc}") from exc
        if not resolved.is_relative_to(self.root):
            raise ToolFailure(f"refused: {path!r} is outside the workspace ({self.root}); use a path relative to it")
        return resolved

    def is_protected(self, path: str) -> bool:
        """Whether write_file would refuse ``path``. Raises ToolFailure if it is outside the root."""
        return self._protected_by(path, self.resolve(path)) is not None

    def read_file(self, path: str, *, start_line: int = 1, max_lines: int | None = None) -> str:
        """The text of a file, from ``start_line`` (1-based), cut to ``max_output_chars``."""
        target = self.resolve(path)
        if not target.exists():
            raise ToolFailure(f"no such file: {path}")
        if target.is_dir():
            raise ToolFailure(f"{path} is a directory; use list_dir")
        if not target.is_file():
            raise ToolFailure(f"{path} is not a regular file; read_file only reads files")
        try:
            data = target.read_bytes()
        except OSError as exc:
            raise ToolFailure(f"cannot read {path}: {exc.strerror or exc}") from exc
        if b"\0" in data[:_BINARY_SNIFF]:
            raise ToolFailure(f"{path} looks like a binary file ({len(data)} bytes); read_file only reads text")
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ToolFailure(f"{path} is not valid UTF-8 text (bad byte at offset {exc.start})") from None
        if not text:
            return "[empty file]"
        lines = _split_lines(text)
        if start_line > len(lines):
            raise ToolFailure(f"{path} has {len(lines)} lines; start_line {start_line} is past the end")
        end = len(lines) if max_lines is None else min(len(lines), start_line - 1 + max_lines)
        out = "".join(lines[start_line - 1 : end])
        if len(out) > self.max_output_chars:
            shown = out[: self.max_output_chars]
            next_line = start_line + shown.count("\n")
            if next_line == start_line:
                advice = f"line {start_line} alone is longer than {self.max_output_chars} characters"
            else:
                advice = f"read again with start_line={next_line} to see more"
            return _with_note(
                shown, f"[... cut: {len(out) - len(shown)} more characters not shown (of {len(out)}); {advice}]"
            )
        if end < len(lines):
            return _with_note(out, f"[... {len(lines) - end} more lines; read again with start_line={end + 1}]")
        return out

    def write_file(self, path: str, content: str) -> str:
        """Create or overwrite a UTF-8 file, creating parent directories inside the workspace."""
        target = self.resolve(path)
        pattern = self._protected_by(path, target)
        if pattern is not None:
            raise ToolFailure(f"refused: {path} is protected (--protect {pattern}); change something else")
        if target.is_dir():
            raise ToolFailure(f"{path} is a directory; write_file needs a file path")
        if target.exists() and not target.is_file():
            raise ToolFailure(f"{path} is not a regular file; write_file only writes files")
        for parent in target.parents:
            if parent.exists():
                if not parent.is_dir():
                    raise ToolFailure(f"cannot write {path}: {self._relative(parent)} is a file, not a directory")
                break
        try:
            data = content.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise ToolFailure(f"content is not valid text (unpaired surrogate at character {exc.start})") from None
        previous = target.stat().st_size if target.exists() else None
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
        except OSError as exc:
            raise ToolFailure(f"cannot write {path}: {exc.strerror or exc}") from exc
        how = "created" if previous is None else f"overwritten; it had {previous} bytes"
        return f"wrote {len(data)} bytes to {path} ({how})"

    def list_dir(self, path: str = ".") -> str:
        """Entries sorted by name, one per line: ``dir/`` or ``file  N bytes``, cut to ``max_output_chars``."""
        target = self.resolve(path)
        if not target.exists():
            raise ToolFailure(f"no such directory: {path}")
        if not target.is_dir():
            raise ToolFailure(f"{path} is a file, not a directory; use read_file")
        try:
            entries = sorted(target.iterdir(), key=lambda p: p.name)
        except OSError as exc:
            raise ToolFailure(f"cannot list {path}: {exc.strerror or exc}") from exc
        if not entries:
            return "[empty directory]"
        lines = [self._describe(entry) for entry in entries]
        full = "\n".join(lines)
        if len(full) <= self.max_output_chars:
            return full
        count = 0
        size = -1
        while count < len(lines) and size + 1 + len(lines[count]) <= self.max_output_chars:
            size += 1 + len(lines[count])
            count += 1
        shown = "\n".join(lines[:count])
        left = len(full) - len(shown)
        return _with_note(
            shown,
            f"[... cut: {left} more characters not shown (of {len(full)}); "
            f"{len(lines) - count} of {len(lines)} entries left out]",
        )

    def tools(self, *, grammar: bool = True) -> list[Tool]:
        """The three file tools, bound to this workspace. With ``grammar``, read_file and list_dir
        offer this turn's real paths as a decoding grammar (see ``Tool.grammar``)."""
        path = _prop("string", "File path, relative to the workspace.", minLength=1)
        protected = f" Protected paths are refused: {', '.join(self.protect)}." if self.protect else ""
        read = _schema(
            ["path"],
            path=path,
            start_line=_prop("integer", "First line to return (1-based).", minimum=1),
            max_lines=_prop("integer", "Return at most this many lines.", minimum=1),
        )
        write = _schema(
            ["path", "content"], path=path, content=_prop("string", "The complete new content of the file.")
        )
        listing = _schema([], path=_prop("string", "Directory, relative to the workspace (default '.')."))
        return [
            Tool(
                "read_file",
                "Read a UTF-8 text file. The path is relative to the workspace root. Long output is cut; "
                "read further with start_line (1-based) and max_lines.",
                read,
                lambda a: self.read_file(
                    a["path"], start_line=int(a.get("start_line", 1)), max_lines=_optional_int(a.get("max_lines"))
                ),
                (lambda: self._grammar("read_file")) if grammar else None,
            ),
            Tool(
                "write_file",
                "Create or overwrite a UTF-8 text file with the given content (the whole file). The path is "
                "relative to the workspace root; missing parent directories are created." + protected,
                write,
                lambda a: self.write_file(a["path"], a["content"]),
            ),
            Tool(
                "list_dir",
                "List a directory of the workspace: one entry per line, sorted by name, directories end "
                "with '/', files show their size in bytes. The path is relative to the workspace root.",
                listing,
                lambda a: self.list_dir(a.get("path") or "."),
                (lambda: self._grammar("list_dir")) if grammar else None,
            ),
        ]

    def paths(self, limit: int = GRAMMAR_MAX_PATHS) -> tuple[list[str], list[str]] | None:
        """(files, folders) of the workspace as relative POSIX paths, folders including ".", or None
        when there are more than ``limit`` of either. Hidden entries are skipped."""
        files: list[str] = []
        folders: list[str] = ["."]
        for current, dirnames, filenames in os.walk(self.root):
            dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
            base = Path(current)
            folders.extend(self._relative(base / d).as_posix() for d in dirnames)
            files.extend(self._relative(base / f).as_posix() for f in sorted(filenames) if not f.startswith("."))
            if len(files) > limit or len(folders) > limit:
                return None
        return files, folders

    def _grammar(self, tool: str) -> dict[str, Any] | None:
        found = self.paths()
        if found is None:
            return None
        files, folders = found
        choices = files if tool == "read_file" else folders
        if not choices:
            return None
        base = next(t for t in self.tools(grammar=False) if t.name == tool).input_schema
        properties = dict(base["properties"])
        properties["path"] = {**properties["path"], "enum": choices}
        properties["path"].pop("minLength", None)
        return {**base, "properties": properties, "required": sorted({"path", *base["required"]})}

    def _relative(self, resolved: Path) -> PurePosixPath:
        return PurePosixPath(resolved.relative_to(self.root).as_posix())

    def _protected_by(self, path: str, resolved: Path) -> str | None:
        """The first pattern protecting ``path``, checked both as written and as resolved."""
        candidates = [self._relative(resolved)]
        lexical = Path(os.path.normpath(self.root / path))
        if lexical.is_relative_to(self.root):
            candidates.append(self._relative(lexical))
        for pattern in self._patterns:
            if any(pattern.matches(c) for c in candidates):
                return pattern.text
        return None

    def _describe(self, entry: Path) -> str:
        try:
            real = entry.resolve()
            if not real.is_relative_to(self.root):
                return f"{entry.name}  (symlink pointing outside the workspace)"
            if not real.exists():
                return f"{entry.name}  (broken symlink)"
            line = f"{entry.name}/" if real.is_dir() else f"{entry.name}  {real.stat().st_size} bytes"
            if entry.is_symlink():
                line += f"  (symlink to {self._relative(real)})"
            if self._protected_by(str(entry), real) is not None:
                line += "  (protected)"
            return line
        except (OSError, RuntimeError):
            return f"{entry.name}  (unreadable)"


def _prop(kind: str, description: str, **constraints: int) -> dict[str, Any]:
    return {"type": kind, **constraints, "description": description}


def _schema(required: list[str], **properties: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": required, "additionalProperties": False}


def _optional_int(value: Any) -> int | None:
    return None if value is None else int(value)


def _split_lines(text: str) -> list[str]:
    """Lines with their endings, split on "\\n" only so numbers agree with editors and ``wc -l``."""
    lines = text.split("\n")
    out = [line + "\n" for line in lines[:-1]]
    if lines[-1]:
        out.append(lines[-1])
    return out


def _with_note(text: str, note: str) -> str:
    separator = "" if text.endswith("\n") else "\n"
    return f"{text}{separator}{note}"
