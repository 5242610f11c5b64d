"""When a compaction or a clearing of old tool output pays for itself, from the provider's prices.

Shrinking the window is not free: the summary call costs a cached read of the window plus its
output, and the next request writes the new, shorter window to the cache at the write price (a
clearing rewrites everything from the first cleared result on). What it buys is a smaller read on
every later turn. Per token prices r (cache read), w (cache write), o (output):

Compaction is a cycle (``best_threshold``). After a compaction the window holds W' tokens (the
fixed tools and system, the summary and record, the kept turns); it grows by about D tokens a turn
until the next compaction at threshold T, n turns later. Every turn writes its own D tokens whatever
the policy; what the threshold changes is, per cycle,

    w * (W' - D)                          the rewrite of what the compaction kept (beyond the new turn)
  + r * (W' + (W' + D) + ...)             each later turn's read of the prefix before it
  + r * W_end + w * I + o * S             the summary call (a cache read, instructions I, S tokens out)

and the default picks the T whose cost per turn of a cycle is least: the economic-order-quantity
shape, where compacting late makes every read dearer and compacting early pays the rewrite and the
summary more often. A lower T also keeps fewer turns (as with any threshold, the kept turns must fit
in half of it), which makes W' smaller: the model follows that too, so the default behaves like the
best fixed threshold found in hindsight, chosen from the prices and the growth seen so far.

Clearing pays over the next H turns (``ContextConfig.horizon_turns``) when

    H * r * (W - W')  >  w * (W - P)      (P = the prefix before the first cleared result)

Prices come from the provider's profile (genai-prices' data); where a provider prices nothing (the
local model), Anthropic's ratios stand in, so the shape of the decision is the same everywhere.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

from tiny_agent.providers.cache_rules import READ_MULTIPLIER, WRITE_MULTIPLIER
from tiny_agent.providers.pricing import TokenPrices
from tiny_agent.providers.profile import ProviderProfile

__all__ = ["ANTHROPIC_RATIOS", "Cycle", "best_threshold", "clearing_pays", "decision_prices"]

OUTPUT_RATIO = 5.0
"""Output over input, where nothing is priced: Anthropic's list prices keep this ratio."""
ANTHROPIC_RATIOS = TokenPrices(1.0, READ_MULTIPLIER, WRITE_MULTIPLIER["5m"], WRITE_MULTIPLIER["1h"], OUTPUT_RATIO)
"""Anthropic's prices relative to an input token of 1, for a provider that prices nothing (the local model)."""


def decision_prices(profile: ProviderProfile) -> TokenPrices:
    """The prices the decisions weigh: the profile's, with a write at its TTL; Anthropic's ratios
    where nothing is priced."""
    prices = profile.prices if profile.prices is not None and profile.prices.input else ANTHROPIC_RATIOS
    return dataclasses.replace(prices, write=prices.write_1h if profile.cache_ttl == "1h" else prices.write)


def clearing_pays(prices: TokenPrices, window: int, cleared: int, rewritten: int, horizon: int) -> bool:
    """Whether clearing ``cleared`` tokens, which makes the next request rewrite ``rewritten`` tokens
    (everything from the first cleared result on), saves more over ``horizon`` turns than it costs."""
    return horizon * prices.read * cleared > prices.write * rewritten and cleared < window


@dataclass(frozen=True)
class Cycle:
    """What a compaction cycle looks like, in tokens, as far as the log shows it so far."""

    growth: float
    """Tokens the window grows by in a turn (its mean over the turns seen)."""
    fixed: int
    """Tools and system: sent in every request, kept by every compaction."""
    summary: int
    """The summary's output tokens (the summary calls' so far, else an assumption)."""
    record: int
    """The summary and the engine's record as they open the window after a compaction."""
    instructions: int
    """The summary request's own text, written at the end of the cached window."""
    keep_turns: int
    reserve: int
    """Held free in the kept half of a threshold (``ContextConfig.summary_max_tokens``)."""

    def kept(self, threshold: float) -> float:
        """Tokens of the turns a compaction at ``threshold`` keeps: up to ``keep_turns`` turns that fit
        in half of it (as ``shrink`` cuts), at least the newest one."""
        fits = math.floor((threshold / 2 - self.fixed - self.reserve) / self.growth)
        return max(1, min(self.keep_turns, fits)) * self.growth

    def start(self, threshold: float) -> float:
        """The window right after a compaction at ``threshold``."""
        return self.fixed + self.record + self.kept(threshold)

    def cost_per_turn(self, prices: TokenPrices, threshold: float) -> float:
        """Dollars a turn costs beyond writing its own tokens, averaged over one cycle at ``threshold``."""
        d = self.growth
        start = self.start(threshold)
        turns = max(1, math.floor((threshold - start) / d) + 1)
        rewrite = prices.write * max(0.0, start - d)
        reads = prices.read * ((turns - 1) * start + d * (turns - 1) * (turns - 2) / 2)
        summary_call = (
            prices.read * (start + (turns - 1) * d) + prices.write * self.instructions + prices.output * self.summary
        )
        return (rewrite + reads + summary_call) / turns


def best_threshold(prices: TokenPrices, cycle: Cycle, ceiling: int, floor: float = 0) -> int:
    """The compaction threshold (at least ``floor``, at most ``ceiling``) whose cycle costs least per
    turn, in the middle of the thresholds that give that cycle; ``ceiling`` when the window does not grow."""
    if cycle.growth < 1:
        return ceiling
    low = max(cycle.fixed + cycle.record + cycle.growth, floor)
    if low >= ceiling:
        return ceiling
    candidates: list[float] = []
    step = low
    while step < ceiling:
        candidates.append(step)
        step *= 1.03
    candidates.append(float(ceiling))
    costs = [cycle.cost_per_turn(prices, t) for t in candidates]
    least = min(costs)
    # Thresholds in one step of the window's growth give the same cycle: the middle of that range
    # leaves room on both sides for turns that grow more or less than the mean.
    flat = [t for t, c in zip(candidates, costs, strict=True) if c <= least * (1 + 1e-9)]
    return int(flat[len(flat) // 2])
