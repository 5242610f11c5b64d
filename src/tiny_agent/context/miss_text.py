"""The words of a miss line: where two texts first differ, a quoted excerpt around it, what changed
between two tool lists (the diagnosis, ``sessions show`` and the tool-change warning say it alike)."""

from __future__ import annotations

import json
from collections.abc import Sequence

from tiny_agent.providers.first_change import first_difference
from tiny_agent.types import ToolSpec

__all__ = ["excerpt", "first_difference", "tool_changes", "where_text_changed"]


def excerpt(text: str, at: int) -> str:
    """About 50 characters around ``at``, quoted, with "..." where it was cut (as the miss line shows it)."""
    start = max(0, at - 20)
    piece = text[start : at + 30].replace("\n", " ")
    return json.dumps(("..." if start else "") + piece + ("..." if at + 30 < len(text) else ""), ensure_ascii=False)


def where_text_changed(old: str, new: str) -> str:
    """' at character N: now "...", was "..."': where two texts first differ, quoted."""
    at = first_difference(old, new)
    return f" at character {at}: now {excerpt(new, at)}, was {excerpt(old, at)}"


def tool_changes(before: Sequence[ToolSpec], now: Sequence[ToolSpec]) -> list[str]:
    """What differs between two tool lists, tool by tool: ``added x``, ``removed y``, ``z's
    description changed``, ``z's input schema changed``, then ``reordered: ...`` if that is all."""
    old, new = {t.name: t for t in before}, {t.name: t for t in now}
    out = [f"added {n}" for n in new if n not in old] + [f"removed {n}" for n in old if n not in new]
    for name, tool in new.items():
        was = old.get(name)
        if was is None:
            continue
        parts = ["description"] if was.description != tool.description else []
        if json.dumps(was.input_schema, ensure_ascii=False) != json.dumps(tool.input_schema, ensure_ascii=False):
            parts.append("input schema")
        if parts:
            out.append(f"{name}'s {' and '.join(parts)} changed")
    if not out and [t.name for t in before] != [t.name for t in now]:
        out.append(f"reordered: {', '.join(t.name for t in before)} -> {', '.join(t.name for t in now)}")
    return out
