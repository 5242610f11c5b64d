"""When a compaction or a clearing of old tool output pays for itself, from the provider's prices.

Shrinking the window is not free: the summary call costs a cached read of the window plus its
output, and the next request writes the new, shorter window to the cache at the write price (a
clearing rewrites everything from the first cleared result on). What it buys is a smaller read on
every later turn. So, per token prices r (cache read), w (cache write) and o (output), a window of
W tokens shrunk to W' pays off over the next H turns when

    H * r * (W - W')  >  r * W + o * S + w * (W' - F)  (compaction, S = summary tokens, F = tools and system)
    H * r * (W - W')  >  w * (W - P)                   (clearing, P = the prefix before the first cleared result)

H is how many more turns the conversation is assumed to run (``ContextConfig.horizon_turns``).
Prices come from the provider's profile (genai-prices' data); where a provider prices nothing (the
local model), Anthropic's ratios stand in, so the shape of the decision is the same everywhere.
"""

from __future__ import annotations

import dataclasses

from tiny_agent.providers.cache_rules import READ_MULTIPLIER, WRITE_MULTIPLIER
from tiny_agent.providers.pricing import TokenPrices
from tiny_agent.providers.profile import ProviderProfile

__all__ = ["ANTHROPIC_RATIOS", "clearing_pays", "compaction_pays", "decision_prices"]

OUTPUT_RATIO = 5.0
"""Output over input, where nothing is priced: Anthropic's list prices keep this ratio."""
ANTHROPIC_RATIOS = TokenPrices(1.0, READ_MULTIPLIER, WRITE_MULTIPLIER["5m"], WRITE_MULTIPLIER["1h"], OUTPUT_RATIO)
"""Anthropic's prices relative to an input token of 1, for a provider that prices nothing (the local model)."""


def decision_prices(profile: ProviderProfile) -> TokenPrices:
    """The prices the decisions weigh: the profile's, with a write at its TTL; Anthropic's ratios
    where nothing is priced."""
    prices = profile.prices if profile.prices is not None and profile.prices.input else ANTHROPIC_RATIOS
    return dataclasses.replace(prices, write=prices.write_1h if profile.cache_ttl == "1h" else prices.write)


def compaction_pays(
    prices: TokenPrices, window: int, after: int, summary: int, horizon: int, rewritten: int | None = None
) -> bool:
    """Whether shrinking ``window`` tokens to ``after`` (a summary of ``summary`` tokens included) saves
    more over ``horizon`` turns than the summary call and the rewrite cost. ``rewritten`` is the part of
    ``after`` written anew (the tools and system stay cached); all of it by default."""
    saved = horizon * prices.read * (window - after)
    rewrite = after if rewritten is None else rewritten
    cost = prices.read * window + prices.output * summary + prices.write * rewrite
    return saved > cost


def clearing_pays(prices: TokenPrices, window: int, cleared: int, rewritten: int, horizon: int) -> bool:
    """Whether clearing ``cleared`` tokens, which makes the next request rewrite ``rewritten`` tokens
    (everything from the first cleared result on), saves more over ``horizon`` turns than it costs."""
    return horizon * prices.read * cleared > prices.write * rewritten and cleared < window
