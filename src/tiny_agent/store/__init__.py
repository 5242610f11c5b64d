"""Where sessions are kept: a SQLite file on one host, or a PostgreSQL database several hosts share.

with open_store("postgresql://agent@db.internal/agents") as store: ...
with open_store() as store: ...        # $TINY_AGENT_STORE, else sessions.db in the user data folder
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
