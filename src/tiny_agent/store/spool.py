"""Entries a paid call produced while the store was out of reach, kept in a local file until it is back.

When a database server goes away between a model call and the commit of its reply, the reply was
paid for: losing it would be losing money and work. ``context.log.StoredLog`` then writes the
entries here (one file per store and session, in the user state folder, 0600; keys redacted as in
the store), and writes them to the store, ids, seqs and times kept, at the next append or the next
resume (``Store.append_entries`` skips any the lost commit did write). One JSON object a line: a
line cut by a crash in the middle of writing it is ignored, so a half line never becomes an entry.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Sequence
from pathlib import Path

import platformdirs

from tiny_agent.store.rows import encode_body
from tiny_agent.types import Entry

__all__ = ["Spool", "spool_folder"]


def spool_folder() -> Path:
    return Path(platformdirs.user_state_dir("tiny-agent")) / "spool"


class Spool:
    """The entries of one session of one store waiting to be written to it."""

    def __init__(self, location: str, session_id: str, folder: Path | None = None) -> None:
        store = hashlib.sha256(location.encode()).hexdigest()[:12]
        self.path = (folder or spool_folder()) / f"{store}-{session_id}.jsonl"

    def entries(self) -> list[Entry]:
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return []
        found = []
        for line in text.split("\n"):  # not splitlines: a body may hold a raw U+2028, which it splits at
            try:
                row = json.loads(line)
                found.append(Entry(row["kind"], row["body"], row["id"], int(row["seq"]), float(row["at"])))
            except (ValueError, KeyError, TypeError):
                continue  # the last line, cut short by a crash while it was written
        return found

    def add(self, entries: Sequence[Entry]) -> None:
        """Append ``entries`` to the file and sync it before returning."""
        _append(self.path, entries)

    def set_aside(self, entries: Sequence[Entry]) -> Path:
        """Write ``entries`` to a file beside the spool that nothing writes back (the session moved
        on without them): the user's to look at. Returns its path."""
        aside = self.path.with_name(f"{self.path.stem}-unwritten-{entries[0].seq}.jsonl")
        _append(aside, entries)
        return aside

    def clear(self) -> None:
        self.path.unlink(missing_ok=True)


def _append(path: Path, entries: Sequence[Entry]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    lines = "".join(
        json.dumps({"seq": e.seq, "id": e.id, "kind": e.kind, "at": e.at}, ensure_ascii=False)[:-1]
        + f',"body":{encode_body(e.body, e.kind)}}}\n'
        for e in entries
    )
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        os.write(fd, lines.encode("utf-8"))
        os.fsync(fd)
    finally:
        os.close(fd)
