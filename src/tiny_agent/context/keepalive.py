"""Keeping a prompt cache warm while nobody sends: whether a ping pays, when, and how long to go on.

A cache entry lives for a while after its last use (5 minutes on Anthropic and OpenAI), and each read
renews it. When the user is idle, or a tool runs for minutes, the next request would find it gone and
write the whole prefix again: (w - r) * P more than reading it, for a prefix of P tokens at the write
and read prices. A ping is a minimal request that reads exactly that prefix (max_tokens 1): it costs
about r * P, and renews the entry. Nobody knows when the user comes back, so the keepalive spends at
most what one rewrite would cost: ``cap`` pings, ``(w - r) * P / ping``, then it stops. A user who
comes back during that time pays the pings instead of the rewrite; one who never comes back costs at
most the cap (the ski-rental bound: never more than twice what knowing the future would cost).

The ping is rendered by the engine from the window: the previous request's messages (the window up
to its newest model reply, which is not cached yet), the same tools, system and cache marks, so it
reads the entry the next real request reads, and the log stays legal (a pending tool call is never
sent without its result). It is recorded as a call with purpose "keepalive", on its own line.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Protocol

from tiny_agent.context.cache import plan_cache
from tiny_agent.context.shrink.policy import decision_prices
from tiny_agent.context.state import State
from tiny_agent.context.tokens import CallRecord
from tiny_agent.providers.base import Provider
from tiny_agent.providers.thinking_sent import sent_max_tokens
from tiny_agent.types import ModelResponse, Prompt

__all__ = ["MARGIN_SECONDS", "PURPOSE", "Keepable", "Plan", "ping", "ping_prompt", "plan"]

PURPOSE = "keepalive"
MARGIN_SECONDS = 30.0
"""How long before the entry would expire the ping is sent (a request takes a moment to arrive)."""


class Keepable(Protocol):
    """What the keepalive needs from the engine (``Context`` is one)."""

    @property
    def state(self) -> State: ...

    def prompt(self) -> Prompt: ...

    def call(self, provider: Provider, prompt: Prompt, purpose: str) -> ModelResponse: ...


@dataclass(frozen=True)
class Plan:
    """What the keepalive does next for the cache entry the newest request left."""

    due: float | None
    """When to ping (Unix time); None: not at all (it does not pay, or the cap is spent)."""
    reason: str
    prefix_tokens: int = 0
    ping_usd: float = 0.0
    """One ping: a read of the prefix and its output cap (one token, or the thinking budget beside it)."""
    rewrite_usd: float = 0.0
    """What the next request pays more if the entry expires: the prefix written instead of read."""
    cap: int = 0
    """Pings in one idle stretch: their cost stays within one rewrite."""
    sent: int = 0
    """Pings already sent since the last real request."""
    one_hour_usd: float | None = None
    """What writing the prefix with a one-hour lifetime would cost more than with five minutes, when
    that is less than an hour of pings (None: not offered, or not cheaper)."""


def plan(ctx: Keepable, provider: Provider, now: float) -> Plan:
    """Whether, and when, to ping next (``now`` only decides whether the entry is still alive)."""
    profile = provider.profile
    state = ctx.state
    lifetime = profile.lifetime
    if state.last_done is None or not math.isfinite(lifetime):
        return Plan(None, "no cache entry to keep" if state.last_done is None else "the cache does not expire")
    opened = state.last_done[0]
    sent = _pings_since_a_request(state)
    last = _last_request(state)
    prefix = (last.usage.input_tokens or 0) if last is not None else 0
    if prefix < profile.cache.min_tokens or prefix == 0:
        return Plan(None, f"the prefix ({prefix:,} tokens) is below what the cache keeps", prefix)
    expires = opened.at + lifetime
    if now >= expires:
        return Plan(None, "the cache entry has already expired", prefix, sent=sent)
    prices = decision_prices(profile)
    # A thinking budget goes out with the ping too (another budget would lose the message cache), and
    # its reply may think up to it: a ping is priced at all the output it may bill.
    ping_usd = prices.read * prefix + prices.output * sent_max_tokens(1, profile.thinking, profile.thinking_caps)
    rewrite_usd = (prices.write - prices.read) * prefix
    cap = int(rewrite_usd // ping_usd) if ping_usd > 0 else 0
    one_hour = None
    if profile.cache.mode == "explicit" and profile.cache_ttl == "5m":
        premium = (prices.write_1h - prices.write) * prefix
        if premium < math.ceil(3600 / lifetime) * ping_usd:
            one_hour = premium
    base = Plan(None, "", prefix, ping_usd, rewrite_usd, cap, sent, one_hour)
    if cap < 1:
        return dataclasses.replace(base, reason="a ping costs more than the rewrite it would save")
    if sent >= cap:
        return dataclasses.replace(base, reason=f"{sent} ping(s) already cost what one rewrite would")
    return dataclasses.replace(base, due=max(now, expires - MARGIN_SECONDS), reason="the entry expires soon")


def ping_prompt(ctx: Keepable) -> Prompt:
    """The ping: the previous request's messages (the window before its newest model reply), its
    tools, system and cache marks, one output token."""
    window = ctx.prompt()
    newest = max((i for i, m in enumerate(window.messages) if m.role == "assistant"), default=len(window.messages))
    messages = window.messages[:newest]
    return dataclasses.replace(window, messages=messages, cache=plan_cache(messages), max_tokens=1)


def ping(ctx: Keepable, provider: Provider) -> ModelResponse:
    """Send the ping, on the record (purpose "keepalive"); its reply is not part of the conversation."""
    return ctx.call(provider, ping_prompt(ctx), PURPOSE)


def _pings_since_a_request(state: State) -> int:
    sent = 0
    for call in reversed(state.ledger.calls):
        if call.purpose != PURPOSE:
            break
        sent += 1
    return sent


def _last_request(state: State) -> CallRecord | None:
    for call in reversed(state.ledger.calls):
        if call.purpose != PURPOSE:
            return call
    return None
