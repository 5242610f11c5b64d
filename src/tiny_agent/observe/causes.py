"""What the causes and the layer changes come to: a miss cause's category, and where a session's
system prompt kept changing (the character and both sides, as the per-turn miss line says it)."""

from __future__ import annotations

import functools
import itertools
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from tiny_agent.context.miss_text import excerpt, first_difference
from tiny_agent.store.base import CallQuery, CallRow, Store

__all__ = ["SystemChange", "miss_cause", "system_changes"]

_POSITION = re.compile(r" at character \d+$")


@functools.lru_cache(maxsize=4096)
def miss_cause(text: str) -> str:
    """The category of a diagnosed miss: its words up to the first detail.

    ``"system prompt changed at character 356: now ..."`` -> ``"system prompt changed"``;
    ``"message #7 changed: ..."`` -> ``"a message changed"``;
    ``"a compaction replaced the conversation (expected: ...)"`` -> ``"a compaction replaced the conversation"``;
    ``"tool_choice changed: ... [tool-choice-changed at tool_choice]"`` -> ``"tool_choice changed"``.

    The families the diagnosis writes (``context.byte_cause``, ``context.diagnosis``): model changed,
    another server, tools changed, system prompt changed, pinned constraints changed, thinking
    settings changed, tool_choice changed, effort changed, response format changed, cache key
    changed, a message changed, a compaction replaced the conversation, clearing old tool output
    changed the conversation, the cache entry expired, below the minimum, no cache breakpoint,
    lookback, unexplained. The simulator's position at the end of a line (`` [RULE at PATH]``) is
    never part of the category.
    """
    if text.startswith("message #"):
        return "a message changed"
    cut = min((i for i in (text.find(":"), text.find(" ("), text.find(" [")) if i >= 0), default=len(text))
    return _POSITION.sub("", text[:cut]).strip() or text


@dataclass(frozen=True)
class SystemChange:
    """One place where the system prompt changed between two calls, and how often it did there."""

    at: int
    """The first character that differs."""
    now: str
    was: str
    calls: int
    """Calls, among those examined, whose system prompt changed at this character."""

    def to_dict(self) -> dict[str, object]:
        return {"at": self.at, "now": self.now, "was": self.was, "calls": self.calls}


SAMPLE_SESSIONS = 20
"""Sessions whose system prompt texts are read to say where it changes: the config entries of a few
sessions tell the story; reading those of ten thousand would not tell it better."""


def system_changes(store: Store, sessions: Iterable[str], query: CallQuery) -> tuple[tuple[SystemChange, ...], int]:
    """Where the system prompt changed, most frequent first, and how many changes were examined.

    The texts come from the sessions' ``config`` entries (few per session): for each call the index
    flags, the text in effect at that call against the one in effect at the call before."""
    found: Counter[int] = Counter()
    sides: dict[int, tuple[str, str]] = {}
    examined = 0
    for session_id in list(sessions)[:SAMPLE_SESSIONS]:
        texts = _system_texts(store, session_id)
        rows = store.calls(CallQuery(sessions=(session_id,)))
        for before, row in itertools.pairwise(rows):
            if "system" not in row.changed or not _matches(row, query):
                continue
            old, new = _text_at(texts, before.seq), _text_at(texts, row.seq)
            if old is None or new is None or old == new:
                continue
            at = first_difference(old, new)
            examined += 1
            found[at] += 1
            sides.setdefault(at, (excerpt(new, at), excerpt(old, at)))
    changes = tuple(SystemChange(at, *sides[at], calls) for at, calls in found.most_common())
    return changes, examined


def _matches(row: CallRow, query: CallQuery) -> bool:
    """The date and model filters, on a row of a session the query chose."""
    if query.since is not None and row.at < query.since:
        return False
    if query.until is not None and row.at >= query.until:
        return False
    return query.model is None or query.model in (row.model, row.response_model)


def _system_texts(store: Store, session_id: str) -> list[tuple[int, str]]:
    out = []
    for entry in store.entries(session_id, kinds=("config",)):
        settings = entry.body.get("settings") or {}
        if "system" in settings:
            out.append((entry.seq, str(settings["system"])))
    return out


def _text_at(texts: Sequence[tuple[int, str]], seq: int) -> str | None:
    current = None
    for at, text in texts:
        if at >= seq:
            break
        current = text
    return current
