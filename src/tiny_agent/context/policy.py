"""When a compaction or a clearing of old tool output pays for itself, from the provider's prices.

Shrinking the window is not free: the summary call costs a cached read of the window plus its
output, and the next request writes the new, shorter window to the cache at the write price (a
clearing rewrites everything from the first cleared result on). What it buys is a smaller read on
every later turn. So, per token prices r (cache read), w (cache write) and o (output), a window of
W tokens shrunk to W' pays off over the next H turns when

    H * r * (W - W')  >  r * W + o * S + w * (W' - F)  (compaction, S = summary tokens, F = tools and system)
    H * r * (W - W')  >  w * (W - P)                   (clearing, P = the prefix before the first cleared result)

H is how many more turns the conversation is assumed to run (``ContextConfig.horizon_turns``).
Prices come from the provider (genai-prices); where a provider prices nothing (the local model),
Anthropic's ratios stand in, so the shape of the decision is the same everywhere.
"""

from __future__ import annotations

from dataclasses import dataclass

from tiny_agent.providers.profile import ProviderProfile

__all__ = ["ANTHROPIC_RATIOS", "TokenPrices", "clearing_pays", "compaction_pays", "token_prices"]


@dataclass(frozen=True)
class TokenPrices:
    """Per token by class, for the decisions (the profile's prices, or Anthropic's ratios to an input of 1)."""

    input: float
    read: float
    write: float
    output: float


ANTHROPIC_RATIOS = TokenPrices(input=1.0, read=0.1, write=1.25, output=5.0)


def token_prices(profile: ProviderProfile) -> TokenPrices:
    """The profile's prices (the write at its TTL); Anthropic's ratios where nothing is priced."""
    prices, write = profile.prices, profile.write_price
    if prices is None or write is None or not prices.input:
        return ANTHROPIC_RATIOS
    return TokenPrices(prices.input, prices.read, write, prices.output)


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
