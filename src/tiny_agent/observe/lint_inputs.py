"""What ``lint`` reads: a JSON body or a list of them, JSONL, ``-`` (stdin), or a session export (its
requests re-rendered from the log, with the time of each answer, so an expired entry is found too)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from tiny_agent.observe.export import EXPORT_FORMAT, read_export

__all__ = ["load_bodies", "load_timed"]


def load_bodies(path: str | Path) -> list[tuple[str, dict[str, Any]]]:
    """(source, body) pairs of a JSON body or list, JSONL, ``-`` (stdin), or a session export."""
    return [(source, body) for source, body, _ in load_timed(path)]


def load_timed(path: str | Path) -> list[tuple[str, dict[str, Any], float | None]]:
    """(source, body, when its answer came) of each body; the time is known only in an export."""
    text = sys.stdin.read() if str(path) == "-" else Path(path).read_text(encoding="utf-8")
    path = Path("<stdin>" if str(path) == "-" else path)
    if text.lstrip().startswith('{"format": "' + EXPORT_FORMAT):
        from tiny_agent.observe.view.data import SessionView

        info, entries = read_export(text.splitlines(), str(path))
        return SessionView.of(info, entries).timed_bodies()
    if path.suffix != ".jsonl":
        try:
            data = json.loads(text)
        except json.JSONDecodeError:
            if path.name != "<stdin>":
                raise
        else:
            items = data if isinstance(data, list) else [data]
            return [
                (f"{path}[{i}]" if isinstance(data, list) else str(path), item, None) for i, item in enumerate(items)
            ]
    lines = [(n, line) for n, line in enumerate(text.splitlines(), 1) if line.strip()]
    return [(f"{path}:{n}", json.loads(line), None) for n, line in lines]
