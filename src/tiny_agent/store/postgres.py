"""Sessions in a PostgreSQL database that several hosts share: psycopg 3 and its connection pool.

The same tables and statements as the SQLite store (``SqlStore``), with the database's guarantees:
an append is one transaction that locks the session row (``SELECT ... FOR UPDATE``) and inserts
under ``PRIMARY KEY (session_id, seq)``, so two writers cannot interleave. The writer of a session
holds a session-level advisory lock on a connection of its own: a second ``-c`` is refused while
that connection lives, whatever host it runs on, and the lock goes with the connection when the
process dies (no stale marks, no clocks). The mark in ``sessions.writer`` only says who it is.

Migrations run in one transaction under ``pg_advisory_xact_lock``, so hosts migrate one at a time;
the version is the rows of ``tiny_agent_migrations``. The URL is kept in memory to connect and never
shown: messages name the server as ``display_url`` gives it. ``PGPASSWORD``, ``~/.pgpass`` and the
other ``PG*`` variables work as libpq reads them.
"""

from __future__ import annotations

import contextlib
import logging
import os
import socket
import time
import uuid
from collections.abc import Iterator, Sequence
from typing import Any
from urllib.parse import urlsplit

import psycopg
from psycopg.conninfo import conninfo_to_dict
from psycopg_pool import ConnectionPool, PoolTimeout

from tiny_agent.errors import SessionConflict, StoreError, StoreUnavailable
from tiny_agent.redaction import redact, register_secret
from tiny_agent.store.base import NewEntry
from tiny_agent.store.conflicts import refused
from tiny_agent.store.dialect import POSTGRES, Db
from tiny_agent.store.location import shown_location, unencoded_userinfo
from tiny_agent.store.migrations import migrate
from tiny_agent.store.postgres_conn import QmarkDb, configure
from tiny_agent.store.postgres_errors import failure
from tiny_agent.store.postgres_lease import end_holder, gone_from_here, lock_key, try_lock, wait_for_lock
from tiny_agent.store.postgres_read_only import read_only
from tiny_agent.store.sql_store import SqlStore
from tiny_agent.types import Entry

__all__ = ["PostgresStore"]

log = logging.getLogger(__name__)

CONNECT_TIMEOUT_S = 10
"""How long a connection attempt waits for the server, and a statement for a connection (the server
restarting, say) before it fails; the URL's ``connect_timeout`` sets both."""
NETWORK_TIMEOUTS = {
    "keepalives": 1,
    "keepalives_idle": 15,
    "keepalives_interval": 5,
    "keepalives_count": 3,
    "tcp_user_timeout": 30_000,
}
"""libpq's TCP settings unless the URL gives them: a dead peer is noticed in about 30 s (sent data
unacknowledged that long, or three keepalives unanswered after 15 s of silence)."""
MIGRATION_LOCK = (0x74696E79, 1)
"""``pg_advisory_xact_lock`` key the migrations hold ("tiny", 1)."""


