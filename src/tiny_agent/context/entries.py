"""The log's entries as typed values: one frozen dataclass per kind, to and from their stored JSON.

The store keeps ``(kind, body)`` with a plain JSON body; everything above it works on these
values, so a ``match`` over them is the one place an entry changes the state (``State.apply``).
``context.entry_codec`` turns them into their stored JSON and back.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from tiny_agent.context.config import CONFIG_KEYS
from tiny_agent.context.tokens import CallRecord
from tiny_agent.types import Block, Message, ToolResultBlock

__all__ = [
    "ENGINE_SETTINGS",
    "CallDone",
    "CallFailed",
    "CallOpened",
    "Clearing",
    "CompactionMark",
    "ConfigChange",
    "Decision",
    "EntryError",
    "FieldRefused",
    "Note",
    "PinChange",
    "Response",
    "RunChange",
    "RunStop",
    "ToolResult",
    "TypedEntry",
    "UserInput",
    "split_settings",
]

ENGINE_SETTINGS = frozenset({"system", "tools"}) | CONFIG_KEYS
"""Settings the engine reads (the system prompt, the tools, ``ContextConfig``). Every other setting
belongs to whoever runs the session (provider, model, workspace, rules) and lives beside them."""


def split_settings(settings: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The engine's settings, and the run's (every other key)."""
    engine = {k: v for k, v in settings.items() if k in ENGINE_SETTINGS}
    return engine, {k: v for k, v in settings.items() if k not in ENGINE_SETTINGS}


class EntryError(ValueError):
    """A stored body that cannot be read as its kind."""


@dataclass(frozen=True)
class UserInput:
    kind: ClassVar[str] = "user"
    content: tuple[Block, ...]


@dataclass(frozen=True)
class Response:
    """A model's reply to a turn; ``call`` is the seq of the ``call`` entry that asked for it."""

    kind: ClassVar[str] = "response"
    content: tuple[Block, ...]
    call: int | None = None

    @property
    def message(self) -> Message:
        return Message("assistant", self.content)


@dataclass(frozen=True)
class ToolResult:
    kind: ClassVar[str] = "tool_result"
    block: ToolResultBlock


@dataclass(frozen=True)
class CompactionMark:
    """From here on the messages before ``cut`` (an entry seq) are represented by this summary."""

    kind: ClassVar[str] = "compaction"
    cut: int
    messages: int
    """How many messages of the log it replaces."""
    summary: str
    record: str
    tokens_before: int | None = None
    tokens_after: int | None = None
    manual: bool = False
    """Asked for (``Context.compact``, chat's ``/compact``), not decided by the policy: a replay does
    it again where it happened."""
    keep_turns: int | None = None
    """The turns a manual compaction was asked to keep (None: the config's)."""
    summarizer: str = "provider"
    """How a manual compaction got its summary: "provider" (the cached summary, else the transcript),
    "transcript" (the engine's transcript summarizer), "custom" (a function of the caller's)."""
    counted: bool = False
    """``tokens_after`` is the provider's own count of the new window (``ProviderProfile.free_count``),
    not an estimate: the size of the requests after it starts from there."""
    strategy: str = ""
    """How it kept the thinking rules: "fold" (kept turns folded into the summary), "drop_block", or ""."""


