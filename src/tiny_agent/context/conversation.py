"""What a conversation holds, and every way to add to it: messages, tool results, pins, notes.

Each change is a typed entry appended to the log, committed first when the log is stored, then
folded into the state. Nothing is ever changed in place: a pin removed is an entry that says so.
``Context`` (the engine) builds on this with rendering, model calls and compaction.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from tiny_agent.context.config import EMPTY_REPLY, NOT_RUN, ContextConfig
from tiny_agent.context.entries import (
    ENGINE_SETTINGS,
    ConfigChange,
    Note,
    PinChange,
    Response,
    RunChange,
    ToolResult,
    TypedEntry,
    UserInput,
)
from tiny_agent.context.entry_codec import encode
from tiny_agent.context.legality import drop_empty_text
from tiny_agent.context.log import Log, MemoryLog
from tiny_agent.context.shrink.compaction import Compaction
from tiny_agent.context.shrink.registry import policy_named
from tiny_agent.context.state import State
from tiny_agent.context.tokens import TokenLedger
from tiny_agent.context.window import spec_dict, spec_of, system_blocks
from tiny_agent.errors import ConfigError
from tiny_agent.redaction import redact_secrets
from tiny_agent.types import Entry, Message, ModelResponse, TextBlock, ToolResultBlock, ToolSpec, ToolUseBlock

__all__ = ["Conversation"]


class Conversation:
    """A log of entries and the state they fold into."""

    def __init__(self, log: Log | None = None, clock: Callable[[], float] = time.time) -> None:
        self.clock = clock
        """Seconds since the epoch, for cache lifetimes; a simulation passes its own (with its log's)."""
        self._log: Log = log if log is not None else MemoryLog(clock=clock)
        self._state = State.of(self._log.entries)
        self._tools = self._tools_of(self._state)

    # -- the log ------------------------------------------------------------------------------

    @property
    def entries(self) -> Sequence[Entry]:
        """Every entry of the conversation, oldest first. Nothing in it is ever changed."""
        return self._log.entries

    @property
    def state(self) -> State:
        return self._state

    def append(self, values: Sequence[TypedEntry]) -> list[Entry]:
        """Append typed entries (committed first when the log is stored) and fold them into the state."""
        written = self._log.append([encode(_keys_hidden(v)) for v in values])
        tools = self._state.settings.get("tools")
        for entry in written:
            # Folded from what was written, as a resume will read it (the seconds of a call rounded...).
            self._state.apply(entry)
        if self._state.settings.get("tools") is not tools:
            self._tools = self._tools_of(self._state)
        return written

    @staticmethod
    def _tools_of(state: State) -> tuple[ToolSpec, ...]:
        return tuple(spec_of(t) for t in state.settings.get("tools") or ())

    @property
    def messages(self) -> tuple[Message, ...]:
        """The whole history of messages, including those a compaction has summarised."""
        return tuple(self._state.messages)

    @property
    def compactions(self) -> tuple[Compaction, ...]:
        return tuple(self._state.compactions)

    @property
    def ledger(self) -> TokenLedger:
        return self._state.ledger

    # -- settings -----------------------------------------------------------------------------

    @property
    def tools(self) -> tuple[ToolSpec, ...]:
        """The tools the model is told about, in order (part of the cached prefix); kept in the log."""
        return self._tools

    @tools.setter
    def tools(self, specs: Sequence[ToolSpec]) -> None:
        self.configure(tools=[spec_dict(t) for t in specs])

    @property
    def system(self) -> str:
        return self._state.system

    @system.setter
    def system(self, text: str) -> None:
        self.configure(system=text)

    @property
    def settings(self) -> dict[str, Any]:
        """The engine's settings recorded in the log (system, tools, the ``ContextConfig`` fields)."""
        return dict(self._state.settings)

    @property
    def run_settings(self) -> dict[str, Any]:
        """The settings of whoever runs the session (provider, model, workspace, rules), as recorded."""
        return dict(self._state.run_settings)

    @property
    def config(self) -> ContextConfig:
        return ContextConfig.of(self._state.settings)

    def configure(self, **settings: Any) -> None:
        """Record engine settings that differ from the log's (one ``config`` entry); they are checked."""
        changed = _changed(self._state.settings, settings)
        if changed:
            unknown = sorted(set(changed) - ENGINE_SETTINGS)
            if unknown:
                raise ConfigError(
                    f"{', '.join(map(repr, unknown))}: not a setting of the engine (record_run keeps others)"
                )
            ContextConfig.of({**self._state.settings, **changed})  # raises ConfigError
            if "policy" in changed:
                policy_named(changed["policy"])  # an unknown name: one line naming the known ones
            self.append([ConfigChange(changed)])

    def record_run(self, **settings: Any) -> None:
        """Record the settings of whoever runs the session (provider, model, workspace...) that changed;
        a setting given as None is left out from here on."""
        changed = _changed(self._state.run_settings, settings)
        if changed:
            self.append([RunChange(changed)])

    # -- messages -----------------------------------------------------------------------------

    def add(self, message: Message) -> None:
        """Append a message. Blank text blocks are dropped (no API accepts them); a reply left with
        nothing is recorded as an explicit empty answer so the roles still alternate."""
        message = drop_empty_text(message)
        if message.role == "assistant":
            self.append([Response(message.content or (TextBlock(EMPTY_REPLY),))])
            return
        batch: list[TypedEntry] = [ToolResult(b) for b in message.tool_results]
        others = tuple(b for b in message.content if not isinstance(b, ToolResultBlock))
        if others or not batch:
            batch.append(UserInput(others or (TextBlock("(empty)"),)))
        self.append(batch)

    def add_user(self, text: str) -> None:
        self.add(Message.user(text))

    def unanswered(self) -> str | None:
        """The newest input's text while no reply has followed it (a run stopped before its first
        answer, a process killed while it waited; after tool results, the text that followed them);
        else None."""
        last = self._state.messages[-1] if self._state.messages else None
        if last is None or last.role != "user" or not last.content or not isinstance(last.content[-1], TextBlock):
            return None
        return last.content[-1].text

    def add_assistant(self, message: Message | ModelResponse) -> None:
        self.add(message.message if isinstance(message, ModelResponse) else message)

    def add_tool_results(self, results: Sequence[ToolResultBlock]) -> None:
        """Answer the newest assistant message's tool calls."""
        if results:
            self.add(Message("user", tuple(results)))

    def add_tool_result(self, result: ToolResultBlock) -> None:
        """One result, committed on its own: a crash after it never runs that tool again."""
        self.append([ToolResult(result)])

    @property
    def pending_calls(self) -> list[ToolUseBlock]:
        """Tool calls of the newest response that have no result yet."""
        if not self._state.pending or not self._state.messages:
            return []
        last = next(m for m in reversed(self._state.messages) if m.role == "assistant")
        return [b for b in last.tool_uses if b.id in self._state.pending]

    def close_interrupted(self, reason: str = NOT_RUN) -> list[ToolUseBlock]:
        """Give every call still waiting for a result an error result saying it did not run; returns them."""
        waiting = self.pending_calls
        if waiting:
            self.append([ToolResult(ToolResultBlock(c.id, reason, True)) for c in waiting])
        return waiting

    # -- pins and notes -----------------------------------------------------------------------

    @property
    def pins(self) -> list[str]:
        """The pinned constraints, oldest first (a copy: change them with ``pin`` and ``unpin``)."""
        return list(self._state.pins)

    def pin(self, constraint: str) -> None:
        """A constraint that is part of every request from now on and survives every compaction."""
        if constraint.strip() and constraint not in self._state.pins:
            self.append([PinChange(add=constraint)])

    def unpin(self, constraint: str | int) -> str:
        """Remove a pin, given as its text or its 1-based number in ``pins``; returns its text."""
        pins = self._state.pins
        if isinstance(constraint, int):
            if not 1 <= constraint <= len(pins):
                raise ConfigError(f"there is no pin {constraint}; there are {len(pins)}")
            constraint = pins[constraint - 1]
        if constraint not in pins:
            raise ConfigError(f"no pin reads {constraint!r}")
        self.append([PinChange(remove=constraint)])
        return constraint

    def note(self, text: str) -> None:
        """A remark in the log for people (``sessions show``); the model never sees it."""
        self.append([Note(text)])

    def system_blocks(self) -> tuple[str, ...]:
        """Stable first: the base system prompt, then the pinned constraints."""
        return system_blocks(self._state.system, self._state.pins)


def _changed(current: Mapping[str, Any], given: Mapping[str, Any]) -> dict[str, Any]:
    missing = object()
    return {k: v for k, v in given.items() if current.get(k, missing) != v}


def _keys_hidden(value: TypedEntry) -> TypedEntry:
    """A user's input, a tool's result, a pin or the system prompt with the registered secrets (API
    keys, values given to MCP servers) hidden, as the store keeps them: the window never holds what
    the store does not, so a resume renders the prefix the last request sent, and the model never
    reads a key."""
    match value:
        case UserInput(content=content):
            hidden = tuple(replace(b, text=redact_secrets(b.text)) if isinstance(b, TextBlock) else b for b in content)
            return value if hidden == content else UserInput(hidden)
        case ToolResult(block=block) if redact_secrets(block.content) != block.content:
            return ToolResult(replace(block, content=redact_secrets(block.content)))
        case PinChange(add=add, remove=remove):
            return PinChange(redact_secrets(add) if add else add, redact_secrets(remove) if remove else remove)
        case ConfigChange(settings=settings) if isinstance(settings.get("system"), str):
            return ConfigChange({**settings, "system": redact_secrets(settings["system"])})
    return value
