"""Prices and context windows from the bundled genai-prices snapshot (offline, no network).

genai-prices' ``input_tokens`` counts the WHOLE prompt, cached tokens included, and prices the cache
reads and writes inside it at their own rates. That is exactly ``tiny_agent.types.Usage``'s
convention, so our normalised usage is passed through unchanged.

Both lookups answer ``None`` rather than raising when the provider or model is unknown: a missing
price must never stop an agent run.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from tiny_agent.types import Usage

# genai-prices is imported where a price is looked up, not here: it takes a fifth of a second, and
# every command imports this module (the budget, the profiles) whether it prices anything or not.

__all__ = ["PRICED_FROM", "TokenPrices", "context_window_of", "maker_of", "price_usd", "token_prices"]

_MILLION = 1_000_000


@dataclass(frozen=True)
class TokenPrices:
    """Dollars per token by class, at the base tier (long-context tiers are for ``price_usd``)."""

    input: float
    read: float
    """A cache read."""
    write: float
    """A 5-minute cache write (plain input where writes are free)."""
    write_1h: float
    output: float

    def cost(self, usage: Usage) -> float | None:
        """A call's cost at these prices; None when its counts are unknown."""
        if usage.input_tokens is None or usage.output_tokens is None:
            return None
        one_hour = _one_hour_writes(usage) or 0
        return (
            (usage.uncached_input_tokens or 0) * self.input
            + (usage.cache_read_tokens or 0) * self.read
            + ((usage.cache_write_tokens or 0) - one_hour) * self.write
            + one_hour * self.write_1h
            + usage.output_tokens * self.output
        )


FREE = TokenPrices(0.0, 0.0, 0.0, 0.0, 0.0)


def token_prices(model: str, provider_id: str | None, at: datetime.datetime | None = None) -> TokenPrices | None:
    """Per-token prices of ``model`` from genai-prices' data (as of ``at``, default now), or None when
    the model or provider has no known price list."""
    if provider_id is None:
        return None
    from genai_prices import data_snapshot

    try:
        _, info = data_snapshot.get_snapshot().find_provider_model(model, None, provider_id, None)
        price = info.get_prices(at or datetime.datetime.now(datetime.UTC))
    except LookupError:
        return None
    base = _per_token(price.input_mtok)
    if base is None:
        return None
    write = _per_token(price.cache_write_mtok)
    return TokenPrices(
        input=base,
        read=_per_token(price.cache_read_mtok) or base,
        write=base if write is None else write,
        write_1h=_per_token(price.cache_write_1h_mtok) or (2 * base if write is not None else base),
        output=_per_token(price.output_mtok) or 0.0,
    )


def _per_token(mtok: Any) -> float | None:
    """A genai-prices price per million tokens (a Decimal, or tiers with a base) per token."""
    if mtok is None:
        return None
    value = mtok.base if hasattr(mtok, "base") else mtok
    return float(Decimal(value)) / _MILLION


PRICED_FROM = datetime.datetime(2020, 1, 1, tzinfo=datetime.UTC).timestamp()
"""A time before any model priced here: a clock that says so is a simulation's (one that starts at 0),
and its calls are priced now, not at some model's first, older price."""


def price_usd(usage: Usage, model: str, provider_id: str | None, at: float | None = None) -> float | None:
    """Cost in USD of one call made at ``at`` (seconds since the epoch; default now: prices change
    over the years and, for some models, with the hour of the day), or None when the model, the
    provider or the token counts are unknown.

    ``provider_id`` is a genai-prices provider id ("anthropic", "openai", "deepseek", "moonshotai").
    None means "no known price list": genai-prices would otherwise guess a provider from the model
    name and could price a free local model as if it were hosted.
    """
    if provider_id is None or usage.input_tokens is None or usage.output_tokens is None:
        return None
    counts = {
        "input_tokens": usage.input_tokens,
        "output_tokens": usage.output_tokens,
        "cache_read_tokens": usage.cache_read_tokens,
        "cache_write_tokens": usage.cache_write_tokens,
        # Anthropic's 1-hour writes cost 2x, not 1.25x; genai-prices counts them inside the total.
        "cache_write_1h_tokens": _one_hour_writes(usage),
    }
    import genai_prices

    # genai-prices drops None values itself; passing them keeps "unknown" distinct from 0.
    price_usage = genai_prices.Usage(**counts)
    try:
        when = None if at is None or at < PRICED_FROM else datetime.datetime.fromtimestamp(at, datetime.UTC)
        calculation = genai_prices.calc_price(
            price_usage, model_ref=model, provider_id=provider_id, genai_request_timestamp=when
        )
    except (LookupError, ValueError):
        # LookupError: unknown provider or model. ValueError: counts the price model cannot split.
        return None
    return float(calculation.total_price)


def context_window_of(model: str, provider_id: str | None) -> int | None:
    """The model's context window in tokens according to genai-prices, or None when unknown."""
    if provider_id is None:
        return None
    from genai_prices import data_snapshot

    try:
        _, info = data_snapshot.get_snapshot().find_provider_model(model, None, provider_id, None)
    except LookupError:
        return None
    return info.context_window


def maker_of(model: str) -> str | None:
    """The genai-prices provider id of the model's maker, guessed from its name; None if unknown."""
    from genai_prices import data_snapshot

    try:
        return data_snapshot.get_snapshot().find_provider_model(model, None, None, None)[0].id
    except LookupError:
        return None


def _one_hour_writes(usage: Usage) -> int | None:
    creation = usage.details.get("cache_creation")
    if not isinstance(creation, dict):
        return None
    value = creation.get("ephemeral_1h_input_tokens")
    return value if isinstance(value, int) and value > 0 else None
