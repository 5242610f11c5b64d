"""What an MCP server's tools look like to the model: their names, and their results as text.

Names: a server's tool keeps its own name unless another tool has it (a workspace tool, a Python
tool, a tool of another server); then it is ``server__tool``. A name the model APIs would refuse
(they take ``[A-Za-z0-9_-]{1,64}``) has its other characters replaced by ``_``.

Results: the blocks of a tool result are text today, so text stays text, structured content with
no text is its JSON, and an image, a sound or a resource is a line that names its type and size
(an embedded text resource is that line followed by its text).
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections import Counter
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Any

__all__ = ["exposed_names", "result_text", "safe_name"]

PREFIX_SEPARATOR = "__"
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")
MAX_NAME = 64


def safe_name(name: str) -> str:
    """``name`` as the model APIs accept it: other characters become ``_``, cut at 64."""
    return (_UNSAFE.sub("_", name) or "_")[:MAX_NAME]


def exposed_names(taken: Collection[str], listings: Mapping[str, Sequence[str]]) -> dict[tuple[str, str], str]:
    """The name the model sees for each (server, tool): its own where it is unique, else
    ``server__tool``. ``taken``: names of the tools that are not the servers' (they keep theirs)."""
    counts = Counter([*taken, *(safe_name(t) for tools in listings.values() for t in tools)])
    names: dict[tuple[str, str], str] = {}
    for server, tools in listings.items():
        for original in tools:
            plain = safe_name(original)
            clash = counts[plain] > 1
            names[(server, original)] = safe_name(f"{server}{PREFIX_SEPARATOR}{original}") if clash else plain
    return names


def result_text(content: Iterable[Any], structured: Mapping[str, Any] | None = None) -> str:
    """The text of an MCP tool result's content blocks, one after the other."""
    parts = [_block_text(block) for block in content]
    if not any(parts) and structured is not None:
        return json.dumps(structured, ensure_ascii=False)
    return "\n".join(parts)


def _block_text(block: Any) -> str:
    kind = getattr(block, "type", None)
    if kind == "text":
        return str(getattr(block, "text", ""))
    if kind in ("image", "audio"):
        data = str(getattr(block, "data", "") or "")
        return f"[{kind}: {getattr(block, 'mime_type', None) or 'unknown type'}, {_size(_decoded_bytes(data))}]"
    if kind == "resource_link":
        size = getattr(block, "size", None)
        shown = f", {_size(size)}" if isinstance(size, int) else ""
        mime = getattr(block, "mime_type", None) or "unknown type"
        return f"[resource link: {getattr(block, 'uri', '')} ({mime}{shown})]"
    if kind == "resource":
        resource = getattr(block, "resource", None)
        uri = getattr(resource, "uri", "")
        mime = getattr(resource, "mime_type", None) or "unknown type"
        text = getattr(resource, "text", None)
        if isinstance(text, str):
            return f"[resource: {uri} ({mime}, {len(text):,} characters)]\n{text}"
        blob = str(getattr(resource, "blob", "") or "")
        return f"[resource: {uri} ({mime}, {_size(_decoded_bytes(blob))})]"
    return f"[{kind or 'unknown'} content, not shown]"


def _decoded_bytes(data: str) -> int | None:
    try:
        return len(base64.b64decode(data, validate=True))
    except (binascii.Error, ValueError):
        return None


def _size(count: int | None) -> str:
    return "size unknown" if count is None else f"{count:,} bytes"
