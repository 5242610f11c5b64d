"""The file tools as the model sees them: each one's name, description and input schema, bound to
a workspace's ``read_file``, ``write_file`` and ``list_dir``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from tiny_agent.tools.toolbox import Tool

__all__ = ["file_tools"]


class Workspace(Protocol):
    """What the tools call (``tools.workspace.Workspace``)."""

    @property
    def protect(self) -> Sequence[str]: ...

    def read_file(self, path: str, *, start_line: int = 1, max_lines: int | None = None) -> str: ...
    def write_file(self, path: str, content: str) -> str: ...
    def list_dir(self, path: str = ".") -> str: ...
    def grammar(self, tool: str) -> dict[str, Any] | None: ...
    def file_terms(self) -> dict[str, Mapping[str, int]]: ...


def file_tools(workspace: Workspace, *, grammar: bool = True) -> list[Tool]:
    """read_file, write_file and list_dir on ``workspace``; with ``grammar``, each offers the turn's
    real paths as a decoding grammar."""
    path = _prop("string", "File path, relative to the workspace.", minLength=1)
    protected = f" Protected paths are refused: {', '.join(workspace.protect)}." if workspace.protect else ""
    read = _schema(
        ["path"],
        path=path,
        start_line=_prop("integer", "First line to return (1-based).", minimum=1),
        max_lines=_prop("integer", "Return at most this many lines.", minimum=1),
    )
    write = _schema(["path", "content"], path=path, content=_prop("string", "The complete new content of the file."))
    listing = _schema([], path=_prop("string", "Directory, relative to the workspace (default '.')."))
    return [
        Tool(
            "read_file",
            "Read a UTF-8 text file. The path is relative to the workspace root. Long output is cut; "
            "read further with start_line (1-based) and max_lines.",
            read,
            lambda a: workspace.read_file(
                a["path"], start_line=int(a.get("start_line", 1)), max_lines=_optional_int(a.get("max_lines"))
            ),
            (lambda: workspace.grammar("read_file")) if grammar else None,
            terms=workspace.file_terms if grammar else None,
        ),
        Tool(
            "write_file",
            "Create or overwrite a UTF-8 text file with the given content (the whole file). The path is "
            "relative to the workspace root; missing parent directories are created." + protected,
            write,
            lambda a: workspace.write_file(a["path"], a["content"]),
            (lambda: workspace.grammar("write_file")) if grammar else None,
        ),
        Tool(
            "list_dir",
            "List a directory of the workspace: one entry per line, sorted by name, directories end "
            "with '/', files show their size in bytes. The path is relative to the workspace root.",
            listing,
            lambda a: workspace.list_dir(a.get("path") or "."),
            (lambda: workspace.grammar("list_dir")) if grammar else None,
        ),
    ]


def _prop(kind: str, description: str, **constraints: int) -> dict[str, Any]:
    return {"type": kind, **constraints, "description": description}


def _schema(required: list[str], **properties: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": required, "additionalProperties": False}


def _optional_int(value: Any) -> int | None:
    return None if value is None else int(value)
