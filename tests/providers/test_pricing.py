"""Prices and context windows come from genai-prices and never raise for an unknown model."""

from __future__ import annotations

import datetime
from pathlib import Path

import pytest

from tiny_agent.providers.pricing import context_window_of, price_usd, token_prices
from tiny_agent.types import Usage

KNOWN = [("anthropic", "claude-haiku-4-5"), ("openai", "gpt-4o-mini"), ("deepseek", "deepseek-chat")]


@pytest.mark.parametrize(("provider_id", "model"), KNOWN)
def test_a_known_model_has_a_positive_price(provider_id: str, model: str) -> None:
    price = price_usd(Usage(input_tokens=1_000, output_tokens=100), model, provider_id)
    assert isinstance(price, float)
    assert price > 0


@pytest.mark.parametrize(("provider_id", "model"), KNOWN)
def test_cache_reads_make_the_same_prompt_cheaper(provider_id: str, model: str) -> None:
    uncached = price_usd(Usage(input_tokens=10_000, output_tokens=100), model, provider_id)
    cached = price_usd(Usage(input_tokens=10_000, output_tokens=100, cache_read_tokens=9_000), model, provider_id)
    assert uncached is not None and cached is not None
    assert 0 < cached < uncached


def test_input_tokens_include_the_cached_ones() -> None:
    """Priced as (whole - cached) at the base rate plus cached at the read rate, not whole + cached."""
    model, provider_id = "claude-haiku-4-5", "anthropic"
    mixed = price_usd(Usage(input_tokens=10_000, output_tokens=0, cache_read_tokens=4_000), model, provider_id)
    base_part = price_usd(Usage(input_tokens=6_000, output_tokens=0), model, provider_id)
    read_part = price_usd(Usage(input_tokens=4_000, output_tokens=0, cache_read_tokens=4_000), model, provider_id)
    assert mixed is not None and base_part is not None and read_part is not None
    assert mixed == pytest.approx(base_part + read_part)


def test_anthropic_cache_writes_cost_more_than_plain_input() -> None:
    plain = price_usd(Usage(input_tokens=10_000, output_tokens=0), "claude-haiku-4-5", "anthropic")
    written = price_usd(
        Usage(input_tokens=10_000, output_tokens=0, cache_write_tokens=9_000), "claude-haiku-4-5", "anthropic"
    )
    assert plain is not None and written is not None
    assert written > plain


@pytest.mark.parametrize(
    ("usage", "model", "provider_id"),
    [
        (Usage(input_tokens=10, output_tokens=10), "no-such-model-7b", "openai"),
        (Usage(input_tokens=10, output_tokens=10), "gpt-4o-mini", "no-such-provider"),
        (Usage(input_tokens=10, output_tokens=10), "gpt-4o-mini", None),
        (Usage(input_tokens=None, output_tokens=10), "gpt-4o-mini", "openai"),
        (Usage(input_tokens=10, output_tokens=None), "gpt-4o-mini", "openai"),
    ],
)
def test_unknown_gives_none(usage: Usage, model: str, provider_id: str | None) -> None:
    assert price_usd(usage, model, provider_id) is None


@pytest.mark.parametrize(("provider_id", "model"), [*KNOWN, ("moonshotai", "kimi-k2-0905-preview")])
def test_context_window_of_a_known_model(provider_id: str, model: str) -> None:
    window = context_window_of(model, provider_id)
    assert isinstance(window, int)
    assert window > 0


@pytest.mark.parametrize(
    ("model", "provider_id"),
    [("no-such-model-7b", "openai"), ("gpt-4o-mini", "no-such-provider"), ("gpt-4o-mini", None)],
)
def test_context_window_of_an_unknown_model_is_none(model: str, provider_id: str | None) -> None:
    assert context_window_of(model, provider_id) is None


def test_the_cost_page_gives_deepseeks_prices_as_genai_prices_bills_them() -> None:
    """docs/caching-and-cost.md says what the installed genai-prices bills (a Monday of December 2026)."""
    page = (Path(__file__).resolve().parents[2] / "docs" / "caching-and-cost.md").read_text()
    row = next(line for line in page.splitlines() if line.startswith("| DeepSeek |"))
    noon, peak = (datetime.datetime(2026, 12, 7, hour, 30, tzinfo=datetime.UTC) for hour in (12, 2))
    for model in ("deepseek-v4-flash", "deepseek-v4-pro", "deepseek-chat"):
        prices = token_prices(model, "deepseek", noon)
        assert prices is not None and f"{prices.read / prices.input:.2g}x on {model}" in row
    off, on = token_prices("deepseek-v4-flash", "deepseek", noon), token_prices("deepseek-v4-flash", "deepseek", peak)
    assert off is not None and on is not None
    per_million = [round(x * 1e6, 3) for x in (on.input, on.read, on.output, off.input, off.read, off.output)]
    assert per_million == [0.3, 0.006, 1.2, 0.15, 0.003, 0.6]
    said = "$0.30 input, $0.006 cache hit, $1.20 output per\nmillion tokens, against $0.15, $0.003 and $0.60"
    assert said in page and "twice the rest of the day's" in page
