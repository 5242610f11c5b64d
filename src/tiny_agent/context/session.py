"""A conversation that outlives the process: a Context whose entries live in a store.

Starting, continuing, resuming and forking all end in the same thing: the session's entries read
back, folded into a Context, and the session marked as open for writing by this process. A resume
closes what a crash left open before anything is sent: tool calls without results get an
"interrupted, not run" result and a call that never got its answer is marked failed, so the
resumed window is legal without a repair and the ledger shows that call's usage as unknown.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from tiny_agent.context.config import NOT_RUN
from tiny_agent.context.engine import Context, ContextConfig
from tiny_agent.context.entries import CallFailed, split_settings
from tiny_agent.context.log import StoredLog, write_spooled
from tiny_agent.errors import UnreadableEntry
from tiny_agent.store.base import SessionInfo, Store
from tiny_agent.types import ToolSpec, ToolUseBlock

__all__ = ["TAKEN_OVER", "Session"]

TAKEN_OVER = (
    "[not recorded here: another tiny-agent took this session over (--force) while {who} was running this "
    "call. It may have run, or still be running there; it was not run again. Check before repeating a call "
    "that changes files.]"
)
"""The result of a tool call the process taken over had not finished."""


@dataclass
class Session:
    """A stored conversation open for writing. Close it (or use ``with``) to let another process have it."""

    store: Store
    info: SessionInfo
    context: Context
    interrupted: list[ToolUseBlock] = field(default_factory=list)
    """Tool calls a crash left without a result; each now has an "interrupted, not run" result."""
    lost_calls: int = 0
    """Calls that were in flight when the previous process stopped: billed, usage unknown."""
    taken_from: str | None = None
    """The live process this one took the session from with ``force`` ("pid 123 on host"), if any:
    its calls in flight were not lost to a crash, their replies go to that process."""

    @property
    def id(self) -> str:
        return self.info.id

    @staticmethod
    def start(
        store: Store,
        *,
        workspace: str | None = None,
        tools: Iterable[ToolSpec] = (),
        system: str | None = None,
        pins: Iterable[str] = (),
        config: ContextConfig | None = None,
        settings: Mapping[str, Any] | None = None,
    ) -> Session:
        """A new session, open for writing."""
        info = store.create(workspace=workspace)
        return Session._open(store, info, tools, system, pins, config, settings, force=False)

    @staticmethod
    def resume(
        store: Store,
        id_or_prefix: str,
        *,
        tools: Iterable[ToolSpec] | None = None,
        system: str | None = None,
        pins: Iterable[str] = (),
        config: ContextConfig | None = None,
        settings: Mapping[str, Any] | None = None,
        force: bool = False,
    ) -> Session:
        """An existing session; what is given here overrides what it holds, recorded as changes.
        ``tools`` None keeps the session's tools (``()`` would record that it has none)."""
        info = store.get(id_or_prefix)
        return Session._open(store, info, tools, system, pins, config, settings, force=force)

    @staticmethod
    def latest(store: Store, workspace: str) -> SessionInfo | None:
        """The most recently updated session of a workspace, if any."""
        found = store.sessions(workspace=workspace, limit=1)
        return found[0] if found else None

    @staticmethod
    def fork(store: Store, id_or_prefix: str, at: int | None = None) -> SessionInfo:
        """A new session sharing the entries of another up to seq ``at`` (default: all of them)."""
        source = store.get(id_or_prefix)
        return store.create(workspace=source.workspace, parent=(source.id, source.head if at is None else at))

    @staticmethod
    def _open(
        store: Store,
        info: SessionInfo,
        tools: Iterable[ToolSpec] | None,
        system: str | None,
        pins: Iterable[str],
        config: ContextConfig | None,
        settings: Mapping[str, Any] | None,
        *,
        force: bool,
    ) -> Session:
        taken_from = store.acquire(info.id, force=force)
        try:
            write_spooled(store, info.id)  # what a paid call produced while the store was out of reach
            entries = store.entries(info.id)
            log = StoredLog(store, info.id, entries)
            try:
                context = Context(system, tools, pins=pins, config=config, log=log)
            except UnreadableEntry as exc:
                raise exc.located(store.location, info.id) from exc
            session = Session(store, info, context, taken_from=taken_from)
            session._close_what_a_crash_left()
            if settings:
                engine, run = split_settings(settings)
                context.configure(**engine)
                context.record_run(**run)
        except BaseException:
            store.release(info.id)
            raise
        return session

    def _close_what_a_crash_left(self) -> None:
        state = self.context.state
        lost = sorted(state.open_calls)
        error, reason = "the process stopped before the reply arrived", NOT_RUN
        if self.taken_from is not None:
            error = (
                f"taken over: another tiny-agent took this session over (--force) while {self.taken_from} "
                "was waiting for this reply; it is not recorded here"
            )
            reason = TAKEN_OVER.format(who=self.taken_from)
        if lost:
            self.context.append([CallFailed(seq, error) for seq in lost])
        self.lost_calls = len(lost)
        self.interrupted = self.context.close_interrupted(reason)

    def refresh(self) -> SessionInfo:
        self.info = self.store.get(self.info.id)
        return self.info

    def close(self) -> None:
        self.store.release(self.info.id)

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
