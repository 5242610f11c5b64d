"""Compaction: where to cut, what the model is asked to summarise, what the engine records itself.

Pure functions over messages; the engine decides when to call them. The cut only ever lands on a
legal boundary (an assistant message, or a user message that carries no tool results), so a tool
call and its result are never split: the kept window is legal by construction, not by repair.
The summary has two parts: the model's prose, and a record the engine builds from the log itself
(requests, files, tool calls, errors, constraints), because those must not depend on what a
model chose to remember.
"""

from __future__ import annotations

import dataclasses
import json
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from tiny_agent.types import Message, TextBlock, ToolResultBlock, ToolUseBlock

__all__ = [
    "CACHED_SUMMARY_INSTRUCTIONS",
    "FIRST_REQUEST_HEAD",
    "FIRST_REQUEST_MAX",
    "FIRST_REQUEST_TAIL",
    "RESULT_HEAD",
    "SUMMARY_INSTRUCTIONS",
    "SUMMARY_OPENING",
    "Compaction",
    "CompactionHooks",
    "CompactionStart",
    "Summarizer",
    "WorkRecord",
    "choose_cut",
    "flatten",
    "is_legal_cut",
    "result_limits",
]

Summarizer = Callable[[str], str]
"""Takes the flattened transcript to compact, returns the summary prose. Raises on failure."""

SUMMARY_OPENING = "You are compacting the conversation so far to free the context window."
"""How every summary request starts, whichever way it is sent."""
_SUMMARY_BODY = (
    "Write one dense paragraph for yourself: the goal, what was done and found, decisions made, and what "
    "remains to do next. Keep file paths, names, numbers and error messages exactly. Do not call tools. No preamble."
)
SUMMARY_INSTRUCTIONS = (
    f"{SUMMARY_OPENING} Below is the part of the transcript that will be replaced by your summary. {_SUMMARY_BODY}"
)
"""For a summary from a flattened transcript (the fallback, and custom summarizers)."""
CACHED_SUMMARY_INSTRUCTIONS = (
    f"{SUMMARY_OPENING} Summarise the conversation above; the newest turns (the last {{keep}}) will be kept "
    f"verbatim after your summary, so focus on what came before them. {_SUMMARY_BODY}"
)
"""Appended as the last user turn of the window itself, so the summary call reads the cached prefix."""

RESULT_HEAD = 1_500
"""When not every tool result fits in a transcript's room, what each keeps of its head (fewer
characters where that many heads would take more than half the room); the newest get the rest."""
_REQUEST_CHARS = 600
_NEWEST_REQUESTS = 5
"""Requests after the first kept in the record (each cut at ``_REQUEST_CHARS``); older ones are
counted, so a session of thousands of turns keeps a record of bounded size and keeps compacting."""
FIRST_REQUEST_MAX = 6_000
"""The first request, usually the task, is kept whole up to this many characters..."""
FIRST_REQUEST_HEAD = 4_500
FIRST_REQUEST_TAIL = 1_500
"""...and past it, its first and last characters: where a task says what to do, and what it ends with."""
_PATHS_SHOWN = 30


def is_legal_cut(messages: Sequence[Message], cut: int) -> bool:
    """A window may start at ``cut`` if that message does not answer calls made before it."""
    if not 0 < cut < len(messages):
        return False
    msg = messages[cut]
    return msg.role == "assistant" or not msg.tool_results


def choose_cut(messages: Sequence[Message], keep_turns: int) -> int | None:
    """Index of the first message to keep verbatim, or None when there is nothing worth compacting.

    A turn is one model response with the tool results that answer it. The newest ``keep_turns``
    turns are kept; if the user request that started them sits just before, it is kept too.
    """
    keep_turns = max(1, keep_turns)
    assistants = [i for i, m in enumerate(messages) if m.role == "assistant"]
    if len(assistants) <= keep_turns:
        return None
    cut = assistants[-keep_turns]  # an assistant message: always a legal place to start
    if cut > 1 and is_legal_cut(messages, cut - 1) and messages[cut - 1].role == "user":
        cut -= 1
    return cut


def flatten(messages: Sequence[Message], room: int | None = None) -> str:
    """A readable transcript for the summary call: roles, text, calls with arguments, results.

    ``room``: the characters the tool results may take together (None: all of them whole); only the
    results are cut to fit it (``result_limits``), each saying how much of it was left out."""
    names = {b.id: b.name for m in messages for b in m.tool_uses}
    lengths = [len(b.content) for m in messages for b in m.content if isinstance(b, ToolResultBlock)]
    limits = iter(lengths if room is None else result_limits(lengths, room))
    lines: list[str] = []
    for msg in messages:
        for block in msg.content:
            if isinstance(block, TextBlock):
                lines.append(f"{msg.role.upper()}: {block.text}")
            elif isinstance(block, ToolUseBlock):
                args = ", ".join(f"{k}={json.dumps(v, ensure_ascii=False)[:200]}" for k, v in block.input.items())
                lines.append(f"ASSISTANT called {block.name}({args})")
            elif isinstance(block, ToolResultBlock):
                status = "error" if block.is_error else "ok"
                text, keep = block.content, next(limits)
                if len(text) > keep:
                    text = text[:keep] + f" [... {len(block.content) - keep} more characters]"
                lines.append(f"RESULT of {names.get(block.tool_use_id, 'tool')} ({status}): {text}")
    return "\n".join(lines)


