"""The store's schema, as an ordered list of migrations. The schema version is ``PRAGMA user_version``:
the number of migrations applied. Each runs inside the transaction that records it, so a crash in
the middle leaves the previous version intact. Plain SQL only: table-rebuild helpers of libraries
have broken real databases of other tools (simonw/llm #164).

Never edit a migration that has shipped; append a new one.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

__all__ = ["MIGRATIONS", "SCHEMA_VERSION"]


def m001_sessions_and_entries(db: sqlite3.Connection) -> None:
    db.execute(
        """
        CREATE TABLE sessions (
            id TEXT PRIMARY KEY,
            created_at REAL NOT NULL,
            updated_at REAL NOT NULL,
            workspace TEXT,
            parent_id TEXT REFERENCES sessions(id),
            fork_seq INTEGER,
            head INTEGER NOT NULL DEFAULT -1,
            writer TEXT,
            writer_seen_at REAL
        )
        """
    )
    db.execute(
        """
        CREATE TABLE entries (
            session_id TEXT NOT NULL REFERENCES sessions(id),
            seq INTEGER NOT NULL,
            id TEXT NOT NULL,
            kind TEXT NOT NULL,
            body TEXT NOT NULL,
            at REAL NOT NULL,
            PRIMARY KEY (session_id, seq)
        )
        """
    )
    db.execute("CREATE INDEX sessions_by_workspace ON sessions (workspace, updated_at)")
    db.execute("CREATE INDEX entries_by_id ON entries (id)")


def m002_listing_columns(db: sqlite3.Connection) -> None:
    """What ``sessions list`` shows, kept on the session row so a listing never scans entries."""
    db.execute("ALTER TABLE sessions ADD COLUMN title TEXT NOT NULL DEFAULT ''")
    db.execute("ALTER TABLE sessions ADD COLUMN calls INTEGER NOT NULL DEFAULT 0")
    db.execute("ALTER TABLE sessions ADD COLUMN cost_usd REAL")
    db.execute(
        """
        UPDATE sessions SET
          title = COALESCE((
            SELECT substr(json_extract(e.body, '$.content[0].text'), 1, 80) FROM entries e
            WHERE e.session_id = sessions.id AND e.kind = 'user' ORDER BY e.seq LIMIT 1), ''),
          calls = (SELECT count(*) FROM entries e WHERE e.session_id = sessions.id AND e.kind = 'call_done'),
          cost_usd = (SELECT sum(json_extract(e.body, '$.cost_usd')) FROM entries e
                      WHERE e.session_id = sessions.id AND e.kind = 'call_done')
        """
    )
    db.execute("CREATE INDEX sessions_by_update ON sessions (updated_at)")


MIGRATIONS: list[Callable[[sqlite3.Connection], None]] = [m001_sessions_and_entries, m002_listing_columns]
SCHEMA_VERSION = len(MIGRATIONS)
