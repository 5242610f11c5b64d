"""The Responses wire's items: rendering keeps the item rules by construction, the check finds each
broken rule in the API's words, and the test server refuses the same bodies through the real SDK."""

from __future__ import annotations

from collections import Counter
from typing import Any

import openai
import pytest

from tiny_agent.errors import ProviderError
from tiny_agent.providers.registry import choose_api, offline_profile, resolve_provider
from tiny_agent.providers.responses.check import check_responses_body
from tiny_agent.providers.responses.reply import process
from tiny_agent.testing.responses_server import ResponsesServer
from tiny_agent.types import Message, Prompt, ReasoningBlock, TextBlock, ToolResultBlock, ToolUseBlock, block_from_dict

ENV = {"OPENAI_API_KEY": "sk-test"}
RS = {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "e30="}
CALL = {"type": "function_call", "call_id": "call_1", "name": "read_file", "arguments": "{}"}
OUT = {"type": "function_call_output", "call_id": "call_1", "output": "x"}
USER = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]}


def body(*items: dict[str, Any]) -> dict[str, Any]:
    return {"model": "gpt-5.6", "store": False, "input": list(items)}


@pytest.mark.parametrize(
    ("items", "said"),
    [
        ((USER, RS, OUT), "Item 'rs_1' of type 'reasoning' was provided without its required following item."),
        ((USER, OUT), "No tool call found for function call output with call_id call_1."),
        ((USER, CALL), "No tool output found for function call call_1."),
        ((USER, {**CALL, "id": "msg_1"}, OUT), "Expected an ID that begins with 'fc'"),
        ((USER, {k: v for k, v in RS.items() if k != "summary"}, CALL, OUT), "missing required field `summary`"),
        ((USER, {"type": "reasoning", "id": "rs_2", "summary": []}, CALL, OUT), "Item with id 'rs_2' not found."),
        (({**USER, "content": [{"type": "input_text", "text": "a", "prompt_cache_breakpoint": {}}]},) * 5, "at most 4"),
    ],
)
def test_each_item_rule_is_found_in_the_apis_words(items: tuple[dict[str, Any], ...], said: str) -> None:
    problems = check_responses_body(body(*items))
    assert any(said in p for p in problems), problems
    assert check_responses_body(body(USER, RS, CALL, OUT)) == []


def test_a_breakpoint_on_an_output_block_is_refused() -> None:
    answer = {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "a"}]}
    answer["content"][0]["prompt_cache_breakpoint"] = {"mode": "explicit"}
    assert any("only allowed on input content" in p for p in check_responses_body(body(USER, answer, USER)))


def test_the_server_refuses_an_illegal_body_through_the_sdk() -> None:
    with ResponsesServer([]) as server:
        client = openai.OpenAI(api_key="sk-test", base_url=server.url("r"), max_retries=0)
        with pytest.raises(openai.BadRequestError, match="No tool call found for function call output"):
            client.responses.create(model="gpt-5.6", store=False, input=[USER, OUT])  # type: ignore[list-item]
        sealed = {**RS, "encrypted_content": "eyJtb2RlbCI6ICJncHQtNS42In0="}  # {"model": "gpt-5.6"}
        with pytest.raises(openai.BadRequestError, match="invalid_encrypted_content"):
            client.responses.create(model="gpt-5.5", store=False, input=[USER, sealed, CALL, OUT])  # type: ignore[list-item]
        assert len(server.rejected) == 2


def test_an_adapter_error_is_ours_and_one_line() -> None:
    with ResponsesServer([]) as server:
        provider = resolve_provider("openai", api="responses", model="gpt-5.6", base_url=server.url("r"), env=ENV)
        with pytest.raises(ProviderError) as raised:
            provider.send(body(USER, OUT))
        assert "No tool call found" in str(raised.value) and "\n" not in str(raised.value)


def test_rendering_keeps_phase_reasoning_and_pairs_and_drops_another_models_reasoning() -> None:
    provider = resolve_provider("openai", api="responses", model="gpt-5.6", env=ENV)
    mine = ReasoningBlock("", {"type": "reasoning", "id": "rs_1", "encrypted_content": "x"}, "gpt-5.6")
    theirs = ReasoningBlock("", {"type": "reasoning", "id": "rs_0", "encrypted_content": "y", "summary": []}, "o3")
    cut = ReasoningBlock("", {"type": "reasoning", "id": "rs_9", "encrypted_content": "z", "summary": []}, "gpt-5.6")
    messages = (
        Message.user("go"),
        Message("assistant", (theirs, mine, TextBlock("looking", phase="commentary"), ToolUseBlock("call_1", "f", {}))),
        Message("user", (ToolResultBlock("call_1", "ok"),)),
        Message("assistant", (TextBlock("done", phase="final_answer"), cut)),
        Message.user("thanks"),
    )
    rendered = provider.render(Prompt(("sys",), (), messages))
    items = rendered["input"]
    assert check_responses_body(rendered) == []
    assert [x.get("id") for x in items if x["type"] == "reasoning"] == ["rs_1"]  # o3's dropped, the cut one too
    assert items[2]["summary"] == []  # added: a replayed reasoning item needs it
    assert [x.get("phase") for x in items if x["type"] == "message" and x["role"] == "assistant"] == [
        "commentary",
        "final_answer",
    ]
    assert provider.dropped == {"o3": 1}  # type: ignore[attr-defined]
    assert rendered["store"] is False and rendered["include"] == ["reasoning.encrypted_content"]
    assert provider.render(Prompt(("sys",), (), messages)) == rendered
    assert provider.dropped == {"o3": 1}, "a render again counts the same items, not twice"  # type: ignore[attr-defined]
    provider.render(Prompt(("sys",), (), messages[3:]))
    assert provider.dropped == {}, "the count is the newest render's"  # type: ignore[attr-defined]


