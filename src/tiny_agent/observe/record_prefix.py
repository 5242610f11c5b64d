"""What the recorder reads off a body it stores: its prefix layers' fingerprint, the messages it
shares with the body before it, and why it read less of the cache than that body left there.

A call ``tiny-agent record`` stored was not built by the engine, so it has none of the engine's
fingerprints or diagnosis (``context.cache``, ``context.diagnosis``); these are worked out from
the bodies instead, in the same fields, so ``stats`` and the view count a recorded session's layer
changes and misses as they do a tiny-agent session's. The cause of a miss is the one simulator's
(``providers.cache_breaks``, ``cache_expiry``), between the body and the previous body of the same wire
(a model change on it is a cause), in the per-call diagnosis's words (``context.byte_cause``), as lint
and the view find it. What the previous call left cached is what it read and wrote where only marks
are cached, its whole prompt where caching is automatic.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from typing import Any

from tiny_agent.context.byte_cause import Side, cause_words, leading_break, position
from tiny_agent.context.diagnosis import read_enough
from tiny_agent.errors import TinyAgentError
from tiny_agent.providers.cache_breaks import prefix_breaks
from tiny_agent.providers.cache_expiry import expired
from tiny_agent.providers.prefix import block_tokens, canonical
from tiny_agent.providers.registry import offline_profile
from tiny_agent.providers.remark import unmarked
from tiny_agent.providers.wire import wire_of
from tiny_agent.types import Usage

__all__ = ["body_fingerprint", "recorded_miss", "shared_messages"]


def recorded_miss(
    before: tuple[Mapping[str, Any], Usage, float] | None,
    body: Mapping[str, Any],
    usage: Usage,
    wire: str,
    model: str,
    now: float | None = None,
) -> str | None:
    """The cause of this call's miss in one line, as the per-call diagnosis words it (the simulator's
    leading break and its position, or the expiry when ``now`` is known), or None when it read what
    the previous call (``before``: its body, usage and answer time) left cached, or there is none."""
    if before is None or usage.cache_read_tokens is None:
        return None
    old_body, old, answered = before
    try:
        rules = offline_profile(wire, model).cache
    except TinyAgentError:
        return None
    if wire_of(wire).marks_required or rules.mode == "explicit":
        left = (old.cache_read_tokens or 0) + (old.cache_write_tokens or 0)
    else:
        left = old.input_tokens or 0
    if left < rules.min_tokens or read_enough(usage.cache_read_tokens, left, rules):
        return None
    lead = leading_break(prefix_breaks(old_body, body, wire, rules), wire)
    if lead is not None:
        sides = [Side(b, None, body_fingerprint(b, wire)) for b in (old_body, body)]
        return cause_words(lead, sides[0], sides[1], wire) + position(lead)
    gone = expired(old_body, now - answered, wire, rules) if now is not None else None
    if gone is not None:
        return gone.message + position(gone)
    return f"read less than the previous request left cached ({usage.cache_read_tokens:,} of {left:,} tokens)"


def body_fingerprint(body: Mapping[str, Any], wire: str) -> dict[str, Any]:
    """Hashes of the body's prefix layers without its marks, as ``context.cache.fingerprint`` keeps
    them: tools, their names, system, pins (a program has none), the conversation's count and chain."""
    blocks = wire_of(wire).prefix_blocks(unmarked(body, wire), block_tokens)
    chain = _chain(_conversation(body, wire))
    names = [
        t.get("name") or (t.get("function") or {}).get("name") for t in body.get("tools") or [] if isinstance(t, dict)
    ]
    return {
        "tools": _digest([b.key for b in blocks if b.layer == "tools"]),
        "tool_names": [str(n) for n in names if n],
        "system": _digest([b.key for b in blocks if b.layer == "system"]),
        "pins": "",
        "messages": len(chain),
        "chain": chain[-1] if chain else "",
    }


def shared_messages(before: Mapping[str, Any] | None, body: Mapping[str, Any], wire: str) -> int | None:
    """Leading conversation messages ``body`` shares with ``before`` (None: no body before it)."""
    if before is None:
        return None
    common = 0
    for a, b in zip(_chain(_conversation(before, wire)), _chain(_conversation(body, wire)), strict=False):
        if a != b:
            break
        common += 1
    return common


def _conversation(body: Mapping[str, Any], wire: str) -> list[Any]:
    messages = unmarked(body, wire).get("messages") or []
    return list(messages[wire_of(wire).conversation_start(body) :])


def _chain(messages: Sequence[Any]) -> list[str]:
    chain: list[str] = []
    for message in messages:
        chain.append(_digest([chain[-1] if chain else "", canonical(message)]))
    return chain


def _digest(payload: Any) -> str:
    return hashlib.sha256(canonical(payload).encode("utf-8", "surrogatepass")).hexdigest()[:16]
