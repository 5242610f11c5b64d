"""A psycopg connection as the SQL store expects it: qmark placeholders, the session's timeouts and
time zone."""

from __future__ import annotations

import functools
import os
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

import psycopg

from tiny_agent.store.dialect import Cursor

__all__ = ["STATEMENT_TIMEOUT", "QmarkDb", "configure", "local_zone"]

STATEMENT_TIMEOUT = "30s"
"""Applied unless the URL, the role or the database sets one: a stuck lock fails instead of hanging."""


class QmarkDb:
    """A psycopg connection that takes the store's ``?`` placeholders."""

    def __init__(self, conn: psycopg.Connection[Any]) -> None:
        self.conn = conn

    def execute(self, sql: str, parameters: Sequence[Any] = (), /) -> Cursor:
        return self.conn.execute(_qmarks(sql), tuple(parameters))


@functools.lru_cache(maxsize=512)
def _qmarks(sql: str) -> str:
    # The store's SQL has no ? or % inside a literal but the LIKE-free words of its own.
    return sql.replace("%", "%%").replace("?", "%s")


def configure(conn: psycopg.Connection[Any]) -> None:
    """Every new connection: dates in the local time zone (``stats --by day``), and a statement
    timeout unless the URL, the role or the database chose one."""
    conn.execute(
        "SELECT set_config('TimeZone', %s, false), set_config('statement_timeout', CASE WHEN"
        " current_setting('statement_timeout') = '0' THEN %s ELSE current_setting('statement_timeout') END, false)",
        (local_zone(), STATEMENT_TIMEOUT),
    )


@functools.cache
def local_zone() -> str:
    """This host's time zone as PostgreSQL names it: ``$TZ``, the zone /etc/localtime links to, or the
    current UTC offset (in POSIX form, whose sign is the other way round)."""
    given = os.environ.get("TZ", "").lstrip(":")
    if given and "/" in given:
        return given
    link = str(Path("/etc/localtime").resolve())
    if "zoneinfo/" in link:
        return link.split("zoneinfo/", 1)[1]
    offset = datetime.now().astimezone().utcoffset()
    minutes = int(offset.total_seconds() // 60) if offset is not None else 0
    sign = "-" if minutes >= 0 else "+"
    return f"<{minutes:+05d}>{sign}{abs(minutes) // 60:02d}:{abs(minutes) % 60:02d}"
