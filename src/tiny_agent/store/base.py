"""The store's interface: sessions made of append-only entries, whatever the backend.

The engine appends entries and reads them back; it never sees SQL. A second backend (PostgreSQL,
for many hosts sharing sessions) implements the same ``Store`` protocol and must keep its rules:
``seq`` is the only order (0, 1, 2, ... per session, no gaps); an append names the head it
expects and fails with ``SessionConflict`` if another writer moved it; nothing is ever rewritten;
a fork is a new session that shares its parent's entries up to ``fork_seq``.

Beside the entries, a store keeps an index of the model calls (one row per ``call`` entry, with its
``call_done`` folded in) and of the events that shape the window or end a run (``compaction``,
``clear``, ``stop``), written in the same transaction as the entries that carry them. Looking back
over thousands of sessions (``tiny-agent stats``) reads that index, never the entry bodies.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from tiny_agent.store.call_rows import CallQuery, CallRow, CallTotals, EventRow, EventTotals
from tiny_agent.types import Entry

__all__ = [
    "GROUP_KEYS",
    "UNREADABLE",
    "CallQuery",
    "CallRow",
    "CallTotals",
    "EventRow",
    "EventTotals",
    "GroupKey",
    "NewEntry",
    "SessionInfo",
    "Store",
    "UnitPrices",
]

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
    host: str | None = None
    """The host that wrote to the session last (None: written before hosts were recorded)."""

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


GroupKey = Literal["session", "day", "model", "provider", "workspace", "miss"]
"""What call and event totals can be grouped by; ``day`` is the local date of the call (YYYY-MM-DD)."""
GROUP_KEYS: tuple[GroupKey, ...] = ("session", "day", "model", "provider", "workspace", "miss")


UnitPrices = Mapping[tuple[str | None, str], tuple[float, float]]
"""Dollars per input token and per output token, by (provider, model)."""


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

    def append_entries(self, session_id: str, entries: Sequence[Entry]) -> int:
        """Write entries made elsewhere (held in a spool while the store was out of reach) exactly as
        they are, ids, seqs and times kept; the first must follow the head. Those already there (an
        append whose commit was lost with the connection) are skipped: how many were written.
        ``SessionConflict`` if other entries took their place."""
        ...

    def restore(self, info: SessionInfo, entries: Sequence[Entry]) -> SessionInfo:
        """A session with ``info``'s id, workspace, times and host, holding exactly ``entries`` (seqs
        0, 1, ...; a fork's inherited entries included): a session moved from another store.
        ``SessionConflict`` if the id is taken."""
        ...

    def entries(
        self, session_id: str, *, after: int = -1, lenient: bool = False, kinds: Collection[str] | None = None
    ) -> list[Entry]:
        """The session's entries with seq > ``after``, in order, inherited ones included; only those of
        ``kinds`` when given (``config`` entries, say, without reading the rest). A body that cannot be
        decoded raises ``UnreadableEntry``; with ``lenient``, it is ``{UNREADABLE: why}``."""
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

    # -- the call index: what ``stats`` reads ---------------------------------------------------

    def calls(self, query: CallQuery) -> list[CallRow]:
        """The calls that match ``query``, by session then seq."""
        ...

    def usage_sums(self, query: CallQuery, *, by_session: bool = False) -> list[tuple[Any, ...]]:
        """The answered calls summed per 15-minute bucket and model (see ``call_queries.usage_sums``)."""
        ...

    def call_totals(
        self, query: CallQuery, by: Sequence[GroupKey] = (), *, prices: UnitPrices | None = None
    ) -> list[CallTotals]:
        """Sums over the calls that match ``query``, one row per distinct value of the ``by`` keys
        (one row in all without keys; none when nothing matches). Summed where the data is. With
        ``prices``, also what the priced calls would have cost uncached (``uncached_usd``)."""
        ...

    def models(self, query: CallQuery) -> list[tuple[str | None, str]]:
        """The distinct (provider, model) pairs of the calls that match ``query``."""
        ...

    def miss_counts(
        self, query: CallQuery, by: Sequence[GroupKey] = ()
    ) -> list[tuple[tuple[str | None, ...], str, int]]:
        """How many matching calls missed with each diagnosed cause text, per distinct value of ``by``."""
        ...

    def events(self, query: CallQuery) -> list[EventRow]:
        """Compactions, clearings and run ends of the sessions ``query`` matches, by session then seq."""
        ...

    def event_totals(self, query: CallQuery, by: Sequence[GroupKey] = ()) -> list[EventTotals]:
        """Events counted by kind (and a stop's reason) per distinct value of the ``by`` keys."""
        ...

    def close(self) -> None: ...
