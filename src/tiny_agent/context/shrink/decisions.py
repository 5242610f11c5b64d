"""The decisions a log holds: its ``decision`` entries, and for what was recorded before they were
written (sessions before 0.2), what the other entries say happened, marked guessed.

The guess knows less: the size a compaction started at (its mark's ``tokens_before``), the config's
threshold in force (the call entries record it), never the threshold the cost policy chose, the
prices it weighed, or why a compaction failed. A compaction that failed is guessed from summary
calls that no mark followed before the next turn.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from tiny_agent.context.entries import CallDone, CallOpened, Clearing, CompactionMark, ConfigChange, Decision
from tiny_agent.context.entry_codec import read
from tiny_agent.types import Entry

__all__ = ["Decided", "decisions", "decisions_of"]

NOT_RECORDED = "(not recorded: a session from before decisions were written)"


@dataclass(frozen=True)
class Decided:
    """A decision and where it is in the log (``seq`` of its entry, or of the entry it is guessed from)."""

    seq: int
    at: float
    decision: Decision
    guessed: bool = False


def decisions(entries: Iterable[Entry]) -> tuple[Decision, ...]:
    """The decisions of ``entries``, recorded or guessed, oldest first."""
    return tuple(d.decision for d in decisions_of((entry, read(entry)) for entry in entries))


def decisions_of(typed: Iterable[tuple[Entry, Sequence[Any]]]) -> list[Decided]:
    """``decisions`` over entries already read (``(entry, values)``, as ``entry_codec.read`` gives them)."""
    guess = _Guess()
    for entry, values in typed:
        for value in values:
            guess.see(entry, value)
    guess.flush()
    return guess.found


class _Guess:
    def __init__(self) -> None:
        self.found: list[Decided] = []
        self.previous: object = None
        self.settings: dict[str, Any] = {}
        self.last_call: CallOpened | None = None
        self.summary_calls: list[tuple[Entry, CallOpened, int]] = []
        """Summary calls since the newest turn call that no decision or mark accounts for yet."""
        self.opened: dict[int, CallOpened] = {}

    def see(self, entry: Entry, value: object) -> None:
        match value:
            case Decision():
                self.found.append(Decided(entry.seq, entry.at, value))
                self.summary_calls = []
            case ConfigChange(settings=settings):
                self.settings.update(settings)
            case CallOpened():
                self.opened[entry.seq] = value
                if value.purpose == "turn":
                    self.flush()
                    self.last_call = value
            case CallDone(call=call) if call in self.opened and self.opened[call].purpose == "compaction":
                self.summary_calls.append((entry, self.opened[call], value.record.usage.input_tokens or 0))
            case CompactionMark() if not isinstance(self.previous, Decision):
                self.summary_calls = []
                self.found.append(Decided(entry.seq, entry.at, self._mark(value), guessed=True))
            case Clearing(stubs=stubs) if not isinstance(self.previous, Decision):
                cleared = Decision("clearing", "clear", 0, messages=len(stubs))
                self.found.append(Decided(entry.seq, entry.at, cleared, guessed=True))
        self.previous = value

    def _base(self, policy: str, tokens: int) -> Decision:
        call = self.last_call
        keep = self.settings.get("keep_turns")
        return Decision(
            policy,
            "compact",
            tokens,
            ceiling=call.threshold if call else None,
            window=call.window if call else None,
            keep_turns=keep if isinstance(keep, int) else None,
        )

    def _mark(self, mark: CompactionMark) -> Decision:
        if mark.manual:
            base = self._base("manual", mark.tokens_before or 0)
            return replace(base, keep_turns=mark.keep_turns or base.keep_turns)
        base = self._base(str(self.settings.get("policy") or "cost"), mark.tokens_before or 0)
        return replace(base, cut=mark.cut, messages=mark.messages)

    def flush(self) -> None:
        """Summary calls no mark followed before a turn: a compaction that failed, the policy's or the user's."""
        if not self.summary_calls:
            return
        entry, call, tokens = self.summary_calls[0]
        policy = str(self.settings.get("policy") or "cost") if call.decided else "manual"
        failed = replace(self._base(policy, tokens), failed_at=tokens, error=NOT_RECORDED)
        self.found.append(Decided(entry.seq, entry.at, failed, guessed=True))
        self.summary_calls = []
