"""The call index: one row per model call, one per compaction, clearing and run end, kept in step
with the entries by the append that writes them (same transaction), and backfilled from the entries
by the migration that creates it.

Each call row also says which prefix layers differ from the call before it (the previous ``call``
entry of the session, a fork's parent included), worked out once when the row is written: a query
then sums flags instead of comparing every call with its neighbour, which is what keeps a look
over 200,000 calls well under a second.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from tiny_agent.redaction import redact
from tiny_agent.store.dialect import Db

__all__ = ["CALL_COLUMNS", "EVENT_COLUMNS", "INDEXED_KINDS", "CallIndex", "backfill", "backfill_reasoning", "copy_rows"]

CALL_COLUMNS = (
    "session_id, seq, at, done_at, status, purpose, model, response_model, provider, workspace,"
    " input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, cost_usd, seconds, stop_reason,"
    " miss, provider_miss, tools, system, pins, chain, messages, shared_messages, changes,"
    " tools_changed, system_changed, pins_changed, messages_changed, expected"
)
EVENT_COLUMNS = "session_id, seq, at, kind, model, provider, workspace, reason, count, tokens_before, tokens_after"

INDEXED_KINDS = frozenset(
    {"call", "call_done", "call_failed", "compaction", "clear", "decision", "config", "run", "stop"}
)
"""Entries the index reads; every other kind costs an append nothing."""


def _replacing(columns: str) -> str:
    """A row written again replaces the one there (both backends spell an upsert this way)."""
    rest = columns.split(", ")[2:]  # after the key (session_id, seq)
    return " ON CONFLICT (session_id, seq) DO UPDATE SET " + ", ".join(f"{c} = excluded.{c}" for c in rest)


_REPLACE = {"calls": _replacing(CALL_COLUMNS), "events": _replacing(EVENT_COLUMNS)}
_COPIED = {"calls": f"{CALL_COLUMNS}, reasoning_tokens", "events": EVENT_COLUMNS}
"""What a fork's copy carries: ``reasoning_tokens`` came with migration 5, so the index written by
migration 3's backfill leaves it out (``CallIndex(reasoning=False)``)."""
_USAGE = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens")
_MESSAGE_CAUSES = ("message #", "a compaction replaced", "clearing old tool output")
"""Miss causes that say the messages changed: how a call recorded before ``shared_messages`` was
kept tells whether its messages changed."""


@dataclass(frozen=True)
class _Previous:
    seq: int
    purpose: str
    model: str
    tools: str | None
    system: str | None
    pins: str | None
    messages: int | None
    provider: str | None = None


