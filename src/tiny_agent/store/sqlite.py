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
import os
import socket
import sqlite3
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

from tiny_agent.errors import ConfigError, StoreError
from tiny_agent.store.conflicts import refused
from tiny_agent.store.dialect import SQLITE, Db
from tiny_agent.store.location import default_location, is_postgres, shown_location
from tiny_agent.store.migrations import SCHEMA_VERSION, migrate
from tiny_agent.store.sql_store import SqlStore

__all__ = ["SQLiteStore"]

BUSY_TIMEOUT_S = 5.0
FULL_BELOW = 1 << 20
"""Bytes free under which a disk I/O error is taken for a full disk."""
LEASE_STALE_S = 3600.0
"""A writer mark from another host is trusted this long after its last append."""


class SQLiteStore(SqlStore):
    """The default ``Store``: one SQLite file, safe for several processes on one host."""

    def __init__(self, path: str | Path | None = None, *, busy_timeout: float = BUSY_TIMEOUT_S) -> None:
        where = str(path) if path is not None else default_location()
        if is_postgres(where):
            raise ConfigError(
                f"session store {shown_location(where)} is a PostgreSQL URL, not a SQLite file: "
                "open it with tiny_agent.store.open_store"
            )
        self.path = Path(where).expanduser()
        self.location = str(self.path)
        self._dialect = SQLITE
        self._writer = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        self._held: set[str] = set()
        self.read_only = self._is_read_only()
        self._db = self._open_read_only() if self.read_only else self._open(busy_timeout)

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

    def _is_read_only(self) -> bool:
        """An existing file this process cannot write, or in a folder it cannot write (a copied 0444
        file, a mounted backup): opened for reading; every write says so in one line."""
        if not self.path.is_file():
            return False
        return not os.access(self.path, os.W_OK) or not os.access(self.path.parent, os.W_OK | os.X_OK)

    def _open_read_only(self) -> sqlite3.Connection:
        """``mode=ro`` where SQLite can still read the WAL beside the file; ``immutable=1`` where it
        cannot (no ``-shm`` can be made in a read-only folder): a backup does not change under us."""
        uri = f"file:{quote(str(self.path.resolve()))}"
        db: sqlite3.Connection | None = None
        for flags in ("mode=ro", "immutable=1"):
            try:
                db = sqlite3.connect(f"{uri}?{flags}", uri=True, isolation_level=None, check_same_thread=False)
                version = int(db.execute("PRAGMA user_version").fetchone()[0])
                break
            except sqlite3.Error as exc:
                if db is not None:
                    db.close()
                db = None
                if flags == "immutable=1":
                    with self._errors("open"):
                        raise exc
        assert db is not None
        if version != SCHEMA_VERSION:
            db.close()
            how = "newer than this tiny-agent knows" if version > SCHEMA_VERSION else "older than this tiny-agent's"
            raise StoreError(
                f"session store {self.path} is read-only and its schema version {version} is {how} "
                f"({SCHEMA_VERSION}); copy it somewhere writable and open the copy with --store PATH"
            )
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
            newer = "upgrade tiny-agent, or use another file with --store"

            def record(number: int) -> None:
                db.execute(f"PRAGMA user_version = {number}")

            migrate(db, SQLITE, version, record, store=self.location, newer=newer)
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
    def _reading(self, action: str) -> Iterator[sqlite3.Connection]:
        with self._errors(action):
            yield self._db

    @contextlib.contextmanager
    def _transaction(self, action: str) -> Iterator[sqlite3.Connection]:
        if self.read_only:
            raise StoreError(
                f"session store {self.path} is read-only (opened for reading): cannot {action}; "
                "copy it somewhere writable, or choose another store with --store PATH"
            )
        with self._errors(action):
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield self._db
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    # -- one writer per session: a mark with a pid ----------------------------------------------

    def _claim(self, db: Db, session_id: str, *, force: bool) -> tuple[str, str] | None:
        holder = self._live_writer(db, session_id)
        if holder is not None and not force:
            raise refused(session_id, holder)
        return holder

    def _live_writer(self, db: Db, session_id: str) -> tuple[str, str] | None:
        row = db.execute("SELECT writer, writer_seen_at FROM sessions WHERE id = ?", (session_id,)).fetchone()
        writer, seen = row if row else (None, None)
        if not writer or writer == self._writer or not _alive(writer, seen):
            return None
        host, pid = writer.split(":")[:2]
        return host, pid

    def close(self) -> None:
        for session_id in list(self._held):
            with contextlib.suppress(StoreError):
                self.release(session_id)
        self._db.close()


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