class PostgresStore(SqlStore):
    """A ``Store`` in a PostgreSQL database, for teams: one history that every host appends to."""

    def __init__(self, url: str) -> None:
        self.location = shown_location(url)
        self._dialect = POSTGRES
        self._url = url
        self._writer = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        self._held: set[str] = set()
        self._leases: dict[str, psycopg.Connection[Any]] = {}
        self._wait, self._options = _connection_options(url, self.location)
        first = self._connect("open")  # the pool would only say it timed out: this says why
        try:
            with self._errors("open"):
                self.read_only = read_only(first, self.location)
                if not self.read_only:
                    self._migrate(first)
        finally:
            first.close()
        self._pool: ConnectionPool[psycopg.Connection[Any]] = ConnectionPool(
            url,
            kwargs=self._options,
            min_size=1,
            max_size=4,
            open=False,
            configure=configure,
            check=ConnectionPool.check_connection,
            timeout=self._wait,
            name="tiny-agent",
        )
        self._pool.open(wait=False)

    # -- connections ----------------------------------------------------------------------------

    def _connect(self, action: str) -> psycopg.Connection[Any]:
        with self._errors(action):
            conn = psycopg.connect(self._url, **self._options)
            configure(conn)
            return conn

    @contextlib.contextmanager
    def _errors(self, action: str) -> Iterator[None]:
        try:
            yield
        except (psycopg.Error, PoolTimeout) as exc:
            raise failure(self.location, action, exc, wait=self._wait) from exc

    @contextlib.contextmanager
    def _reading(self, action: str) -> Iterator[Db]:
        with self._errors(action), self._pool.connection() as conn:
            yield QmarkDb(conn)

    @contextlib.contextmanager
    def _transaction(self, action: str) -> Iterator[Db]:
        if self.read_only:
            raise StoreError(
                f"session store {self.location} is read-only (this database user may only read it): cannot "
                f"{action}; connect as a user that may write, or choose another store with --store"
            )
        with self._errors(action), self._pool.connection() as conn:
            db = QmarkDb(conn)
            db.execute(POSTGRES.begin)
            try:
                yield db
            except BaseException:
                with contextlib.suppress(psycopg.Error):
                    db.execute("ROLLBACK")
                raise
            db.execute("COMMIT")

    def _migrate(self, conn: psycopg.Connection[Any]) -> None:
        db = QmarkDb(conn)
        db.execute("BEGIN")
        try:
            db.execute("SELECT pg_advisory_xact_lock(?, ?)", MIGRATION_LOCK)  # hosts migrate one at a time
            db.execute(
                "CREATE TABLE IF NOT EXISTS tiny_agent_migrations"
                " (version INTEGER PRIMARY KEY, applied_at DOUBLE PRECISION NOT NULL)"
            )
            version = int(db.execute("SELECT coalesce(max(version), 0) FROM tiny_agent_migrations").fetchone()[0])

            def record(number: int) -> None:
                db.execute(
                    "INSERT INTO tiny_agent_migrations (version, applied_at) VALUES (?, ?)", (number, time.time())
                )

            migrate(db, POSTGRES, version, record, store=self.location, newer="upgrade tiny-agent on this host")
            db.execute("COMMIT")
        except BaseException:
            with contextlib.suppress(psycopg.Error):
                db.execute("ROLLBACK")
            raise

    # -- one writer per session: an advisory lock on a connection of its own ----------------------

    def _claim(self, db: Db, session_id: str, *, force: bool) -> tuple[str, str] | None:
        if session_id in self._leases:
            return None
        lease = self._connect("open a session")
        key = lock_key(session_id)
        holder = None
        try:
            with self._errors("open a session"):
                if not try_lock(lease, key):
                    holder = self._holder(db, session_id)
                    if holder is not None and gone_from_here(holder):
                        holder = None  # that process died: the server drops its lock in a moment
                    elif not force:
                        raise refused(session_id, holder)
                    elif not end_holder(lease, key):
                        who = f"pid {holder[1]} on {holder[0]}" if holder else "another process"
                        raise StoreError(
                            f"session store {self.location}: cannot take session {session_id[:12]} over from "
                            f"{who}: the server did not let this database user end that connection; close it there"
                        )
                    if not wait_for_lock(lease, key):
                        raise refused(session_id, holder)
        except BaseException:
            lease.close()
            raise
        self._leases[session_id] = lease
        return holder

    def _live_writer(self, db: Db, session_id: str) -> tuple[str, str] | None:
        if session_id in self._leases:
            return None
        # Held until this transaction ends: nobody opens the session while it is being removed.
        free = db.execute("SELECT pg_try_advisory_xact_lock(?)", (lock_key(session_id),)).fetchone()[0]
        return None if free else (self._holder(db, session_id) or ("another host", "?"))

    def _keep_lease(self, session_id: str) -> None:
        """The lock of a held session lives on its connection: if the server restarted or dropped that
        connection, take the lock again (or say who has it now) before writing."""
        if session_id not in self._held:
            return
        lease = self._leases.pop(session_id, None)
        if lease is not None:
            try:
                lease.execute("")
                self._leases[session_id] = lease
                return
            except psycopg.Error:
                with contextlib.suppress(psycopg.Error):
                    lease.close()
            log.warning(
                "session store %s: the connection holding session %s was lost (the server restarted or dropped "
                "it); reconnecting",
                self.location,
                session_id[:12],
            )
        with self._reading("reconnect") as db:
            try:
                self._claim(db, session_id, force=False)
            except SessionConflict:  # not "take it over with --force": it was taken from this process
                holder = self._holder(db, session_id)
                who = f"pid {holder[1]} on {holder[0]}" if holder else "another process"
                raise SessionConflict(
                    f"session {session_id[:12]} was taken over by {who} while this process's connection to "
                    f"{self.location} was lost; this run stops here"
                ) from None
        log.warning("session store %s: reconnected; session %s is still this process's", self.location, session_id[:12])

    def append(self, session_id: str, entries: Sequence[NewEntry], *, expected_head: int) -> list[Entry]:
        if entries:
            self._keep_lease(session_id)
        return super().append(session_id, entries, expected_head=expected_head)

    def append_entries(self, session_id: str, entries: Sequence[Entry]) -> int:
        if entries:
            self._keep_lease(session_id)
        return super().append_entries(session_id, entries)

    def release(self, session_id: str) -> None:
        try:
            super().release(session_id)
        except StoreUnavailable as exc:  # the lock goes with its connection; the mark only names who had it
            log.debug("%s", exc)
        finally:
            lease = self._leases.pop(session_id, None)
            if lease is not None:
                with contextlib.suppress(psycopg.Error):
                    lease.close()

    def close(self) -> None:
        for session_id in list(self._held | set(self._leases)):
            with contextlib.suppress(StoreError):
                self.release(session_id)
        self._pool.close()


def _connection_options(url: str, location: str) -> tuple[float, dict[str, Any]]:
    """How long to wait for a connection, and the keywords each one is opened with (the URL's own
    settings win); a URL libpq cannot read is one line."""
    bad = unencoded_userinfo(url)
    if bad is not None:
        raise StoreError(
            f"session store {location}: the user or password in the URL holds {bad!r}, which a URL must "
            "percent-encode (a space as %20, @ as %40, / as %2F, # as %23, ? as %3F); or leave the password "
            "out of the URL and give it in PGPASSWORD or ~/.pgpass"
        )
    with contextlib.suppress(ValueError):
        register_secret(urlsplit(url).password)  # hidden wherever tiny-agent prints or stores text
    try:
        given = conninfo_to_dict(url)
    except psycopg.ProgrammingError as exc:
        why = redact(" ".join(str(exc).split()))
        raise StoreError(f"session store {location}: not a PostgreSQL URL libpq can read ({why})") from None
    try:
        wait = float(given.get("connect_timeout") or CONNECT_TIMEOUT_S)
    except ValueError:
        raise StoreError(
            f"session store {location}: connect_timeout is a number of seconds, not {given['connect_timeout']!r}"
        ) from None
    options: dict[str, Any] = {"autocommit": True}
    if "connect_timeout" not in given:
        options["connect_timeout"] = CONNECT_TIMEOUT_S
    if "application_name" not in given:
        options["application_name"] = "tiny-agent"
    # A server that vanished from the network (a cut cable, a host powered off) would otherwise
    # leave a statement waiting for hours: TCP gives up on it after about half a minute.
    options.update({k: v for k, v in NETWORK_TIMEOUTS.items() if k not in given})
    return wait, options
