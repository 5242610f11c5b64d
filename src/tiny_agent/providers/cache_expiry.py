"""The one cause of a miss that is not in the bytes but in the clock: the previous request's cache
entries outlived. A cache entry lives its TTL from its last write or read (Anthropic: 5 minutes, or
an hour for a ``ttl: "1h"`` breakpoint; an automatic cache its own lifetime); a request sent later
than that reads nothing, whatever it shares. The per-call diagnosis, ``lint`` (on a session, where
the times are known) and the view ask this one function, as they ask ``cache_breaks`` for the bytes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tiny_agent.providers.cache_breaks import Break
from tiny_agent.providers.cache_rules import CacheRules
from tiny_agent.providers.prefix import breakpoints
from tiny_agent.providers.wire import prefix_blocks
from tiny_agent.types import Wire

__all__ = ["EXPIRED", "expired", "lifetime_of"]

EXPIRED = "cache-expired"


def lifetime_of(before: Mapping[str, Any], wire: Wire, rules: CacheRules) -> float:
    """Seconds the longest-lived entry ``before`` wrote lives: its longest breakpoint TTL (5 minutes
    where it marks nothing, or on an automatic cache, whose rules give both TTLs its lifetime)."""
    marks = breakpoints(before, prefix_blocks(before, wire))
    return max(rules.ttl_seconds[ttl] for ttl in {t for _, t in marks} or {"5m"})


def expired(before: Mapping[str, Any], idle: float, wire: Wire, rules: CacheRules) -> Break | None:
    """The expiry, when ``idle`` seconds passed between the answer to ``before`` and the next request
    is longer than what ``before`` wrote lives; None while it is alive."""
    lifetime = lifetime_of(before, wire, rules)
    if idle <= lifetime:
        return None
    blocks = prefix_blocks(before, wire)
    message = f"the cache entry expired: {idle:,.0f}s since the previous request (lifetime {lifetime:,.0f}s)"
    return Break(EXPIRED, "$", message, sum(b.tokens for b in blocks), excerpt=f"{idle:,.0f}s > {lifetime:,.0f}s")
