"""Whether a PostgreSQL store opens for reading only: a role that may only SELECT, a read-only server.

A backup restored for auditors, a reporting role, a hot standby: ``list``, ``show``, ``stats``,
``replay`` and ``export`` only read, so the store opens without the migration lock (which needs
no write, but ``CREATE TABLE IF NOT EXISTS`` does) as long as its schema is the one this tiny-agent
writes; every write then says "read-only" in one line.
"""

from __future__ import annotations

from typing import Any

import psycopg

from tiny_agent.errors import StoreError
from tiny_agent.store.migrations import SCHEMA_VERSION

__all__ = ["read_only"]

_WRITTEN = ("sessions", "entries", "calls", "events", "tiny_agent_migrations")
"""The tables a run writes; a role that may not INSERT into one of them cannot run."""


def read_only(conn: psycopg.Connection[Any], location: str) -> bool:
    """True when the store's schema exists and this connection may not write it (no INSERT granted,
    or the server or role makes every transaction read-only); then its schema must be current, since
    it cannot be migrated. False for a store to open (and migrate) as usual, or a new one to create."""
    exists = f"to_regclass('{_WRITTEN[-1]}') IS NOT NULL"
    row = conn.execute(f"SELECT {exists}, current_setting('transaction_read_only') = 'on'").fetchone()
    assert row is not None
    if not row[0]:
        return False  # nothing to read: creating it says whether this user may
    if not row[1]:
        checks = ", ".join(f"to_regclass('{t}') IS NULL OR has_table_privilege('{t}', 'INSERT')" for t in _WRITTEN)
        may = conn.execute(f"SELECT {checks}").fetchone()
        if may is not None and all(may):
            return False
    found = conn.execute("SELECT coalesce(max(version), 0) FROM tiny_agent_migrations").fetchone()
    version = int(found[0]) if found is not None else 0
    if version != SCHEMA_VERSION:
        how = "newer than this tiny-agent knows" if version > SCHEMA_VERSION else "older than this tiny-agent's"
        raise StoreError(
            f"session store {location} is read-only for this database user and its schema version {version} "
            f"is {how} ({SCHEMA_VERSION}); open it once as a user that may write, or upgrade tiny-agent"
        )
    return True
