"""Cache rules as data: per-model minimums from the docs table, overridable, and the fixed limits."""

from __future__ import annotations

import pytest

from tiny_agent.errors import ConfigError
from tiny_agent.providers.cache_rules import ENV_MIN_TOKENS, min_cacheable_tokens, normalise_model
from tiny_agent.providers.wire import cache_rules


@pytest.mark.parametrize(
    ("model", "expected"),
    [
        ("claude-sonnet-4-6", 1024),
        ("claude-sonnet-4-5-20250929", 1024),
        ("us.anthropic.claude-sonnet-4-5-20250929-v1:0", 1024),
        ("claude-opus-4-20250514", 1024),
        ("claude-opus-4-7", 2048),
        ("claude-opus-4-5-20251101", 4096),
        ("claude-haiku-4-5", 4096),
        ("claude-fable-5", 512),
        ("claude-something-new", 1024),
    ],
)
def test_anthropic_minimums_follow_the_docs_table(model: str, expected: int) -> None:
    assert min_cacheable_tokens(model, "anthropic") == expected


def test_openai_minimum_is_1024_whatever_the_model() -> None:
    assert min_cacheable_tokens("gpt-4o", "openai") == 1024
    assert min_cacheable_tokens("claude-haiku-4-5", "openai") == 1024, "the wire's rules, not the name's"


def test_normalise_model_strips_vendor_and_snapshot() -> None:
    assert normalise_model("anthropic.claude-opus-4-1-20250805-v1:0") == "claude-opus-4-1"
    assert normalise_model("claude-opus-4@20250514") == "claude-opus-4"
    assert normalise_model("claude-sonnet-4-0") == "claude-sonnet-4"


def test_an_override_mapping_wins_by_model_then_wire_then_star() -> None:
    assert min_cacheable_tokens("claude-sonnet-4-6", "anthropic", {"claude-sonnet-4-6": 2048}) == 2048
    assert min_cacheable_tokens("claude-sonnet-4-6-20260101", "anthropic", {"claude-sonnet-4-6": 2048}) == 2048
    assert min_cacheable_tokens("claude-sonnet-4-6", "anthropic", {"anthropic": 3000, "*": 9}) == 3000
    assert min_cacheable_tokens("gpt-4o", "openai", {"anthropic": 3000, "*": 9}) == 9


def test_the_environment_overrides_the_table_but_not_the_mapping(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV_MIN_TOKENS, "claude-sonnet-4-6=2048, openai=2048")
    assert min_cacheable_tokens("claude-sonnet-4-6", "anthropic") == 2048
    assert min_cacheable_tokens("gpt-4o", "openai") == 2048
    assert min_cacheable_tokens("claude-opus-4-8", "anthropic") == 1024
    assert min_cacheable_tokens("claude-sonnet-4-6", "anthropic", {"claude-sonnet-4-6": 1500}) == 1500


def test_a_malformed_environment_value_is_a_config_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV_MIN_TOKENS, "claude-sonnet-4-6:2048")
    with pytest.raises(ConfigError, match=ENV_MIN_TOKENS):
        min_cacheable_tokens("claude-sonnet-4-6", "anthropic")


def test_the_fixed_anthropic_rules() -> None:
    rules = cache_rules("claude-sonnet-4-6", "anthropic")
    assert (rules.max_breakpoints, rules.lookback_blocks) == (4, 20)
    assert dict(rules.ttl_seconds) == {"5m": 300, "1h": 3600}
    assert dict(rules.write_multiplier) == {"5m": 1.25, "1h": 2.0}
    assert rules.read_multiplier == 0.1


def test_openai_rules_have_no_breakpoints_and_128_token_steps() -> None:
    rules = cache_rules("gpt-4o", "openai")
    assert (rules.max_breakpoints, rules.increment, rules.min_tokens) == (0, 128, 1024)
