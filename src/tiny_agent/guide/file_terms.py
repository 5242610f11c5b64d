"""What each file on offer holds, as counted word stems: the guide offers the file a request's words
are in ("who works on Friday?" is the rota that says "Friday: Lena").

Only the head of each file is read (``HEAD_BYTES``), and only the files ``read_file`` would read
(the grammar's list: no secrets, no binaries). A file is read again only when its size or
modification time changed, so a turn after the first costs a ``stat`` per file.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterable, Mapping
from pathlib import Path

from tiny_agent.guide.words import terms

__all__ = ["HEAD_BYTES", "FileTerms"]

HEAD_BYTES = 4_096
"""Bytes of each file whose words count: enough for a note, a menu, a config; the start of a long file."""


class FileTerms:
    """The word stems of files under one root, cached by size and modification time."""

    def __init__(self, root: Path, head_bytes: int = HEAD_BYTES) -> None:
        self.root = root
        self.head_bytes = head_bytes
        self._seen: dict[str, tuple[tuple[int, int], Counter[str]]] = {}

    def of(self, paths: Iterable[str]) -> dict[str, Mapping[str, int]]:
        """``paths`` (relative) -> their head's stems; a file that cannot be read is left out."""
        out: dict[str, Mapping[str, int]] = {}
        for rel in paths:
            path = self.root / rel
            try:
                info = os.stat(path)
                key = (info.st_size, info.st_mtime_ns)
                cached = self._seen.get(rel)
                if cached is None or cached[0] != key:
                    with open(path, "rb") as file:
                        head = file.read(self.head_bytes)
                    cached = (key, terms(head.decode("utf-8", errors="replace")))
                    self._seen[rel] = cached
            except OSError:
                continue
            out[rel] = cached[1]
        return out
