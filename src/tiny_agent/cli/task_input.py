"""The task of ``tiny-agent run``: its words, what is piped in, or both, whatever the bytes' encoding."""

from __future__ import annotations

import os
import stat
import sys

from tiny_agent.text import decode, from_os

__all__ = ["piped_stdin", "piped_task", "read_stdin", "stdin_is_terminal"]


def piped_task(words: tuple[str, ...]) -> str | None:
    """The task from the arguments, stdin, or both; None when there is none at all."""
    task = " ".join(words).strip() if words else None
    piped = piped_stdin()
    if task == "-":
        return read_stdin() if piped else ""
    if piped:
        extra = read_stdin()
        if task is None:
            return extra
        if extra.strip():
            return f"{task}\n\n<stdin>\n{extra.rstrip()}\n</stdin>"
    return task


def read_stdin() -> str:
    """Piped input as text whatever its encoding (``git diff`` of a Latin-1 repository: see ``text.decode``)."""
    raw = getattr(sys.stdin, "buffer", None)
    if raw is None:  # a text stream put in its place (a test, an embedding program)
        return from_os(sys.stdin.read())
    return str(decode(raw.read()))


def piped_stdin() -> bool:
    """True for a pipe or a redirected file; never for a terminal, /dev/null or a closed stdin,
    so a script that starts tiny-agent without input does not hang waiting for it."""
    try:
        mode = os.fstat(sys.stdin.fileno()).st_mode
    except (AttributeError, OSError, ValueError):
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISREG(mode)


def stdin_is_terminal() -> bool:
    try:
        return sys.stdin.isatty()
    except (AttributeError, ValueError):
        return False