@dataclass(frozen=True)
class Decision:
    """The policy shrank the window, or tried to: what it saw, what it chose, and whether that failed.

    Written where the decision is made (``shrink.summarize``, ``shrink.clearing``), once its outcome
    is known: before the ``compaction`` or ``clear`` entry it led to, or in place of it when it
    failed. A decision is no message: it never changes the window."""

    kind: ClassVar[str] = "decision"
    policy: str
    """The compaction policy's name (``shrink.registry``); "manual" for a compaction asked for,
    "clearing" for the clearing of old tool output (``ContextConfig.clear_after``)."""
    action: str
    """"compact" or "clear"."""
    tokens: int
    """The context's size when it decided (tokens)."""
    threshold: int | None = None
    """The threshold it compacted at: the cost policy's choice, else the config's."""
    ceiling: int | None = None
    """The config's threshold (``compact_at`` in tokens): the hard limit."""
    window: int | None = None
    keep_turns: int | None = None
    prices: Mapping[str, float] = field(default_factory=dict)
    """Dollars per token of each class it weighed (input, read, write, output); empty when unpriced."""
    cut: int | None = None
    """The seq of the first entry the compaction keeps."""
    messages: int = 0
    """Messages it replaces (a compaction), results it clears (a clearing)."""
    summarizer: str = ""
    """Where the summary came from: "cached" (the window's end, a cache read), "transcript", "custom"."""
    failed_at: int | None = None
    """The context's size when it failed (tokens); None when it did not. The policy's next try waits
    for a tenth more."""
    error: str = ""


@dataclass(frozen=True)
class Clearing:
    """Old tool results replaced in the window by a stub each (by tool_use id); the log keeps them."""

    kind: ClassVar[str] = "clear"
    stubs: Mapping[str, str]


@dataclass(frozen=True)
class CallOpened:
    """A request about to be sent: committed before the send, so a crash mid-call leaves a trace."""

    kind: ClassVar[str] = "call"
    purpose: str
    model: str
    chars: int
    fingerprint: Mapping[str, Any]
    server: str = ""
    """Where the cache lives, when it is one server's memory."""
    provider: str = ""
    changes: tuple[str, ...] = ()
    """What changed the window since the previous call ("compaction", "clear")."""
    shared_messages: int | None = None
    """Leading messages shared with the previous call's request; None for a session's first call
    (or when the previous request is not at hand to compare with)."""
    window: int | None = None
    """The context window the engine sized this request against (tokens)."""
    threshold: int | None = None
    """The compaction threshold in force (tokens)."""
    decided: bool = True
    """Whether clearing and compaction were considered before this call (``maybe_clear``,
    ``maybe_compact``); a replay considers them again only where the recording did."""
    request: Mapping[str, Any] | None = None
    """The body as sent, where the log cannot redraw it: a summary call's (another prompt than the
    window's), or a call another program made (``observe.record``)."""


@dataclass(frozen=True)
class CallDone:
    kind: ClassVar[str] = "call_done"
    call: int
    record: CallRecord
    reply: tuple[Block, ...] | None = None
    """What a call that is not a turn (a summary) answered; a turn's answer is its ``Response``."""


@dataclass(frozen=True)
class CallFailed:
    kind: ClassVar[str] = "call_failed"
    call: int
    error: str


@dataclass(frozen=True)
class FieldRefused:
    """``model`` answered a 400 naming a request field tiny-agent can do without (a prompt-cache
    field): the session's later requests to that model leave it out, after a resume too."""

    kind: ClassVar[str] = "refused"
    model: str
    field: str
    error: str = ""


@dataclass(frozen=True)
class PinChange:
    kind: ClassVar[str] = "pin"
    add: str | None = None
    remove: str | None = None


@dataclass(frozen=True)
class ConfigChange:
    """Engine settings that changed (see ``ENGINE_SETTINGS``)."""

    kind: ClassVar[str] = "config"
    settings: Mapping[str, Any]


@dataclass(frozen=True)
class RunChange:
    """Settings of whoever runs the session (provider, model, workspace, rules) that changed."""

    kind: ClassVar[str] = "run"
    settings: Mapping[str, Any]


@dataclass(frozen=True)
class Note:
    kind: ClassVar[str] = "note"
    text: str


@dataclass(frozen=True)
class RunStop:
    """How a run ended: the stop reason, the steps it took, and more for people."""

    kind: ClassVar[str] = "stop"
    reason: str
    steps: int = 0
    detail: str = ""


TypedEntry = (
    UserInput
    | Response
    | ToolResult
    | CompactionMark
    | Clearing
    | Decision
    | CallOpened
    | CallDone
    | CallFailed
    | FieldRefused
    | PinChange
    | ConfigChange
    | RunChange
    | Note
    | RunStop
)
