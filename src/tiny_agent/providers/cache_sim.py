"""A billing simulator for prompt caching, written from the providers' published rules.

Feed it the request bodies of one conversation on one wire, each with the time it was sent and the
output it produced; it answers, per request, how many input tokens were billed uncached, read from
the cache and written to it, and what that cost. It is the instrument that prices the same task
under different context policies, so every policy is counted the same way.

Anthropic (explicit breakpoints), per request, prefix order tools -> system -> messages:
- a cache entry is the hash of the prefix up to and including a block marked ``cache_control``
  (the markers themselves are not part of the hash); a top-level ``cache_control`` marks the last block;
- a read walks back from each breakpoint, the breakpoint itself first, at most 20 blocks, for an
  entry an earlier request wrote and that is still alive; the longest such prefix is read;
- every breakpoint past the read whose prefix reaches the model's minimum is written; below the
  minimum nothing is written or read; the write is billed 1.25x (2x up to the last ``ttl: "1h"``
  breakpoint), the read 0.1x, the rest 1x;
- an entry lives 5 minutes (1 hour with ``ttl: "1h"``) from its last write or read;
- ``model`` seeds the prefix; ``tool_choice``, ``thinking`` and ``output_config`` (the effort) sit
  between system and messages, so changing them invalidates the messages only, as the docs'
  invalidation table says. Every wire's settings are its table of breaks' (``providers/<wire>/breaks.py``,
  which ``lint`` and the miss line read): one list, so a change ``lint`` names is a miss here too.
- More than 4 breakpoints, or a 1h breakpoint after a 5m one, is a 400: ``SimulationError``.

OpenAI-style automatic caching: every request whose prompt reaches the minimum (1,024) is cached
whole; a later request reads the longest prefix it shares with a live earlier one, rounded down to
a multiple of 128 tokens, at the model's cached-input price, with no write charge. Entries live 5
minutes from their last use (the lower bound of the published "5 to 10 minutes").

OpenAI GPT-5.6+ (explicit, the SDK's ``PromptCacheOptions``), per request, prefix order tools ->
messages (the system message first among them):
- a breakpoint is a message with ``prompt_cache_breakpoint`` on a content part (the prefix up to the
  end of that message); with ``prompt_cache_options.mode`` "explicit" those are all, otherwise
  (implicit, the default) OpenAI adds one of its own, here at the last block;
- a read matches only at one of the request's latest 80 breakpoints (no lookback from them, however
  far back they are): the longest live entry at one of them is read, at 0.1x;
- the latest four breakpoints are written (three and the implicit one in implicit mode), each whose
  prefix reaches the minimum (1,024); a write is billed 1.25x; an entry lives 30 minutes from its
  last write or read; with mode "explicit" and no breakpoint nothing is cached at all;
- ``prompt_cache_key`` routes the request: a different key is a different cache.

Not modelled: the unconfirmed rule that a run of ``tool_use`` (or ``tool_result``) blocks counts as
one lookback position; that an entry is readable only once the response writing it has begun (the
requests here are sequential); a GPT-5.6 mark on a content part other than a message's last (it is
taken as the end of its message). Breakpoints at or before the read are refreshed for free. Tiered
prices (over 200k input tokens) are genai-prices' to apply.

Token counts come from ``providers.prefix`` (ceil(canonical JSON characters / 4) per block). The
unit of a change is one block: a real cache matches token by token, so a block that changes near
its end reads a little more in reality than here.
"""

from __future__ import annotations

import dataclasses
import hashlib
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from tiny_agent.providers.cache_bill import GenaiPricer, Pricer, Prices, SimCall, total
from tiny_agent.providers.cache_breaks import setting_value, wire_breaks
from tiny_agent.providers.cache_rules import CacheRules, Ttl
from tiny_agent.providers.prefix import Counter, PrefixBlock, SimulationError, block_tokens, canonical
from tiny_agent.providers.wire import cache_rules, wire_of
from tiny_agent.types import Wire

__all__ = [
    "GenaiPricer",
    "Pricer",
    "Prices",
    "SimCall",
    "SimulationError",
    "Simulator",
    "simulate",
    "total",
]


@dataclass
class _Entry:
    expires: float
    ttl: Ttl