class CallIndex:
    """Index rows for the entries of one session, written on the store's open transaction."""

    def __init__(self, db: Db, session_id: str, *, backfilling: bool = False, reasoning: bool = True) -> None:
        self.db = db
        self.reasoning = reasoning
        """The ``calls`` table has the ``reasoning_tokens`` column (not yet when migration 3 backfills)."""
        self.session_id = session_id
        self.backfilling = backfilling
        """From the migration: ``changes`` is worked out from the compaction and clearing entries."""
        self._loaded = False
        self._provider: str | None = None
        self._workspace: str | None = None
        self._start = 0
        self._newest: _Previous | None = None
        """The newest answered call, whose model an event is of."""
        self._previous: dict[str | None, _Previous | None] = {}
        """Each provider's newest answered call: what a call to it is compared with (its ``shared_messages``
        too); another provider's is another cache."""
        self._open: dict[int, _Previous] = {}
        self._pending: list[str] = []

    def add(self, kind: str, body: Mapping[str, Any], seq: int, at: float) -> None:
        if kind not in INDEXED_KINDS:
            return
        if not self._loaded:
            self._load(seq)
        if kind in ("config", "run"):  # the run's settings: "config" entries before 2026-12-01, "run" since
            self._set_provider((body.get("settings") or {}).get("provider"))
        elif kind == "call":
            if self._provider is None:  # a session the library started without recording its provider
                self._set_provider(body.get("provider"))
            self._call(body, seq, at)
        elif kind == "call_done":
            self._done(body, at)
            compacted = ((body.get("usage") or {}).get("details") or {}).get("server_compaction")
            if isinstance(compacted, Mapping):  # the server compacted in this call: an event of its own
                self._event("server_compaction", compacted, seq, at)
        elif kind == "call_failed":
            self.db.execute(
                "UPDATE calls SET status = 'failed', done_at = ? WHERE session_id = ? AND seq = ? AND status = 'open'",
                (at, self.session_id, _int(body.get("call"))),
            )
        else:
            self._event(kind, body, seq, at)

    def _set_provider(self, provider: object) -> None:
        if isinstance(provider, str) and provider and provider != self._provider:
            self._provider = provider
            self.db.execute("UPDATE sessions SET provider = ? WHERE id = ?", (provider, self.session_id))

    def _load(self, seq: int) -> None:
        row = self.db.execute("SELECT provider, workspace FROM sessions WHERE id = ?", (self.session_id,)).fetchone()
        self._provider, self._workspace = (row[0], row[1]) if row else (None, None)
        self._start, self._newest = seq, previous_call(self.db, self.session_id, seq)
        self._loaded = True

    def _before(self) -> _Previous | None:
        if self._provider not in self._previous:
            self._previous[self._provider] = previous_call(self.db, self.session_id, self._start, self._provider)
        return self._previous[self._provider]

    def _call(self, body: Mapping[str, Any], seq: int, at: float) -> None:
        prints = body.get("fingerprint") or {}
        tools, system, pins = (_text(prints.get(k)) for k in ("tools", "system", "pins"))
        messages = _int(prints.get("messages"))
        shared = _int(body.get("shared_messages"))
        raw = body.get("changes")
        if isinstance(raw, list):
            changes: list[str] | None = [str(c) for c in raw]
        else:
            changes = list(self._pending) if self.backfilling else None
        self._pending = []
        purpose, model = str(body.get("purpose") or "turn"), str(body.get("model") or "")
        prev = self._before()
        flags: list[int | None] = [None, None, None, None]
        expected = bool(changes) or purpose != "turn"
        if prev is not None:
            flags[:3] = [_differs(prev.tools, tools), _differs(prev.system, system), _differs(prev.pins, pins)]
            if shared is not None and prev.messages is not None:
                flags[3] = int(shared < prev.messages)
            expected = expected or prev.purpose != "turn"
        self._open[seq] = _Previous(seq, purpose, model, tools, system, pins, messages, self._provider)
        self.db.execute(
            f"INSERT INTO calls ({CALL_COLUMNS}) VALUES ({', '.join('?' * 31)}){_REPLACE['calls']}",
            (
                self.session_id, seq, at, None, "open", purpose, model, None, self._provider, self._workspace,
                None, None, None, None, None, None, None, None, None,
                tools, system, pins, _text(prints.get("chain")), messages, shared,
                None if changes is None else ",".join(changes),
                *flags, int(expected),
            ),
        )  # fmt: skip

    def _done(self, body: Mapping[str, Any], at: float) -> None:
        call = _int(body.get("call"))
        answered = self._open.pop(call, None) if call is not None else None
        if answered is not None:
            self._newest = self._previous[answered.provider] = answered
        usage = body.get("usage") or {}
        miss = body.get("miss")
        miss_text = redact(str(miss)) if miss else None
        provider_miss = redact(str(body["provider_miss"])) if body.get("provider_miss") else None
        cost, seconds = body.get("cost_usd"), body.get("seconds")
        reasoning = (" reasoning_tokens = ?,", _int(usage.get("reasoning_tokens"))) if self.reasoning else ("",)
        self.db.execute(
            "UPDATE calls SET status = 'done', done_at = ?, response_model = ?, input_tokens = ?, output_tokens = ?,"
            " cache_read_tokens = ?, cache_write_tokens = ?, cost_usd = ?, seconds = ?, stop_reason = ?, miss = ?,"
            f"{reasoning[0]} provider_miss = ? WHERE session_id = ? AND seq = ?",
            (
                at, _text(body.get("model")),
                *(_int(usage.get(k)) for k in _USAGE),
                float(cost) if isinstance(cost, int | float) else None,
                float(seconds) if isinstance(seconds, int | float) else None,
                _text(body.get("stop_reason")), miss_text, *reasoning[1:], provider_miss, self.session_id, call,
            ),
        )  # fmt: skip
        # A call recorded before shared_messages: its miss cause (or a clean read) says what the messages did.
        self.db.execute(
            "UPDATE calls SET messages_changed = CASE"
            " WHEN ? THEN 1 WHEN cache_read_tokens IS NOT NULL THEN 0 END"
            " WHERE session_id = ? AND seq = ? AND shared_messages IS NULL AND messages_changed IS NULL"
            " AND tools_changed IS NOT NULL AND tools_changed + system_changed + pins_changed = 0",
            (bool(miss_text and miss_text.startswith(_MESSAGE_CAUSES)), self.session_id, call),
        )

    def _event(self, kind: str, body: Mapping[str, Any], seq: int, at: float) -> None:
        if kind == "compaction":
            count, reason = _int(body.get("messages")), None
            self._pending.append("compaction")
        elif kind == "clear":
            count, reason = len(body.get("stubs") or {}), None
            self._pending.append("clear")
        elif kind == "server_compaction":
            count, reason = 1, None
        elif kind == "decision":  # what the policy chose ("compact", "clear"), and whether it failed
            action = _text(body.get("action")) or "?"
            count, reason = _int(body.get("messages")), f"{action} failed" if body.get("failed_at") else action
        else:
            count, reason = _int(body.get("steps")), _text(body.get("reason"))
        model = self._newest.model if self._newest else None
        self.db.execute(
            f"INSERT INTO events ({EVENT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?){_REPLACE['events']}",
            (
                self.session_id, seq, at, kind, model, self._provider, self._workspace, reason, count,
                _int(body.get("tokens_before", body.get("tokens"))), _int(body.get("tokens_after")),
            ),
        )  # fmt: skip


