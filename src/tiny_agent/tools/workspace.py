"""The file tools (read_file, write_file, list_dir, and edit_file and search from their own modules),
confined to one workspace directory.

Every path is checked on its fully resolved location (symlinks followed, dangling ones too), so no
``..``, absolute path or symlink reaches outside the root. What is refused inside it (``--protect``)
is decided in ``guards``; reads and writes go through ``files`` (streamed, atomic). Checks run before
the write; a symlink swapped in by another process between check and write is out of scope. Every
way the file system can fail (a name too long, an I/O error) is a ToolFailure the model can read,
never a crash.
"""

from __future__ import annotations

import contextlib
import os
import posixpath
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path, PurePosixPath
from typing import Any

from tiny_agent.errors import ConfigError
from tiny_agent.guide.file_terms import FileTerms
from tiny_agent.text import has_surrogates, shown_name, unescape_bytes
from tiny_agent.tools.edit import edit_tool
from tiny_agent.tools.files import read_text, with_note, write_atomic
from tiny_agent.tools.grammar import Limits, readable_files, schema, walk
from tiny_agent.tools.guards import Guards, protected_message, secret_message
from tiny_agent.tools.search import search_tool
from tiny_agent.tools.toolbox import Tool, ToolFailure
from tiny_agent.tools.workspace_tools import file_tools

__all__ = ["MAX_OUTPUT_CHARS", "Workspace"]

MAX_OUTPUT_CHARS = 20_000
"""Characters of one tool result before it is cut (the CLI lowers it for a small window)."""
NAME_MAX = 255
"""Longest file or folder name, in bytes, on the common Linux and macOS file systems."""


