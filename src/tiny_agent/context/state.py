"""What the entries of a log add up to: a pure fold, so a session is rebuilt exactly from its entries.

``State.apply`` is the only place an entry changes anything. Consecutive user-side entries (input,
tool results) become one user message here, results first: that is where two user turns meet, and
the log itself is never rewritten to merge them. The window the model sees is a function of the
state (``window``): the newest compaction's summary, the messages after its cut, and cleared tool
output replaced by its stub.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from tiny_agent.context.cache import plan_cache
from tiny_agent.context.compaction import Compaction
from tiny_agent.context.log import blocks_of, decoding, response_message, tool_result_of
from tiny_agent.context.tokens import CallRecord, TokenLedger
from tiny_agent.types import Entry, Message, Prompt, TextBlock, ToolResultBlock, ToolSpec

__all__ = ["OpenCall", "State", "render_prompt", "spec_dict", "spec_of", "system_blocks", "window"]

PREFIX_KINDS = {"compaction", "clear", "pin"}
"""Entries that change the rendered prefix, so a size measured before them no longer holds."""


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
    ledger: TokenLedger = field(default_factory=TokenLedger)
    open_calls: dict[int, OpenCall] = field(default_factory=dict)
    """Calls sent and not answered yet: after a crash, the one in flight."""
    last_call: OpenCall | None = None
    """The newest call (turn or summary); what the next request is compared with to explain a miss."""
    last_turn_call: OpenCall | None = None
    last_done: tuple[OpenCall, CallRecord] | None = None
    """The newest call that got its answer, with its record: the request a new one is compared with."""
    changes: list[str] = field(default_factory=list)
    """What changed the window since the newest call ("compaction", "clear"): expected cache misses."""
    pending: list[str] = field(default_factory=list)
    """tool_use ids of the newest response that have no result yet."""
    epoch: int = 0
    """Bumped by every entry that changes the rendered prefix."""
    measured: tuple[int, int, int] | None = None
    """(messages, epoch, tokens) as of the newest turn whose usage was reported."""
    head: int = -1

    @staticmethod
    def of(entries: Iterable[Entry]) -> State:
        state = State()
        for entry in entries:
            with decoding(entry):
                state.apply(entry)
        return state

    def apply(self, entry: Entry) -> None:
        body = entry.body
        kind = entry.kind
        self.head = entry.seq
        if kind == "user":
            self._add_user(entry.seq, blocks_of(body))
        elif kind == "tool_result":
            block = tool_result_of(body)
            self._add_user(entry.seq, (block,))
            if block.tool_use_id in self.pending:
                self.pending.remove(block.tool_use_id)
        elif kind == "response":
            message = response_message(body)
            self.messages.append(message)
            self.starts.append(entry.seq)
            self.pending = [b.id for b in message.tool_uses]
        elif kind == "compaction":
            cut = bisect.bisect_left(self.starts, int(body["cut"]))
            self.compactions.append(
                Compaction(cut, body["summary"], body["record"], body.get("tokens_before"), body.get("tokens_after"))
            )
            self.changes.append("compaction")
        elif kind == "clear":
            self.stubs.update(body.get("stubs") or {})
            self.changes.append("clear")
        elif kind == "call":
            call = OpenCall(
                entry.seq,
                entry.at,
                body["purpose"],
                body["model"],
                int(body.get("chars") or 0),
                body.get("fingerprint") or {},
                str(body.get("server") or ""),
            )
            self.open_calls[entry.seq] = call
            self.last_call = call
            self.changes = []
            if call.purpose == "turn":
                self.last_turn_call = call
        elif kind == "call_done":
            self._call_done(entry)
        elif kind == "call_failed":
            self.open_calls.pop(int(body["call"]), None)
        elif kind == "pin":
            if "add" in body and body["add"] not in self.pins:
                self.pins.append(body["add"])
            if "remove" in body and body["remove"] in self.pins:
                self.pins.remove(body["remove"])
        elif kind == "config":
            changed = dict(body.get("settings") or {})
            if any(k in changed and changed[k] != self.settings.get(k) for k in ("system", "tools")):
                self.epoch += 1
            self.settings.update(changed)
        if kind in PREFIX_KINDS:
            self.epoch += 1

    def _add_user(self, seq: int, blocks: tuple[Any, ...]) -> None:
        if self.messages and self.messages[-1].role == "user":
            merged = self.messages[-1].content + blocks
            results = tuple(b for b in merged if isinstance(b, ToolResultBlock))
            others = tuple(b for b in merged if not isinstance(b, ToolResultBlock))
            self.messages[-1] = Message("user", results + others)
        else:
            self.messages.append(Message("user", blocks))
            self.starts.append(seq)

    def _call_done(self, entry: Entry) -> None:
        body = entry.body
        opened = self.open_calls.pop(int(body["call"]), None)
        record = CallRecord.from_body(body, at=entry.at)
        self.ledger.record(record, chars=opened.chars if opened else None)
        if opened is not None:
            self.last_done = (opened, record)
        usage = record.usage
        if record.purpose == "turn" and usage.input_tokens is not None:
            self.measured = (len(self.messages), self.epoch, usage.input_tokens + (usage.output_tokens or 0))

    @property
    def base(self) -> int:
        """Index of the first message the newest compaction kept (0 without one)."""
        return self.compactions[-1].cut if self.compactions else 0


def window(state: State, compaction: Compaction | None = None) -> list[Message]:
    """The messages the model sees now: the newest summary, the messages after its cut, and each
    cleared tool result replaced by its stub. ``compaction`` shows the window a candidate would give."""
    last = compaction or (state.compactions[-1] if state.compactions else None)
    kept = state.messages[last.cut if last else 0 :]
    if state.stubs:
        kept = [_with_stubs(m, state.stubs) for m in kept]
    if last is None:
        return list(kept)
    summary = TextBlock(last.text())
    if kept and kept[0].role == "user":
        return [Message("user", (summary, *kept[0].content)), *kept[1:]]
    return [Message("user", (summary,)), *kept]


def _with_stubs(message: Message, stubs: Mapping[str, str]) -> Message:
    if message.role != "user" or not any(
        isinstance(b, ToolResultBlock) and b.tool_use_id in stubs for b in message.content
    ):
        return message
    blocks = tuple(
        ToolResultBlock(b.tool_use_id, stubs[b.tool_use_id], b.is_error)
        if isinstance(b, ToolResultBlock) and b.tool_use_id in stubs
        else b
        for b in message.content
    )
    return Message("user", blocks)


def spec_dict(spec: ToolSpec) -> dict[str, Any]:
    return {"name": spec.name, "description": spec.description, "input_schema": dict(spec.input_schema)}


def spec_of(data: Mapping[str, Any]) -> ToolSpec:
    return ToolSpec(str(data["name"]), str(data.get("description", "")), dict(data.get("input_schema") or {}))


def system_blocks(state: State) -> tuple[str, ...]:
    """Stable first: the base system prompt, then the pinned constraints."""
    system = str(state.settings.get("system", ""))
    blocks = [system] if system else []
    if state.pins:
        lines = "\n".join(f"- {p}" for p in state.pins)
        blocks.append(f"<constraints>\nThe user set these constraints. They always apply:\n{lines}\n</constraints>")
    return tuple(blocks)


def render_prompt(
    state: State,
    *,
    tool_choice: Literal["auto", "none"] = "auto",
    max_tokens: int | None = None,
    tool_grammar: Mapping[str, Mapping[str, Any]] | None = None,
    compaction: Compaction | None = None,
) -> Prompt:
    """The request the state renders to: a pure function, so the same entries always give the same
    prompt (in this process, after a resume, or replayed under another policy)."""
    tools = tuple(spec_of(t) for t in state.settings.get("tools") or ())
    messages = tuple(window(state, compaction))
    plan = plan_cache(messages)
    return Prompt(system_blocks(state), tools, messages, plan, tool_choice, max_tokens, tool_grammar=tool_grammar or {})
