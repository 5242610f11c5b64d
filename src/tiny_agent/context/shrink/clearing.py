"""Making the window smaller by clearing: old tool output replaced by a stub that says how to get
it back. It only appends an entry; the log keeps every original. Clearing is not free: it rewrites
the cached prefix from the first cleared result on, so it happens in batches, when it pays.
"""

from __future__ import annotations

import json

from tiny_agent.context.entries import Clearing, Decision
from tiny_agent.context.shrink.policy import clearing_pays, decision_prices
from tiny_agent.context.shrink.shrinkable import Shrinkable
from tiny_agent.context.shrink.thinking import clearing_allowed
from tiny_agent.providers.base import Provider
from tiny_agent.types import Message, ToolResultBlock, ToolUseBlock

__all__ = ["STUB_MIN_CHARS", "clear_old_output", "plan_clearing"]

STUB_MIN_CHARS = 400
"""Results shorter than this are not worth a stub."""


def plan_clearing(ctx: Shrinkable, provider: Provider | None) -> dict[str, str]:
    """Stubs for the tool results older than ``clear_after`` turns, if clearing them all now pays."""
    config = ctx.config
    if config.clear_after is None or not clearing_allowed(provider.profile if provider is not None else None):
        return {}
    state = ctx.state
    window = state.messages[state.base :]
    turns = [i for i, m in enumerate(window) if m.role == "assistant"]
    if len(turns) <= config.clear_after:
        return {}
    horizon_index = turns[-config.clear_after]
    calls = {b.id: b for m in window for b in m.tool_uses}
    stubs: dict[str, str] = {}
    first = None
    cleared = 0
    for index, message in enumerate(window[:horizon_index]):
        for block in message.tool_results:
            if block.tool_use_id in state.stubs or len(block.content) < STUB_MIN_CHARS:
                continue
            stub = _stub(calls.get(block.tool_use_id), block)
            stubs[block.tool_use_id] = stub
            made = (Message("user", (block,)), Message.user(stub))  # measured only: nothing of them is kept
            cleared += ctx.ledger.estimate(made[:1], remember=False) - ctx.ledger.estimate(made[1:], remember=False)
            first = index if first is None else first
    if first is None or cleared < config.clear_min_tokens:
        return {}
    if provider is not None and not _rewritten_anyway(ctx, provider):
        rewritten = ctx.ledger.estimate(window[first:])
        total = ctx.context_tokens()
        if not clearing_pays(decision_prices(provider.profile), total, cleared, rewritten, config.horizon_turns):
            return {}
    return stubs


def _rewritten_anyway(ctx: Shrinkable, provider: Provider) -> bool:
    """Whether the next request writes the window anew whatever is cleared: a compaction just
    replaced it, or the cache entry has expired. Clearing then costs no extra cache write."""
    state = ctx.state
    if "compaction" in state.changes:
        return True
    if state.last_done is None:
        return False
    answered = state.last_done[1].at or state.last_done[0].at
    return ctx.clock() - answered > provider.profile.lifetime


def clear_old_output(ctx: Shrinkable, provider: Provider | None = None) -> int:
    """Clear old tool output when it pays (see ``plan_clearing``); returns how many results were cleared."""
    stubs = plan_clearing(ctx, provider)
    if stubs:
        prices = decision_prices(provider.profile) if provider is not None else None
        seen = Decision(
            "clearing",
            "clear",
            ctx.context_tokens(),
            window=ctx.context_window(provider),
            prices={k: getattr(prices, k) for k in ("input", "read", "write", "output")} if prices else {},
            messages=len(stubs),
        )
        ctx.append([seen, Clearing(stubs)])
    return len(stubs)


def _stub(call: ToolUseBlock | None, result: ToolResultBlock) -> str:
    name = call.name if call else "the tool"
    args = ", ".join(f"{k}={json.dumps(v, ensure_ascii=False)[:80]}" for k, v in (call.input.items() if call else ()))
    return (
        f"[cleared to save context: {name}({args}) returned {len(result.content):,} characters here; "
        f"call {name} again if you need them]"
    )
