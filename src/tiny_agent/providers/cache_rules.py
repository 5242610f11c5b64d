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
4. the wire's default (1,024 on both wires: the commonest published figure).

In a mapping, a model key matches the exact id or its normalised form (``claude-sonnet-4-5-20250929``
and ``anthropic.claude-sonnet-4-5-20250929-v1:0`` both normalise to ``claude-sonnet-4-5``), before
the wire key, before ``*``.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Literal

from tiny_agent.errors import ConfigError
from tiny_agent.types import Wire

__all__ = [
    "ANTHROPIC_MIN_TOKENS",
    "DEFAULT_TTL",
    "ENV_MIN_TOKENS",
    "LOOKBACK_BLOCKS",
    "MAX_BREAKPOINTS",
    "OPENAI_EXPLICIT_TTL",
    "OPENAI_INCREMENT",
    "OPENAI_MIN_TOKENS",
    "OPENAI_READ_BREAKPOINTS",
    "READ_MULTIPLIER",
    "TTLS",
    "TTL_SECONDS",
    "WRITE_MULTIPLIER",
    "CacheMode",
    "CacheRules",
    "Ttl",
    "cache_rules",
    "checked_ttl",
    "min_cacheable_tokens",
    "normalise_model",
    "rules_of",
]

Ttl = Literal["5m", "1h"]
TTLS: tuple[Ttl, ...] = ("5m", "1h")
DEFAULT_TTL: Ttl = "5m"
"""The lifetime a request asks for unless told otherwise (Anthropic's own default)."""


def checked_ttl(cache_ttl: str, wire: Wire, provider: str) -> Ttl:
    """``cache_ttl`` as a lifetime ``provider`` (of ``wire``) can be asked for, or ConfigError."""
    if cache_ttl != DEFAULT_TTL and wire != "anthropic":
        raise ConfigError(
            f"a cache lifetime applies to Anthropic; {provider!r} caches automatically "
            "(GPT-5.6+: 30 minutes, its only lifetime)"
        )
    for ttl in TTLS:
        if ttl == cache_ttl:
            return ttl
    raise ConfigError(f"cache_ttl must be one of {', '.join(TTLS)}, not {cache_ttl!r}")


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

DEFAULT_MIN_TOKENS: Mapping[Wire, int] = {
    "anthropic": 1024,
    "openai": OPENAI_MIN_TOKENS,
    "responses": OPENAI_MIN_TOKENS,
}

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


def normalise_model(model: str) -> str:
    """The model id without vendor prefix or snapshot suffix: the key of the tables here."""
    name = _VENDOR_PREFIX.sub("", model.strip().lower())
    name = _SNAPSHOT_SUFFIX.sub("", name)
    return _ALIASES.get(name, name)


def min_cacheable_tokens(model: str, wire: Wire, overrides: Mapping[str, int] | None = None) -> int:
    """Minimum cacheable prompt length of ``model`` on ``wire``, in tokens (see the module docstring)."""
    key = normalise_model(model)
    for source in (overrides or {}, _env_overrides()):
        for candidate in (model, model.lower(), key, wire, "*"):
            if candidate in source:
                return _positive(source[candidate], candidate)
    if wire == "anthropic" and key in ANTHROPIC_MIN_TOKENS:
        return ANTHROPIC_MIN_TOKENS[key]
    return DEFAULT_MIN_TOKENS[wire]


def cache_rules(model: str, wire: Wire, overrides: Mapping[str, int] | None = None) -> CacheRules:
    """Every rule the billing simulator and the miss diagnosis need for ``model`` on ``wire`` (at the
    endpoint the wire is named after: Anthropic, or OpenAI)."""
    return rules_of(wire, model, wire, overrides)


_GPT_EXPLICIT = re.compile(r"^gpt-(?:5\.(?:[6-9]|\d{2,})|[6-9](?:\.\d+)?)(?:$|-)")
"""GPT-5.6 and later: explicit breakpoints, writes billed at 1.25x, reads at 0.1x, counted to the token."""
_OPENAI_MODEL = re.compile(r"^(?:gpt-|chatgpt-|codex-|o\d)")
"""OpenAI's own models, which take a ``prompt_cache_key`` (other models served over the same wire,
at a base URL of their own, are not sent one)."""
_AUTOMATIC_FREE_WRITES = {
    # name: (minimum, increment, lifetime in seconds). DeepSeek's disk cache is kept "a few hours to a
    # few days": an hour is the lower bound that never flatters. Moonshot's minimum is not published
    # (UNCONFIRMED): OpenAI's figures stand in.
    "deepseek": (64, 64, 3600),
    "moonshot": (OPENAI_MIN_TOKENS, 1, OPENAI_TTL_SECONDS),
}


def rules_of(profile: str, model: str, wire: Wire, overrides: Mapping[str, int] | None = None) -> CacheRules:
    """The cache rules of ``model`` served by the endpoint named ``profile`` ("anthropic", "openai",
    "deepseek", "moonshot", "local", or any other name for a server of that wire)."""
    if profile == "local":
        # llama.cpp keeps any prefix in its slot until another replaces it; nothing is billed.
        return _automatic(wire, model, 0, 1, math.inf, writes_billed=False, read=1.0)
    if wire == "anthropic":
        return CacheRules(wire, model, min_cacheable_tokens(model, wire, overrides))
    if profile in _AUTOMATIC_FREE_WRITES:
        minimum, increment, lifetime = _AUTOMATIC_FREE_WRITES[profile]
        minimum = min_cacheable_tokens(model, wire, overrides) if overrides or _env_overrides() else minimum
        return _automatic(wire, model, minimum, increment, lifetime, writes_billed=False, read=0.25)
    minimum = min_cacheable_tokens(model, wire, overrides)
    name = normalise_model(model)
    keyed = bool(_OPENAI_MODEL.match(name))
    if _GPT_EXPLICIT.match(name):
        return replace(_openai_explicit(model, minimum), wire=wire)
    # Reads at the model's cached-input price, which genai-prices knows; the multiplier is a fallback
    # (gpt-4o's published ratio; newer models are cheaper).
    rules = _automatic(wire, model, minimum, OPENAI_INCREMENT, OPENAI_TTL_SECONDS, writes_billed=False, read=0.5)
    return replace(rules, cache_key=keyed)


def _openai_explicit(model: str, minimum: int) -> CacheRules:
    """GPT-5.6 and later on Chat Completions: ``prompt_cache_breakpoint`` marks on content parts, at
    most four written a request, a read matching at any of the latest 80 breakpoints (no lookback from
    them), entries kept at least 30 minutes; writes 1.25x, reads 0.1x, counted to the token."""
    lifetime = 1800.0
    return CacheRules(
        "openai",
        model,
        minimum,
        max_breakpoints=MAX_BREAKPOINTS,
        lookback_blocks=1,
        read_breakpoints=OPENAI_READ_BREAKPOINTS,
        ttl_seconds={"5m": lifetime, "1h": lifetime},
        write_multiplier={"5m": WRITE_MULTIPLIER["5m"], "1h": WRITE_MULTIPLIER["5m"]},
        read_multiplier=READ_MULTIPLIER,
        increment=1,
        mode="explicit",
        writes_billed=True,
        cache_key=True,
    )


def _automatic(
    wire: Wire, model: str, minimum: int, increment: int, lifetime: float, *, writes_billed: bool, read: float
) -> CacheRules:
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


def _env_overrides() -> dict[str, int]:
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
