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
from collections.abc import Sequence
from dataclasses import dataclass

from tiny_agent.context.shrink.compaction import CACHED_SUMMARY_INSTRUCTIONS, WorkRecord, choose_cut
from tiny_agent.context.shrink.shrinkable import Shrinkable
from tiny_agent.providers.base import Provider
from tiny_agent.providers.cache_rules import READ_MULTIPLIER, WRITE_MULTIPLIER
from tiny_agent.providers.pricing import TokenPrices
from tiny_agent.providers.profile import ProviderProfile
from tiny_agent.types import Message, Prompt

__all__ = [
    "ANTHROPIC_RATIOS",
    "Cycle",
    "best_threshold",
    "clearing_pays",
    "cold",
    "cost_threshold",
    "decision_prices",
    "fitting_cut",
]

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


def fitting_cut(ctx: Shrinkable, recent: Sequence[Message], threshold: int) -> int | None:
    """The cut keeping the most turns (up to ``keep_turns``) whose kept part fits in half ``threshold``."""
    fixed = ctx.ledger.estimate_prompt(Prompt(ctx.system_blocks(), ctx.tools, ()))
    budget = threshold // 2 - fixed - ctx.config.summary_max_tokens
    cut = None
    turns = sum(1 for m in recent if m.role == "assistant")
    # Keeping as many turns as there are, or more, leaves nothing to compact: start below that.
    for keep in range(min(ctx.config.keep_turns, turns - 1), 0, -1):
        cut = choose_cut(recent, keep)
        if cut is not None and ctx.ledger.estimate(recent[cut:]) <= budget:
            return cut
    return cut  # even one turn is over budget: keep just that one


def cost_threshold(ctx: Shrinkable, provider: Provider, ceiling: int, tokens: int) -> int | None:
    """The threshold to compact at now under the cost policy, or None while waiting pays.

    That threshold is the one whose compaction cycle costs least per turn at the provider's prices
    (``policy.best_threshold``), from the growth and the summaries seen so far, never above
    ``ceiling`` (``compact_at`` stays a hard limit). It is due once the window holds as much a
    compaction there would remove as it removes in a steady cycle: so a turn that brought far more
    than the others is summarised as soon as it is no longer kept, not carried until the window
    reaches the threshold. While the cache is cold (the last request is older than its lifetime),
    the summary call would write the whole window instead of reading it: the policy waits."""
    planned = _planned(ctx, provider, ceiling)
    if planned is None:
        return None
    threshold, cycle, fixed, opening = planned
    prices = decision_prices(provider.profile)
    state, ledger = ctx.state, ctx.ledger
    start = cycle.start(threshold)
    steady = threshold - start
    window = state.messages[state.base :]
    cut = fitting_cut(ctx, window, threshold)
    if threshold >= ceiling or steady <= 0 or cut is None:
        return None
    removable = tokens - fixed - opening - ledger.estimate(window[cut:])
    if removable < steady and cold(ctx, provider):
        return threshold if _cold_pays(prices, cycle, start, steady, tokens, removable) else None
    return threshold if removable >= steady else None


def planned_threshold(ctx: Shrinkable, provider: Provider) -> int:
    """The threshold the active policy compacts at (what a call records and the plot draws): the
    config's ceiling; under "cost", the cheapest cycle's threshold at the provider's prices below it."""
    ceiling = ctx.threshold(provider)
    if ctx.config.policy != "cost":
        return ceiling
    planned = _planned(ctx, provider, ceiling)
    return min(ceiling, planned[0]) if planned is not None else ceiling


def _planned(ctx: Shrinkable, provider: Provider, ceiling: int) -> tuple[int, Cycle, int, int] | None:
    """The cost policy's threshold and the cycle it was chosen for (with the fixed part and the opening
    a compaction leaves); None before the first turn, whose growth is unknown."""
    config, state, ledger = ctx.config, ctx.state, ctx.ledger
    recent = state.messages[max(state.base, 1) :]  # the first request (the task) is no turn's growth
    turns = sum(1 for m in recent if m.role == "assistant")
    if not turns:
        return None
    summaries = sorted(c.usage.output_tokens or 0 for c in ledger.calls if c.purpose == "compaction")
    summary = summaries[len(summaries) // 2] if summaries else config.summary_max_tokens // 4
    fixed = ledger.estimate_prompt(Prompt(ctx.system_blocks(), ctx.tools, ()))
    if state.compactions:
        opening = ledger.estimate([Message.user(state.compactions[-1].text())], remember=False)
    else:
        record = WorkRecord.from_messages(state.messages, state.pins).render()
        opening = summary + ledger.estimate([Message.user(record)], remember=False)
    cycle = Cycle(
        growth=ledger.estimate(recent) / turns,
        fixed=fixed,
        summary=summary,
        record=opening,
        instructions=ledger.estimate([Message.user(CACHED_SUMMARY_INSTRUCTIONS)], remember=False),
        keep_turns=config.keep_turns,
        reserve=config.summary_max_tokens,
    )
    prices = decision_prices(provider.profile)
    # Under twice the minimum cacheable length, the half a compaction keeps is below it: every request
    # until the window grows past it again is sent uncached, which the cycle's arithmetic does not see.
    return best_threshold(prices, cycle, ceiling, floor=2 * provider.profile.cache.min_tokens), cycle, fixed, opening


def _cold_pays(prices: TokenPrices, cycle: Cycle, start: float, steady: float, tokens: int, removable: float) -> bool:
    """Whether compacting now, with the cache cold, beats waiting until the compaction is due.

    The next request rewrites the whole window anyway, and the summary is then asked from the
    transcript at the input price, so a compaction now costs the transcript and the summary, less the
    part of the rewrite it saves. Waiting costs the read of what it would have removed on every turn
    until it is due, and a share of the warm compaction then (the share of the cycle it would skip)."""
    now = prices.input * (cycle.fixed + removable) + prices.output * cycle.summary + prices.write * (start - tokens)
    warm = prices.read * tokens + prices.write * (cycle.instructions + start - cycle.growth)
    warm += prices.output * cycle.summary
    turns = (steady - removable) / cycle.growth
    return now < prices.read * removable * turns + warm * removable / steady


def cold(ctx: Shrinkable, provider: Provider) -> bool:
    """Whether the cache entry the last request left has expired (its lifetime is over)."""
    last = ctx.state.last_call
    return last is not None and ctx.clock() - last.at > provider.profile.lifetime
