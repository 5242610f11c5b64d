"""Prompt-cache rules as data: minimum cacheable length per model, TTLs, price multipliers, limits.

Everything here is a published figure (see ../shared/facts/providers.md) that drifts between doc
revisions, so it lives in one table instead of in the code that reads it: the billing simulator,
``lint`` and the engine's miss diagnosis all ask this module.

Minimums can be overridden, because users report 2,048 where the docs say 1,024 (anthropic-sdk-python
issue 1194). Precedence, first match wins:

1. the ``overrides`` mapping passed to ``min_cacheable_tokens`` / ``cache_rules``;
2. the environment variable ``TINY_AGENT_CACHE_MIN_TOKENS``: comma-separated ``model=tokens`` pairs,
   where ``model`` may also be a wire name (``anthropic``, ``openai``) or ``*`` for every model, for
   example ``TINY_AGENT_CACHE_MIN_TOKENS="claude-sonnet-4-6=2048,openai=1024"``;
3. the published table below;
4. the endpoint's default where it has one (DeepSeek's 64), else the wire's (1,024 on both wires:
   the commonest published figure).

In a mapping, a model key matches the exact id or its normalised form (``claude-sonnet-4-5-20250929``
and ``anthropic.claude-sonnet-4-5-20250929-v1:0`` both normalise to ``claude-sonnet-4-5``), before
the wire key, before ``*``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from tiny_agent.errors import ConfigError
from tiny_agent.types import Wire

__all__ = [
    "ANTHROPIC_MIN_TOKENS",
    "CHAT_MIN_TOKENS",
    "DEEPSEEK_MIN_TOKENS",
    "DEFAULT_MIN_TOKENS",
    "DEFAULT_TTL",
    "ENV_MIN_TOKENS",
    "FALLBACK_MIN_TOKENS",
    "LOOKBACK_BLOCKS",
    "MAX_BREAKPOINTS",
    "MIN_TOKENS_BY_MODEL",
    "OPENAI_EXPLICIT_TTL",
    "OPENAI_INCREMENT",
    "OPENAI_MIN_TOKENS",
    "OPENAI_READ_BREAKPOINTS",
    "OPENAI_TTL_SECONDS",
    "READ_MULTIPLIER",
    "TTLS",
    "TTL_SECONDS",
    "WRITE_MULTIPLIER",
    "CacheMode",
    "CacheRules",
    "Ttl",
    "automatic_rules",
    "env_min_tokens",
    "min_cacheable_tokens",
    "normalise_model",
]

Ttl = Literal["5m", "1h"]
TTLS: tuple[Ttl, ...] = ("5m", "1h")
DEFAULT_TTL: Ttl = "5m"
"""The lifetime a request asks for unless told otherwise (Anthropic's own default)."""


CacheMode = Literal["explicit", "automatic"]
"""explicit: only prefixes ending at a breakpoint are cached (Anthropic's ``cache_control``, OpenAI's
``prompt_cache_breakpoint`` on GPT-5.6+); automatic: the provider caches every long enough prefix by
itself (OpenAI before GPT-5.6, DeepSeek, Moonshot, llama.cpp)."""

ENV_MIN_TOKENS = "TINY_AGENT_CACHE_MIN_TOKENS"

MAX_BREAKPOINTS = 4
"""Anthropic rejects a request with a fifth ``cache_control`` (the top-level automatic one counts)."""
LOOKBACK_BLOCKS = 20
"""Anthropic walks back this many blocks from a breakpoint, the breakpoint itself counted first."""
TTL_SECONDS: Mapping[Ttl, int] = {"5m": 300, "1h": 3600}
WRITE_MULTIPLIER: Mapping[Ttl, float] = {"5m": 1.25, "1h": 2.0}
"""Cache writes, times the base input price."""
READ_MULTIPLIER = 0.1

OPENAI_MIN_TOKENS = 1024
"""Automatic prefix caching starts at 1,024 tokens (the later guide says 2,048 for pre-5.6 models:
override it if your bills say so)."""
OPENAI_INCREMENT = 128
"""Cached tokens are counted in steps of 128 above the minimum."""
OPENAI_TTL_SECONDS = 300
"""In-memory retention is "5 to 10 minutes" idle: the lower bound, so a simulation never flatters."""
OPENAI_EXPLICIT_TTL = "30m"
"""GPT-5.6+: ``prompt_cache_options.ttl``, the minimum lifetime of every breakpoint a request writes
(the SDK's only value; the backend may keep entries longer)."""
OPENAI_READ_BREAKPOINTS = 80
"""GPT-5.6+: a read considers the latest 80 breakpoints of the request, wherever they are (no lookback)."""

FALLBACK_MIN_TOKENS = 1024
"""A wire's minimum when it publishes none per model: the commonest published figure."""
DEFAULT_MIN_TOKENS: Mapping[Wire, int] = {"anthropic": 1024, "openai": OPENAI_MIN_TOKENS}
"""Each wire's minimum for a model its table does not list (a wire not here: ``FALLBACK_MIN_TOKENS``)."""

ANTHROPIC_MIN_TOKENS: Mapping[str, int] = {
    # The mid-2026 "Cache limitations" table. Other copies disagree (Opus 4.7 at 4,096, Sonnet 4.6 at
    # 2,048): that is what overrides are for.
    "claude-fable-5": 512,
    "claude-mythos-5": 512,
    "claude-opus-5": 512,  # release notes only; not in the docs table yet
    "claude-opus-4-8": 1024,
    "claude-sonnet-5": 1024,
    "claude-sonnet-4-6": 1024,
    "claude-sonnet-4-5": 1024,
    "claude-opus-4-1": 1024,
    "claude-opus-4": 1024,
    "claude-sonnet-4": 1024,
    "claude-mythos-preview": 2048,
    "claude-opus-4-7": 2048,
    "claude-3-5-haiku": 2048,
    "claude-opus-4-6": 4096,
    "claude-opus-4-5": 4096,
    "claude-haiku-4-5": 4096,
}

DEEPSEEK_MIN_TOKENS = 64
"""DeepSeek's disk cache matches whole "cache prefix units" from token 0 (the old unit was 64 tokens)."""
CHAT_MIN_TOKENS: Mapping[str, int] = {
    # Models other providers serve over Chat Completions, with their own automatic caches
    # (``openai.rules``). Moonshot publishes no minimum (UNCONFIRMED): OpenAI's stands in.
    "deepseek-v4-flash": DEEPSEEK_MIN_TOKENS,
    "deepseek-v4-pro": DEEPSEEK_MIN_TOKENS,
    "deepseek-chat": DEEPSEEK_MIN_TOKENS,
    "deepseek-reasoner": DEEPSEEK_MIN_TOKENS,
    "kimi-k2.6": OPENAI_MIN_TOKENS,
}

MIN_TOKENS_BY_MODEL: Mapping[Wire, Mapping[str, int]] = {"anthropic": ANTHROPIC_MIN_TOKENS, "openai": CHAT_MIN_TOKENS}
"""Each wire's published minimum per model, where it publishes one."""

_ALIASES = {"claude-opus-4-0": "claude-opus-4", "claude-sonnet-4-0": "claude-sonnet-4"}
_VENDOR_PREFIX = re.compile(r"^(?:[a-z]{2,4}\.)?anthropic\.")  # Bedrock: "us.anthropic.claude-..."
_SNAPSHOT_SUFFIX = re.compile(r"(?:[-@]\d{8}|-latest|-v\d+(?::\d+)?)+$")


@dataclass(frozen=True)
class CacheRules:
    """How one model on one wire caches and bills a prompt prefix."""

    wire: Wire
    model: str
    min_tokens: int
    """Shortest prefix that is cached at all; below it nothing is written or read, silently."""
    max_breakpoints: int = MAX_BREAKPOINTS
    """Breakpoints a request may write (Anthropic refuses more; GPT-5.6 writes only the latest four)."""
    lookback_blocks: int = LOOKBACK_BLOCKS
    """How many blocks a read tries from each breakpoint back, the breakpoint itself first: 20 on
    Anthropic, 1 on GPT-5.6+ (a read matches only at the request's own breakpoints, but at any of the
    latest 80, however far back); 0 for an automatic cache."""
    read_breakpoints: int = MAX_BREAKPOINTS
    """How many of the request's breakpoints, the newest first, a read considers (80 on GPT-5.6+)."""
    ttl_seconds: Mapping[Ttl, float] = field(default_factory=lambda: dict(TTL_SECONDS))
    write_multiplier: Mapping[Ttl, float] = field(default_factory=lambda: dict(WRITE_MULTIPLIER))
    read_multiplier: float = READ_MULTIPLIER
    increment: int = 1
    """Granularity of a read: 128 on OpenAI before GPT-5.6, one token on Anthropic."""
    mode: CacheMode = "explicit"
    writes_billed: bool = True
    """Whether a cache write costs more than plain input (Anthropic, GPT-5.6+); automatic caches before
    GPT-5.6, DeepSeek and Moonshot write for free."""
    cache_key: bool = False
    """The request may carry a ``prompt_cache_key`` that routes a session's requests to the same cache
    (OpenAI's own models)."""
    unkeyed_settings: frozenset[str] = frozenset()
    """Top-level settings of the wire's table (``cache_breaks.WireBreaks``) this cache does not key on:
    llama.cpp caches the prompt's tokens only, and applies ``response_format`` when it samples."""
    thinks_by_default: bool = False
    """The model thinks unless a request says not to (its ``ThinkingCaps.default_on``: DeepSeek V4 on
    either wire, Kimi K2.6): a thinking switch left out reads as on (``Setting.absent``), so the
    cache keys on it, and lint and the miss line compare it, as the same request as ``enabled``."""


def normalise_model(model: str) -> str:
    """The model id without vendor prefix or snapshot suffix: the key of the tables here."""
    name = _VENDOR_PREFIX.sub("", model.strip().lower())
    name = _SNAPSHOT_SUFFIX.sub("", name)
    return _ALIASES.get(name, name)


def min_cacheable_tokens(
    model: str, wire: Wire, overrides: Mapping[str, int] | None = None, default: int | None = None
) -> int:
    """Minimum cacheable prompt length of ``model`` on ``wire``, in tokens (see the module docstring);
    ``default``: the endpoint's own, in place of the wire's, for a model the table does not list."""
    key = normalise_model(model)
    for source in (overrides or {}, env_min_tokens()):
        for candidate in (model, model.lower(), key, wire, "*"):
            if candidate in source:
                return _positive(source[candidate], candidate)
    table = MIN_TOKENS_BY_MODEL.get(wire, {})
    if key in table:
        return table[key]
    return default if default is not None else DEFAULT_MIN_TOKENS.get(wire, FALLBACK_MIN_TOKENS)


def automatic_rules(
    wire: Wire, model: str, minimum: int, increment: int, lifetime: float, *, writes_billed: bool, read: float
) -> CacheRules:
    """The rules of a cache that keeps every long enough prefix by itself (no breakpoints)."""
    write = WRITE_MULTIPLIER["5m"] if writes_billed else 1.0
    return CacheRules(
        wire,
        model,
        minimum,
        max_breakpoints=0,
        lookback_blocks=0,
        read_breakpoints=0,
        ttl_seconds={"5m": lifetime, "1h": lifetime},
        write_multiplier={"5m": write, "1h": write},
        read_multiplier=read,
        increment=increment,
        mode="automatic",
        writes_billed=writes_billed,
    )


def env_min_tokens() -> dict[str, int]:
    """The minimums ``TINY_AGENT_CACHE_MIN_TOKENS`` sets (model or wire -> tokens)."""
    raw = os.environ.get(ENV_MIN_TOKENS, "").strip()
    if not raw:
        return {}
    out: dict[str, int] = {}
    for item in raw.split(","):
        name, sep, value = item.partition("=")
        if not sep or not name.strip() or not value.strip().isdigit():
            raise ConfigError(f"{ENV_MIN_TOKENS}: expected model=tokens pairs separated by commas, got {item!r}")
        out[name.strip().lower()] = int(value)
    return out


def _positive(value: int, key: str) -> int:
    if value < 0:
        raise ConfigError(f"minimum cacheable tokens for {key!r} must not be negative, got {value}")
    return value
