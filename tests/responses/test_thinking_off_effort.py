"""``--thinking off`` and ``--effort`` on OpenAI's reasoning models, which have no thinking switch, only
an effort: off is sent as the effort that turns reasoning off where the model has one, refused where
it has none, and every value is held against the model before any call."""

from __future__ import annotations

import pytest

from tests.providers.test_openai_cache_render import conversation
from tests.responses.test_responses_sdk_types import validate
from tiny_agent.errors import ConfigError
from tiny_agent.providers.registry import resolve_provider
from tiny_agent.providers.thinking import parse_thinking

ENV = {"OPENAI_API_KEY": "sk-o"}


def body_for(model: str, thinking: str | None = None, effort: str | None = None, api: str = "responses") -> dict:
    provider = resolve_provider(
        "openai", api=api, model=model, env=ENV, thinking=parse_thinking(thinking, None, effort)
    )
    body = conversation().render(provider)
    if api == "responses":
        validate(body)  # the SDK's own request type takes it
    return body


@pytest.mark.parametrize(
    ("model", "sent"), [("gpt-5", "minimal"), ("gpt-5-mini", "minimal"), ("gpt-5.1", "none"), ("gpt-5.6", "none")]
)
def test_thinking_off_is_the_effort_that_turns_reasoning_off(model: str, sent: str) -> None:
    assert body_for(model, "off")["reasoning"] == {"effort": sent}


def test_no_setting_sends_no_effort_and_the_model_keeps_its_own_default() -> None:
    assert "reasoning" not in body_for("gpt-5.6")


@pytest.mark.parametrize(
    ("model", "effort"), [("gpt-5", "minimal"), ("gpt-5.2", "xhigh"), ("gpt-5.6", "xhigh"), ("o3", "high")]
)
def test_each_model_takes_its_own_efforts(model: str, effort: str) -> None:
    assert body_for(model, None, effort)["reasoning"] == {"effort": effort}


@pytest.mark.parametrize(
    ("model", "thinking", "effort", "line"),
    [
        ("o3", "off", None, "o3 always reasons: it has no --thinking off (--effort low reasons least)"),
        ("gpt-5.1", None, "minimal", "gpt-5.1 does not take --effort minimal (it takes: low, medium, high)"),
        ("gpt-5.1", None, "xhigh", "gpt-5.1 does not take --effort xhigh"),
        ("gpt-5.6", "off", "low", "--thinking off is --effort none on gpt-5.6: leave out --effort low"),
        ("gpt-5.6", "adaptive", None, "gpt-5.6 reasons by itself: leave out --thinking adaptive; --effort low|"),
    ],
)
def test_what_the_model_does_not_take_is_one_line_before_any_call(
    model: str, thinking: str | None, effort: str | None, line: str
) -> None:
    with pytest.raises(ConfigError) as refused:
        body_for(model, thinking, effort)
    assert str(refused.value).startswith(line)


@pytest.mark.parametrize(("thinking", "effort"), [("off", None), (None, "low")])
def test_over_chat_completions_reasoning_settings_point_to_the_responses_api(
    thinking: str | None, effort: str | None
) -> None:
    with pytest.raises(
        ConfigError, match="sends its reasoning settings only over the Responses API: use --api responses"
    ):
        body_for("gpt-5.6", thinking, effort, api="chat")


def test_thinking_off_on_a_model_that_does_not_reason_sends_nothing() -> None:
    assert "reasoning" not in body_for("gpt-4.1", "off")


@pytest.mark.parametrize(
    ("model", "field"),
    [("gpt-5.6", "max_completion_tokens"), ("o3", "max_completion_tokens"), ("gpt-4.1", "max_tokens")],
)
def test_over_chat_completions_a_reasoning_model_gets_max_completion_tokens(model: str, field: str) -> None:
    body = body_for(model, api="chat")
    assert field in body and ({"max_tokens", "max_completion_tokens"} - {field}).isdisjoint(body)
