"""The conversation as one append-only sequence of entries, and where entries go.

Every fact the engine knows is an entry: user input, a model response, one tool result per call,
a compaction marker, a clearing of old tool output, a call opened before a send and closed after
it (usage, cost, time, the prefix fingerprint), a pin or config change, a note. Nothing is ever
rewritten or deleted. The ``Context`` is a fold over the entries (``context.state``), so it is
rebuilt exactly from a stored session; a fork is a session that shares a prefix of entries.

Bodies are plain JSON with a format version (``"v": 1``), read and written as typed values by
``context.entries``: a body change is a reader change, not a table migration. Where entries go is
a ``Log``: ``MemoryLog`` for a conversation that lives in one process, ``StoredLog`` for one that
outlives it (each batch committed before the next call).
"""

from __future__ import annotations

import contextlib
import signal
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from typing import Protocol, get_args

from tiny_agent.context.entries import TypedEntry
from tiny_agent.store.base import NewEntry, Store
from tiny_agent.types import Entry

__all__ = ["ENTRY_KINDS", "Log", "MemoryLog", "StoredLog"]

ENTRY_KINDS: tuple[str, ...] = tuple(t.kind for t in get_args(TypedEntry))
"""Every kind of entry: one per typed value of ``context.entries``."""


class Log(Protocol):
    """Where a conversation's entries are kept. ``append`` is atomic: all of a batch or nothing."""

    @property
    def entries(self) -> Sequence[Entry]: ...

    def append(self, batch: Sequence[NewEntry]) -> list[Entry]: ...


class MemoryLog:
    """Entries in this process only. ``clock`` stamps them (a simulation may pass its own)."""

    def __init__(self, entries: Sequence[Entry] = (), *, clock: Callable[[], float] = time.time) -> None:
        self._entries = list(entries)
        self.clock = clock

    @property
    def entries(self) -> Sequence[Entry]:
        return self._entries

    def append(self, batch: Sequence[NewEntry]) -> list[Entry]:
        now = self.clock()
        start = len(self._entries)
        written = [Entry(kind, body, uuid.uuid4().hex, start + i, now) for i, (kind, body) in enumerate(batch)]
        self._entries.extend(written)
        return written


class StoredLog:
    """Entries of a stored session: a batch is in the store (committed) before it is in memory."""

    def __init__(self, store: Store, session_id: str, entries: Sequence[Entry] = ()) -> None:
        self.store = store
        self.session_id = session_id
        self._entries = list(entries)

    @property
    def entries(self) -> Sequence[Entry]:
        return self._entries

    def append(self, batch: Sequence[NewEntry]) -> list[Entry]:
        head = self._entries[-1].seq if self._entries else self.store.get(self.session_id).head
        # A Ctrl-C between the commit and the line after it would leave this process a step behind
        # its own store, and its next append would look like another writer's: hold it until both are done.
        with _sigint_deferred():
            written = self.store.append(self.session_id, batch, expected_head=head)
            self._entries.extend(written)
        return written


@contextlib.contextmanager
def _sigint_deferred() -> Iterator[None]:
    """Delay SIGINT until the block ends (main thread only; elsewhere signals go to the main thread)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught: list[int] = []
    previous = signal.signal(signal.SIGINT, lambda signum, _frame: caught.append(signum))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
        if caught and callable(previous):
            previous(signal.SIGINT, None)
