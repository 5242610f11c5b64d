"""The store's schema, as an ordered list of migrations that both backends run, each written once
(``Dialect`` spells what differs). The schema version is the number of migrations applied:
``PRAGMA user_version`` in SQLite, the rows of ``schema_migrations`` in PostgreSQL. Each runs
inside the transaction that records it, so a crash in the middle leaves the previous version
intact. Plain SQL only: table-rebuild helpers of libraries have broken real databases of other
tools (simonw/llm #164).

Never edit a migration that has shipped; append a new one.
"""

from __future__ import annotations

from collections.abc import Callable

from tiny_agent.errors import StoreError
from tiny_agent.store.call_index import backfill, backfill_reasoning
from tiny_agent.store.dialect import Db, Dialect

__all__ = ["MIGRATIONS", "SCHEMA_VERSION", "migrate"]


def m001_sessions_and_entries(db: Db, d: Dialect) -> None:
    db.execute(
        f"""
        CREATE TABLE sessions (
            id {d.key} PRIMARY KEY,
            created_at {d.real} NOT NULL,
            updated_at {d.real} NOT NULL,
            workspace TEXT,
            parent_id {d.key} REFERENCES sessions(id),
            fork_seq INTEGER,
            head INTEGER NOT NULL DEFAULT -1,
            writer TEXT,
            writer_seen_at {d.real}
        )
        """
    )
    db.execute(
        f"""
        CREATE TABLE entries (
            session_id {d.key} NOT NULL REFERENCES sessions(id),
            seq INTEGER NOT NULL,
            id TEXT NOT NULL,
            kind TEXT NOT NULL,
            body TEXT NOT NULL,
            at {d.real} NOT NULL,
            PRIMARY KEY (session_id, seq)
        )
        """
    )
    db.execute("CREATE INDEX sessions_by_workspace ON sessions (workspace, updated_at)")
    db.execute("CREATE INDEX entries_by_id ON entries (id)")


def m002_listing_columns(db: Db, d: Dialect) -> None:
    """What ``sessions list`` shows, kept on the session row so a listing never scans entries."""
    db.execute("ALTER TABLE sessions ADD COLUMN title TEXT NOT NULL DEFAULT ''")
    db.execute("ALTER TABLE sessions ADD COLUMN calls INTEGER NOT NULL DEFAULT 0")
    db.execute(f"ALTER TABLE sessions ADD COLUMN cost_usd {d.real}")
    if d.name != "sqlite":
        # The backfill reads SQLite's JSON functions. A PostgreSQL store was never at version 1:
        # its first open runs this right after m001, on empty tables.
        db.execute("CREATE INDEX sessions_by_update ON sessions (updated_at)")
        return
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


def m003_call_index(db: Db, d: Dialect) -> None:
    """An index of model calls and window events, so looking back never parses entry bodies
    (``store.call_index``); filled from the entries already stored."""
    db.execute("ALTER TABLE sessions ADD COLUMN provider TEXT")
    db.execute(
        f"""
        CREATE TABLE calls (
            session_id {d.key} NOT NULL REFERENCES sessions(id),
            seq INTEGER NOT NULL,
            at {d.real} NOT NULL,
            done_at {d.real},
            status TEXT NOT NULL,
            purpose TEXT NOT NULL,
            model TEXT NOT NULL,
            response_model TEXT,
            provider TEXT,
            workspace TEXT,
            input_tokens INTEGER,
            output_tokens INTEGER,
            cache_read_tokens INTEGER,
            cache_write_tokens INTEGER,
            cost_usd {d.real},
            seconds {d.real},
            stop_reason TEXT,
            miss TEXT,
            provider_miss TEXT,
            tools TEXT,
            system TEXT,
            pins TEXT,
            chain TEXT,
            messages INTEGER,
            shared_messages INTEGER,
            changes TEXT,
            tools_changed INTEGER,
            system_changed INTEGER,
            pins_changed INTEGER,
            messages_changed INTEGER,
            expected INTEGER NOT NULL DEFAULT 0,
            PRIMARY KEY (session_id, seq)
        )
        """
    )
    db.execute("CREATE INDEX calls_by_time ON calls (at)")
    _create_events(db, d)
    backfill(db, reasoning=False)  # the reasoning column comes with m005


def _create_events(db: Db, d: Dialect) -> None:
    """The window events (compactions, clearings) of the call index."""
    db.execute(
        f"""
        CREATE TABLE events (
            session_id {d.key} NOT NULL REFERENCES sessions(id),
            seq INTEGER NOT NULL,
            at {d.real} NOT NULL,
            kind TEXT NOT NULL,
            model TEXT,
            provider TEXT,
            workspace TEXT,
            reason TEXT,
            count INTEGER,
            tokens_before INTEGER,
            tokens_after INTEGER,
            PRIMARY KEY (session_id, seq)
        )
        """
    )


def m004_host(db: Db, d: Dialect) -> None:
    """The host that wrote a session last, for ``sessions list`` when several hosts share a store
    (unknown for what was written before)."""
    db.execute("ALTER TABLE sessions ADD COLUMN host TEXT")


def m005_reasoning_tokens(db: Db, d: Dialect) -> None:
    """Each call's reasoning (thinking) tokens, for ``stats``; filled from the ``call_done`` entries that
    reported them, NULL (unknown) for the calls recorded before."""
    db.execute("ALTER TABLE calls ADD COLUMN reasoning_tokens INTEGER")
    backfill_reasoning(db)


MIGRATIONS: list[Callable[[Db, Dialect], None]] = [
    m001_sessions_and_entries,
    m002_listing_columns,
    m003_call_index,
    m004_host,
    m005_reasoning_tokens,
]
SCHEMA_VERSION = len(MIGRATIONS)


def migrate(db: Db, d: Dialect, version: int, record: Callable[[int], None], *, store: str, newer: str) -> None:
    """Run the migrations after ``version`` inside the caller's transaction, ``record``-ing each new
    version as it is reached; a store newer than this code is refused (``newer`` says what to do)."""
    if version > SCHEMA_VERSION:
        raise StoreError(
            f"session store {store} has schema version {version}, newer than this tiny-agent knows "
            f"({SCHEMA_VERSION}); {newer}"
        )
    for number in range(version, SCHEMA_VERSION):
        MIGRATIONS[number](db, d)
        record(number + 1)
