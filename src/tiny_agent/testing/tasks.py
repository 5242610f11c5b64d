"""A scripted model that reads the request like a model would, on either wire.

A task is the user request that starts it and its steps; a step is the tool calls of one reply
(several = parallel calls). Which step comes next is read from the request: a call is done once
any result for it has come back (results seen in an earlier request count too, since a compaction
replaces them by a summary). When every step is done the task's answer ends the turn. A summary
request (the engine's summary instructions at the end of the window, or a flattened
``<transcript>`` with tools forbidden) gets a summary of a fixed length.

Nothing depends on the window beyond which results it has seen, so the same task gives the same
replies under every context policy: that is what lets two runs of it be compared.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from tiny_agent.context.shrink.compaction import SUMMARY_OPENING
from tiny_agent.types import Block, TextBlock, ToolUseBlock

__all__ = ["Call", "ScriptedTask", "Task", "is_summary_request"]

_FOLDED = re.compile(r"^RESULT \((?:ok|error)\) of (\S+):$", re.MULTILINE)
Call = tuple[str, Mapping[str, Any]]
"""A tool name and its arguments."""


@dataclass(frozen=True)
class Task:
    request: str
    """The user text that starts the task (found anywhere in a user message)."""
    steps: Sequence[Sequence[Call]]
    answer: str = "Done."
    notes: Sequence[str] = ()
    """Text the model writes beside each step's calls (cycled); none by default."""


@dataclass
class ScriptedTask:
    """The model of one conversation: call ``reply(body, wire)`` for each request, in order."""

    tasks: Sequence[Task]
    summary_words: int = 60
    """Length of every summary (the summary text is the same each time, so runs compare)."""
    prefix: str = "toolu"
    """Tool call ids are ``<prefix>_t<task>s<step>c<call>``: stable across runs and policies."""
    _done: set[str] = field(default_factory=set)
    _started: list[int] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def reply(self, body: Mapping[str, Any], wire: str) -> tuple[tuple[Block, ...], str]:
        """The reply's blocks and its stop reason ("tool_use" or "end_turn")."""
        with self._lock:
            if is_summary_request(body, wire):
                return (TextBlock(summary_text(self.summary_words)),), "end_turn"
            for text, result_id in _seen(body, wire):
                if text is not None:
                    for index, task in enumerate(self.tasks):
                        if task.request in text and index not in self._started:
                            self._started.append(index)
                if result_id is not None:
                    self._done.add(result_id)
            if not self._started:
                return (TextBlock("There is no task to work on."),), "end_turn"
            number = self._started[-1]
            task = self.tasks[number]
            for s, step in enumerate(task.steps):
                ids = [f"{self.prefix}_t{number}s{s}c{c}" for c in range(len(step))]
                missing = [(i, call) for i, call in zip(ids, step, strict=True) if i not in self._done]
                if missing:
                    note = (TextBlock(task.notes[s % len(task.notes)]),) if task.notes else ()
                    calls = tuple(ToolUseBlock(i, name, dict(args)) for i, (name, args) in missing)
                    return (*note, *calls), "tool_use"
            return (TextBlock(task.answer),), "end_turn"


def summary_text(words: int) -> str:
    base = "The user asked for a tour of the workspace files; the steps so far went as planned and notes were kept"
    pieces = base.split()
    return "Summary: " + " ".join(pieces[i % len(pieces)] for i in range(max(1, words))) + "."


def is_summary_request(body: Mapping[str, Any], wire: str) -> bool:
    """The engine asks for a summary at the end of the window (a cache read), or from a transcript."""
    messages = list(body.get("messages") or [])
    conversation = [m for m in messages if m.get("role") != "system"]
    if conversation and conversation[-1].get("role") == "user":
        texts = list(_texts(conversation[-1]))
        if texts and SUMMARY_OPENING in texts[-1]:
            return True
    choice = body.get("tool_choice")
    forbidden = choice == "none" or (isinstance(choice, Mapping) and choice.get("type") == "none")
    return forbidden and any("<transcript>" in t for m in conversation for t in _texts(m))


def _texts(message: Mapping[str, Any]) -> Iterator[str]:
    content = message.get("content")
    if isinstance(content, str):
        yield content
    elif isinstance(content, list):
        for block in content:
            if isinstance(block, Mapping) and block.get("type") == "text":
                yield str(block.get("text", ""))


def _seen(body: Mapping[str, Any], wire: str) -> Iterator[tuple[str | None, str | None]]:
    """(user text, None) and (None, id of a call with a result), in request order."""
    for message in body.get("messages") or []:
        role = message.get("role")
        if role == "tool":  # OpenAI's tool message (the Anthropic wire has no such role)
            yield None, str(message.get("tool_call_id"))
            continue
        if role != "user":
            continue
        content = message.get("content")
        if isinstance(content, list):
            for block in content:
                if isinstance(block, Mapping) and block.get("type") == "tool_result":
                    yield None, str(block.get("tool_use_id"))
        for text in _texts(message):
            yield text, None
            # A result folded into a summary as text (``context.shrink.thinking.fold_text``) was seen too.
            for found in _FOLDED.finditer(text):
                yield None, found.group(1)
