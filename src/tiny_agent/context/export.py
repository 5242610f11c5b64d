"""A session out of the store: as JSON lines (everything, to move or archive it), or as the request
body of either wire format (the whole conversation, uncompacted, ready to send elsewhere)."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from typing import Literal

from tiny_agent.context.engine import Context
from tiny_agent.context.log import MemoryLog
from tiny_agent.store.base import SessionInfo
from tiny_agent.store.migrations import SCHEMA_VERSION
from tiny_agent.types import Entry, Prompt

__all__ = ["EXPORT_FORMAT", "ExportFormat", "export_lines"]

EXPORT_FORMAT = "tiny-agent-session"
ExportFormat = Literal["jsonl", "anthropic", "openai"]


def export_lines(info: SessionInfo, entries: Sequence[Entry], fmt: ExportFormat = "jsonl") -> Iterator[str]:
    """The session as lines of text. ``jsonl``: a header, then one entry per line (a fork's inherited
    entries included). ``anthropic`` / ``openai``: one request body with every message."""
    if fmt == "jsonl":
        header = {"format": EXPORT_FORMAT, "version": 1, "schema": SCHEMA_VERSION, "session": info.to_dict()}
        yield json.dumps(header, ensure_ascii=False)
        for e in entries:
            yield json.dumps({"seq": e.seq, "id": e.id, "kind": e.kind, "at": e.at, "body": e.body}, ensure_ascii=False)
        return
    context = Context(log=MemoryLog(entries))
    model = str(context.run_settings.get("model") or "unknown")
    prompt = Prompt(context.system_blocks(), context.tools, context.messages)
    # Each SDK takes a second to import: only the one asked for is loaded.
    if fmt == "anthropic":
        from tiny_agent.providers.anthropic import AnthropicProvider

        body = AnthropicProvider(model=model, api_key="rendering-only").render(prompt)
    else:
        from tiny_agent.providers.openai_compat import OpenAICompatProvider

        body = OpenAICompatProvider(model=model, api_key="rendering-only").render(prompt)
    yield json.dumps(body, ensure_ascii=False, indent=2)
