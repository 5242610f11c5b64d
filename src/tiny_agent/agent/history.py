"""A stored session read back for a person: its turns, tool runs, per-turn lines and compactions,
in the order they happened (``tiny-agent sessions show``)."""

from __future__ import annotations

import datetime
from collections.abc import Iterator, Sequence

from tiny_agent.agent.loop import CallEvent, CompactionEvent, ToolEvent, TurnEvent
from tiny_agent.agent.report import format_event
from tiny_agent.context.compaction import Compaction
from tiny_agent.context.log import blocks_of, decoding, tool_result_of
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
            with decoding(entry):
                lines = list(reader.lines(entry))
        except UnreadableEntry as exc:
            if unreadable is not None:
                unreadable.append(exc)
            lines = [f"#{entry.seq} [unreadable {entry.kind} entry: {exc.reason}]"]
        yield from lines


class _Reader:
    def __init__(self) -> None:
        self.calls: dict[str, ToolUseBlock] = {}
        self.step = 0
        self.summary_calls: list[CallRecord] = []
        """The calls of the compaction under way: each has its line, the compaction their total."""

    def lines(self, entry: Entry) -> Iterator[str]:
        body = entry.body
        when = datetime.datetime.fromtimestamp(entry.at).strftime("%Y-%m-%d %H:%M:%S")
        if entry.kind == "user":
            self.step = 0
            text = " ".join(b.text for b in blocks_of(body) if isinstance(b, TextBlock))
            yield f"\n#{entry.seq} {when} user: {text}"
        elif entry.kind == "response":
            for block in blocks_of(body):
                if isinstance(block, TextBlock):
                    yield f"#{entry.seq} assistant: {block.text}"
                elif isinstance(block, ToolUseBlock):
                    self.calls[block.id] = block
        elif entry.kind == "tool_result":
            result = tool_result_of(body)
            call = self.calls.get(result.tool_use_id) or ToolUseBlock(result.tool_use_id, "tool", {})
            yield format_event(ToolEvent(self.step, call, result, 0.0))
        elif entry.kind == "call_done":
            record = CallRecord.from_body(body, entry.at)
            if record.purpose == "turn":
                self.summary_calls = []  # a compaction that failed before this turn: its calls had their lines
                self.step += 1
                yield format_event(TurnEvent(self.step, record, 0, record.stop_reason or ""))
            else:
                self.summary_calls.append(record)
                yield format_event(CallEvent(len(self.summary_calls), record))
        elif entry.kind == "call_failed":
            yield f"#{entry.seq} [call failed: {body.get('error')}]"
        elif entry.kind == "compaction":
            compaction = Compaction(
                int(body.get("messages") or 0),
                body["summary"],
                body["record"],
                body.get("tokens_before"),
                body.get("tokens_after"),
            )
            yield f"#{entry.seq} " + format_event(CompactionEvent(compaction, tuple(self.summary_calls)))
            self.summary_calls = []
        elif entry.kind == "clear":
            yield f"#{entry.seq} [cleared old tool output: {len(body.get('stubs') or {})} result(s)]"
        elif entry.kind == "pin":
            change = "added" if "add" in body else "removed"
            yield f"#{entry.seq} [pin {change}: {body.get('add') or body.get('remove')}]"
        elif entry.kind == "config":
            shown = {k: v for k, v in (body.get("settings") or {}).items() if k not in ("tools", "system")}
            if shown:
                yield f"#{entry.seq} [settings: {', '.join(f'{k}={v}' for k, v in shown.items())}]"
            if "system" in (body.get("settings") or {}):
                yield f"#{entry.seq} [system prompt set: {len(body['settings']['system'])} characters]"
        elif entry.kind == "note":
            yield f"#{entry.seq} [note: {body.get('text')}]"
