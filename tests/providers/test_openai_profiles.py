"""Every OpenAI-compatible endpoint's cache rules and prices, as its profile declares them (never probed)."""

from __future__ import annotations

import datetime

import pytest

from tiny_agent.context.shrink.policy import decision_prices
from tiny_agent.providers.pricing import token_prices
from tiny_agent.providers.profile import profile_for


@pytest.mark.parametrize("model", ["gpt-5.6", "gpt-5.6-mini", "gpt-5.7", "gpt-5.10", "gpt-6", "gpt-6.1-codex"])
def test_gpt_5_6_and_later_cache_explicitly(model: str) -> None:
    rules = profile_for("openai", "openai", model).cache
    assert (rules.mode, rules.max_breakpoints, rules.read_breakpoints, rules.lookback_blocks) == ("explicit", 4, 80, 1)
    assert (rules.writes_billed, rules.write_multiplier["5m"], rules.read_multiplier) == (True, 1.25, 0.1)
    assert (rules.min_tokens, rules.increment, rules.cache_key) == (1024, 1, True)
    assert profile_for("openai", "openai", model).lifetime == 1800


@pytest.mark.parametrize("model", ["gpt-5.5", "gpt-5", "gpt-4o", "gpt-4o-mini", "o3", "gpt-4.1"])
def test_models_before_5_6_keep_automatic_caching_with_a_key(model: str) -> None:
    profile = profile_for("openai", "openai", model)
    rules = profile.cache
    assert (rules.mode, rules.max_breakpoints, rules.writes_billed, rules.cache_key) == ("automatic", 0, False, True)
    assert (rules.increment, profile.lifetime) == (128, 300)


def test_gpt_5_6_writes_are_priced_at_one_and_a_quarter_and_the_policy_weighs_them() -> None:
    """genai-prices 0.2.3: GPT-5.6 input $4, write $5, read $0.40 per million; GPT-5.5 writes at input."""
    newer = profile_for("openai", "openai", "gpt-5.6")
    assert newer.prices is not None
    assert newer.prices.write == pytest.approx(1.25 * newer.prices.input)
    assert newer.prices.read == pytest.approx(0.1 * newer.prices.input)
    assert decision_prices(newer).write == pytest.approx(1.25 * newer.prices.input), "the cost policy's write"
    older = profile_for("openai", "openai", "gpt-5.5")
    assert older.prices is not None and older.prices.write == older.prices.input


PEAK = datetime.datetime(2026, 12, 1, 12, tzinfo=datetime.UTC)
OFF_PEAK = datetime.datetime(2026, 12, 1, 20, tzinfo=datetime.UTC)


def test_deepseek_caches_automatically_writes_free_reads_at_its_hit_price() -> None:
    profile = profile_for("deepseek", "openai", "deepseek-chat")
    rules = profile.cache
    assert (rules.mode, rules.writes_billed, rules.cache_key, rules.min_tokens) == ("automatic", False, False, 64)
    assert profile.lifetime == 3600, "kept hours to days: an hour never flatters"
    # genai-prices knows DeepSeek's off-peak half price: the hit stays 0.07 / 0.27 of a miss at both.
    for at in (PEAK, OFF_PEAK):
        prices = token_prices("deepseek-chat", "deepseek", at)
        assert prices is not None and prices.read / prices.input == pytest.approx(0.07 / 0.27)
        assert prices.write == prices.input
    peak, off = token_prices("deepseek-chat", "deepseek", PEAK), token_prices("deepseek-chat", "deepseek", OFF_PEAK)
    assert peak is not None and off is not None and off.input == pytest.approx(peak.input / 2)


@pytest.mark.parametrize(("model", "ratio"), [("kimi-k2-0905-preview", 0.15 / 0.6), ("kimi-k2.5", 0.10 / 0.6)])
def test_moonshot_caches_automatically_writes_free_reads_at_its_cached_price(model: str, ratio: float) -> None:
    profile = profile_for("moonshot", "openai", model)
    rules = profile.cache
    assert (rules.mode, rules.writes_billed, rules.cache_key) == ("automatic", False, False)
    assert profile.prices is not None and profile.prices.read / profile.prices.input == pytest.approx(ratio)
    assert profile.pricing_id == "moonshotai"


def test_a_local_model_over_the_openai_wire_is_free_and_gets_no_cache_field() -> None:
    rules = profile_for("local", "openai", "SmolLM2-135M-Instruct.Q4_1").cache
    assert (rules.mode, rules.writes_billed, rules.cache_key, rules.max_breakpoints) == ("automatic", False, False, 0)
    served = profile_for("openai", "openai", "SmolLM2-135M-Instruct.Q4_1").cache
    assert (served.mode, served.cache_key) == ("automatic", False), "not an OpenAI model: no key"
