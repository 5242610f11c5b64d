"""What a run reports as it goes (events, one line each in the CLI) and how it ended (``RunResult``)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from tiny_agent.agent.control import StopReason
from tiny_agent.context.shrink.compaction import Compaction
from tiny_agent.context.tokens import CallRecord
from tiny_agent.errors import CompactionError, TinyAgentError
from tiny_agent.types import ProviderNote, RetryNotice, TextDelta, ThinkingDelta, ToolResultBlock, ToolUseBlock

__all__ = [
    "CallEvent",
    "ClearEvent",
    "CompactionEvent",
    "CompactionFailedEvent",
    "Event",
    "KeepaliveNote",
    "RunResult",
    "ToolEvent",
    "TurnEvent",
    "call_events",
]


@dataclass(frozen=True)
class TurnEvent:
    """One model call finished."""

    step: int
    call: CallRecord
    context_tokens: int
    stop_reason: str
    thinking: str = ""
    """The reply's reasoning as text (thinking, reasoning_content; "[redacted thinking]" for opaque
    blocks): chat shows it dimmed."""


@dataclass(frozen=True)
class ToolEvent:
    """One tool ran (or refused, or was not run)."""

    step: int
    call: ToolUseBlock
    result: ToolResultBlock
    seconds: float
    source: str = ""
    """The MCP server the call went to ("" for a tool of this process)."""


@dataclass(frozen=True)
class CallEvent:
    """A billed model call that is not a turn: each summary call of a compaction (one whose reply was
    a tool call and was asked again, the transcript fallback), whether the compaction then succeeded
    or failed. With ``TurnEvent``, every call the ledger records gets an event, so a line."""

    number: int
    """1 for the first call of this compaction, 2 for the next..."""
    call: CallRecord


def call_events(calls: Sequence[CallRecord]) -> list[CallEvent]:
    """An event for each of one compaction's summary calls, numbered from 1."""
    return [CallEvent(number, call) for number, call in enumerate(calls, 1)]


@dataclass(frozen=True)
class CompactionEvent:
    """A compaction happened; its sizes before and after are on ``compaction``."""

    compaction: Compaction
    calls: tuple[CallRecord, ...] = ()
    """The summary calls it made (each had its ``CallEvent`` before this), if the provider wrote it."""

    @property
    def call(self) -> CallRecord | None:
        """The call whose reply became the summary."""
        return self.calls[-1] if self.calls else None


@dataclass(frozen=True)
class KeepaliveNote:
    """What the keepalive wants the user to know: it stopped at its cap, a ping failed, or a one-hour
    cache lifetime would be cheaper than pinging (its pings are ``CallEvent``s)."""

    text: str


@dataclass(frozen=True)
class CompactionFailedEvent:
    error: CompactionError


@dataclass(frozen=True)
class ClearEvent:
    """Old tool output was replaced by stubs (the log keeps it)."""

    results: int
    tokens_before: int
    tokens_after: int


Event = (
    TurnEvent
    | CallEvent
    | ToolEvent
    | CompactionEvent
    | CompactionFailedEvent
    | ClearEvent
    | KeepaliveNote
    | TextDelta
    | ThinkingDelta
    | RetryNotice
    | ProviderNote
)


@dataclass
class RunResult:
    """How a run ended."""

    stop: StopReason
    answer: str
    steps: int
    error: TinyAgentError | None = None
    events: list[Event] = field(default_factory=list)
    detail: str = ""
    """More about the stop, for people (what the budget stood at, which calls were interrupted)."""

    @property
    def message(self) -> str:
        """One line a person can read about why the run stopped."""
        messages = {
            "done": f"done in {self.steps} step(s)",
            "step_limit": f"stopped: reached the step limit ({self.steps} steps); raise --max-steps to let it go on",
            "repeating": f"stopped at step {self.steps}: the model kept repeating the same failing call",
            "max_tokens": f"stopped at step {self.steps}: the reply was cut at the output limit; raise --max-tokens",
            "refused": f"stopped at step {self.steps}: the model refused to answer",
            "empty": f"stopped at step {self.steps}: the model returned an empty reply",
            "budget": f"stopped before step {self.steps}: the budget is spent, or would be by the next call",
            "interrupted": f"interrupted at step {self.steps}",
            "too_large": f"stopped before step {max(self.steps, 1)}",
        }
        line = messages.get(self.stop) or f"stopped by {self.stop.replace('_', ' ')} at step {self.steps}: {self.error}"
        return f"{line} ({self.detail})" if self.detail else line
