"""Responses bodies as the engine renders them, checked by the ``openai`` SDK's own request type
(``ResponseCreateParamsNonStreaming``, unknown keys refused at every level): nothing here comes from
``providers/responses/check.py``."""

from __future__ import annotations

from typing import Any

import pytest
from openai.types.responses.response_create_params import ResponseCreateParamsNonStreaming

from tests.providers.sdk_wire import _closed_adapter, _drain
from tests.providers.test_openai_cache_render import conversation
from tiny_agent.providers.registry import resolve_provider
from tiny_agent.providers.thinking import parse_thinking
from tiny_agent.types import Message, ReasoningBlock, TextBlock, ToolResultBlock, ToolUseBlock

ADAPTER = _closed_adapter(ResponseCreateParamsNonStreaming)
ENV = {"OPENAI_API_KEY": "sk-o"}


def validate(body: dict[str, Any]) -> Any:
    return _drain(ADAPTER.validate_python(body))


@pytest.mark.parametrize("model", ["gpt-5.6", "gpt-5.5", "o4-mini", "gpt-4o"])
def test_each_family_renders_a_body_the_sdk_accepts(model: str) -> None:
    ctx = conversation()
    reasoning = ReasoningBlock("", {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "x"}, model)
    ctx.add_assistant(Message("assistant", (reasoning, TextBlock("Reading.", phase="commentary"),
                                            ToolUseBlock("call_9", "read_file", {"path": "a.txt"}))))  # fmt: skip
    ctx.add_tool_results([ToolResultBlock("call_9", "text of a")])
    effort = None if model == "gpt-4o" else "low"  # gpt-4o takes no reasoning.effort: refused before any call
    provider = resolve_provider(
        "openai", api="responses", model=model, env=ENV, thinking=parse_thinking(None, None, effort)
    )
    body = ctx.render(provider)
    validate(body)
    explicit = model == "gpt-5.6"
    assert ("prompt_cache_options" in body) is explicit
    assert ("reasoning" in body) is (model != "gpt-4o")
    assert body.get("reasoning", {"effort": "low"}) == {"effort": "low"}
