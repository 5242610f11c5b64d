"""A stored session read back for a person: its turns, tool runs, per-call lines and compactions,
in the order they happened (``tiny-agent sessions show``). Each call's line also says which prefix
layers changed from the call before (and, for the system prompt, where)."""

from __future__ import annotations

import datetime
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from tiny_agent.agent.loop import CallEvent, CompactionEvent, ToolEvent, TurnEvent
from tiny_agent.agent.thinking_text import folded
from tiny_agent.context.diagnosis import where_text_changed
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
from tiny_agent.context.tokens import CallRecord
from tiny_agent.errors import UnreadableEntry
from tiny_agent.observe.call_lines import format_event
from tiny_agent.providers.reasoning_shown import shown_reasoning
from tiny_agent.tools.toolset import MCP_SETTING
from tiny_agent.types import Entry, TextBlock, ToolUseBlock

__all__ = ["decision_line", "history_lines"]


def history_lines(entries: Sequence[Entry], unreadable: list[UnreadableEntry] | None = None) -> Iterator[str]:
    """The lines of ``entries``; an entry that cannot be read is one line saying so (and, when
    ``unreadable`` is given, its error is added to it), and the entries after it are still shown."""
    reader = _Reader()
    for entry in entries:
        try:
            values = read(entry)
        except UnreadableEntry as error:
            if unreadable is not None:
                unreadable.append(error)
            yield f"#{entry.seq} [unreadable {entry.kind} entry: {error.reason}]"
            continue
        for value in values:
            yield from reader.lines(entry, value)


class _Reader:
    def __init__(self) -> None:
        self.calls: dict[str, ToolUseBlock] = {}
        self.step = 0
        self.summary_calls: list[CallRecord] = []
        """The calls of the compaction under way: each has its line, the compaction their total."""
        self.pings = 0
        """Keepalive pings since the last turn (each gets its own numbered line)."""
        self.layers = _Layers()
        self.servers: dict[str, str] = {}
        """The MCP server of each tool the model called by this name (the ``mcp`` run setting)."""

    def lines(self, entry: Entry, value: TypedEntry) -> Iterator[str]:
        seq = entry.seq
        match value:
            case UserInput(content=content):
                self.step = 0
                when = datetime.datetime.fromtimestamp(entry.at).strftime("%Y-%m-%d %H:%M:%S")
                yield f"\n#{seq} {when} user: {' '.join(b.text for b in content if isinstance(b, TextBlock))}"
            case Response(content=content):
                for block in content:
                    if isinstance(block, TextBlock):
                        yield f"#{seq} assistant: {block.text}"
                    elif isinstance(block, ToolUseBlock):
                        self.calls[block.id] = block
                    elif (thought := shown_reasoning(block)) is not None:
                        yield f"#{seq} thinking: {folded(thought)}"  # whole in --json and the export
            case ToolResult(block=result):
                call = self.calls.get(result.tool_use_id) or ToolUseBlock(result.tool_use_id, "tool", {})
                yield format_event(ToolEvent(self.step, call, result, 0.0, self.servers.get(call.name, "")))
            case CallOpened():
                self.layers.call(seq, value)
            case CallDone(call=call, record=record):
                yield self._answered(call, record)
            case CallFailed(error=error):
                yield f"#{seq} [call failed: {error}]"
            case CompactionMark():
                compaction = Compaction(
                    value.messages, value.summary, value.record, value.tokens_before, value.tokens_after, value.strategy
                )
                yield f"#{seq} " + format_event(CompactionEvent(compaction, tuple(self.summary_calls)))
                self.summary_calls = []
            case Decision(action="compact"):
                yield f"#{seq} [{decision_line(value)}]"
                if value.failed_at is not None:
                    self.summary_calls = []
            case Clearing(stubs=stubs):
                yield f"#{seq} [cleared old tool output: {len(stubs)} result(s)]"
            case PinChange(add=add, remove=remove):
                yield f"#{seq} [pin {'added' if add is not None else 'removed'}: {add or remove}]"
            case ConfigChange(settings=settings) | RunChange(settings=settings):
                yield from self._settings(seq, settings)
            case FieldRefused(model=model, field=name):
                yield f"#{seq} [{model} does not take {name}: left out of its requests from here on]"
            case Note(text=text):
                yield f"#{seq} [note: {text}]"
            case RunStop(reason=reason, steps=steps, detail=detail):
                yield f"#{seq} [run ended: {reason} after {steps} step(s){f' ({detail})' if detail else ''}]"

    def _answered(self, call: int, record: CallRecord) -> str:
        """The line of a finished call: a turn, a keepalive ping, or one call of a compaction."""
        self.layers.answered(call)
        note = self.layers.note(call, record.miss)
        if record.purpose == "turn":
            self.summary_calls = []  # a compaction that failed before this turn: its calls had their lines
            self.pings = 0
            self.step += 1
            line = format_event(TurnEvent(self.step, record, 0, record.stop_reason or ""))
        elif record.purpose == "keepalive":
            self.pings += 1
            line = format_event(CallEvent(self.pings, record))
        else:
            self.summary_calls.append(record)
            line = format_event(CallEvent(len(self.summary_calls), record))
        return line[:-1] + note + "]" if note and line.endswith("]") else line

    def _settings(self, seq: int, settings: Mapping[str, Any]) -> Iterator[str]:
        self.layers.config(settings)
        yield from self._servers(seq, settings.get(MCP_SETTING))
        shown = {k: v for k, v in settings.items() if k not in ("tools", "system", MCP_SETTING)}
        if shown:
            said = (f"{k}={v}" if v is not None else f"{k} left out" for k, v in shown.items())
            yield f"#{seq} [settings: {', '.join(said)}]"
        if "system" in settings:
            yield f"#{seq} [system prompt set: {len(str(settings['system']))} characters]"

    def _servers(self, seq: int, servers: Any) -> Iterator[str]:
        if not isinstance(servers, Mapping):
            return
        self.servers = {}
        for name, entry in servers.items():
            tools = dict(entry.get("tools") or {}) if isinstance(entry, Mapping) else {}
            self.servers.update((tool, str(name)) for tool in tools)
            source = entry.get("source", "") if isinstance(entry, Mapping) else ""
            yield f"#{seq} [mcp {name} · {source} · {len(tools)} tool(s): {', '.join(tools)}]"
        if not servers:
            yield f"#{seq} [no MCP server from here on]"


