"""What the entries of a log add up to: a pure fold, so a session is rebuilt exactly from its entries.

``State.apply`` is the only place an entry changes anything. Consecutive user-side entries (input,
tool results) become one user message here, results first: that is where two user turns meet, and
the log itself is never rewritten to merge them (unless a compaction's cut lies between them: the
first is summarised, the second starts the window). The window the model sees is kept beside the
messages (``context.window``), updated by the same entries.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from tiny_agent.context.entries import (
    CallDone,
    CallFailed,
    CallOpened,
    Clearing,
    CompactionMark,
    ConfigChange,
    Decision,
    FieldRefused,
    Note,
    PinChange,
    Response,
    RunChange,
    RunStop,
    ToolResult,
    TypedEntry,
    UserInput,
)
from tiny_agent.context.entry_codec import read
from tiny_agent.context.shrink.compaction import Compaction
from tiny_agent.context.tokens import CallRecord, TokenLedger, server_compaction
from tiny_agent.context.window import Window
from tiny_agent.types import Block, Entry, Message, ToolResultBlock

__all__ = ["OpenCall", "State"]


@dataclass(frozen=True)
class OpenCall:
    """A ``call`` entry: a request about to be sent (and, until its ``call_done``, maybe never answered)."""

    seq: int
    at: float
    purpose: str
    model: str
    chars: int
    fingerprint: Mapping[str, Any]
    server: str = ""
    """Where the cache lives, for a provider whose cache is one process (a local llama.cpp server)."""
    provider: str = ""
    """The profile that sent it (``CallOpened.provider``)."""


@dataclass
class State:
    """The conversation as of some entry: messages, compactions, pins, settings, calls."""

    messages: list[Message] = field(default_factory=list)
    starts: list[int] = field(default_factory=list)
    """Seq of the first entry of each message; a compaction's cut is one of these."""
    compactions: list[Compaction] = field(default_factory=list)
    stubs: dict[str, str] = field(default_factory=dict)
    """Cleared tool results: the text each one is replaced by in the window, by tool_use id."""
    pins: list[str] = field(default_factory=list)
    settings: dict[str, Any] = field(default_factory=dict)
    """The engine's settings: system, tools, the ``ContextConfig`` fields."""
    run_settings: dict[str, Any] = field(default_factory=dict)
    """The settings of whoever runs the session (provider, model, workspace, rules)."""
    ledger: TokenLedger = field(default_factory=TokenLedger)
    window: Window = field(default_factory=Window)
    open_calls: dict[int, OpenCall] = field(default_factory=dict)
    """Calls sent and not answered yet: after a crash, the one in flight."""
    last_call: OpenCall | None = None
    """The newest call (turn or summary); what the next request is compared with to explain a miss."""
    last_done: tuple[OpenCall, CallRecord] | None = None
    """The newest call that got its answer, with its record: the request a new one is compared with."""
    changes: list[str] = field(default_factory=list)
    """What changed the window since the newest answered call ("compaction", "clear"): expected cache
    misses. A call that never got its answer leaves them standing: the next one is compared with
    the same answered request, across the same changes."""
    pending: list[str] = field(default_factory=list)
    """tool_use ids of the newest response that have no result yet."""
    epoch: int = 0
    """Bumped by every entry that changes the rendered prefix (window, pins, system, tools)."""
    measured: tuple[int, int, int] | None = None
    """(messages, epoch, tokens) as of the newest turn whose usage was reported."""
    stops: list[RunStop] = field(default_factory=list)
    failed_at: int | None = None
    """The context's size when the policy's newest compaction failed (None: it did not); the
    policy's next try waits for growth, after a resume too."""
    refused: dict[str, frozenset[str]] = field(default_factory=dict)
    """Request fields each model refused with a 400 (``FieldRefused``): left out of its requests."""
    head: int = -1

    @staticmethod
    def of(entries: Iterable[Entry]) -> State:
        """The fold of ``entries``; ``UnreadableEntry`` names the first one that cannot be read."""
        state = State()
        for entry in entries:
            state.apply(entry)
        return state

    def apply(self, entry: Entry) -> None:
        """Fold one entry in; ``UnreadableEntry`` if it cannot be read."""
        values = read(entry)
        self.head = entry.seq
        for value in values:
            self._apply(entry, value)

    def _apply(self, entry: Entry, value: TypedEntry) -> None:
        match value:
            case UserInput(content=content):
                self._add_user(entry.seq, content)
            case ToolResult(block=block):
                self._add_user(entry.seq, (block,))
                if block.tool_use_id in self.pending:
                    self.pending.remove(block.tool_use_id)
            case Response():
                message = value.message
                self.messages.append(message)
                self.starts.append(entry.seq)
                self.window.append(message)
                self.pending = [b.id for b in message.tool_uses]
            case CompactionMark():
                self._compacted(value)
            case Clearing(stubs=stubs):
                self.stubs.update(stubs)
                self._window_changed("clear")
            case Decision(action="compact", policy=policy) if policy != "manual":
                self.failed_at = value.failed_at
            case Decision():
                pass  # what the policy saw and chose: no message, the window is as it was
            case CallOpened():
                call = OpenCall(
                    entry.seq,
                    entry.at,
                    value.purpose,
                    value.model,
                    value.chars,
                    value.fingerprint,
                    value.server,
                    value.provider,
                )
                self.open_calls[entry.seq] = call
                self.last_call = call
            case CallDone(call=seq, record=record):
                self._call_done(seq, replace(record, at=entry.at))
            case CallFailed(call=seq):
                self.open_calls.pop(seq, None)
            case FieldRefused(model=model, field=name):
                self.refused[model] = self.refused.get(model, frozenset()) | {name}
            case PinChange(add=add, remove=remove):
                self._pinned(add, remove)
            case ConfigChange(settings=settings):
                if any(k in settings and settings[k] != self.settings.get(k) for k in ("system", "tools")):
                    self.epoch += 1
                self.settings.update(settings)
            case RunChange(settings=settings):
                self.run_settings.update(settings)
                for name in [k for k, v in settings.items() if v is None]:  # a setting left out from here on
                    del self.run_settings[name]
            case RunStop():
                self.stops.append(value)
            case Note():
                pass

    def _compacted(self, mark: CompactionMark) -> None:
        cut = bisect.bisect_left(self.starts, mark.cut)
        self.compactions.append(
            Compaction(cut, mark.summary, mark.record, mark.tokens_before, mark.tokens_after, mark.strategy)
        )
        self._window_changed("compaction")
        if mark.counted and mark.tokens_after:
            self.measured = (len(self.messages), self.epoch, mark.tokens_after)

    def _pinned(self, add: str | None, remove: str | None) -> None:
        if add is not None and add not in self.pins:
            self.pins.append(add)
        if remove is not None and remove in self.pins:
            self.pins.remove(remove)
        self.epoch += 1

    def _window_changed(self, what: str) -> None:
        self.window.rebuild(self.messages, self.compactions[-1] if self.compactions else None, dict(self.stubs))
        self.changes.append(what)
        self.epoch += 1

    def _add_user(self, seq: int, blocks: tuple[Block, ...]) -> None:
        # A compaction whose cut lies past every message (the fold's) closed the last message: what
        # comes next starts the window after the summary, as it would in a live run, instead of
        # joining results the summary already replaced.
        if self.messages and self.messages[-1].role == "user" and self.base < len(self.messages):
            self.messages[-1] = joined(self.messages[-1], blocks)
            self.window.replace_last(self.messages[-1])
        else:
            self.messages.append(Message("user", blocks))
            self.starts.append(seq)
            self.window.append(self.messages[-1])

    def _call_done(self, seq: int, record: CallRecord) -> None:
        opened = self.open_calls.pop(seq, None)
        self.ledger.record(record, chars=opened.chars if opened else None)
        if opened is not None:
            self.last_done = (opened, record)
            self.changes = []
        usage = record.usage
        compacted = server_compaction(usage)
        # After a server compaction the context is what its message pass read, not the passes' sum.
        size = compacted[1] if compacted is not None and compacted[1] is not None else usage.input_tokens
        if record.purpose == "turn" and size is not None:
            self.measured = (len(self.messages), self.epoch, size + (usage.output_tokens or 0))

    @property
    def base(self) -> int:
        """Index of the first message the newest compaction kept (0 without one)."""
        return self.compactions[-1].cut if self.compactions else 0

    @property
    def system(self) -> str:
        return str(self.settings.get("system", ""))


def joined(message: Message, blocks: tuple[Block, ...]) -> Message:
    """The user ``message`` with ``blocks`` added: one turn, its tool results first."""
    merged = message.content + blocks
    results = tuple(b for b in merged if isinstance(b, ToolResultBlock))
    others = tuple(b for b in merged if not isinstance(b, ToolResultBlock))
    return Message("user", results + others)
