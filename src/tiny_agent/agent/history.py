"""A stored session read back for a person: its turns, tool runs, per-call lines and compactions,
in the order they happened (``tiny-agent sessions show``)."""

from __future__ import annotations

import datetime
from collections.abc import Iterator, Sequence

from tiny_agent.agent.loop import CallEvent, CompactionEvent, ToolEvent, TurnEvent
from tiny_agent.agent.report import format_event
from tiny_agent.context.compaction import Compaction
from tiny_agent.context.entries import (
    CallDone,
    CallFailed,
    Clearing,
    CompactionMark,
    ConfigChange,
    EntryError,
    Note,
    PinChange,
    Response,
    RunSettings,
    RunStop,
    ToolResult,
    TypedEntry,
    UserInput,
)
from tiny_agent.context.entry_codec import decode
from tiny_agent.context.tokens import CallRecord
from tiny_agent.errors import UnreadableEntry
from tiny_agent.types import Entry, TextBlock, ToolUseBlock

__all__ = ["history_lines"]


def history_lines(entries: Sequence[Entry], unreadable: list[UnreadableEntry] | None = None) -> Iterator[str]:
    """The lines of ``entries``; an entry that cannot be read is one line saying so (and, when
    ``unreadable`` is given, its error is added to it), and the entries after it are still shown."""
    reader = _Reader()
    for entry in entries:
        try:
            values = decode(entry)
        except EntryError as exc:
            error = UnreadableEntry(entry.seq, entry.kind, str(exc))
            if unreadable is not None:
                unreadable.append(error)
            yield f"#{entry.seq} [unreadable {entry.kind} entry: {exc}]"
            continue
        for value in values:
            yield from reader.lines(entry, value)


class _Reader:
    def __init__(self) -> None:
        self.calls: dict[str, ToolUseBlock] = {}
        self.step = 0
        self.summary_calls: list[CallRecord] = []
        """The calls of the compaction under way: each has its line, the compaction their total."""

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
            case ToolResult(block=result):
                call = self.calls.get(result.tool_use_id) or ToolUseBlock(result.tool_use_id, "tool", {})
                yield format_event(ToolEvent(self.step, call, result, 0.0))
            case CallDone(record=record):
                if record.purpose == "turn":
                    self.summary_calls = []  # a compaction that failed before this turn: its calls had their lines
                    self.step += 1
                    yield format_event(TurnEvent(self.step, record, 0, record.stop_reason or ""))
                else:
                    self.summary_calls.append(record)
                    yield format_event(CallEvent(len(self.summary_calls), record))
            case CallFailed(error=error):
                yield f"#{seq} [call failed: {error}]"
            case CompactionMark():
                compaction = Compaction(
                    value.messages, value.summary, value.record, value.tokens_before, value.tokens_after
                )
                yield f"#{seq} " + format_event(CompactionEvent(compaction, tuple(self.summary_calls)))
                self.summary_calls = []
            case Clearing(stubs=stubs):
                yield f"#{seq} [cleared old tool output: {len(stubs)} result(s)]"
            case PinChange(add=add, remove=remove):
                yield f"#{seq} [pin {'added' if add is not None else 'removed'}: {add or remove}]"
            case ConfigChange(settings=settings) | RunSettings(settings=settings):
                shown = {k: v for k, v in settings.items() if k not in ("tools", "system")}
                if shown:
                    yield f"#{seq} [settings: {', '.join(f'{k}={v}' for k, v in shown.items())}]"
                if "system" in settings:
                    yield f"#{seq} [system prompt set: {len(str(settings['system']))} characters]"
            case Note(text=text):
                yield f"#{seq} [note: {text}]"
            case RunStop(reason=reason, detail=detail) if reason != "done":
                yield f"#{seq} [run stopped: {reason}{f' ({detail})' if detail else ''}]"
