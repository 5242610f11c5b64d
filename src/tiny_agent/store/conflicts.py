"""The ``SessionConflict``s a SQL store raises (another process holds the session, or wrote first)
and the host name a lease records."""

from __future__ import annotations

import socket

from tiny_agent.errors import SessionConflict

__all__ = ["host_name", "moved_on", "refused"]


def refused(session_id: str, holder: tuple[str, str] | None) -> SessionConflict:
    """The refusal of a second writer, the same from every backend."""
    who = f"pid {holder[1]} on {holder[0]}" if holder else "a process whose mark is not written yet"
    return SessionConflict(
        f"session {session_id[:12]} is open in another tiny-agent ({who}); "
        "close it there, fork it (tiny-agent sessions fork ID), or take it over with --force"
    )


def moved_on(session_id: str, head: int, expected: int) -> SessionConflict:
    return SessionConflict(
        f"session {session_id[:12]} moved on: another process appended to it (its newest entry is "
        f"#{head}, this one expected #{expected}); nothing was written. Resume it again, "
        f"or fork it: tiny-agent sessions fork {session_id[:12]}"
    )


def host_name() -> str:
    return socket.gethostname()
