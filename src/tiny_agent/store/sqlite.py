"""Sessions in one SQLite file: WAL, full sync, a busy timeout, one transaction per append.

Every append is ``BEGIN IMMEDIATE`` -> check the head -> insert -> ``COMMIT``: a deferred
transaction that reads and then writes fails at once with "database is locked" when another
connection committed in between, whatever the busy timeout. ``synchronous=FULL`` costs about
0.2 ms per commit on these machines, nothing beside a model call of seconds, and keeps the last
commits across a power cut as well as a crash. The file is created 0600 in a 0700 folder before
SQLite opens it, so the ``-wal`` and ``-shm`` files get 0600 too.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import socket
import sqlite3
import time
import uuid
from collections.abc import Collection, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import platformdirs

from tiny_agent.errors import ConfigError, SessionConflict, SessionNotFound, StoreError, UnreadableEntry
from tiny_agent.redaction import display_url, redact
from tiny_agent.store.base import UNREADABLE, NewEntry, SessionInfo
from tiny_agent.store.call_index import CallIndex, copy_rows
from tiny_agent.store.call_queries import CallIndexReads
from tiny_agent.store.migrations import MIGRATIONS, SCHEMA_VERSION
from tiny_agent.types import Entry

__all__ = ["STORE_ENV", "SQLiteStore", "default_store_path"]

STORE_ENV = "TINY_AGENT_STORE"
"""Environment variable naming the store file; ``--store PATH`` overrides it."""

BUSY_TIMEOUT_S = 5.0
FULL_BELOW = 1 << 20
"""Bytes free under which a disk I/O error is taken for a full disk."""
LEASE_STALE_S = 3600.0
"""A writer mark from another host is trusted this long after its last append."""

_SESSION_COLUMNS = "id, created_at, updated_at, workspace, title, head, parent_id, fork_seq, cost_usd, calls, writer"


def default_store_path(env: Mapping[str, str] = os.environ) -> Path:
    """``$TINY_AGENT_STORE``, else ``sessions.db`` in the user data folder (platformdirs)."""
    explicit = env.get(STORE_ENV)
    if explicit:
        _not_a_url(explicit)
        return Path(explicit).expanduser()
    return Path(platformdirs.user_data_dir("tiny-agent")) / "sessions.db"


_URL = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://")


def _not_a_url(location: str) -> None:
    """A URL (``postgresql://user:pass@host/db``) is refused before it becomes a folder named after it;
    the message leaves out its user, password and query."""
    found = _URL.match(location.strip())
    if found is None:
        return
    try:
        shown = display_url(location.strip())
    except ValueError:  # a port that is not a number
        shown = f"{found.group(1)}:"
    raise ConfigError(
        f"session store {shown} is a {found.group(1)} URL, and tiny-agent keeps sessions in a SQLite file only: "
        f"give a file path with --store PATH or {STORE_ENV}"
    )


class SQLiteStore(CallIndexReads):
    """The default ``Store``: one SQLite file, safe for several processes on one host."""

    def __init__(self, path: str | Path | None = None, *, busy_timeout: float = BUSY_TIMEOUT_S) -> None:
        if path is not None:
            _not_a_url(str(path))
        self.path = Path(path).expanduser() if path is not None else default_store_path()
        self.location = str(self.path)
        self._writer = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        self._held: set[str] = set()
        self._db = self._open(busy_timeout)

    # -- opening ------------------------------------------------------------------------------

    def _open(self, busy_timeout: float) -> sqlite3.Connection:
        self._create_file()
        if not os.access(self.path, os.R_OK | os.W_OK) or not os.access(self.path.parent, os.W_OK | os.X_OK):
            raise StoreError(f"session store {self.path} is read-only; choose another file with --store PATH")
        with self._errors("open"):
            db = sqlite3.connect(self.path, isolation_level=None, timeout=busy_timeout, check_same_thread=False)
        try:
            with self._errors("open"):
                db.execute(f"PRAGMA busy_timeout = {int(busy_timeout * 1000)}")
                check = db.execute("PRAGMA quick_check").fetchone()[0]
                if check != "ok":
                    raise StoreError(f"session store {self.path} is damaged ({check}); move it away or use --store")
                db.execute("PRAGMA journal_mode = WAL")
                db.execute("PRAGMA synchronous = FULL")
                db.execute("PRAGMA foreign_keys = ON")
                self._migrate(db)
        except BaseException:
            db.close()
            raise
        return db

    def _create_file(self) -> None:
        folder = self.path.parent
        if not folder.exists():
            try:
                folder.mkdir(parents=True, mode=0o700)
            except OSError as exc:
                raise StoreError(f"cannot create the folder of the session store {folder}: {exc.strerror}") from exc
        if self.path.is_dir():
            raise StoreError(f"session store {self.path} is a folder; give a file path with --store")
        if not self.path.exists():
            try:
                os.close(os.open(self.path, os.O_CREAT | os.O_WRONLY, 0o600))
            except OSError as exc:
                raise StoreError(f"cannot create the session store {self.path}: {exc.strerror}") from exc

    def _migrate(self, db: sqlite3.Connection) -> None:
        db.execute("BEGIN IMMEDIATE")
        try:
            # Re-read inside the lock: another process may have migrated while this one waited.
            version = int(db.execute("PRAGMA user_version").fetchone()[0])
            if version > SCHEMA_VERSION:
                raise StoreError(
                    f"session store {self.path} has schema version {version}, newer than this tiny-agent "
                    f"knows ({SCHEMA_VERSION}); upgrade tiny-agent, or use another file with --store"
                )
            for number in range(version, SCHEMA_VERSION):
                MIGRATIONS[number](db)
                db.execute(f"PRAGMA user_version = {number + 1}")
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise

    @contextlib.contextmanager
    def _errors(self, action: str) -> Iterator[None]:
        """Every SQLite failure as one StoreError line that names the file."""
        try:
            yield
        except sqlite3.Error as exc:
            text = str(exc)
            if "locked" in text or "busy" in text:
                message = f"session store {self.path} is locked by another process; try again in a moment"
            elif "not a database" in text or "malformed" in text:
                message = f"session store {self.path} is damaged ({text}); move it away or use --store"
            elif "readonly" in text:
                message = f"session store {self.path} is read-only; choose another file with --store PATH"
            elif self._disk_full(exc):
                message = (
                    f"session store {self.path}: {action} failed: the disk is full ({text}); free some space on "
                    f"it, or choose a file on another disk with --store PATH"
                )
            else:
                message = f"session store {self.path}: {action} failed: {text}"
            raise StoreError(message) from exc

    def _disk_full(self, exc: sqlite3.Error) -> bool:
        """SQLite says SQLITE_FULL; or an I/O error (what a full disk often gives, in the WAL or its
        shared memory) while the store's filesystem has no space left."""
        code = getattr(exc, "sqlite_errorcode", None)
        primary = code & 0xFF if isinstance(code, int) else None
        if primary == sqlite3.SQLITE_FULL or "disk is full" in str(exc):
            return True
        if primary != sqlite3.SQLITE_IOERR and "disk I/O error" not in str(exc):
            return False
        try:
            found = os.statvfs(self.path.parent)
        except OSError:
            return False
        return found.f_bavail * found.f_frsize < FULL_BELOW

    @contextlib.contextmanager
    def _transaction(self, action: str) -> Iterator[sqlite3.Connection]:
        with self._errors(action):
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield self._db
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    # -- sessions -----------------------------------------------------------------------------

    def create(self, *, workspace: str | None = None, parent: tuple[str, int] | None = None) -> SessionInfo:
        now = time.time()
        session_id = uuid.uuid4().hex
        with self._transaction("create a session") as db:
            title, head, fork_seq, parent_id, cost, calls = "", -1, None, None, None, 0
            if parent is not None:
                source = self._info(db, parent[0])
                fork_seq = min(parent[1], source.head)
                if fork_seq < 0:
                    raise SessionNotFound(f"session {source.id[:12]} has no entries to fork")
                parent_id, head, title = source.id, fork_seq, source.title
                calls, cost = self._call_totals(db, source.id, fork_seq)
            db.execute(
                "INSERT INTO sessions (id, created_at, updated_at, workspace, parent_id, fork_seq, head, title,"
                " calls, cost_usd, provider) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?,"
                " (SELECT provider FROM sessions WHERE id = ?))",
                (session_id, now, now, workspace, parent_id, fork_seq, head, title, calls, cost, parent_id),
            )
            return self._info(db, session_id)

    def get(self, id_or_prefix: str) -> SessionInfo:
        key = id_or_prefix.strip().lower()
        if not key:
            raise SessionNotFound("give a session id (or the first characters of one)")
        with self._errors("read"):
            rows = self._db.execute(
                f"SELECT {_SESSION_COLUMNS} FROM sessions WHERE id >= ? AND id < ? ORDER BY id LIMIT 3",
                (key, key + "\uffff"),
            ).fetchall()
        if not rows:
            raise SessionNotFound(f"no session {id_or_prefix!r} in {self.path}; see: tiny-agent sessions list")
        if len(rows) > 1 and rows[0][0] != key:
            raise SessionNotFound(f"{id_or_prefix!r} matches several sessions; give more of the id")
        return _session(rows[0])

    def sessions(self, *, workspace: str | None = None, limit: int = 20) -> list[SessionInfo]:
        where, args = ("WHERE workspace = ?", [workspace]) if workspace is not None else ("", [])
        with self._errors("list"):
            rows = self._db.execute(
                f"SELECT {_SESSION_COLUMNS} FROM sessions {where} ORDER BY updated_at DESC, id LIMIT ?",
                [*args, limit],
            ).fetchall()
        return [_session(r) for r in rows]

    def delete(self, session_id: str, *, force: bool = False) -> None:
        with self._transaction("delete a session") as db:
            gone = self._info(db, session_id)
            holder = self._live_writer(db, gone.id)
            if holder is not None and not force:
                host, pid = holder
                raise SessionConflict(
                    f"session {gone.id[:12]} is open in another tiny-agent (pid {pid} on {host}), which would lose "
                    "what it writes next; close it there first, or remove it anyway with --force"
                )
            children = db.execute("SELECT id, fork_seq FROM sessions WHERE parent_id = ?", (gone.id,)).fetchall()
            for child_id, child_fork in children:
                # The child keeps its history: it points past the deleted session, and gets a copy of
                # whatever it inherited from the deleted session's own entries.
                own_from = -1 if gone.fork_seq is None else gone.fork_seq
                db.execute(
                    "INSERT INTO entries (session_id, seq, id, kind, body, at) SELECT ?, seq, id, kind, body, at"
                    " FROM entries WHERE session_id = ? AND seq > ? AND seq <= ?",
                    (child_id, gone.id, own_from, child_fork),
                )
                copy_rows(db, gone.id, child_id, own_from, child_fork)
                new_fork = None if gone.parent_id is None else min(child_fork, own_from)
                db.execute(
                    "UPDATE sessions SET parent_id = ?, fork_seq = ? WHERE id = ?", (gone.parent_id, new_fork, child_id)
                )
            for table in ("calls", "events", "entries"):
                db.execute(f"DELETE FROM {table} WHERE session_id = ?", (gone.id,))
            db.execute("DELETE FROM sessions WHERE id = ?", (gone.id,))

    # -- entries ------------------------------------------------------------------------------

    def append(self, session_id: str, entries: Sequence[NewEntry], *, expected_head: int) -> list[Entry]:
        if not entries:
            return []
        now = time.time()
        with self._transaction("append") as db:
            info = self._info(db, session_id)
            if info.head != expected_head:
                raise SessionConflict(
                    f"session {session_id[:12]} moved on: another process appended to it (its newest entry is "
                    f"#{info.head}, this one expected #{expected_head}); nothing was written. Resume it again, "
                    f"or fork it: tiny-agent sessions fork {session_id[:12]}"
                )
            written: list[Entry] = []
            title, calls, cost = info.title, info.calls, info.cost_usd
            index = CallIndex(db, session_id)
            for offset, (kind, body) in enumerate(entries):
                entry = Entry(kind, body, uuid.uuid4().hex, expected_head + 1 + offset, now)
                # Keys never reach the disk, even one a tool read or a server echoed into an entry.
                text = redact(json.dumps(body, ensure_ascii=False, separators=(",", ":")))
                db.execute(
                    "INSERT INTO entries (session_id, seq, id, kind, body, at) VALUES (?, ?, ?, ?, ?, ?)",
                    (session_id, entry.seq, entry.id, kind, text, now),
                )
                written.append(entry)
                index.add(kind, body, entry.seq, now)
                title = title or _title(kind, body)
                if kind == "call_done":
                    calls += 1
                    price = body.get("cost_usd")
                    if isinstance(price, int | float):
                        cost = (cost or 0.0) + float(price)
            db.execute(
                "UPDATE sessions SET head = ?, updated_at = ?, title = ?, calls = ?, cost_usd = ?,"
                " writer_seen_at = CASE WHEN writer = ? THEN ? ELSE writer_seen_at END WHERE id = ?",
                (written[-1].seq, now, title, calls, cost, self._writer, now, session_id),
            )
        return written

    def entries(
        self, session_id: str, *, after: int = -1, lenient: bool = False, kinds: Collection[str] | None = None
    ) -> list[Entry]:
        return self._entries(session_id, after=after, lenient=lenient, kinds=kinds)

    def _entries(
        self,
        session_id: str,
        *,
        after: int = -1,
        upto: int | None = None,
        lenient: bool,
        kinds: Collection[str] | None = None,
    ) -> list[Entry]:
        only = f" AND kind IN ({', '.join('?' * len(kinds))})" if kinds is not None else ""
        with self._errors("read"):
            info = self._info(self._db, session_id)
            # The chain of (session, last seq it contributes): a fork's own entries start after fork_seq.
            chain: list[tuple[str, int]] = [(info.id, info.head)]
            parent_id, limit = info.parent_id, info.fork_seq
            while parent_id is not None and limit is not None:
                chain.append((parent_id, limit))
                row = self._db.execute("SELECT parent_id, fork_seq FROM sessions WHERE id = ?", (parent_id,)).fetchone()
                parent_id, limit = (row[0], row[1] if row[1] is None else min(row[1], limit)) if row else (None, None)
            out: list[Entry] = []
            low = after
            for sid, high in reversed(chain):
                high = high if upto is None else min(high, upto)
                rows = self._db.execute(
                    f"SELECT kind, body, id, seq, at FROM entries WHERE session_id = ? AND seq > ? AND seq <= ?{only}"
                    " ORDER BY seq",
                    (sid, low, high, *(kinds or ())),
                ).fetchall()
                for kind, body, eid, seq, at in rows:
                    out.append(Entry(kind, self._body(info.id, seq, kind, body, lenient), eid, seq, at))
                low = max(low, high)
        return out

    def _body(self, session_id: str, seq: int, kind: str, text: str, lenient: bool) -> dict[str, Any]:
        try:
            body = json.loads(text)
            reason = None if isinstance(body, dict) else f"its body is JSON but not an object: {text[:40]!r}"
        except (json.JSONDecodeError, TypeError) as exc:
            reason = f"its body is not valid JSON ({exc})"
        if reason is None:
            return body  # type: ignore[no-any-return]
        if lenient:
            return {UNREADABLE: reason}
        raise UnreadableEntry(seq, kind, reason, store=self.location, session_id=session_id)

    # -- one writer per session ---------------------------------------------------------------

    def acquire(self, session_id: str, *, force: bool = False) -> str | None:
        with self._transaction("open a session") as db:
            self._info(db, session_id)
            holder = self._live_writer(db, session_id)
            if holder is not None and not force:
                host, pid = holder
                raise SessionConflict(
                    f"session {session_id[:12]} is open in another tiny-agent (pid {pid} on {host}); "
                    "close it there, fork it (tiny-agent sessions fork ID), or take it over with --force"
                )
            db.execute(
                "UPDATE sessions SET writer = ?, writer_seen_at = ? WHERE id = ?",
                (self._writer, time.time(), session_id),
            )
        self._held.add(session_id)
        return f"pid {holder[1]} on {holder[0]}" if holder is not None else None

    def release(self, session_id: str) -> None:
        self._held.discard(session_id)
        with self._transaction("close a session") as db:
            db.execute("UPDATE sessions SET writer = NULL WHERE id = ? AND writer = ?", (session_id, self._writer))

    def close(self) -> None:
        for session_id in list(self._held):
            with contextlib.suppress(StoreError):
                self.release(session_id)
        self._db.close()

    def __enter__(self) -> SQLiteStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- helpers ------------------------------------------------------------------------------

    def _info(self, db: sqlite3.Connection, session_id: str) -> SessionInfo:
        row = db.execute(f"SELECT {_SESSION_COLUMNS} FROM sessions WHERE id = ?", (session_id,)).fetchone()
        if row is None:
            raise SessionNotFound(f"no session {session_id!r} in {self.path}")
        return _session(row)

    def _live_writer(self, db: sqlite3.Connection, session_id: str) -> tuple[str, str] | None:
        """(host, pid) of another process that holds the session open and may still be writing."""
        row = db.execute("SELECT writer, writer_seen_at FROM sessions WHERE id = ?", (session_id,)).fetchone()
        writer, seen = row if row else (None, None)
        if not writer or writer == self._writer or not _alive(writer, seen):
            return None
        host, pid = writer.split(":")[:2]
        return host, pid

    def _call_totals(self, db: sqlite3.Connection, session_id: str, up_to: int) -> tuple[int, float | None]:
        calls, cost = 0, None
        for entry in self._entries_upto(session_id, up_to):
            if entry.kind == "call_done":
                calls += 1
                price = entry.body.get("cost_usd")
                if isinstance(price, int | float):
                    cost = (cost or 0.0) + float(price)
        return calls, cost

    def _entries_upto(self, session_id: str, up_to: int) -> list[Entry]:
        return self._entries(session_id, upto=up_to, lenient=False)


def _session(row: Sequence[Any]) -> SessionInfo:
    sid, created, updated, workspace, title, head, parent_id, fork_seq, cost, calls, writer = row
    holder = ":".join(writer.split(":")[:2]) if writer else None
    return SessionInfo(sid, created, updated, workspace, title, head, parent_id, fork_seq, cost, calls, holder)


def _title(kind: str, body: Mapping[str, Any]) -> str:
    if kind != "user":
        return ""
    for block in body.get("content") or ():
        if isinstance(block, Mapping) and block.get("type") == "text":
            return " ".join(str(block.get("text", "")).split())[:80]
    return ""


def _alive(writer: str, seen: float | None) -> bool:
    """Whether the process named by a writer mark (``host:pid:token``) may still be writing."""
    host, pid_text = writer.split(":")[:2]
    if host != socket.gethostname():
        return seen is not None and time.time() - seen < LEASE_STALE_S
    try:
        os.kill(int(pid_text), 0)
    except ProcessLookupError:
        return False
    except (PermissionError, ValueError):
        return True
    return True
