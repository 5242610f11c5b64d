"""Where a crash case keeps its session: a SQLite file, or a PostgreSQL database of its own.

Each backend gives the case its store's location (what ``TINY_AGENT_STORE`` is set to), the rows as
a kill left them (``view``, checked without the library: one session, contiguous seqs, bodies that
parse), a copy to resume with the library while the original waits for the real CLI (``copy``),
and whether a secret was written anywhere in it (``holding``).
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from tiny_agent.context.log import ENTRY_KINDS
from tiny_agent.types import Entry

__all__ = ["CaseStore", "PostgresCaseStore", "SQLiteCaseStore", "StoreView", "read_store", "snapshot"]


@dataclass
class StoreView:
    """The raw rows of a store: one session (or none), its entries in seq order."""

    integrity: str
    session: str | None
    head: int
    writer: str | None
    entries: list[Entry]
    problems: list[str]

    def of_kind(self, kind: str) -> list[Entry]:
        return [e for e in self.entries if e.kind == kind]

    def results(self) -> dict[str, list[dict[str, Any]]]:
        found: dict[str, list[dict[str, Any]]] = {}
        for entry in self.of_kind("tool_result"):
            block = entry.body["block"]
            found.setdefault(block["tool_use_id"], []).append(block)
        return found

    def user_texts(self) -> list[str]:
        return [b.get("text", "") for e in self.of_kind("user") for b in e.body.get("content", [])]


class CaseStore(Protocol):
    location: str

    def view(self, label: str) -> StoreView: ...

    def copy(self, label: str) -> str: ...

    def holding(self, secret: str) -> list[str]: ...

    def close(self) -> None: ...


def _view(integrity: str, sessions: Sequence[Sequence[Any]], rows: Sequence[Sequence[Any]]) -> StoreView:
    """Checks that need no library: one session, contiguous seqs, bodies that parse."""
    problems: list[str] = []
    if len(sessions) > 1:
        problems.append(f"{len(sessions)} sessions in a one-session story")
    if not sessions:
        return StoreView(integrity, None, -1, None, [], problems)
    sid, head, writer = sessions[0]
    entries: list[Entry] = []
    for seq, eid, kind, text, at in rows:
        try:
            body = json.loads(text)
        except ValueError as exc:
            problems.append(f"entry #{seq} has a body that does not parse: {exc}")
            continue
        if not isinstance(body, dict) or body.get("v") != 1:
            problems.append(f"entry #{seq} has no body version 1")
        if kind not in ENTRY_KINDS:
            problems.append(f"entry #{seq} has an unknown kind {kind!r}")
        entries.append(Entry(kind, body, eid, seq, at))
    seqs = [e.seq for e in entries]
    if seqs != list(range(len(seqs))):
        problems.append(f"seqs are not 0..{len(seqs) - 1} without gaps: {seqs}")
    if head != (seqs[-1] if seqs else -1):
        problems.append(f"the session's head is #{head} but its newest entry is #{seqs[-1] if seqs else -1}")
    if len({e.id for e in entries}) != len(entries):
        problems.append("two entries share an id")
    if integrity != "ok":
        problems.append(f"PRAGMA integrity_check: {integrity}")
    return StoreView(integrity, sid, head, writer, entries, problems)


# -- SQLite ---------------------------------------------------------------------------------------


def snapshot(store: Path, into: Path) -> Path:
    """A copy of the store file and its WAL, without the shared-memory index: SQLite recovers it from
    the WAL as after a real crash, and the original stays untouched for the resuming process."""
    into.parent.mkdir(parents=True, exist_ok=True)
    for suffix in ("", "-wal", "-shm"):
        Path(f"{into}{suffix}").unlink(missing_ok=True)  # an older copy's WAL must not meet this file
    for suffix in ("", "-wal"):
        source = Path(f"{store}{suffix}")
        if source.exists():
            shutil.copyfile(source, f"{into}{suffix}")
    return into


def read_store(path: Path) -> StoreView:
    if not path.exists():
        return StoreView("no file", None, -1, None, [], [])
    db = sqlite3.connect(path)
    try:
        integrity = db.execute("PRAGMA integrity_check").fetchone()[0]
        tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if "sessions" not in tables:
            return StoreView(integrity, None, -1, None, [], [])
        sessions = db.execute("SELECT id, head, writer FROM sessions").fetchall()
        rows = db.execute(
            "SELECT seq, id, kind, body, at FROM entries WHERE session_id = ? ORDER BY seq",
            (sessions[0][0] if sessions else "",),
        ).fetchall()
    finally:
        db.close()
    return _view(integrity, sessions, rows)


class SQLiteCaseStore:
    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.path = folder / "store" / "sessions.db"
        self.location = str(self.path)

    def view(self, label: str) -> StoreView:
        return read_store(snapshot(self.path, self.folder / label / "sessions.db"))

    def copy(self, label: str) -> str:
        return str(snapshot(self.path, self.folder / label / "sessions.db"))

    def holding(self, secret: str) -> list[str]:
        folder = self.path.parent
        return [p.name for p in folder.iterdir() if secret.encode() in p.read_bytes()] if folder.exists() else []

    def close(self) -> None:
        pass


# -- PostgreSQL -----------------------------------------------------------------------------------


class PostgresCaseStore:
    """A database of the case's own on the test server; copies are databases made from it."""

    def __init__(self, server_url: str, *, keep: bool = False) -> None:
        import psycopg

        self.server_url = server_url
        self.admin = psycopg.connect(server_url, autocommit=True)
        self.name = f"crash_{uuid.uuid4().hex[:12]}"
        self.admin.execute(f"CREATE DATABASE {self.name}")
        self.location = self._url(self.name)
        self.copies: list[str] = []
        self.keep = keep

    def _url(self, database: str) -> str:
        return self.server_url.rsplit("/", 1)[0] + "/" + database

    def view(self, label: str) -> StoreView:
        import psycopg

        with psycopg.connect(self.location) as db:
            tables = {r[0] for r in db.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")}
            if "sessions" not in tables:
                return StoreView("ok", None, -1, None, [], [])
            sessions = db.execute("SELECT id, head, writer FROM sessions").fetchall()
            rows = db.execute(
                "SELECT seq, id, kind, body, at FROM entries WHERE session_id = %s ORDER BY seq",
                (sessions[0][0] if sessions else "",),
            ).fetchall()
        return _view("ok", sessions, rows)

    def copy(self, label: str) -> str:
        """A database made from the case's (when no connection to it is left: a killed process's goes
        as soon as the server reads the end of its socket)."""
        import psycopg

        name = f"{self.name}_{len(self.copies)}"
        deadline = time.monotonic() + 20
        while True:
            try:
                self.admin.execute(f"CREATE DATABASE {name} TEMPLATE {self.name}")
                break
            except psycopg.errors.ObjectInUse:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)
        self.copies.append(name)
        return self._url(name)

    def holding(self, secret: str) -> list[str]:
        import psycopg

        found = []
        with psycopg.connect(self.location) as db:
            tables = [r[0] for r in db.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")]
            for table in tables:
                text = db.execute(f"SELECT coalesce(string_agg(t::text, ''), '') FROM {table} t").fetchone()[0]
                if secret in text:
                    found.append(table)
        return found

    def close(self) -> None:
        if not self.keep:
            for name in [*self.copies, self.name]:
                self.admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        self.admin.close()