def decision_line(d: Decision) -> str:
    """``cost policy compacts at 14,210 tokens (threshold 13,500, limit 100,000): 12 messages, summary cached``."""
    who = "asked-for compaction" if d.policy == "manual" else f"{d.policy} policy compacts"
    limits = [f"threshold {d.threshold:,}"] if d.threshold is not None and d.policy != "manual" else []
    if d.ceiling is not None and d.ceiling != d.threshold:
        limits.append(f"limit {d.ceiling:,}")
    seen = f"{who} at {d.tokens:,} tokens" + (f" ({', '.join(limits)})" if limits else "")
    if d.failed_at is not None:
        return f"{seen}: failed, history kept as it was: {d.error}"
    return f"{seen}: {d.messages} messages" + (f", summary {d.summarizer}" if d.summarizer else "")


class _Layers:
    """Which prefix layers each call changed from the call before on its provider, from the fingerprints."""

    def __init__(self) -> None:
        self.system = ""
        self.previous: dict[str, tuple[Mapping[str, Any], str]] = {}
        """Each provider's newest answered call's fingerprint and system prompt: what a call to that
        provider is compared with (another provider's is another cache)."""
        self.open: dict[int, tuple[str, tuple[Mapping[str, Any], str]]] = {}
        self.notes: dict[int, tuple[list[str], str]] = {}

    def config(self, settings: Mapping[str, Any]) -> None:
        if "system" in settings:
            self.system = str(settings["system"])

    def call(self, seq: int, opened: CallOpened) -> None:
        prints = opened.fingerprint
        changed: list[str] = []
        where = ""
        if opened.provider in self.previous and prints:
            before, old_system = self.previous[opened.provider]
            changed = [k for k in ("tools", "system", "pins") if before.get(k) and before.get(k) != prints.get(k)]
            shared, count = opened.shared_messages, before.get("messages")
            if isinstance(shared, int) and isinstance(count, int) and shared < count:
                changed.append("messages")
            if "system" in changed and old_system != self.system:
                where = where_text_changed(old_system, self.system)
        self.notes[seq] = (changed, where)
        self.open[seq] = (opened.provider, (prints, self.system))

    def answered(self, seq: int) -> None:
        if seq in self.open:
            provider, call = self.open.pop(seq)
            self.previous[provider] = call

    def note(self, seq: int, miss: str | None) -> str:
        changed, where = self.notes.get(seq, ([], ""))
        if not changed:
            return ""
        # The miss cause already quotes where the system prompt changed: said once is enough.
        detail = where if where and not (miss or "").startswith("system prompt changed") else ""
        return f" · changed: {', '.join(changed)}{detail}"