class Workspace:
    """A directory the model may read and write, minus the protected paths, and minus secrets for reads.

    ``protect``: globs write_file refuses, on top of the defaults (``guards.DEFAULT_PROTECT``: .git/,
    hook folders, .envrc, ...: a change there runs code or rewrites history), which
    ``default_protect=False`` lifts. ``allow_read``: globs of files that look like secrets
    (``guards.SECRETS``: .env, private keys, cloud credentials, ...) read_file may read anyway.
    Secrets are refused for every provider, the local one included: tool results are kept in the
    session store on disk, and one rule is easier to trust than one that changes with the provider.
    """

    def __init__(
        self,
        root: str | Path,
        *,
        protect: Sequence[str] = (),
        default_protect: bool = True,
        allow_read: Sequence[str] = (),
        max_output_chars: int = MAX_OUTPUT_CHARS,
        grammar_limits: Limits | None = None,
        code_tools: bool = True,
    ) -> None:
        resolved = Path(root).resolve()
        if not resolved.is_dir():
            what = "is not a directory" if resolved.exists() else "does not exist"
            raise ConfigError(f"workspace root {str(root)!r} {what}")
        if not os.access(resolved, os.R_OK | os.X_OK):
            raise ConfigError(
                f"workspace root {str(resolved)!r} cannot be read: the tools need read and execute "
                "permission on it (chmod u+rx), or choose another folder"
            )
        if max_output_chars < 1:
            raise ConfigError(f"max_output_chars must be at least 1, got {max_output_chars}")
        self.root = resolved
        """Absolute and resolved once; every tool path must resolve inside it."""
        self.protect = (protect,) if isinstance(protect, str) else tuple(protect)
        self.default_protect = default_protect
        self.allow_read = (allow_read,) if isinstance(allow_read, str) else tuple(allow_read)
        self.max_output_chars = max_output_chars
        self.code_tools = code_tools
        """Whether ``tools`` offers edit_file and search beside the three file tools."""
        self.grammar_limits = grammar_limits or Limits()
        """Beyond these (entries walked, enum size) a tool's grammar is None: a free ``path`` string."""
        self.guards = Guards(
            resolved, protect=self.protect, default_protect=default_protect, allow_read=self.allow_read
        )
        self._terms = FileTerms(resolved)

    def __repr__(self) -> str:
        return (
            f"Workspace({str(self.root)!r}, protect={self.protect!r}, default_protect={self.default_protect!r}, "
            f"allow_read={self.allow_read!r})"
        )

    def resolve(self, path: str) -> Path:
        """The resolved absolute path, or ToolFailure if it is empty, unusable or lands outside the root."""
        if not path.strip():
            raise ToolFailure(f"refused: empty path; give a path relative to the workspace ({self.root})")
        if "\0" in path:
            raise ToolFailure(f"refused: {path!r} contains a NUL character")
        try:
            longest = max(len(os.fsencode(name)) for name in path.split("/"))
        except UnicodeEncodeError:
            raise ToolFailure(f"refused: {_shorten(path)!r} is not valid text (it holds a lone surrogate)") from None
        if longest > NAME_MAX:
            raise ToolFailure(
                f"refused: {_shorten(path)} has a name longer than {NAME_MAX} bytes ({longest} bytes); "
                "use a shorter name"
            )
        raw = unescape_bytes(path)  # list_dir's \xff escapes of a name that is not UTF-8
        if raw != path and not os.path.lexists(self.root / path) and os.path.lexists(self.root / raw):
            path = raw
        try:
            resolved = (self.root / path).resolve()
        except (OSError, RuntimeError) as exc:  # RuntimeError is a symlink loop before Python 3.13
            raise ToolFailure(f"cannot resolve {path!r}: {exc}") from exc
        if not resolved.is_relative_to(self.root):
            raise ToolFailure(f"refused: {path!r} is outside the workspace ({self.root}); use a path relative to it")
        return resolved

    def is_protected(self, path: str) -> bool:
        """Whether write_file would refuse ``path``. Raises ToolFailure if it is outside the root."""
        return self.guards.protected(self._candidates(path, self.resolve(path))) is not None

    def is_secret(self, path: str) -> bool:
        """Whether read_file would refuse ``path`` as a secret the user has not allowed. Raises
        ToolFailure if it is outside the root."""
        return self.guards.secret(self._candidates(path, self.resolve(path))) is not None

    def read_file(self, path: str, *, start_line: int = 1, max_lines: int | None = None) -> str:
        """The text of a file, from ``start_line`` (1-based), cut to ``max_output_chars``. Reads only
        as far as the answer needs (see ``files.read_text``)."""
        target = self.resolve(path)
        with _os_errors(f"cannot read {path}"):
            if not target.exists():
                raise ToolFailure(f"no such file: {path}")
            if target.is_dir():
                raise ToolFailure(f"{path} is a directory; use list_dir")
            refusal = self.guards.secret(self._candidates(path, target))
            if refusal is not None:
                raise ToolFailure(secret_message(path, refusal))
            if not target.is_file():
                raise ToolFailure(f"{path} is not a regular file; read_file only reads files")
            return read_text(target, path, start_line=start_line, max_lines=max_lines, max_chars=self.max_output_chars)

    def write_file(self, path: str, content: str) -> str:
        """Create or overwrite a UTF-8 file atomically, creating parent directories inside the
        workspace. On any failure the file is as it was and no new folder is left behind."""
        target = self.resolve(path)
        if path.split("/")[-1] in ("", ".", ".."):
            example = posixpath.normpath(path)
            example = "notes.txt" if example == "." else f"{example}/notes.txt"
            raise ToolFailure(
                f"refused: {path} names a folder; write_file needs a file name at the end, such as {example} "
                "(missing folders are created)"
            )
        refusal = self.guards.protected(self._candidates(path, target))
        if refusal is not None:
            raise ToolFailure(protected_message(path, refusal))
        try:
            data = content.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise ToolFailure(f"content is not valid text (unpaired surrogate at character {exc.start})") from None
        with _os_errors(f"cannot write {path}"):
            if target.is_dir():
                raise ToolFailure(f"{path} is a directory; write_file needs a file path")
            if target.exists() and not target.is_file():
                raise ToolFailure(f"{path} is not a regular file; write_file only writes files")
            for parent in target.parents:
                if parent.exists():
                    if not parent.is_dir():
                        raise ToolFailure(f"cannot write {path}: {self._relative(parent)} is a file, not a directory")
                    break
            missing = [parent for parent in target.parents if not parent.exists()]
            previous = target.stat().st_size if target.exists() else None
            try:
                target.parent.mkdir(parents=True, exist_ok=True)
                write_atomic(target, data)
            except BaseException:
                for folder in missing:  # deepest first
                    with contextlib.suppress(OSError):
                        folder.rmdir()
                raise
        how = "created" if previous is None else f"overwritten; it had {previous} bytes"
        return f"wrote {len(data)} bytes to {path} ({how})"

    def list_dir(self, path: str = ".") -> str:
        """Entries sorted by name, one per line: ``dir/`` or ``file  N bytes``, cut to ``max_output_chars``."""
        target = self.resolve(path)
        with _os_errors(f"cannot list {path}"):
            if not target.exists():
                raise ToolFailure(f"no such directory: {path}")
            if not target.is_dir():
                raise ToolFailure(f"{path} is a file, not a directory; use read_file")
            entries = sorted(target.iterdir(), key=lambda p: p.name)
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
        return with_note(
            shown,
            f"[... cut: {left} more characters not shown (of {len(full)}); "
            f"{len(lines) - count} of {len(lines)} entries left out]",
        )

    def tools(self, *, grammar: bool = True) -> list[Tool]:
        """The file tools (read_file, write_file, list_dir, edit_file, search), bound to this workspace.
        With ``grammar``, each of the first three offers this turn's
        real paths as a decoding grammar (see ``Tool.grammar`` and ``agent.grammar``)."""
        extra = [edit_tool(self), search_tool(self)] if self.code_tools else []
        return [*file_tools(self, grammar=grammar), *extra]

    def paths(self, limits: Limits | None = None) -> tuple[list[str], list[str]] | None:
        """(files read_file would read, folders list_dir would list) as relative POSIX paths, or None
        when the workspace is larger than ``limits`` (see ``agent.grammar``)."""
        tree = walk(self.root, limits or self.grammar_limits)
        return None if tree is None else (readable_files(self.root, tree, self.guards), list(tree.folders))

    def file_terms(self) -> dict[str, Mapping[str, int]]:
        """What each file read_file offers holds, as counted word stems (see ``agent.file_terms``);
        empty past ``grammar_limits``."""
        paths = self.paths()
        return {} if paths is None else self._terms.of(paths[0])

    def grammar(self, tool: str) -> dict[str, Any] | None:
        """This turn's narrowed input schema for ``tool`` (see ``agent.grammar``), or None: a workspace
        over ``grammar_limits``, no path to offer, or a tool without a grammar."""
        base = next((t.input_schema for t in self.tools(grammar=False) if t.name == tool), None)
        return None if base is None else schema(tool, base, self.root, self.guards, self.grammar_limits)

    def _relative(self, resolved: Path) -> PurePosixPath:
        return PurePosixPath(resolved.relative_to(self.root).as_posix())

    def candidates(self, path: str, resolved: Path) -> list[PurePosixPath]:
        """What the guards judge for ``path`` (see ``_candidates``)."""
        return self._candidates(path, resolved)

    def _candidates(self, path: str, resolved: Path) -> list[PurePosixPath]:
        """``path`` as resolved and as written (normalised): a rule matching either applies, so
        neither a symlink nor a ``..`` walks around it."""
        candidates = [self._relative(resolved)]
        lexical = Path(os.path.normpath(self.root / path))
        if lexical.is_relative_to(self.root) and lexical != resolved:
            candidates.append(self._relative(lexical))
        return candidates

    def _describe(self, entry: Path) -> str:
        line = self._described(entry)
        if has_surrogates(entry.name):
            shown = shown_name(entry.name)
            line = (
                shown + line[len(entry.name) :] + "  (name not UTF-8: its bytes shown as \\x escapes, as tools take it)"
            )
        return line

    def _described(self, entry: Path) -> str:
        try:
            real = entry.resolve()
            if not real.is_relative_to(self.root):
                return f"{entry.name}  (symlink pointing outside the workspace)"
            if not real.exists():
                return f"{entry.name}  (broken symlink)"
            line = f"{entry.name}/" if real.is_dir() else f"{entry.name}  {real.stat().st_size} bytes"
            if entry.is_symlink():
                line += f"  (symlink to {self._relative(real)})"
            candidates = self._candidates(str(entry), real)
            if self.guards.protected(candidates) is not None:
                line += "  (protected)"
            if not real.is_dir() and self.guards.secret(candidates) is not None:
                line += "  (looks like a secret: not readable)"
            return line
        except (OSError, RuntimeError):
            return f"{entry.name}  (unreadable)"


@contextlib.contextmanager
def _os_errors(doing: str) -> Iterator[None]:
    """Any OSError (a name too long, an I/O error, a permission) becomes a ToolFailure for the model."""
    try:
        yield
    except OSError as exc:
        raise ToolFailure(f"{doing}: {exc.strerror or exc}") from exc


def _shorten(text: str, limit: int = 120) -> str:
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text)} characters)"
