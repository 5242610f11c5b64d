"""The conversation as one append-only sequence of entries, and where entries go.

Every fact the engine knows is an entry: user input, a model response, one tool result per call,
a compaction marker, a clearing of old tool output, a call opened before a send and closed after
it (usage, cost, time, the prefix fingerprint), a pin or config change, a note, how a run stopped. Nothing is ever
rewritten or deleted. The ``Context`` is a fold over the entries (``context.state``), so it is
rebuilt exactly from a stored session; a fork is a session that shares a prefix of entries.

Bodies are plain JSON with a format version (``"v": 1``): a body change is a reader change, not a
table migration. Where entries go is a ``Log``: ``MemoryLog`` for a conversation that lives in one
process, ``StoredLog`` for one that outlives it (each batch committed before the next call).
"""

from __future__ import annotations

import contextlib
import signal
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, Literal, Protocol

from tiny_agent.store.base import NewEntry, Store
from tiny_agent.types import Block, Entry, Message, ToolResultBlock, block_from_dict

__all__ = [
    "BODY_VERSION",
    "ENTRY_KINDS",
    "EntryKind",
    "Log",
    "MemoryLog",
    "StoredLog",
    "blocks_of",
    "new_entry",
    "response_message",
    "tool_result_of",
]

EntryKind = Literal[
    "user",
    "response",
    "tool_result",
    "compaction",
    "clear",
    "call",
    "call_done",
    "call_failed",
    "pin",
    "config",
    "note",
    "stop",
]
ENTRY_KINDS: tuple[str, ...] = EntryKind.__args__  # type: ignore[attr-defined]
BODY_VERSION = 1


def new_entry(kind: EntryKind, **body: Any) -> NewEntry:
    """An entry to append: ``new_entry("user", content=[...])``."""
    return kind, {"v": BODY_VERSION, **body}


def blocks_of(body: Mapping[str, Any]) -> tuple[Block, ...]:
    """The content blocks of a ``user`` or ``response`` body."""
    return tuple(block_from_dict(b) for b in body.get("content") or ())


def response_message(body: Mapping[str, Any]) -> Message:
    return Message("assistant", blocks_of(body))


def tool_result_of(body: Mapping[str, Any]) -> ToolResultBlock:
    block = block_from_dict(body["block"])
    if not isinstance(block, ToolResultBlock):
        raise ValueError(f"a tool_result entry holds a {block.type} block")
    return block


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
