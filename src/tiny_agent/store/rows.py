"""How a session and its entries are kept in rows, the same in every backend: the columns of a
session, an entry's body as compact JSON with keys redacted, the title a listing shows, and what a
body that cannot be read back becomes."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from tiny_agent.errors import UnreadableEntry
from tiny_agent.redaction import redact, redact_secrets
from tiny_agent.store.base import UNREADABLE, SessionInfo
from tiny_agent.text import scrub

__all__ = ["SESSION_COLUMNS", "decode_body", "encode_body", "session_of", "title_of", "writer_of"]

SESSION_COLUMNS = (
    "id, created_at, updated_at, workspace, title, head, parent_id, fork_seq, cost_usd, calls, writer, host"
)


def session_of(row: Sequence[Any]) -> SessionInfo:
    sid, created, updated, workspace, title, head, parent_id, fork_seq, cost, calls, writer, host = row
    return SessionInfo(
        sid, created, updated, workspace, title, head, parent_id, fork_seq, cost, calls, writer_of(writer), host
    )


def writer_of(mark: str | None) -> str | None:
    """``host:pid`` of a writer mark (``host:pid:token``)."""
    return ":".join(mark.split(":")[:2]) if mark else None


def encode_body(body: Mapping[str, Any], kind: str = "") -> str:
    """The stored text of a body. Keys (the registered secrets: API keys, values given to MCP servers)
    never reach the disk; in a failed call's entry, neither do credentials of a known shape a server
    echoed. Everything else is stored as the window holds it, so a resume renders the prefix the last
    request sent: a credential of a known shape in a file the model read stays (the model may write
    it back), and so does the model's signed reasoning, which goes back to the API byte for byte. The
    window never holds a key (``Conversation`` hides them in what the model reads), so hiding keys
    here changes nothing a request sends. A lone surrogate (a byte that was not UTF-8, let through
    somewhere) is stored as U+FFFD."""
    text = scrub(json.dumps(body, ensure_ascii=False, separators=(",", ":")))
    return redact(text) if kind == "call_failed" else redact_secrets(text)


def decode_body(text: str, *, seq: int, kind: str, lenient: bool, store: str, session_id: str) -> dict[str, Any]:
    """A stored body; ``UnreadableEntry`` if it is not a JSON object (``{UNREADABLE: why}`` if lenient)."""
    try:
        body = json.loads(text)
        reason = None if isinstance(body, dict) else f"its body is JSON but not an object: {text[:40]!r}"
    except (json.JSONDecodeError, TypeError) as exc:
        reason = f"its body is not valid JSON ({exc})"
    if reason is None:
        return body  # type: ignore[no-any-return]
    if lenient:
        return {UNREADABLE: reason}
    raise UnreadableEntry(seq, kind, reason, store=store, session_id=session_id)


def title_of(kind: str, body: Mapping[str, Any]) -> str:
    """The title a session gets from its first user input (clipped)."""
    if kind != "user":
        return ""
    for block in body.get("content") or ():
        if isinstance(block, Mapping) and block.get("type") == "text":
            return scrub(" ".join(str(block.get("text", "")).split())[:80])
    return ""
