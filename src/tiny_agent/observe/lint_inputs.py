"""What ``lint`` reads: a JSON body or a list of them, JSONL, ``-`` (stdin), or a session export (its
requests re-rendered from the log, with the time of each answer, so an expired entry is found too).

Input that holds no request body is refused in one line (``ConfigError``): nothing at all, a value that
is not a JSON object with ``messages`` (or the Responses API's ``input``), a JSONL line that is not JSON
(by its line in the file)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from tiny_agent.errors import ConfigError
from tiny_agent.observe.export import EXPORT_FORMAT, read_export
from tiny_agent.providers.lines import jsonl_lines

__all__ = ["load_bodies", "load_timed"]


def load_bodies(path: str | Path) -> list[tuple[str, dict[str, Any]]]:
    """(source, body) pairs of a JSON body or list, JSONL, ``-`` (stdin), or a session export."""
    return [(source, body) for source, body, _, _ in load_timed(path)]


def load_timed(path: str | Path) -> list[tuple[str, dict[str, Any], float | None, bool]]:
    """(source, body, when its answer came, whether it was answered) of each body; the time is known
    only in an export, which alone says a call was refused (no answer): any other body was taken."""
    text = sys.stdin.read() if str(path) == "-" else Path(path).read_text(encoding="utf-8")
    path = Path("<stdin>" if str(path) == "-" else path)
    found = _timed(text, path)
    if not found:
        raise ConfigError(f"no request bodies in {path}: give a JSON body, a JSON list or JSONL of them")
    for source, body, _, _ in found:
        _check_body(source, body)
    return found


def _timed(text: str, path: Path) -> list[tuple[str, Any, float | None, bool]]:
    if not text.strip():
        return []
    if text.lstrip().startswith('{"format": "' + EXPORT_FORMAT):
        from tiny_agent.observe.view.data import SessionView

        info, entries = read_export(jsonl_lines(text), str(path))
        return [(s, b, t, t is not None) for s, b, t in SessionView.of(info, entries).timed_bodies()]
    if path.suffix != ".jsonl":
        try:
            data = json.loads(text)
        except json.JSONDecodeError:
            if path.name != "<stdin>":
                raise
        else:
            items = data if isinstance(data, list) else [data]
            return [
                (f"{path}[{i}]" if isinstance(data, list) else str(path), item, None, True)
                for i, item in enumerate(items)
            ]
    out: list[tuple[str, Any, float | None, bool]] = []
    for number, line in enumerate(jsonl_lines(text), 1):
        if not line.strip():
            continue
        try:
            out.append((f"{path}:{number}", json.loads(line), None, True))
        except json.JSONDecodeError as exc:
            raise ConfigError(
                f"{path}:{number}: not JSON ({exc.msg} at column {exc.colno}); one body per line"
            ) from exc
    return out


def _check_body(source: str, body: Any) -> None:
    """A request body is a JSON object with a ``messages`` list (or ``input``: the Responses API's)."""
    if isinstance(body, dict) and (isinstance(body.get("messages"), list) or isinstance(body.get("input"), list | str)):
        return
    shown = json.dumps(body, ensure_ascii=False)
    shown = shown if len(shown) <= 40 else shown[:37] + "..."
    raise ConfigError(f"{source}: not a request body ({shown}): a JSON object with a messages list is expected")
