"""What a simulated request was billed (``SimCall``) and the prices that turn its tokens into dollars.

``cache_sim`` counts the tokens; this is the bill: explicit prices (``Prices``), genai-prices'
(``GenaiPricer``), and the sum of several calls (``total``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from tiny_agent.providers.cache_rules import CacheRules
from tiny_agent.types import Usage

__all__ = ["GenaiPricer", "Pricer", "Prices", "SimCall", "total"]


@dataclass(frozen=True)
class SimCall:
    """What one request was billed."""

    at: float
    input_tokens: int
    """The whole prompt: uncached + read + written."""
    cache_read: int
    cache_write_5m: int
    cache_write_1h: int
    output_tokens: int
    usd: float
    label: str = ""
    miss: str | None = None
    """Why this request read less than the latest earlier request that cached anything left cached:
    ``ttl``, ``lookback``, ``below-minimum``, ``no-breakpoint``, ``no-breakpoint-after-prefix``,
    ``no-breakpoint-at-prefix`` (GPT-5.6+: a read matches only at a breakpoint),
    ``changed:<path of the first block that differs>``, ``changed:settings`` (tool_choice, thinking)
    or ``changed:model``; None if it read all of it (or is the first request)."""

    @property
    def cache_write(self) -> int:
        return self.cache_write_5m + self.cache_write_1h

    @property
    def uncached(self) -> int:
        return self.input_tokens - self.cache_read - self.cache_write

    def usage(self) -> Usage:
        """As ``tiny_agent.types.Usage`` (whole prompt in ``input_tokens``), e.g. for a scripted provider."""
        details = {"ephemeral_5m_input_tokens": self.cache_write_5m, "ephemeral_1h_input_tokens": self.cache_write_1h}
        return Usage(self.input_tokens, self.output_tokens, self.cache_read, self.cache_write, details)


Pricer = Callable[[SimCall], float]
"""Dollars of one call from its token counts."""


@dataclass(frozen=True)
class Prices:
    """Explicit prices in USD per million tokens."""

    input: float
    output: float
    cache_read: float
    cache_write_5m: float
    cache_write_1h: float

    @classmethod
    def from_rules(cls, input: float, output: float, rules: CacheRules) -> Prices:
        """Cache prices from the base input price and the rules' multipliers."""
        mult = rules.write_multiplier
        return cls(input, output, input * rules.read_multiplier, input * mult["5m"], input * mult["1h"])

    def __call__(self, call: SimCall) -> float:
        return (
            call.uncached * self.input
            + call.cache_read * self.cache_read
            + call.cache_write_5m * self.cache_write_5m
            + call.cache_write_1h * self.cache_write_1h
            + call.output_tokens * self.output
        ) / 1e6


@dataclass(frozen=True)
class GenaiPricer:
    """Prices from the bundled genai-prices snapshot (tiers and dated prices included); $0 for a model
    it does not price."""

    model: str
    provider_id: str

    def __call__(self, call: SimCall) -> float:
        import genai_prices  # where a price is asked for: see providers.pricing

        usage = genai_prices.Usage(
            input_tokens=call.input_tokens,
            output_tokens=call.output_tokens,
            cache_read_tokens=call.cache_read,
            cache_write_tokens=call.cache_write,  # genai-prices counts the 1h writes inside this total
            cache_write_1h_tokens=call.cache_write_1h,
        )
        try:
            return float(genai_prices.calc_price(usage, self.model, provider_id=self.provider_id).total_price)
        except LookupError:  # a model it has no price for (a model served by vLLM, say): nothing to bill
            return 0.0


def total(calls: Iterable[SimCall]) -> SimCall:
    """The sum of several calls (``at`` is the last call's time)."""
    items = list(calls)
    return SimCall(
        items[-1].at if items else 0.0,
        sum(c.input_tokens for c in items),
        sum(c.cache_read for c in items),
        sum(c.cache_write_5m for c in items),
        sum(c.cache_write_1h for c in items),
        sum(c.output_tokens for c in items),
        sum(c.usd for c in items),
    )
