"""Writing what a command produces to a file the user named, or to stdout, without a traceback and
without destroying what is there.

A regular file (or a new one) is replaced atomically: a temporary file in the same folder, 0600,
fsync, rename, so a full disk or a crash leaves the old file whole. What is not a regular file (a
FIFO, a device such as ``/dev/stdout``, a socket) is written through and never renamed over. A
symlink is followed: its target is written as above, and the link stays a link.
"""

from __future__ import annotations

import errno
import os
import stat
import sys
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import BinaryIO

from tiny_agent.errors import ConfigError

__all__ = ["write_bytes", "write_lines", "write_stdout"]


def write_bytes(path: Path, data: bytes) -> None:
    """``data`` into ``path`` (see the module doc); ``ConfigError`` in one line when it cannot be done."""
    _write(path, lambda f: f.write(data))


def write_lines(path: Path, lines: Iterable[str]) -> None:
    """``lines`` into ``path`` (see the module doc); ``ConfigError`` in one line when it cannot be done."""

    def emit(f: BinaryIO) -> None:
        for line in lines:
            f.write((line + "\n").encode("utf-8"))

    _write(path, emit)


def _write(path: Path, emit: Callable[[BinaryIO], object]) -> None:
    try:
        mode: int | None = os.stat(path).st_mode  # follows a symlink: what it points at decides
    except FileNotFoundError:
        mode = None
    except OSError as exc:
        raise _cannot(path, exc) from None
    through = mode is not None and not stat.S_ISREG(mode)
    try:
        if through:
            _write_through(path, emit)
        else:
            _replace(Path(os.path.realpath(path)), emit)
    except OSError as exc:
        raise _cannot(path, exc, kept=not through) from None


def write_stdout(lines: Iterable[str]) -> int:
    """``lines`` on stdout; ``ConfigError`` in one line if stdout cannot take them (a full disk).
    A reader that went away (``| head``) ends the command quietly, as a shell tool would: 141."""
    try:
        for line in lines:
            sys.stdout.write(line + "\n")
        sys.stdout.flush()
    except BrokenPipeError:
        _discard_stdout()
        return 128 + 13  # SIGPIPE
    except OSError as exc:
        _discard_stdout()
        raise ConfigError(f"cannot write to stdout: {exc.strerror or exc}") from None
    return 0


def _write_through(path: Path, emit: Callable[[BinaryIO], object]) -> None:
    fd = os.open(path, os.O_WRONLY)  # no O_CREAT, no O_TRUNC: it exists, and it is not a file to cut
    with os.fdopen(fd, "wb") as f:
        emit(f)


def _replace(path: Path, emit: Callable[[BinaryIO], object]) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            emit(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _cannot(path: Path, exc: OSError, *, kept: bool = False) -> ConfigError:
    reason = exc.strerror or str(exc)
    folder = Path(os.path.realpath(path)).parent
    if exc.errno == errno.ENOENT:
        reason += f": the folder {folder} does not exist" if not folder.is_dir() else f": {folder} takes no new files"
    elif kept:
        reason += f"; {path} was left as it was" if os.path.lexists(path) else "; nothing was written"
    return ConfigError(f"cannot write {path}: {reason}")


def _discard_stdout() -> None:
    """Point stdout at /dev/null, so the interpreter's last flush at exit has nowhere to fail."""
    try:
        fd = sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):
        return  # not a real file (a test's capture): nothing is flushed to a descriptor at exit
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, fd)
    os.close(null)
