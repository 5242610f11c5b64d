"""File input and output under the tools: a streamed, bounded read and an atomic write.

``read_text`` reads only as far as it must: up to the requested lines or ``max_chars``, then at
most ``lookahead`` bytes more to count what is left, so a 600 MB file read with ``max_lines=1``
costs one chunk of memory, not the file. Past the lookahead the note gives a lower bound ("at least
N more lines") instead of reading on.

``write_atomic`` never leaves a half-written file: the bytes go to a temporary file in the same
folder, are flushed and fsynced, and replace the target with one ``os.replace``. A kill or a full
disk before the rename leaves the old file untouched; the temporary file is removed on any failure
(only a SIGKILL or a power cut can leave one behind, named ``.<name>.<random>.tmp``).
"""

from __future__ import annotations

import codecs
import contextlib
import os
import secrets
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from tiny_agent.tools.toolbox import ToolFailure

__all__ = ["BINARY_SNIFF", "LOOKAHEAD_BYTES", "bom_encoding", "looks_binary", "read_text", "with_note", "write_atomic"]

BINARY_SNIFF = 8192
"""A NUL byte in this many leading bytes marks a file as binary (the same test git uses)."""
LOOKAHEAD_BYTES = 4 * 1024 * 1024
"""How far past what is shown ``read_text`` reads to count what is left."""
CHUNK_BYTES = 64 * 1024


def looks_binary(head: bytes) -> bool:
    return b"\0" in head[:BINARY_SNIFF]


def read_text(
    path: Path,
    shown_as: str,
    *,
    start_line: int = 1,
    max_lines: int | None = None,
    max_chars: int,
    lookahead: int = LOOKAHEAD_BYTES,
    chunk: int = CHUNK_BYTES,
) -> str:
    """Lines ``start_line`` .. ``start_line + max_lines - 1`` of a text file, cut to ``max_chars``,
    with a note on what was left out. The encoding is a byte-order mark's, else UTF-8, else
    Windows-1252 (Latin-1 where it has no character), as ``text.decode`` decides; a file that is not
    UTF-8 gets a note saying how it was read. Raises ToolFailure for binary content."""
    with open(path, "rb") as file:
        size = os.fstat(file.fileno()).st_size
        head = file.read(BINARY_SNIFF)
        bom = bom_encoding(head)
        if bom is None and looks_binary(head):
            raise ToolFailure(f"{shown_as} looks like a binary file ({size} bytes); read_file only reads text")
        if not head:
            return "[empty file]"
        for encoding in (bom,) if bom else ("utf-8", "cp1252", "latin-1"):
            file.seek(0)
            try:
                shown = _scan(
                    file,
                    file.read(BINARY_SNIFF),
                    encoding,
                    size,
                    (start_line, max_lines, max_chars),
                    shown_as,
                    lookahead,
                    chunk,
                )
            except UnicodeDecodeError:
                continue
            if encoding in ("utf-8", "utf-8-sig"):
                return shown
            return with_note(shown, f"[{shown_as} is not UTF-8: read as {encoding}]")
        raise AssertionError("latin-1 decodes every byte")


def bom_encoding(head: bytes) -> str | None:
    """The encoding a byte-order mark at the start of ``head`` names, or None."""
    for bom, encoding in (
        (codecs.BOM_UTF32_LE, "utf-32"),
        (codecs.BOM_UTF32_BE, "utf-32"),
        (codecs.BOM_UTF8, "utf-8-sig"),
        (codecs.BOM_UTF16_LE, "utf-16"),
        (codecs.BOM_UTF16_BE, "utf-16"),
    ):
        if head.startswith(bom):
            return encoding
    return None


def _scan(
    file: BinaryIO,
    head: bytes,
    encoding: str,
    size: int,
    window: tuple[int, int | None, int],
    shown_as: str,
    lookahead: int,
    chunk: int,
) -> str:
    scan = _Scan(*window)
    for piece, read in _decoded(file, head, encoding, chunk):
        scan.feed(piece)
        if scan.settled_at is None and scan.settled:
            scan.settled_at = read
        if scan.settled_at is not None and read - scan.settled_at >= lookahead and read < size:
            return scan.finish_early(size - read)
    return scan.finish(shown_as)


