"""One line per event: what each turn cost, what each tool did, what a compaction saved.

Pure string formatting, so a library user gets the same lines the CLI prints. Unknown figures print
as "?" rather than 0: a provider that does not report cache writes has not written zero tokens.
"""

from __future__ import annotations

import json
from collections.abc import Callable

from tiny_agent.agent.events import KeepaliveNote
from tiny_agent.agent.loop import (
    CallEvent,
    ClearEvent,
    CompactionEvent,
    CompactionFailedEvent,
    Event,
    ToolEvent,
    TurnEvent,
)
from tiny_agent.context.tokens import CallRecord, TokenLedger, same_layer, server_compaction
from tiny_agent.types import ProviderNote, RetryNotice, TextDelta, ThinkingDelta, Usage

__all__ = ["cache_savings", "format_cost", "format_event", "format_totals", "format_usage", "server_compaction_text"]


def _n(value: int | None) -> str:
    return "?" if value is None else f"{value:,}"


def _cost(value: float | None) -> str:
    return "$?" if value is None else f"${value:.4f}"


def format_usage(usage: Usage) -> str:
    """``in=5,520 (cache_read=4,600 cache_write=0) out=1,240 (thinking 1,100)``; ``in`` counts cached
    tokens too, ``out`` the thinking too (billed as output)."""
    thinking = f" (thinking {_n(usage.reasoning_tokens)})" if usage.reasoning_tokens else ""
    return (
        f"in={_n(usage.input_tokens)} (cache_read={_n(usage.cache_read_tokens)} "
        f"cache_write={_n(usage.cache_write_tokens)}) out={_n(usage.output_tokens)}{thinking}"
    )


def _call_line(label: str, call: CallRecord, note: str = "") -> str:
    prefill = f" · prefill {call.prefill_ms / 1000:.2f}s" if call.prefill_ms is not None else ""
    miss = f" · cache miss: {call.miss}" if call.miss else ""
    if call.provider_miss and not same_layer(call.miss, call.provider_miss):
        # The server's own reason beside ours, where the two disagree (both are stored).
        miss = f" · cache miss: server: {call.provider_miss}; ours: {call.miss or 'none'}"
    usage = format_usage(call.usage)
    compacted = server_compaction_text(call.usage)
    server = f" · {compacted}" if compacted else ""
    return f"[{label} · {usage} · {_cost(call.cost_usd)} · {call.seconds:.1f}s{prefill}{miss}{server}{note}]"


def server_compaction_text(usage: Usage) -> str:
    """``server compaction: context 61,200 -> 1,450 tokens`` for a call that ran one, else ""."""
    compacted = server_compaction(usage)
    if compacted is None:
        return ""
    return f"server compaction: context {_n(compacted[0])} -> {_n(compacted[1])} tokens"


def format_event(event: Event) -> str:
    match event:
        case TurnEvent(step=step, call=call):
            return _call_line(f"turn {step}", call)
        case CallEvent(number=number, call=call):
            label = "summary" if call.purpose == "compaction" else call.purpose
            summary = call.purpose == "compaction"
            note = " · replied with a tool call, not a summary" if summary and call.stop_reason == "tool_use" else ""
            return _call_line(f"{label} {number}", call, note)
        case ToolEvent(call=call, result=result, source=source):
            args = ", ".join(f"{k}={json.dumps(v, ensure_ascii=False)[:60]}" for k, v in call.input.items())
            first = result.content.splitlines()[0] if result.content else ""
            outcome = f"error: {first[:160]}" if result.is_error else f"{len(result.content):,} chars"
            where = f"[{source}] " if source else ""
            return f"  {'x' if result.is_error else '>'} {where}{call.name}({args}) -> {outcome}"
        case CompactionEvent(compaction=c, calls=calls):
            prices = [call.cost_usd for call in calls]
            total = None if None in prices else sum(p or 0.0 for p in prices)
            cost = f" · {len(calls)} summary call(s) {_cost(total)}" if calls else ""
            how = {"fold": " (thinking: kept turns folded in)", "drop_block": " (thinking: drop_block)"}
            return (
                f"[compacted · {c.compacted_messages} messages -> summary{how.get(c.strategy, '')} · "
                f"context {_n(c.tokens_before)} -> {_n(c.tokens_after)} tokens{cost}]"
            )
        case ClearEvent(results=count, tokens_before=before, tokens_after=after):
            return f"[cleared {count} old tool result(s) · context {before:,} -> {after:,} tokens · the log keeps them]"
        case KeepaliveNote(text=text):
            return f"[keepalive: {text}]"
        case CompactionFailedEvent(error=error):
            return f"[compaction failed, history kept as it was: {error}]"
        case RetryNotice(max_attempts=0, reason=reason):
            return f"[resent: {reason}]"
        case RetryNotice(attempt=attempt, max_attempts=most, wait_seconds=wait, reason=reason):
            return f"[retry {attempt + 1}/{most} in {wait:.1f}s: {reason}]"
        case ProviderNote(text=text):
            return f"[{text}]"
        case TextDelta(text=text) | ThinkingDelta(text=text):
            return text
    raise TypeError(f"unknown event {event!r}")


def format_totals(ledger: TokenLedger) -> str:
    total = ledger.total
    ratio = ledger.cache_hit_ratio
    hit = f" · cache hit {ratio:.0%}" if ratio is not None else ""
    if ledger.miss_disagreements:
        hit += f" · {ledger.miss_disagreements} miss(es) where the provider names another cause"
    unpriced = f" ({ledger.unpriced_calls} unpriced)" if ledger.unpriced_calls and ledger.total_cost_usd else ""
    return (
        f"[total · {len(ledger.calls)} calls · {format_usage(total)} · {_cost(ledger.total_cost_usd)}{unpriced}{hit}]"
    )


def cache_savings(ledger: TokenLedger, price: Callable[[Usage], float | None]) -> float | None:
    """Dollars the prompt cache saved: each call priced as if nothing were cached, minus its real cost."""
    saved = 0.0
    known = False
    for call in ledger.calls:
        usage = call.usage
        if call.cost_usd is None or usage.input_tokens is None:
            continue
        uncached = price(Usage(usage.input_tokens, usage.output_tokens, 0, 0))
        if uncached is not None:
            saved += uncached - call.cost_usd
            known = True
    return saved if known else None


def format_cost(ledger: TokenLedger, price: Callable[[Usage], float | None]) -> list[str]:
    """The session's totals for ``/cost``: tokens by class, dollars, and what caching saved."""
    total = ledger.total
    turns = sum(1 for c in ledger.calls if c.purpose == "turn")
    saved = cache_savings(ledger, price)
    ratio = ledger.cache_hit_ratio
    return [
        f"calls      {len(ledger.calls)} ({turns} turns, {len(ledger.calls) - turns} summaries)",
        f"input      {_n(total.input_tokens)} tokens, of which cache read {_n(total.cache_read_tokens)}, "
        f"cache write {_n(total.cache_write_tokens)}, uncached {_n(total.uncached_input_tokens)}",
        f"output     {_n(total.output_tokens)} tokens"
        + (f" (thinking {_n(total.reasoning_tokens)}, billed as output)" if total.reasoning_tokens else ""),
        f"cost       {_cost(ledger.total_cost_usd)}"
        + (f" ({ledger.unpriced_calls} calls unpriced)" if ledger.unpriced_calls else ""),
        f"cache      {'?' if ratio is None else f'{ratio:.0%}'} of input read from the cache; saved {_cost(saved)}",
    ]