def result_limits(lengths: Sequence[int], room: int) -> list[int]:
    """How many characters of each result (oldest first) fit in ``room``: all of them when they do;
    else each keeps its head (``RESULT_HEAD``, or an equal share of half the room), and what is left
    goes to the newest first, whole as far as it reaches: the work goes on from the newest."""
    if not lengths or sum(lengths) <= room:
        return list(lengths)
    head = min(RESULT_HEAD, max(0, room) // (2 * len(lengths)))
    limits = [min(length, head) for length in lengths]
    left = room - sum(limits)
    for i in reversed(range(len(lengths))):
        if left <= 0:
            break
        more = min(lengths[i] - limits[i], left)
        limits[i] += more
        left -= more
    return limits


@dataclass
class WorkRecord:
    """What the engine itself saw happen, rebuilt from the log; never left to the model's memory."""

    requests: list[str] = field(default_factory=list)
    """Every request, each cut at ``_REQUEST_CHARS``."""
    first_request: str = ""
    """The first one, whole up to ``FIRST_REQUEST_MAX`` (then its head and tail)."""
    files_read: list[str] = field(default_factory=list)
    files_written: list[str] = field(default_factory=list)
    dirs_listed: list[str] = field(default_factory=list)
    tool_calls: Counter[str] = field(default_factory=Counter)
    errors: list[str] = field(default_factory=list)
    constraints: list[str] = field(default_factory=list)

    @classmethod
    def from_messages(cls, messages: Sequence[Message], pins: Sequence[str] = ()) -> WorkRecord:
        rec = cls(constraints=list(pins))
        calls: dict[str, ToolUseBlock] = {}
        for msg in messages:
            for block in msg.content:
                if isinstance(block, ToolUseBlock):
                    calls[block.id] = block
                    rec.tool_calls[block.name] += 1
                elif isinstance(block, ToolResultBlock):
                    rec._note_result(calls.get(block.tool_use_id), block)
                elif msg.role == "user" and isinstance(block, TextBlock):
                    if not rec.requests:
                        rec.first_request = _head_and_tail(block.text)
                    rec.requests.append(_clip(block.text, _REQUEST_CHARS))
        return rec

    def _note_result(self, call: ToolUseBlock | None, result: ToolResultBlock) -> None:
        name = call.name if call else "tool"
        if result.is_error:
            self.errors.append(f"{name}: {_clip(result.content.splitlines()[0] if result.content else '', 200)}")
            return
        path = str(call.input.get("path", ".")) if call else ""
        target = {"read_file": self.files_read, "write_file": self.files_written, "list_dir": self.dirs_listed}
        bucket = target.get(name)
        if bucket is not None:
            if path in bucket:
                bucket.remove(path)  # newest last: the cap keeps the most recently used paths
            bucket.append(path)

    def render(self) -> str:
        """The record as text, bounded whatever the length of the history."""
        later = self.requests[1:]
        newest = later[-_NEWEST_REQUESTS:]
        if len(later) > len(newest):
            newest = [f"({len(later) - len(newest)} earlier)", *newest]
        rows = [
            ("The first request (the task)", self.first_request),
            ("Later requests", " | ".join(newest)),
            ("Constraints (always apply)", " | ".join(self.constraints)),
            ("Files read", _paths(self.files_read)),
            ("Files written", _paths(self.files_written)),
            ("Directories listed", _paths(self.dirs_listed)),
            ("Tool calls", ", ".join(f"{n} x{c}" for n, c in sorted(self.tool_calls.items()))),
            ("Errors met", " | ".join(self.errors[-10:])),
        ]
        return "\n".join(f"- {k}: {v}" for k, v in rows if v)


def _paths(paths: Sequence[str]) -> str:
    shown = ", ".join(paths[-_PATHS_SHOWN:])
    hidden = len(paths) - _PATHS_SHOWN
    return f"{shown} (and {hidden} more)" if hidden > 0 else shown


def _head_and_tail(text: str) -> str:
    if len(text) <= FIRST_REQUEST_MAX:
        return text
    left_out = len(text) - FIRST_REQUEST_HEAD - FIRST_REQUEST_TAIL
    return (
        f"{text[:FIRST_REQUEST_HEAD]} [... {left_out:,} characters of the first request left out ...] "
        f"{text[-FIRST_REQUEST_TAIL:]}"
    )


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + "..."


SUMMARY_HEADER = "[Summary of the earlier conversation"


@dataclass(frozen=True)
class Compaction:
    """A marker in the log: messages before ``cut`` are represented by this summary from now on."""

    cut: int
    """Index (into the log's messages) of the first message kept verbatim."""
    summary: str
    """The model's prose."""
    record: str
    """The engine-built record (requests, files, tool calls, errors, constraints)."""
    tokens_before: int | None = None
    tokens_after: int | None = None
    strategy: str = ""
    """How it kept the thinking rules (``context.shrink.thinking``): "fold", "drop_block", or ""."""

    @property
    def compacted_messages(self) -> int:
        """Messages of the log now represented by this summary: all those before the cut."""
        return self.cut

    def text(self) -> str:
        """The text block that opens the window after this compaction."""
        return (
            f"{SUMMARY_HEADER}: {self.compacted_messages} messages were replaced by this summary]\n\n"
            f"{self.summary.strip()}\n\n<record>\n{self.record}\n</record>"
        )


@dataclass(frozen=True)
class CompactionStart:
    """A compaction about to ask for its summary: what hooks around it are told."""

    trigger: Literal["auto", "manual"]
    """"auto": the policy's; "manual": asked for (``Context.compact``, chat's ``/compact``)."""
    tokens_before: int
    messages: int
    """Messages of the log the summary will replace."""
    context_window: int
    threshold: int

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


class CompactionHooks(Protocol):
    """Told before and after each compaction (``agent.hooks.Hooks`` is one)."""

    def before_compaction(self, start: CompactionStart) -> str:
        """Text to add to the summary's instructions ("" for none)."""
        ...

    def after_compaction(self, start: CompactionStart, compaction: Compaction) -> None: ...