def test_a_reply_decodes_items_usage_and_the_servers_reason() -> None:
    data = {
        "id": "resp_1",
        "model": "gpt-5.6",
        "status": "completed",
        "output": [
            RS,
            {"type": "message", "phase": "commentary", "content": [{"type": "output_text", "text": "hm"}]},
            {**CALL, "id": "fc_1"},
            {"type": "compaction", "id": "cmp_1", "encrypted_content": "c"},
        ],
        "usage": {
            "input_tokens": 100,
            "input_tokens_details": {"cached_tokens": 60, "cache_write_tokens": 30},
            "output_tokens": 20,
            "output_tokens_details": {"reasoning_tokens": 12},
        },
        "prompt_cache_diagnostics": {"type": "cache_miss", "reason": "tools_changed", "cache_missed_tokens": 40},
    }
    response = process(data, "gpt-5.6")
    kinds = [type(b).__name__ for b in response.message.content]
    assert kinds == ["ReasoningBlock", "TextBlock", "ToolUseBlock", "ReasoningBlock"]
    assert response.stop_reason == "tool_use" and response.provider_miss == "tools_changed"
    usage = response.usage
    assert (usage.input_tokens, usage.cache_read_tokens, usage.cache_write_tokens) == (100, 60, 30)
    assert usage.reasoning_tokens == 12 and usage.uncached_input_tokens == 10
    text = response.message.content[1]
    assert block_from_dict(text.to_dict()) == text and text.to_dict()["phase"] == "commentary"


def test_which_api_for_which_model() -> None:
    assert choose_api("openai", "gpt-5.6", None, None) == "responses"
    assert choose_api("openai", "o4-mini", None, None) == "responses"
    assert choose_api("openai", "gpt-4o-mini", None, None) == "chat"
    assert choose_api("openai", "gpt-5.6", "http://127.0.0.1:8080/v1", None) == "chat"  # another server
    assert choose_api("openai", "gpt-4o", None, "responses") == "responses"
    assert choose_api("deepseek", "deepseek-chat", None, None) == "chat"
    assert offline_profile("openai", "gpt-5.6").wire == "responses"
    assert offline_profile("openai", "gpt-5.6", api="chat").wire == "openai"
    with pytest.raises(Exception, match="api must be one of"):
        choose_api("openai", "gpt-5.6", None, "soap")


def test_previous_response_id_is_an_opt_in_that_sends_only_the_new_items() -> None:
    from tiny_agent.providers.responses.adapter import ResponsesProvider

    messages = (
        Message.user("go"),
        Message("assistant", (ToolUseBlock("call_1", "f", {}),)),
        Message("user", (ToolResultBlock("call_1", "ok"),)),
    )
    stateless = resolve_provider("openai", api="responses", model="gpt-5.6", env=ENV)
    prompt = Prompt(("sys",), (), messages, previous_response_id="resp_7")
    whole = stateless.render(prompt)
    assert "previous_response_id" not in whole and len(whole["input"]) == 4 and whole["store"] is False
    stateful = ResponsesProvider(model="gpt-5.6", api_key="sk-test", stateful=True)
    body = stateful.render(prompt)
    assert body["previous_response_id"] == "resp_7" and body["store"] is True
    assert [x["type"] for x in body["input"]] == ["function_call_output"]


def test_an_export_counts_no_item_before_the_newest_server_compaction() -> None:
    """The wire sends nothing before it, so the export, like the run, leaves nothing out there."""
    from tiny_agent.observe.export import left_out
    from tiny_agent.providers.responses.adapter import ResponsesProvider

    old = ReasoningBlock(item={"type": "reasoning", "id": "rs_1", "encrypted_content": "e1"}, model="gpt-5.5")
    compacted = ReasoningBlock(item={"type": "compaction", "id": "cmp_1", "encrypted_content": "c1"}, model="gpt-5.6")
    messages = (
        Message.user("hi"), Message("assistant", (old, TextBlock("a"))), Message.user("more"),
        Message("assistant", (compacted, TextBlock("b"))), Message.user("go"),
    )  # fmt: skip
    provider = ResponsesProvider(model="gpt-5.6", api_key="sk-x")
    provider.render(Prompt(("sys",), (), messages))
    assert provider.dropped == {}
    assert left_out(provider, messages) == ("", Counter())
