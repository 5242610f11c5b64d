"""Every PostgreSQL failure as one line that names the server (never the password) and says what to
do. Failures that may pass (the server down or restarting, the connection lost, a statement
timeout, its disk full) are ``StoreUnavailable``: what a paid call produced then waits in a spool
file. Those that need the user (a refused password, no such database, no right to create tables)
are plain ``StoreError``s."""

from __future__ import annotations

import re

import psycopg
from psycopg import errors
from psycopg_pool import PoolTimeout

from tiny_agent.errors import SessionConflict, StoreError, StoreUnavailable
from tiny_agent.redaction import redact

__all__ = ["failure"]

_LOST = (
    "server closed the connection",
    "terminating connection",
    "connection is lost",
    "connection is closed",
    "consuming input failed",
    "sending query failed",
    "ssl syscall error",
    "connection reset",
    "broken pipe",
    "the database system is shutting down",
    "the database system is starting up",
    "the database system is in recovery mode",
)


def _reason(exc: BaseException) -> str:
    """The server's own words, on one line: the part after libpq's "connection to server ... failed:"."""
    text = " ".join(str(exc).split())
    text = re.sub(r"^connection failed: ", "", text)
    text = re.sub(r'connection to server at "[^"]*", port \d+ failed: ', "", text)
    text = re.sub(r"^(FATAL|ERROR): +", "", text)
    return redact(text.replace(" Is the server running", "; is the server running"))


def failure(location: str, action: str, exc: BaseException, *, wait: float | None = None) -> StoreError:
    """The ``StoreError`` for ``exc``, raised while doing ``action`` on the store at ``location``."""
    where = f"session store {location}"
    why = _reason(exc)
    lower = why.lower()
    if isinstance(exc, PoolTimeout):
        waited = f" in {wait:g} s" if wait is not None else ""
        return StoreUnavailable(f"{where}: {action} failed: no connection to the server{waited} (is it running?)")
    refused = _statement_refused(where, action, exc, why) or _connection_refused(where, why)
    if refused is not None:
        return refused
    if isinstance(exc, errors.AdminShutdown | errors.CannotConnectNow) or any(s in lower for s in _LOST):
        return StoreUnavailable(f"{where}: {action} failed: the connection to the server was lost ({why})", again=True)
    if isinstance(exc, psycopg.OperationalError):
        return StoreUnavailable(f"{where}: {action} failed: {why}")
    return StoreError(f"{where}: {action} failed: {why}")


def _statement_refused(where: str, action: str, exc: BaseException, why: str) -> StoreError | None:
    """What the server refused a statement for: a conflict, a timeout, a full disk, a privilege."""
    lower = why.lower()
    if isinstance(exc, errors.UniqueViolation):
        return SessionConflict(
            f"{where}: {action} failed: another process wrote the same entries at the same time ({why}); "
            "nothing was written. Resume the session again"
        )
    if isinstance(exc, errors.QueryCanceled):
        return StoreUnavailable(
            f"{where}: {action} failed: a statement ran past the server's statement_timeout ({why}); nothing was "
            "written. Try again, or raise statement_timeout (e.g. ?options=-c%20statement_timeout%3D60s in the URL)"
        )
    if isinstance(exc, errors.DiskFull) or "no space left on device" in lower:
        return StoreUnavailable(
            f"{where}: {action} failed: the server's disk is full ({why}); nothing was written. "
            "Free some space on the database server"
        )
    if isinstance(exc, errors.InsufficientPrivilege):
        return StoreError(
            f"{where}: {action} failed: the database user may not do this ({why}); give tiny-agent a database "
            "of its own (createdb -O USER tiny_agent) or the right to create tables in it"
        )
    return None


def _connection_refused(where: str, why: str) -> StoreError | None:
    """Why a connection could not be made: the password, the database, the role, the host."""
    lower = why.lower()
    if "password authentication failed" in lower:
        return StoreError(
            f"{where}: the server refused the password ({why}); check PGPASSWORD, ~/.pgpass or PGPASSFILE"
        )
    if "no password supplied" in lower:
        return StoreError(
            f"{where}: the server asks for a password and none was given: set PGPASSWORD or add the server "
            "to ~/.pgpass (hostname:port:database:username:password, mode 0600)"
        )
    if re.search(r'database "[^"]*" does not exist', why):
        return StoreError(f"{where}: {why}; create it first (createdb), or name another in the URL")
    if re.search(r'role "[^"]*" does not exist', why):
        return StoreError(f"{where}: {why}; give a user the server knows in the URL (postgresql://USER@HOST/DB)")
    if "connection refused" in lower:
        return StoreUnavailable(
            f"{where}: cannot connect: nothing answers there (connection refused); is PostgreSQL running?"
        )
    if "timeout expired" in lower:
        return StoreUnavailable(f"{where}: cannot connect: the server did not answer in time ({why})")
    if "could not translate host name" in lower or "name or service not known" in lower:
        return StoreError(f"{where}: cannot connect: unknown host ({why})")
    return None