def previous_call(db: Db, session_id: str, seq: int, provider: str | None = None) -> _Previous | None:
    """The newest answered call before ``seq`` in the session's history, a fork's inherited calls included
    (with ``provider``: the newest to that provider)."""
    sid: str | None = session_id
    limit = seq
    while sid is not None:
        mine, asked = (" AND provider = ?", (provider,)) if provider else ("", ())
        row = db.execute(
            "SELECT seq, purpose, model, tools, system, pins, messages, provider FROM calls"
            f" WHERE session_id = ? AND seq < ? AND status = 'done'{mine} ORDER BY seq DESC LIMIT 1",
            (sid, limit, *asked),
        ).fetchone()
        if row is not None:
            return _Previous(*row)
        parent = db.execute("SELECT parent_id, fork_seq FROM sessions WHERE id = ?", (sid,)).fetchone()
        if parent is None or parent[0] is None or parent[1] is None:
            return None
        sid, limit = parent[0], min(limit, int(parent[1]) + 1)
    return None


def backfill(db: Db, *, reasoning: bool = True) -> None:
    """Index every stored call and event, parents before their forks (``reasoning``: the ``calls``
    table has its ``reasoning_tokens`` column)."""
    sessions = [r[0] for r in db.execute("SELECT id FROM sessions ORDER BY created_at, id")]
    kinds = ", ".join(f"'{k}'" for k in sorted(INDEXED_KINDS))
    for session_id in sessions:
        index = CallIndex(db, session_id, backfilling=True, reasoning=reasoning)
        rows = db.execute(
            f"SELECT seq, kind, body, at FROM entries WHERE session_id = ? AND kind IN ({kinds}) ORDER BY seq",
            (session_id,),
        ).fetchall()
        for seq, kind, text, at in rows:
            try:
                body = json.loads(text)
            except ValueError:
                continue
            if isinstance(body, dict):
                index.add(kind, body, seq, at)


def copy_rows(db: Db, source: str, target: str, low: int, high: int) -> None:
    """Give ``target`` (a fork) its own copy of ``source``'s index rows with low < seq <= high."""
    for table, columns in _COPIED.items():
        rest = columns.split(", ", 1)[1]
        db.execute(
            f"INSERT INTO {table} ({columns}) SELECT ?, {rest} FROM {table}"
            f" WHERE session_id = ? AND seq > ? AND seq <= ?{_replacing(columns)}",
            (target, source, low, high),
        )


def backfill_reasoning(db: Db) -> None:
    """Fill ``reasoning_tokens`` of the calls whose ``call_done`` entry reported them; only entries that
    name the field are parsed (those written since thinking was recorded), the rest stay NULL (unknown)."""
    rows = db.execute(
        "SELECT session_id, body FROM entries WHERE kind = 'call_done' AND body LIKE '%reasoning_tokens%'"
    ).fetchall()
    for session_id, text in rows:
        try:
            body = json.loads(text)
        except ValueError:
            continue
        usage = body.get("usage") if isinstance(body, dict) else None
        tokens = _int(usage.get("reasoning_tokens")) if isinstance(usage, dict) else None
        if tokens is not None:
            db.execute(
                "UPDATE calls SET reasoning_tokens = ? WHERE session_id = ? AND seq = ?",
                (tokens, session_id, _int(body.get("call"))),
            )


def _differs(before: str | None, now: str | None) -> int | None:
    return None if before is None or now is None else int(before != now)


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None
