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

A store that is out of reach (a database server down or restarting) stops a run before a model
call is sent: the ``call`` entry must be stored first. What was already paid for, the reply of a
call or a tool's result, waits in a spool file instead (``store.spool``) and is written at the next
append or the next resume (``write_spooled``).
"""

from __future__ import annotations

import contextlib
import logging
import signal
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from typing import Protocol, get_args

from tiny_agent.context.entries import TypedEntry
from tiny_agent.errors import SessionConflict, StoreUnavailable
from tiny_agent.store.base import NewEntry, Store
from tiny_agent.store.spool import Spool
from tiny_agent.types import Entry

__all__ = ["ENTRY_KINDS", "Log", "MemoryLog", "StoredLog", "write_spooled"]

log = logging.getLogger(__name__)

HAPPENED = frozenset({"response", "call_done", "call_failed", "tool_result", "compaction"})
"""Entries of what happened outside the store and cannot be had again for free: a reply that was paid
for, a tool that ran, a summary. Kept in the spool when the store is out of reach."""

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
    """Entries of a stored session: a batch is in the store (committed) before it is in memory, or,
    while the store is out of reach, in its spool file."""

    def __init__(self, store: Store, session_id: str, entries: Sequence[Entry] = ()) -> None:
        self.store = store
        self.session_id = session_id
        self._entries = list(entries)
        self.spool = Spool(store.location, session_id)
        self._spooled = self.spool.path.exists()

    @property
    def entries(self) -> Sequence[Entry]:
        return self._entries

    def append(self, batch: Sequence[NewEntry]) -> list[Entry]:
        head = self._entries[-1].seq if self._entries else self.store.get(self.session_id).head
        now = time.time()
        # Ids, seqs and the time are chosen here, once: writing the batch again after a lost
        # connection (or from the spool) writes the very same entries, or finds them there.
        made = [Entry(kind, body, uuid.uuid4().hex, head + 1 + i, now) for i, (kind, body) in enumerate(batch)]
        # A Ctrl-C between the commit and the line after it would leave this process a step behind
        # its own store, and its next append would look like another writer's: hold it until both are done.
        with _sigint_deferred():
            try:
                self._write(made)
            except SessionConflict as exc:
                self._set_aside(made, exc)
            except StoreUnavailable as first:
                if not first.again:
                    self._keep(made, first)
                else:  # on a new connection: a restart or a dropped connection may be over
                    log.warning("%s; trying once more", first)
                    try:
                        self._write(made)
                    except StoreUnavailable as exc:
                        self._keep(made, exc)
            self._entries.extend(made)
        return made

    def _write(self, made: list[Entry]) -> None:
        if self._spooled:
            write_spooled(self.store, self.session_id)
            self._spooled = False
        self.store.append_entries(self.session_id, made)

    def _set_aside(self, made: list[Entry], exc: SessionConflict) -> None:
        """Another process writes the session now: what this one paid for or ran cannot follow its
        entries, and is not dropped either: it goes to a file of its own, which the line names."""
        if not {e.kind for e in made} & HAPPENED:
            raise exc
        path = self.spool.set_aside(made)
        raise SessionConflict(
            f"{exc}; this run's {', '.join(dict.fromkeys(e.kind for e in made))} (entries #{made[0].seq}-"
            f"#{made[-1].seq}, not in the session) are kept in {path}"
        ) from exc

    def _keep(self, made: list[Entry], exc: StoreUnavailable) -> None:
        """Keep in the spool what already happened outside the store (a paid reply, a tool's result, and
        whatever follows them); anything else, a call above all, fails the run before it is sent."""
        sid = self.session_id[:12]
        waiting = self.spool.entries()
        kinds = {e.kind for e in made}
        if "call" in kinds or not (waiting or kinds & HAPPENED):
            kept = (
                f"; entries #{waiting[0].seq}-#{waiting[-1].seq} are kept in {self.spool.path} until it is back "
                f"(written by tiny-agent --resume {sid})"
                if waiting
                else ""
            )
            raise StoreUnavailable(f"{exc}; the model was not called{kept}") from exc
        self.spool.add(made)
        self._spooled = True
        log.warning(
            "%s; kept entries #%d-#%d (%s) in %s until it is back (written at the next write, or by "
            "tiny-agent --resume %s)",
            exc,
            (waiting or made)[0].seq,
            made[-1].seq,
            ", ".join(e.kind for e in [*waiting, *made]),
            self.spool.path,
            sid,
        )


def write_spooled(store: Store, session_id: str) -> int:
    """Write to the store the entries its session's spool file holds, then remove the file. A store
    still out of reach raises ``StoreUnavailable`` (the file stays); ``SessionConflict`` names the file
    if the session moved on without them."""
    spool = Spool(store.location, session_id)
    waiting = spool.entries()
    if not waiting:
        spool.clear()
        return 0
    try:
        written = store.append_entries(session_id, waiting)
    except SessionConflict as exc:
        raise SessionConflict(
            f"{exc} The {len(waiting)} entries kept while the store was out of reach were not written: they stay "
            f"in {spool.path}"
        ) from exc
    spool.clear()
    log.warning(
        "session store %s: wrote entries #%d-#%d of session %s, kept in %s while it was out of reach",
        store.location,
        waiting[0].seq,
        waiting[-1].seq,
        session_id[:12],
        spool.path,
    )
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
