"""The store's interface: sessions made of append-only entries, whatever the backend.

The engine appends entries and reads them back; it never sees SQL. A second backend (PostgreSQL,
for many hosts sharing sessions) implements the same ``Store`` protocol and must keep its rules:
``seq`` is the only order (0, 1, 2, ... per session, no gaps); an append names the head it
expects and fails with ``SessionConflict`` if another writer moved it; nothing is ever rewritten;
a fork is a new session that shares its parent's entries up to ``fork_seq``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from tiny_agent.types import Entry

__all__ = ["UNREADABLE", "NewEntry", "SessionInfo", "Store"]

NewEntry = tuple[str, Mapping[str, Any]]
"""An entry to append: its kind and its JSON body. The store gives it an id, a seq and a time."""

UNREADABLE = "__unreadable__"
"""The one key of the body a lenient read gives an entry whose stored body cannot be decoded: why."""


@dataclass(frozen=True)
class SessionInfo:
    """What a listing shows about a session, without reading its entries."""

    id: str
    created_at: float
    updated_at: float
    workspace: str | None
    """The folder the session worked in; ``--continue`` picks the newest session of a folder."""
    title: str
    """The first user input, clipped."""
    head: int
    """Seq of the newest entry (inherited ones included); -1 for an empty session."""
    parent_id: str | None = None
    fork_seq: int | None = None
    """For a fork: the parent's entries up to this seq are this session's first entries."""
    cost_usd: float | None = None
    """Sum of the priced calls so far; None if none could be priced."""
    calls: int = 0
    writer: str | None = None
    """``host:pid`` of the process that holds the session open for writing, if any."""

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


class Store(Protocol):
    """Sessions of append-only entries. Every method raises ``StoreError`` (naming the store) on failure."""

    location: str
    """Where the store lives (a file path, a URL without credentials), for messages."""

    def create(self, *, workspace: str | None = None, parent: tuple[str, int] | None = None) -> SessionInfo:
        """A new, empty session; with ``parent=(id, seq)``, a fork sharing the parent's entries up to seq."""
        ...

    def append(self, session_id: str, entries: Sequence[NewEntry], *, expected_head: int) -> list[Entry]:
        """Append ``entries`` atomically after ``expected_head``; ``SessionConflict`` if the head moved."""
        ...

    def entries(self, session_id: str, *, after: int = -1, lenient: bool = False) -> list[Entry]:
        """The session's entries with seq > ``after``, in order, inherited ones included. A body that
        cannot be decoded raises ``UnreadableEntry``; with ``lenient``, it is ``{UNREADABLE: why}``."""
        ...

    def get(self, id_or_prefix: str) -> SessionInfo:
        """The session with this id or unique id prefix; ``SessionNotFound`` otherwise."""
        ...

    def sessions(self, *, workspace: str | None = None, limit: int = 20) -> list[SessionInfo]:
        """The newest sessions first (by last update), optionally only those of one workspace."""
        ...

    def delete(self, session_id: str, *, force: bool = False) -> None:
        """Remove a session; forks of it keep their history (the shared prefix is copied into them).
        ``SessionConflict`` if a live process holds it (see ``acquire``), unless ``force``."""
        ...

    def acquire(self, session_id: str, *, force: bool = False) -> str | None:
        """Mark the session open for writing by this process; ``SessionConflict`` if a live process has it.
        With ``force``, takes it from that process and says which ("pid 123 on host"); else None."""
        ...

    def release(self, session_id: str) -> None:
        """Give up the mark taken by ``acquire`` (harmless if this process does not hold it)."""
        ...

    def close(self) -> None: ...
