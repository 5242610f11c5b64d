"""A stored session read back for a person: its turns, tool runs, per-turn lines and compactions,
in the order they happened (``tiny-agent sessions show``)."""

from __future__ import annotations

import datetime
from collections.abc import Iterator, Sequence

from tiny_agent.agent.loop import CompactionEvent, ToolEvent, TurnEvent
from tiny_agent.agent.report import format_event
from tiny_agent.context.compaction import Compaction
from tiny_agent.context.entries import (
    CallDone,
    CallFailed,
    Clearing,
    CompactionMark,
    ConfigChange,
    Note,
    PinChange,
    Response,
    RunSettings,
    RunStop,
    ToolResult,
    UserInput,
)
from tiny_agent.context.entry_codec import decode
from tiny_agent.context.tokens import CallRecord
from tiny_agent.types import Entry, TextBlock, ToolUseBlock

__all__ = ["history_lines"]


def history_lines(entries: Sequence[Entry]) -> Iterator[str]:
    calls: dict[str, ToolUseBlock] = {}
    step = 0
    pending_summary: CallRecord | None = None
    for entry in entries:
        when = datetime.datetime.fromtimestamp(entry.at).strftime("%Y-%m-%d %H:%M:%S")
        for value in decode(entry):
            match value:
                case UserInput(content=content):
                    step = 0
                    text = " ".join(b.text for b in content if isinstance(b, TextBlock))
                    yield f"\n#{entry.seq} {when} user: {text}"
                case Response(content=content):
                    for block in content:
                        if isinstance(block, TextBlock):
                            yield f"#{entry.seq} assistant: {block.text}"
                        elif isinstance(block, ToolUseBlock):
                            calls[block.id] = block
                case ToolResult(block=result):
                    call = calls.get(result.tool_use_id) or ToolUseBlock(result.tool_use_id, "tool", {})
                    yield format_event(ToolEvent(step, call, result, 0.0))
                case CallDone(record=record):
                    if record.purpose == "turn":
                        step += 1
                        yield format_event(TurnEvent(step, record, 0, record.stop_reason or ""))
                    else:
                        pending_summary = record
                case CallFailed(error=error):
                    yield f"#{entry.seq} [call failed: {error}]"
                case CompactionMark():
                    compaction = Compaction(
                        value.messages, value.summary, value.record, value.tokens_before, value.tokens_after
                    )
                    yield f"#{entry.seq} " + format_event(CompactionEvent(compaction, pending_summary))
                    pending_summary = None
                case Clearing(stubs=stubs):
                    yield f"#{entry.seq} [cleared old tool output: {len(stubs)} result(s)]"
                case PinChange(add=add, remove=remove):
                    yield f"#{entry.seq} [pin {'added' if add is not None else 'removed'}: {add or remove}]"
                case ConfigChange(settings=settings) | RunSettings(settings=settings):
                    shown = {k: v for k, v in settings.items() if k not in ("tools", "system")}
                    if shown:
                        yield f"#{entry.seq} [settings: {', '.join(f'{k}={v}' for k, v in shown.items())}]"
                    if "system" in settings:
                        yield f"#{entry.seq} [system prompt set: {len(str(settings['system']))} characters]"
                case Note(text=text):
                    yield f"#{entry.seq} [note: {text}]"
                case RunStop(reason=reason, detail=detail) if reason != "done":
                    yield f"#{entry.seq} [run stopped: {reason}{f' ({detail})' if detail else ''}]"
