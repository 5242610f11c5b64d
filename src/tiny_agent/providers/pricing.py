"""Prices and context windows from the bundled genai-prices snapshot (offline, no network).

genai-prices' ``input_tokens`` counts the WHOLE prompt, cached tokens included, and prices the cache
reads and writes inside it at their own rates. That is exactly ``tiny_agent.types.Usage``'s
convention, so our normalised usage is passed through unchanged.

Both lookups answer ``None`` rather than raising when the provider or model is unknown: a missing
price must never stop an agent run.
"""

from __future__ import annotations

import genai_prices
from genai_prices import data_snapshot

from tiny_agent.types import Usage

__all__ = ["context_window_of", "price_usd"]


def price_usd(usage: Usage, model: str, provider_id: str | None) -> float | None:
    """Cost in USD of one call, or None when the model, the provider or the token counts are unknown.

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
    # genai-prices drops None values itself; passing them keeps "unknown" distinct from 0.
    price_usage = genai_prices.Usage(**counts)
    try:
        calculation = genai_prices.calc_price(price_usage, model_ref=model, provider_id=provider_id)
    except (LookupError, ValueError):
        # LookupError: unknown provider or model. ValueError: counts the price model cannot split.
        return None
    return float(calculation.total_price)


def context_window_of(model: str, provider_id: str | None) -> int | None:
    """The model's context window in tokens according to genai-prices, or None when unknown."""
    if provider_id is None:
        return None
    try:
        _, info = data_snapshot.get_snapshot().find_provider_model(model, None, provider_id, None)
    except LookupError:
        return None
    return info.context_window


def _one_hour_writes(usage: Usage) -> int | None:
    creation = usage.details.get("cache_creation")
    if not isinstance(creation, dict):
        return None
    value = creation.get("ephemeral_1h_input_tokens")
    return value if isinstance(value, int) and value > 0 else None