@dataclass(frozen=True)
class _Seen:
    """What the previous request left in the cache, to explain the next one's miss."""

    hashes: list[str]
    keys: list[str]
    settings: str
    cached: int
    """Tokens of the longest prefix it read or wrote."""
    top: str
    """Hash of that prefix."""


class Simulator:
    """The cache state of one conversation on one wire; ``send`` each request in time order."""

    def __init__(
        self,
        wire: Wire,
        model: str,
        *,
        pricer: Pricer | None = None,
        rules: CacheRules | None = None,
        min_tokens: Mapping[str, int] | None = None,
        counter: Counter = block_tokens,
    ) -> None:
        """``counter`` gives a block's tokens: ``prefix``'s estimator by default, or a tokenizer."""
        self.wire: Wire = wire
        self.format = wire_of(wire)
        self.counter = counter
        self.model = model
        self.rules = rules or cache_rules(model, wire, min_tokens)
        self.pricer = pricer or GenaiPricer(model, wire)
        self.calls: list[SimCall] = []
        self._entries: dict[str, _Entry] = {}
        self._last = -math.inf
        self._seen: _Seen | None = None

    def send(self, at: float, body: Mapping[str, Any], output_tokens: int = 0, label: str = "") -> SimCall:
        """Bill one request sent at ``at`` seconds that produced ``output_tokens``."""
        if at < self._last:
            raise SimulationError(f"requests must come in time order: {at} after {self._last}")
        self._last = at
        blocks = self.format.prefix_blocks(body, self.counter)
        hashes, cum, settings = self._chain(body, blocks)
        seen = self._seen
        was_alive = seen is not None and self._alive(seen.top, at) is not None
        marks: list[tuple[int, Ttl]] = []
        if self._explicit_cache:
            found = self.format.cache_marks(body, blocks, self.rules)
            marks = found.all
            read, w5, w1, top = self._explicit(at, found.read, found.written, hashes, cum, found.implicit)
        else:
            (read, top), w5, w1 = self._openai(at, hashes, cum), 0, 0
        miss = self._miss(blocks, hashes, cum, settings, [i for i, _ in marks], read, was_alive)
        if top >= 0:  # a request that cached nothing (a side call under the minimum) is no reference
            cached = cum[top] // self.rules.increment * self.rules.increment
            self._seen = _Seen(hashes, [b.key for b in blocks], settings, cached, hashes[top])
        draft = SimCall(at, cum[-1] if cum else 0, read, w5, w1, output_tokens, 0.0, label, miss)
        call = dataclasses.replace(draft, usd=self.pricer(draft))
        self.calls.append(call)
        return call

    def _chain(self, body: Mapping[str, Any], blocks: list[PrefixBlock]) -> tuple[list[str], list[int], str]:
        """Cumulative prefix hash and token count after each block, and the settings the wire's table of
        breaks names (``cache_breaks``), each hashed in front of the level it invalidates."""
        levels = {level: self._settings(body, level) for level in ("tools", "system", "messages")}
        h = _hash("", canonical({"model": body.get("model", self.model), **levels["tools"]}))
        settings = canonical(levels)
        hashes: list[str] = []
        cum: list[int] = []
        tokens = 0
        ahead = ["system", "messages"]
        for block in blocks:
            while ahead and block.layer in ahead:  # a block of this level (or a later one): its settings come first
                h = _hash(h, canonical(levels[ahead.pop(0)]))
            h = _hash(h, block.key)
            tokens += block.tokens
            hashes.append(h)
            cum.append(tokens)
        return hashes, cum, settings

    def _settings(self, body: Mapping[str, Any], level: str) -> dict[str, Any]:
        """The values of the settings that invalidate the cache from ``level`` on (the model aside: it
        seeds the hash) and that this cache keys on, a left-out one as the model takes it."""
        return {
            s.path: setting_value(body, s, self.rules.thinks_by_default)
            for s in wire_breaks(self.wire).settings
            if s.level == level and s.path != "model" and s.path not in self.rules.unkeyed_settings
        }

    @property
    def _explicit_cache(self) -> bool:
        """Only the request's breakpoints are cached (the wire says so, or the model's rules do)."""
        return self.format.marks_required or self.rules.mode == "explicit"

    def _alive(self, key: str, at: float) -> _Entry | None:
        entry = self._entries.get(key)
        return entry if entry is not None and at <= entry.expires else None

    def _explicit(
        self,
        at: float,
        marks: list[tuple[int, Ttl]],
        written_marks: list[tuple[int, Ttl]],
        hashes: list[str],
        cum: list[int],
        implicit: int = -1,
    ) -> tuple[int, int, int, int]:
        """Breakpoint caching: reads from ``marks`` (each looking back the rules' blocks; the block
        ``implicit`` without limit), writes at ``written_marks``. (read, 5m write, 1h write, index of
        the longest prefix now cached)."""
        hit = -1
        for mark, _ in marks:
            reach = mark + 1 if mark == implicit else self.rules.lookback_blocks
            for j in range(mark, max(-1, mark - reach), -1):
                if self._alive(hashes[j], at):
                    hit = max(hit, j)
                    break
        read = cum[hit] if hit >= 0 else 0
        written = [(i, ttl) for i, ttl in written_marks if cum[i] >= self.rules.min_tokens]
        top = max((i for i, _ in written), default=-1)
        top_1h = max((i for i, t in written if t == "1h"), default=-1)
        write = cum[top] - read if top > hit else 0
        write_1h = cum[top_1h] - read if top_1h > hit else 0
        if hit >= 0:
            entry = self._entries[hashes[hit]]
            entry.expires = max(entry.expires, at + self.rules.ttl_seconds[entry.ttl])
        for i, ttl in written:
            old = self._alive(hashes[i], at)
            expires = at + self.rules.ttl_seconds[ttl]
            self._entries[hashes[i]] = _Entry(max(expires, old.expires) if old else expires, ttl)
        return read, write - write_1h, write_1h, max(top, hit)

    def _openai(self, at: float, hashes: list[str], cum: list[int]) -> tuple[int, int]:
        """(read, index of the longest prefix now cached)."""
        ttl = self.rules.ttl_seconds["5m"]
        hit = next((i for i in range(len(hashes) - 1, -1, -1) if self._alive(hashes[i], at)), -1)
        shared = cum[hit] if hit >= 0 else 0
        read = shared // self.rules.increment * self.rules.increment if shared >= self.rules.min_tokens else 0
        if cum and cum[-1] >= self.rules.min_tokens:
            for h in hashes:
                self._entries[h] = _Entry(at + ttl, "5m")
            hit = len(hashes) - 1
        return read, hit

    def _miss(
        self,
        blocks: list[PrefixBlock],
        hashes: list[str],
        cum: list[int],
        settings: str,
        marks: list[int],
        read: int,
        was_alive: bool,
    ) -> str | None:
        """Why this request read less than the latest request that cached anything left cached."""
        if not self.calls or not blocks:
            return None  # the first request has nothing to miss
        if self._explicit_cache and not marks:
            return "no-breakpoint"
        if cum[max(marks) if marks else -1] < self.rules.min_tokens:
            return "below-minimum"
        seen = self._seen
        if seen is None or read >= seen.cached:
            return None
        if seen.top in hashes:
            if not was_alive:
                return "ttl"
            at = hashes.index(seen.top)
            if not any(m >= at for m in marks):
                return "no-breakpoint-after-prefix"
            return "no-breakpoint-at-prefix" if self.rules.lookback_blocks == 1 else "lookback"
        i = next((k for k, (a, b) in enumerate(zip(seen.hashes, hashes, strict=False)) if a != b), len(hashes))
        if i >= len(blocks):
            return "changed:truncated"
        if i < len(seen.keys) and seen.keys[i] == blocks[i].key:
            return "changed:settings" if settings != seen.settings else "changed:model"
        return f"changed:{blocks[i].path}"


def _hash(previous: str, data: str) -> str:
    return hashlib.sha256(f"{previous}\x00{data}".encode()).hexdigest()


def simulate(
    requests: Iterable[tuple[float, Mapping[str, Any]] | tuple[float, Mapping[str, Any], int]],
    *,
    wire: Wire,
    model: str,
    pricer: Pricer | None = None,
    min_tokens: Mapping[str, int] | None = None,
) -> list[SimCall]:
    """Bill a sequence of ``(seconds, body)`` or ``(seconds, body, output_tokens)`` in time order."""
    sim = Simulator(wire, model, pricer=pricer, min_tokens=min_tokens)
    for request in requests:
        sim.send(*request)
    return sim.calls