class _Scan:
    """Walks decoded text once: skips to the first line, keeps what is shown, counts the rest."""

    def __init__(self, start: int, max_lines: int | None, max_chars: int) -> None:
        self.start = start
        self.last = None if max_lines is None else start + max_lines - 1
        self.max_chars = max_chars
        self.line = 1
        """Number of the line the next character belongs to."""
        self.ends_with_newline = True
        self.kept: list[str] = []
        self.kept_chars = 0
        self.selected_chars = 0
        """Characters of the selected lines seen so far, shown or not."""
        self.settled_at: int | None = None
        """Bytes read when the shown text became final; the lookahead counts from there."""

    @property
    def cut(self) -> bool:
        return self.selected_chars > self.max_chars

    @property
    def past_selection(self) -> bool:
        return self.last is not None and self.line > self.last

    @property
    def settled(self) -> bool:
        return self.cut or self.past_selection

    def feed(self, piece: str) -> None:
        self.ends_with_newline = piece.endswith("\n")
        pos = 0
        if self.line < self.start:
            pos = _after_newlines(piece, 0, self.start - self.line)
            self.line += piece.count("\n", 0, pos)
            if self.line < self.start:
                return
        if not self.past_selection:
            end = len(piece) if self.last is None else _after_newlines(piece, pos, self.last - self.line + 1)
            room = self.max_chars - self.kept_chars
            if room > 0:
                self.kept.append(piece[pos : pos + min(room, end - pos)])
                self.kept_chars += len(self.kept[-1])
            self.selected_chars += end - pos
            self.line += piece.count("\n", pos, end)
            pos = end
        if self.past_selection:
            self.line += piece.count("\n", pos)

    def finish(self, shown_as: str) -> str:
        """The answer once the whole file was read."""
        total = self.line - 1 if self.ends_with_newline else self.line  # a last line without "\n" counts
        if self.start > total:
            raise ToolFailure(f"{shown_as} has {total} lines; start_line {self.start} is past the end")
        shown = "".join(self.kept)
        if self.cut:
            left = self.selected_chars - len(shown)
            return self._cut(shown, f"{left} more characters not shown (of {self.selected_chars})")
        end = total if self.last is None else min(total, self.last)
        if end < total:
            return with_note(shown, f"[... {total - end} more lines; read again with start_line={end + 1}]")
        return shown

    def finish_early(self, unread: int) -> str:
        """The answer when the lookahead ran out before the end of the file: counts become lower bounds."""
        shown = "".join(self.kept)
        left = self.selected_chars - len(shown)
        if self.cut and self.past_selection:
            return self._cut(shown, f"{left} more characters not shown (of {self.selected_chars})")
        if self.cut:
            return self._cut(shown, f"at least {left} more characters not shown ({unread} bytes not read)")
        assert self.last is not None  # settled without a cut: past the selection
        # Bytes remain, so a line starts after the last one counted.
        more = self.line - self.last
        return with_note(shown, f"[... at least {more} more lines; read again with start_line={self.last + 1}]")

    def _cut(self, shown: str, what: str) -> str:
        next_line = self.start + shown.count("\n")
        if next_line == self.start:
            advice = f"line {self.start} alone is longer than {self.max_chars} characters"
        else:
            advice = f"read again with start_line={next_line} to see more"
        return with_note(shown, f"[... cut: {what}; {advice}]")


def _after_newlines(piece: str, pos: int, count: int) -> int:
    """The position just after the ``count``-th newline from ``pos``, or the end of ``piece``."""
    if piece.count("\n", pos) < count:
        return len(piece)
    for _ in range(count):
        pos = piece.index("\n", pos) + 1
    return pos


def _decoded(file: BinaryIO, head: bytes, encoding: str, chunk: int) -> Iterator[tuple[str, int]]:
    """(text, bytes read so far) for each chunk; UnicodeDecodeError at a byte ``encoding`` cannot take."""
    decoder = codecs.getincrementaldecoder(encoding)("strict")
    read = 0
    data = head
    while True:
        final = not data
        text = decoder.decode(data, final=final)
        read += len(data)
        if text:
            yield text, read
        if final:
            return
        data = file.read(chunk)


def with_note(text: str, note: str) -> str:
    """``note`` on a line of its own after ``text``."""
    separator = "" if text.endswith("\n") else "\n"
    return f"{text}{separator}{note}"


def write_atomic(target: Path, data: bytes) -> None:
    """Replace ``target`` with ``data`` in one rename, keeping an existing file's mode (and owner,
    where allowed); a new file gets the mode the umask gives. Raises OSError; the target is then
    unchanged and no temporary file is left."""
    try:
        before: os.stat_result | None = os.stat(target)
    except FileNotFoundError:
        before = None
    fd, temp = _create_temp(target)
    try:
        try:
            _write_all(fd, data)
            if before is not None:
                if hasattr(os, "fchown"):  # not on Windows
                    with contextlib.suppress(PermissionError):
                        os.fchown(fd, before.st_uid, before.st_gid)
                os.chmod(temp, stat.S_IMODE(before.st_mode))  # after chown, which clears setuid bits
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(temp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise
    _fsync_folder(target.parent)


def _create_temp(target: Path) -> tuple[int, Path]:
    # os.open with 0o666 lets the umask decide a new file's mode, as open() would; mkstemp would
    # give 0o600. The name stays short so it fits NAME_MAX whatever the target's name.
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
    for _ in range(100):
        temp = target.parent / f".{target.name[:32]}.{secrets.token_hex(4)}.tmp"
        try:
            return os.open(temp, flags, 0o666), temp
        except FileExistsError:
            continue
    raise FileExistsError(f"no free temporary name next to {target}")


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def _fsync_folder(folder: Path) -> None:
    """Make the rename itself durable; not every platform or file system can, and that is fine."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
