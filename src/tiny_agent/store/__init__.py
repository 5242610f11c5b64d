"""Where sessions are kept: a SQLite file on one host, or a PostgreSQL database several hosts share.

with open_store("postgresql://agent@db.internal/agents") as store: ...
with open_store() as store: ...        # $TINY_AGENT_STORE, else sessions.db in the user data folder

- ``base``: the ``Store`` interface: sessions made of append-only entries, whatever the backend.
- ``call_rows``: the call index's query and row types (``CallQuery``, ``CallRow``, ``CallTotals``, ...).
- ``call_index``: one row per model call (and compaction, clearing, run end), written with its entries.
- ``call_queries``: reading the call index: rows for one session's story, sums for many.
- ``conflicts``: the ``SessionConflict`` messages of a SQL store, and the host name a lease records.
- ``dialect``: the ``?``-parameter connection both backends' SQL is written against, and what they spell differently.
- ``location``: which store a location names: a SQLite file path or a ``postgresql://`` URL.
- ``migrations``: the schema as one ordered list of migrations both backends run.
- ``postgres``: sessions in a PostgreSQL database several hosts share (psycopg 3 and its pool).
- ``postgres_conn``: a psycopg connection as the SQL store expects it: ``?`` placeholders, timeouts, zone.
- ``postgres_errors``: every PostgreSQL failure as one line naming the server, never the password.
- ``postgres_lease``: a PostgreSQL session's writer lease: a session-level advisory lock.
- ``postgres_read_only``: whether a PostgreSQL store opens for reading only (a SELECT-only role, a standby).
- ``rows``: how a session and its entries are kept in rows, the same in every backend.
- ``spool``: entries a paid call produced while the store was out of reach, kept until it is back.
- ``sql_store``: the ``Store`` in SQL, written once for both backends.
- ``sqlite``: sessions in one SQLite file: WAL, full sync, a busy timeout, one transaction per append.
"""

from __future__ import annotations

from pathlib import Path

from tiny_agent.errors import ConfigError
from tiny_agent.store.location import default_location, is_postgres, shown_location
from tiny_agent.store.sql_store import SqlStore

__all__ = ["open_store"]


def open_store(location: str | Path | None = None) -> SqlStore:
    """The store at ``location`` (default: ``default_location()``), opened and migrated. A URL's
    password is never shown: messages name the server without it."""
    where = str(location) if location is not None else default_location()
    if is_postgres(where):
        try:
            from tiny_agent.store.postgres import PostgresStore  # psycopg is imported only for a URL
        except ImportError as exc:
            raise ConfigError(
                f"session store {shown_location(where)}: a PostgreSQL store needs psycopg ({exc.name} is not "
                "installed): pip install 'tiny-agent[postgres]'"
            ) from None
        return PostgresStore(where)
    from tiny_agent.store.sqlite import SQLiteStore

    return SQLiteStore(Path(where))
