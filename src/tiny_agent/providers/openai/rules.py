"""The cache rules of models served over Chat Completions: OpenAI's own (automatic before GPT-5.6,
explicit breakpoints from GPT-5.6 on), and the endpoints that cache automatically and write for free
(DeepSeek, Moonshot, any other server of the wire). The figures are in ``providers.cache_rules``."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import replace

from tiny_agent.providers.cache_rules import (
    DEEPSEEK_MIN_TOKENS,
    MAX_BREAKPOINTS,
    OPENAI_INCREMENT,
    OPENAI_MIN_TOKENS,
    OPENAI_READ_BREAKPOINTS,
    OPENAI_TTL_SECONDS,
    READ_MULTIPLIER,
    WRITE_MULTIPLIER,
    CacheRules,
    automatic_rules,
    min_cacheable_tokens,
    normalise_model,
)

__all__ = ["openai_rules"]

WIRE = "openai"

_GPT_EXPLICIT = re.compile(r"^gpt-(?:5\.(?:[6-9]|\d{2,})|[6-9](?:\.\d+)?)(?:$|-)")
"""GPT-5.6 and later: explicit breakpoints, writes billed at 1.25x, reads at 0.1x, counted to the token."""
_OPENAI_MODEL = re.compile(r"^(?:gpt-|chatgpt-|codex-|o\d)")
"""OpenAI's own models, which take a ``prompt_cache_key`` (other models served over the same wire,
at a base URL of their own, are not sent one)."""
_AUTOMATIC_FREE_WRITES = {
    # name: (minimum, increment, lifetime in seconds). DeepSeek's disk cache is kept "a few hours to a
    # few days": an hour is the lower bound that never flatters. Moonshot's minimum is not published
    # (UNCONFIRMED): OpenAI's figures stand in.
    "deepseek": (DEEPSEEK_MIN_TOKENS, 64, 3600),
    "moonshot": (OPENAI_MIN_TOKENS, 1, OPENAI_TTL_SECONDS),
}
_SERVED_BY = (("deepseek-", "deepseek"), ("kimi-", "moonshot"), ("moonshot-", "moonshot"))
"""Whose cache holds a model its own provider names, when the rules are asked for at the wire's name
(``lint``, the view, a simulation with no endpoint): DeepSeek's and Moonshot's."""
_WIRE_NAMES = (WIRE, "responses")


def openai_rules(profile: str, model: str, overrides: Mapping[str, int] | None = None) -> CacheRules:
    """The cache rules of ``model`` at the Chat Completions endpoint named ``profile``."""
    name = normalise_model(model)
    if profile in _WIRE_NAMES:
        profile = next((home for prefix, home in _SERVED_BY if name.startswith(prefix)), profile)
    if profile in _AUTOMATIC_FREE_WRITES:
        own, increment, lifetime = _AUTOMATIC_FREE_WRITES[profile]
        minimum = min_cacheable_tokens(model, WIRE, overrides, default=own)
        return automatic_rules(WIRE, model, minimum, increment, lifetime, writes_billed=False, read=0.25)
    minimum = min_cacheable_tokens(model, WIRE, overrides)
    keyed = bool(_OPENAI_MODEL.match(name))
    if _GPT_EXPLICIT.match(name):
        return _openai_explicit(model, minimum)
    # Reads at the model's cached-input price, which genai-prices knows; the multiplier is a fallback
    # (gpt-4o's published ratio; newer models are cheaper).
    rules = automatic_rules(WIRE, model, minimum, OPENAI_INCREMENT, OPENAI_TTL_SECONDS, writes_billed=False, read=0.5)
    return replace(rules, cache_key=keyed)


def _openai_explicit(model: str, minimum: int) -> CacheRules:
    """GPT-5.6 and later on Chat Completions: ``prompt_cache_breakpoint`` marks on content parts, at
    most four written a request, a read matching at any of the latest 80 breakpoints (no lookback from
    them), entries kept at least 30 minutes; writes 1.25x, reads 0.1x, counted to the token."""
    lifetime = 1800.0
    return CacheRules(
        WIRE,
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
