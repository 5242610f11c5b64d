"""The ``Store`` in SQL, written once for both backends: sessions, append-only entries, forks, the
writer mark, the call index. A backend gives it connections (``_reading``, ``_transaction``: every
database failure becomes one ``StoreError`` line naming the store) and says how a writer holds a
session (``_claim``, ``_live_writer``): SQLite by a mark with a pid, PostgreSQL by an advisory lock.

An append is one transaction: lock the session row (SQLite: the file), check the head it expects,
insert the entries (``UNIQUE (session_id, seq)``), index them, move the head.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Collection, Iterator, Sequence
from contextlib import AbstractContextManager
from typing import Self

from tiny_agent.errors import SessionConflict, SessionNotFound, StoreError
from tiny_agent.store.base import NewEntry, SessionInfo
from tiny_agent.store.call_index import CallIndex, copy_rows
from tiny_agent.store.call_queries import CallIndexReads
from tiny_agent.store.conflicts import host_name, moved_on, refused
from tiny_agent.store.dialect import Db
from tiny_agent.store.rows import SESSION_COLUMNS, decode_body, encode_body, session_of, title_of
from tiny_agent.types import Entry

__all__ = ["SqlStore", "refused"]


class SqlStore(CallIndexReads):
    location: str
    _writer: str
    """``host:pid:token``: this process's mark on the sessions it holds."""
    _held: set[str]

    # -- what a backend provides ----------------------------------------------------------------

    def _transaction(self, action: str) -> AbstractContextManager[Db]:
        """A connection in a write transaction, committed when the block ends, rolled back on an error."""
        raise NotImplementedError

    def _claim(self, db: Db, session_id: str, *, force: bool) -> tuple[str, str] | None:
        """Take the session for this process (inside ``acquire``'s transaction); ``refused`` if a live
        process has it, unless ``force``: then the (host, pid) it was taken from."""
        raise NotImplementedError

    def _live_writer(self, db: Db, session_id: str) -> tuple[str, str] | None:
        """(host, pid) of another process that holds the session open and may still be writing."""
        raise NotImplementedError

    def close(self) -> None:
        """Release the sessions this process holds and close the connections."""
        raise NotImplementedError

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- sessions -------------------------------------------------------------------------------

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
            row = (session_id, now, now, workspace, parent_id, fork_seq, head, title, calls, cost, parent_id)
            db.execute(
                "INSERT INTO sessions (id, created_at, updated_at, workspace, parent_id, fork_seq, head, title,"
                " calls, cost_usd, provider, host) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?,"
                " (SELECT provider FROM sessions WHERE id = ?), ?)",
                (*row, host_name()),
            )
            return self._info(db, session_id)

    def get(self, id_or_prefix: str) -> SessionInfo:
        key = id_or_prefix.strip().lower()
        if not key:
            raise SessionNotFound("give a session id (or the first characters of one)")
        with self._reading("read") as db:
            rows = db.execute(
                f"SELECT {SESSION_COLUMNS} FROM sessions WHERE id >= ? AND id < ? ORDER BY id LIMIT 3",
                (key, key + "\uffff"),
            ).fetchall()
        if not rows:
            raise SessionNotFound(f"no session {id_or_prefix!r} in {self.location}; see: tiny-agent sessions list")
        if len(rows) > 1 and rows[0][0] != key:
            raise SessionNotFound(f"{id_or_prefix!r} matches several sessions; give more of the id")
        return session_of(rows[0])

    def sessions(self, *, workspace: str | None = None, limit: int = 20) -> list[SessionInfo]:
        where, args = ("WHERE workspace = ?", [workspace]) if workspace is not None else ("", [])
        with self._reading("list") as db:
            rows = db.execute(
                f"SELECT {SESSION_COLUMNS} FROM sessions {where} ORDER BY updated_at DESC, id LIMIT ?",
                [*args, limit],
            ).fetchall()
        return [session_of(r) for r in rows]

    def delete(self, session_id: str, *, force: bool = False) -> None:
        with self._transaction("delete a session") as db:
            gone = self._info(db, session_id, lock=True)
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

    # -- entries --------------------------------------------------------------------------------

    def append(self, session_id: str, entries: Sequence[NewEntry], *, expected_head: int) -> list[Entry]:
        if not entries:
            return []
        now = time.time()
        made = [
            Entry(kind, body, uuid.uuid4().hex, expected_head + 1 + offset, now)
            for offset, (kind, body) in enumerate(entries)
        ]
        with self._transaction("append") as db:
            info = self._info(db, session_id, lock=True)
            if info.head != expected_head:
                raise moved_on(session_id, info.head, expected_head)
            self._write(db, info, made, now)
        return made

    def append_entries(self, session_id: str, entries: Sequence[Entry]) -> int:
        if not entries:
            return 0
        first, last = entries[0].seq, entries[-1].seq
        if [e.seq for e in entries] != list(range(first, last + 1)):
            raise StoreError(f"session {session_id[:12]}: the entries to write are not numbered one after another")
        with self._transaction("append") as db:
            info = self._info(db, session_id, lock=True)
            there = db.execute(
                "SELECT seq, id FROM entries WHERE session_id = ? AND seq >= ? AND seq <= ? ORDER BY seq",
                (info.id, first, last),
            ).fetchall()
            ours = [(e.seq, e.id) for e in entries[: len(there)]]
            if [tuple(row) for row in there] != ours or (not there and info.head != first - 1):
                raise moved_on(session_id, info.head, first - 1)
            rest = entries[len(there) :]
            if rest:
                self._write(db, self._info(db, info.id), rest, time.time())
        return len(rest)

    def restore(self, info: SessionInfo, entries: Sequence[Entry]) -> SessionInfo:
        if [e.seq for e in entries] != list(range(len(entries))):
            raise StoreError(f"session {info.id[:12]}: the entries to import are not numbered 0, 1, 2, ...")
        with self._transaction("import a session") as db:
            if db.execute("SELECT id FROM sessions WHERE id = ?", (info.id,)).fetchone() is not None:
                raise SessionConflict(
                    f"session {info.id[:12]} is already in {self.location}; nothing was imported "
                    f"(remove it first: tiny-agent sessions rm {info.id[:12]})"
                )
            db.execute(
                "INSERT INTO sessions (id, created_at, updated_at, workspace, head, title, calls, cost_usd, host)"
                " VALUES (?, ?, ?, ?, -1, '', 0, NULL, ?)",
                (info.id, info.created_at, info.updated_at, info.workspace, info.host),
            )
            if entries:
                self._write(db, self._info(db, info.id), entries, info.updated_at, host=info.host)
            return self._info(db, info.id)

    def _write(self, db: Db, info: SessionInfo, written: Sequence[Entry], now: float, host: str | None = "") -> None:
        """Insert entries that follow the head, index them, and move the session's head."""
        title, calls, cost = info.title, info.calls, info.cost_usd
        index = CallIndex(db, info.id)
        for entry in written:
            db.execute(
                "INSERT INTO entries (session_id, seq, id, kind, body, at) VALUES (?, ?, ?, ?, ?, ?)",
                (info.id, entry.seq, entry.id, entry.kind, encode_body(entry.body, entry.kind), entry.at),
            )
            index.add(entry.kind, entry.body, entry.seq, entry.at)
            title = title or title_of(entry.kind, entry.body)
            if entry.kind == "call_done":
                calls += 1
                price = entry.body.get("cost_usd")
                if isinstance(price, int | float):
                    cost = (cost or 0.0) + float(price)
        db.execute(
            "UPDATE sessions SET head = ?, updated_at = ?, title = ?, calls = ?, cost_usd = ?, host = ?,"
            " writer_seen_at = CASE WHEN writer = ? THEN ? ELSE writer_seen_at END WHERE id = ?",
            (written[-1].seq, now, title, calls, cost, host_name() if host == "" else host, self._writer, now, info.id),
        )

    def entries(
        self, session_id: str, *, after: int = -1, lenient: bool = False, kinds: Collection[str] | None = None
    ) -> list[Entry]:
        with self._reading("read") as db:
            return list(self._entries(db, session_id, after=after, lenient=lenient, kinds=kinds))

    def _entries(
        self,
        db: Db,
        session_id: str,
        *,
        after: int = -1,
        upto: int | None = None,
        lenient: bool,
        kinds: Collection[str] | None = None,
    ) -> Iterator[Entry]:
        only = f" AND kind IN ({', '.join('?' * len(kinds))})" if kinds is not None else ""
        info = self._info(db, session_id)
        # The chain of (session, last seq it contributes): a fork's own entries start after fork_seq.
        chain: list[tuple[str, int]] = [(info.id, info.head)]
        parent_id, limit = info.parent_id, info.fork_seq
        while parent_id is not None and limit is not None:
            chain.append((parent_id, limit))
            row = db.execute("SELECT parent_id, fork_seq FROM sessions WHERE id = ?", (parent_id,)).fetchone()
            parent_id, limit = (row[0], row[1] if row[1] is None else min(row[1], limit)) if row else (None, None)
        low = after
        for sid, high in reversed(chain):
            high = high if upto is None else min(high, upto)
            rows = db.execute(
                f"SELECT kind, body, id, seq, at FROM entries WHERE session_id = ? AND seq > ? AND seq <= ?{only}"
                " ORDER BY seq",
                (sid, low, high, *(kinds or ())),
            ).fetchall()
            for kind, text, eid, seq, at in rows:
                body = decode_body(text, seq=seq, kind=kind, lenient=lenient, store=self.location, session_id=info.id)
                yield Entry(kind, body, eid, seq, at)
            low = max(low, high)

    # -- one writer per session -----------------------------------------------------------------

    def acquire(self, session_id: str, *, force: bool = False) -> str | None:
        with self._transaction("open a session") as db:
            self._info(db, session_id)
            holder = self._claim(db, session_id, force=force)
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

    # -- helpers --------------------------------------------------------------------------------

    def _info(self, db: Db, session_id: str, *, lock: bool = False) -> SessionInfo:
        row = db.execute(
            f"SELECT {SESSION_COLUMNS} FROM sessions WHERE id = ?{self._dialect.for_update if lock else ''}",
            (session_id,),
        ).fetchone()
        if row is None:
            raise SessionNotFound(f"no session {session_id!r} in {self.location}")
        return session_of(row)

    def _holder(self, db: Db, session_id: str) -> tuple[str, str] | None:
        """(host, pid) the session's writer mark names, if any."""
        row = db.execute("SELECT writer FROM sessions WHERE id = ?", (session_id,)).fetchone()
        if not row or not row[0]:
            return None
        host, pid = str(row[0]).split(":")[:2]
        return host, pid

    def _call_totals(self, db: Db, session_id: str, up_to: int) -> tuple[int, float | None]:
        calls, cost = 0, None
        for entry in self._entries(db, session_id, upto=up_to, lenient=False, kinds=("call_done",)):
            calls += 1
            price = entry.body.get("cost_usd")
            if isinstance(price, int | float):
                cost = (cost or 0.0) + float(price)
        return calls, cost
