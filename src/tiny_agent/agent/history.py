"""A stored session read back for a person: its turns, tool runs, per-turn lines and compactions,
in the order they happened (``tiny-agent sessions show``). Each call's line also says which prefix
layers changed from the call before (and, for the system prompt, where)."""

from __future__ import annotations

import datetime
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from tiny_agent.agent.loop import CompactionEvent, ToolEvent, TurnEvent
from tiny_agent.agent.report import format_event
from tiny_agent.context.compaction import Compaction
from tiny_agent.context.diagnosis import first_difference
from tiny_agent.context.log import blocks_of, tool_result_of
from tiny_agent.context.tokens import CallRecord
from tiny_agent.observe.causes import excerpt
from tiny_agent.types import Entry, TextBlock, ToolUseBlock

__all__ = ["history_lines"]


def history_lines(entries: Sequence[Entry]) -> Iterator[str]:
    calls: dict[str, ToolUseBlock] = {}
    step = 0
    pending_summary: CallRecord | None = None
    layers = _Layers()
    for entry in entries:
        body = entry.body
        when = datetime.datetime.fromtimestamp(entry.at).strftime("%Y-%m-%d %H:%M:%S")
        if entry.kind == "user":
            step = 0
            text = " ".join(b.text for b in blocks_of(body) if isinstance(b, TextBlock))
            yield f"\n#{entry.seq} {when} user: {text}"
        elif entry.kind == "response":
            for block in blocks_of(body):
                if isinstance(block, TextBlock):
                    yield f"#{entry.seq} assistant: {block.text}"
                elif isinstance(block, ToolUseBlock):
                    calls[block.id] = block
        elif entry.kind == "tool_result":
            result = tool_result_of(body)
            call = calls.get(result.tool_use_id) or ToolUseBlock(result.tool_use_id, "tool", {})
            yield format_event(ToolEvent(step, call, result, 0.0))
        elif entry.kind == "call":
            layers.call(entry.seq, body)
        elif entry.kind == "call_done":
            record = CallRecord.from_body(body, entry.at)
            note = layers.note(body.get("call"), record.miss)
            if record.purpose == "turn":
                step += 1
                line = format_event(TurnEvent(step, record, 0, record.stop_reason or ""))
                yield line[:-1] + note + "]" if note else line
            else:
                pending_summary = record
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
            yield f"#{entry.seq} " + format_event(CompactionEvent(compaction, pending_summary))
            pending_summary = None
        elif entry.kind == "clear":
            yield f"#{entry.seq} [cleared old tool output: {len(body.get('stubs') or {})} result(s)]"
        elif entry.kind == "pin":
            change = "added" if "add" in body else "removed"
            yield f"#{entry.seq} [pin {change}: {body.get('add') or body.get('remove')}]"
        elif entry.kind == "config":
            layers.config(body)
            shown = {k: v for k, v in (body.get("settings") or {}).items() if k not in ("tools", "system")}
            if shown:
                yield f"#{entry.seq} [settings: {', '.join(f'{k}={v}' for k, v in shown.items())}]"
            if "system" in (body.get("settings") or {}):
                yield f"#{entry.seq} [system prompt set: {len(body['settings']['system'])} characters]"
        elif entry.kind == "note":
            yield f"#{entry.seq} [note: {body.get('text')}]"
        elif entry.kind == "stop":
            yield f"#{entry.seq} [run ended: {body.get('reason')} after {body.get('steps')} step(s)]"


class _Layers:
    """Which prefix layers each call changed from the call before, from the calls' fingerprints."""

    def __init__(self) -> None:
        self.system = ""
        self.previous: tuple[Mapping[str, Any], str] | None = None
        self.notes: dict[int, tuple[list[str], str]] = {}

    def config(self, body: Mapping[str, Any]) -> None:
        settings = body.get("settings") or {}
        if "system" in settings:
            self.system = str(settings["system"])

    def call(self, seq: int, body: Mapping[str, Any]) -> None:
        prints = body.get("fingerprint") or {}
        changed: list[str] = []
        where = ""
        if self.previous is not None and prints:
            before, old_system = self.previous
            changed = [k for k in ("tools", "system", "pins") if before.get(k) and before.get(k) != prints.get(k)]
            shared, count = body.get("shared_messages"), before.get("messages")
            if not changed and isinstance(shared, int) and isinstance(count, int) and shared < count:
                changed.append("messages")
            if "system" in changed and old_system != self.system:
                at = first_difference(old_system, self.system)
                where = f" at character {at}: now {excerpt(self.system, at)}, was {excerpt(old_system, at)}"
        self.notes[seq] = (changed, where)
        self.previous = (prints, self.system)

    def note(self, seq: object, miss: str | None) -> str:
        changed, where = self.notes.get(seq if isinstance(seq, int) else -1, ([], ""))
        if not changed:
            return ""
        # The miss cause already quotes where the system prompt changed: said once is enough.
        detail = where if where and not (miss or "").startswith("system prompt changed") else ""
        return f" · changed: {', '.join(changed)}{detail}"
