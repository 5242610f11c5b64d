"""The call index's query and rows: what ``Store.calls``, ``call_totals`` and ``events`` take and give."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["CallQuery", "CallRow", "CallTotals", "EventRow", "EventTotals"]


@dataclass(frozen=True)
class CallQuery:
    """Which calls (and events) to read: every one, or those that match every filter given."""

    sessions: tuple[str, ...] = ()
    """Full session ids; empty for every session. A fork's calls are its own: inherited ones count
    once, in the session that made them."""
    since: float | None = None
    """Unix time, inclusive: calls sent at or after it."""
    until: float | None = None
    """Unix time, exclusive."""
    workspace: str | None = None
    model: str | None = None
    """The model asked for or the model that answered."""


@dataclass(frozen=True)
class CallRow:
    """One model call as the index holds it. Counts the provider did not report are None, never 0."""

    session_id: str
    seq: int
    """Seq of the ``call`` entry."""
    at: float
    """When it was sent."""
    status: str
    """"done", "failed" (no answer; usage unknown) or "open" (in flight, or lost in a crash)."""
    purpose: str
    model: str
    response_model: str | None
    provider: str | None
    """The session's provider setting when the call was made (``anthropic``, ``openai``, ``local``, ...)."""
    workspace: str | None
    input_tokens: int | None
    output_tokens: int | None
    cache_read_tokens: int | None
    cache_write_tokens: int | None
    cost_usd: float | None
    seconds: float | None
    stop_reason: str | None
    miss: str | None
    """The diagnosed cause of a cache miss, as the per-turn line says it."""
    messages: int | None
    """Messages in the request."""
    shared_messages: int | None
    """Leading messages it shares with the previous call's request (None: first call, or not recorded)."""
    changes: tuple[str, ...] | None
    """What changed the window since the previous call ("compaction", "clear"); None: not recorded."""
    changed: tuple[str, ...]
    """Prefix layers ("tools", "system", "pins", "messages") that differ from the call before."""
    expected: bool
    """The window was meant to change before this call: a compaction or clearing, or a summary call
    on either side."""
    reasoning_tokens: int | None = None
    """Of ``output_tokens``, the thinking; None when the call did not report it."""


@dataclass(frozen=True)
class CallTotals:
    """Sums over a group of calls. Token sums count the calls that reported them."""

    key: tuple[str | None, ...]
    """One value per ``by`` key asked for, in that order."""
    calls: int = 0
    turns: int = 0
    summaries: int = 0
    """Summary calls (purpose "compaction")."""
    failed: int = 0
    open: int = 0
    unknown_usage: int = 0
    """Answered calls whose input tokens were not reported."""
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    read_known_input_tokens: int = 0
    """Input of the calls that reported their cache reads: the base of the hit rate."""
    reads_reported: int = 0
    writes_reported: int = 0
    """Calls that reported their cache reads, their cache writes (llama.cpp reports no writes)."""
    cost_usd: float = 0.0
    priced: int = 0
    """Calls with a known cost."""
    uncached_usd: float = 0.0
    """What the priced calls whose model has a unit price (``prices``) would have cost with nothing cached."""
    uncached_cost_usd: float = 0.0
    """What those same calls cost: caching saved ``uncached_usd - uncached_cost_usd``."""
    uncached_priced: int = 0
    """How many calls that is."""
    seconds: float = 0.0
    misses: int = 0
    compared: int = 0
    """Calls with a previous call to compare their layers with."""
    tools_changed: int = 0
    system_changed: int = 0
    pins_changed: int = 0
    messages_changed: int = 0
    messages_expected: int = 0
    """Of ``messages_changed``: after a compaction or clearing, or next to a summary call."""
    summary_cost_usd: float = 0.0
    after_compaction: int = 0
    """Calls whose window a compaction had just rewritten."""
    after_compaction_cost_usd: float = 0.0
    after_clear: int = 0
    after_clear_cost_usd: float = 0.0
    reasoning_tokens: int = 0
    """Of ``output_tokens``, those spent reasoning (thinking), over the calls that reported them."""
    reasoning_reported: int = 0
    first_at: float | None = None
    last_at: float | None = None
    workspace: str | None = None
    """The group's workspace (one of them, when a group spans several)."""


@dataclass(frozen=True)
class EventRow:
    """A compaction, a clearing of old tool output, or the end of a run."""

    session_id: str
    seq: int
    at: float
    kind: str
    """"compaction", "clear" or "stop"."""
    model: str | None
    """The model of the session's newest call at the time."""
    provider: str | None
    workspace: str | None
    reason: str | None
    """A stop's reason ("done", "budget", "step_limit", ...)."""
    count: int | None
    """Messages summarised (compaction), results cleared (clear), steps (stop)."""
    tokens_before: int | None
    tokens_after: int | None


@dataclass(frozen=True)
class EventTotals:
    key: tuple[str | None, ...]
    kind: str
    reason: str | None
    count: int
    tokens_saved: int
    """Sum of tokens_before - tokens_after where both are known."""
