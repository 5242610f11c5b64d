"""The writer lease of a PostgreSQL session: a session-level advisory lock, held on a connection of
the writer's own. It lives as long as that connection: a process that dies, on any host, lets go of
it as soon as the server sees its socket close, so no mark can go stale and no clock is trusted."""

from __future__ import annotations

import hashlib
import os
import socket
import time
from typing import Any

import psycopg

__all__ = ["LOCK_WAIT_S", "end_holder", "gone_from_here", "lock_key", "try_lock", "wait_for_lock"]

LOCK_WAIT_S = 5.0
"""How long a takeover, or an open after the holder died, waits for the server to drop the old lock."""


def lock_key(session_id: str) -> int:
    """The session's advisory lock: 64 bits of a hash of its id."""
    return int.from_bytes(hashlib.blake2b(session_id.encode(), digest_size=8).digest(), "big", signed=True)


def try_lock(conn: psycopg.Connection[Any], key: int) -> bool:
    return bool(conn.execute("SELECT pg_try_advisory_lock(%s)", (key,)).fetchone()[0])  # type: ignore[index]


def wait_for_lock(conn: psycopg.Connection[Any], key: int) -> bool:
    deadline = time.monotonic() + LOCK_WAIT_S
    while not try_lock(conn, key):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def end_holder(conn: psycopg.Connection[Any], key: int) -> bool:
    """``--force``: end the connection that holds the lock (the same database user may); False if
    the server did not let this user."""
    high, low = (key % (1 << 64)) >> 32, key % (1 << 32)  # how pg_locks shows a bigint key
    ended = conn.execute(
        "SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory' AND objsubid = 1"
        " AND classid::bigint = %s AND objid::bigint = %s AND granted AND pid <> pg_backend_pid()",
        (high, low),
    ).fetchall()
    return all(row[0] for row in ended)


def gone_from_here(holder: tuple[str, str]) -> bool:
    """The holder (host, pid) ran on this host and its process is gone."""
    host, pid = holder
    if host != socket.gethostname() or not pid.isdigit():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    return False
