"""AnthropicProvider against the real ``anthropic`` SDK, served by ``httpx2.MockTransport``."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

import anthropic
import httpx2
import pytest

from tests.faults.wire import anthropic_message
from tiny_agent.errors import (
    AuthenticationError,
    BadRequestError,
    ContextTooLongError,
    OverloadedError,
    ProviderConnectionError,
    ProviderHTTPError,
    ProviderTimeout,
    RateLimitError,
    ServerError,
)
from tiny_agent.providers.anthropic.adapter import AnthropicProvider
from tiny_agent.providers.base import Provider
from tiny_agent.providers.thinking import parse_thinking
from tiny_agent.types import (
    CachePlan,
    Message,
    Prompt,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolSpec,
    ToolUseBlock,
    Usage,
)

FAST_RETRY = {"retry-after-ms": "1"}
"""The retry loop (providers/retry) waits exactly this long, so the tests stay fast."""

SCHEMA = {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}
TOOLS = (ToolSpec("read_file", "Read a file.", SCHEMA), ToolSpec("list_dir", "List a directory.", SCHEMA))


class Server:
    """A scripted server: answers (or raises) in order and keeps every request it saw."""

    def __init__(self, *answers: httpx2.Response | Exception) -> None:
        self.answers = list(answers)
        self.requests: list[httpx2.Request] = []

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        self.requests.append(request)
        answer = self.answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer

    def body(self, index: int = -1) -> Any:
        return json.loads(self.requests[index].content)


def provider(server: Server, **kwargs: Any) -> AnthropicProvider:
    kwargs.setdefault("max_retries", 0)
    diagnostics = kwargs.pop("cache_diagnostics", False)  # its own tests below
    adapter = AnthropicProvider(
        model="claude-haiku-4-5",
        api_key="sk-ant-test",
        http_client=httpx2.Client(transport=httpx2.MockTransport(server)),
        **kwargs,
    )
    adapter.cache_diagnostics = diagnostics
    return adapter


def ok(content: list[dict[str, Any]], usage: dict[str, Any], stop_reason: str = "end_turn") -> httpx2.Response:
    return httpx2.Response(200, json=anthropic_message(content, usage, stop_reason))


def error(status: int, kind: str, message: str, headers: dict[str, str] | None = None) -> httpx2.Response:
    body = {"type": "error", "error": {"type": kind, "message": message}, "request_id": "req_011CSHoEeqs5C35K2UUqR7Fy"}
    return httpx2.Response(status, json=body, headers={"request-id": "req_011CSHoEeqs5C35K2UUqR7Fy", **(headers or {})})


HELLO = ok([{"type": "text", "text": "Hello!"}], {"input_tokens": 12, "output_tokens": 3})


def conversation() -> tuple[Message, ...]:
    return (
        Message.user("What is in README.md?"),
        Message("assistant", (TextBlock("Let me look."), ToolUseBlock("toolu_01", "read_file", {"path": "README.md"}))),
        Message("user", (ToolResultBlock("toolu_01", "no such file", is_error=True), TextBlock("Try docs/."))),
    )


def count_markers(value: Any) -> int:
    if isinstance(value, dict):
        return ("cache_control" in value) + sum(count_markers(v) for v in value.values())
    if isinstance(value, list):
        return sum(count_markers(v) for v in value)
    return 0


def test_it_is_a_provider() -> None:
    assert isinstance(provider(Server()), Provider)


def test_render_maps_every_block_and_marks_tools_and_system() -> None:
    prompt = Prompt(system=("You are terse.", "", "Never delete files."), tools=TOOLS, messages=conversation())
    body = provider(Server()).render(prompt)
    marker = {"type": "ephemeral"}
    assert body == {
        "model": "claude-haiku-4-5",
        "max_tokens": 4096,
        "system": [
            {"type": "text", "text": "You are terse."},
            {"type": "text", "text": "Never delete files.", "cache_control": marker},
        ],
        "tools": [
            {"name": "read_file", "description": "Read a file.", "input_schema": SCHEMA},
            {"name": "list_dir", "description": "List a directory.", "input_schema": SCHEMA, "cache_control": marker},
        ],
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "What is in README.md?"}]},
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": "Let me look."},
                    {"type": "tool_use", "id": "toolu_01", "name": "read_file", "input": {"path": "README.md"}},
                ],
            },
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": "toolu_01", "content": "no such file", "is_error": True},
                    {"type": "text", "text": "Try docs/."},
                ],
            },
        ],
    }


def test_render_omits_empty_tools_and_system_and_honours_prompt_max_tokens() -> None:
    body = provider(Server(), max_tokens=1000).render(Prompt(system=("",), tools=(), messages=conversation()[:1]))
    assert "tools" not in body
    assert "system" not in body
    assert "tool_choice" not in body
    assert body["max_tokens"] == 1000
    assert provider(Server()).render(Prompt((), (), conversation()[:1], max_tokens=77))["max_tokens"] == 77


def test_tool_choice_none_keeps_the_tools() -> None:
    body = provider(Server()).render(Prompt(("s",), TOOLS, conversation()[:1], tool_choice="none"))
    assert body["tool_choice"] == {"type": "none"}
    assert [t["name"] for t in body["tools"]] == ["read_file", "list_dir"]
    assert "tool_choice" not in provider(Server()).render(Prompt(("s",), (), conversation()[:1], tool_choice="none"))


def test_message_markers_go_on_the_last_block_of_each_marked_message() -> None:
    plan = CachePlan(tools=False, system=False, message_indices=(1, -1))
    body = provider(Server()).render(Prompt(("s",), TOOLS, conversation(), cache=plan))
    marked = [[("cache_control" in b) for b in m["content"]] for m in body["messages"]]
    assert marked == [[False], [False, True], [False, True]]
    assert count_markers(body) == 2


def test_never_more_than_four_markers_and_the_earliest_messages_give_way() -> None:
    messages = tuple(Message.user(f"turn {i}") if i % 2 == 0 else Message.assistant(f"turn {i}") for i in range(7))
    plan = CachePlan(tools=True, system=True, message_indices=(0, 2, 4, 6))
    body = provider(Server()).render(Prompt(("s",), TOOLS, messages, cache=plan))
    assert count_markers(body) == 4
    assert "cache_control" in body["tools"][-1]
    assert "cache_control" in body["system"][-1]
    marked = [i for i, m in enumerate(body["messages"]) if "cache_control" in m["content"][-1]]
    assert marked == [4, 6]


def test_a_cache_plan_outside_the_window_is_refused() -> None:
    with pytest.raises(ValueError, match="message 5"):
        provider(Server()).render(Prompt((), (), conversation(), cache=CachePlan(message_indices=(5,))))


def test_render_is_pure() -> None:
    prompt = Prompt(("s",), TOOLS, conversation(), cache=CachePlan(message_indices=(2,)))
    p = provider(Server())
    first = p.render(prompt)
    first["tools"][0]["input_schema"]["type"] = "changed"
    first["messages"][1]["content"][1]["input"]["path"] = "changed"
    assert p.render(prompt) == provider(Server()).render(prompt)
    assert p.render(prompt)["messages"][1]["content"][1]["input"] == {"path": "README.md"}


def test_a_tool_call_round_trips() -> None:
    content: list[dict[str, Any]] = [
        {"type": "thinking", "thinking": "The user wants the README.", "signature": "EqQBCgIYAh"},
        {"type": "text", "text": "Reading it."},
        {"type": "tool_use", "id": "toolu_01A09q90qw90lq917835lq9", "name": "read_file", "input": {"path": "a"}},
    ]
    server = Server(ok(content, {"input_tokens": 400, "output_tokens": 60}, stop_reason="tool_use"))
    p = provider(server, thinking=parse_thinking("2048"))
    body = p.render(Prompt(("s",), TOOLS, conversation()[:1]))
    response = p.send(body)

    assert server.requests[0].url.path == "/v1/messages"
    assert server.body() == body
    assert response.stop_reason == "tool_use"
    assert response.model == "claude-haiku-4-5-20251001"
    assert response.message == Message(  # the thinking is kept, to go back byte-exact
        "assistant",
        (
            ThinkingBlock("The user wants the README.", "EqQBCgIYAh"),
            TextBlock("Reading it."),
            ToolUseBlock("toolu_01A09q90qw90lq917835lq9", "read_file", {"path": "a"}),
        ),
    )
    follow_up = p.render(Prompt(("s",), TOOLS, (*conversation()[:1], response.message)))
    # What the model said goes back verbatim next turn, its thinking included.
    assert follow_up["messages"][1]["content"] == content
    # A request that does not think is sent none (the API refuses it in a loop's final assistant).
    off = provider(Server(), thinking=parse_thinking("off"))
    unthinking = off.render(Prompt(("s",), TOOLS, (*conversation()[:1], response.message)))
    assert unthinking["messages"][1]["content"] == content[1:]


@pytest.mark.parametrize(
    ("usage", "expected"),
    [
        pytest.param(
            {
                "input_tokens": 50,
                "cache_creation_input_tokens": 200,
                "cache_read_input_tokens": 3000,
                "output_tokens": 9,
            },
            Usage(input_tokens=3250, output_tokens=9, cache_read_tokens=3000, cache_write_tokens=200),
            id="anthropic-read-and-write",
        ),
        pytest.param(
            {"input_tokens": 12, "cache_read_input_tokens": 30, "output_tokens": 5},
            Usage(input_tokens=42, output_tokens=5, cache_read_tokens=30, cache_write_tokens=None),
            id="llama.cpp-no-creation-field",
        ),
        pytest.param(
            {"input_tokens": 12, "output_tokens": 5},
            Usage(input_tokens=12, output_tokens=5, cache_read_tokens=None, cache_write_tokens=None),
            id="no-cache-fields",
        ),
        pytest.param(
            {"input_tokens": 12, "cache_creation_input_tokens": None, "cache_read_input_tokens": 0, "output_tokens": 5},
            Usage(input_tokens=12, output_tokens=5, cache_read_tokens=0, cache_write_tokens=None),
            id="null-is-unknown-zero-is-zero",
        ),
    ],
)
def test_usage_is_normalised_to_the_whole_prompt(usage: dict[str, Any], expected: Usage) -> None:
    response = provider(Server(ok([{"type": "text", "text": "x"}], usage))).send(
        provider(Server()).render(Prompt((), (), conversation()[:1]))
    )
    got = response.usage
    assert (got.input_tokens, got.output_tokens, got.cache_read_tokens, got.cache_write_tokens) == (
        expected.input_tokens,
        expected.output_tokens,
        expected.cache_read_tokens,
        expected.cache_write_tokens,
    )
    assert dict(got.details) == usage
    assert response.prefill_ms is None


ERRORS: list[Any] = [
    (400, "invalid_request_error", "messages.1.content.0: unexpected `tool_use_id`", BadRequestError),
    (400, "invalid_request_error", "prompt is too long: 210345 tokens > 200000 maximum", ContextTooLongError),
    (401, "authentication_error", "invalid x-api-key", AuthenticationError),
    (403, "permission_error", "Your API key does not have permission", AuthenticationError),
    (404, "not_found_error", "model: claude-nope", BadRequestError),
    (413, "request_too_large", "Request exceeds the maximum allowed number of bytes.", BadRequestError),
    (429, "rate_limit_error", "Number of request tokens has exceeded your per-minute rate limit", RateLimitError),
    (500, "api_error", "Internal server error", ServerError),
    (529, "overloaded_error", "Overloaded", OverloadedError),
]


@pytest.mark.parametrize(("status", "kind", "text", "expected"), ERRORS)
def test_http_errors_map_to_the_most_specific_class(
    status: int, kind: str, text: str, expected: type[ProviderHTTPError]
) -> None:
    server = Server(error(status, kind, text))
    p = provider(server)
    with pytest.raises(ProviderHTTPError) as caught:
        p.send(p.render(Prompt((), (), conversation()[:1])))
    exc = caught.value
    assert type(exc) is expected
    assert exc.status_code == status
    hint = "; check the API key" if expected is AuthenticationError else ""
    where = r" \(https://api\.anthropic\.com/v1/messages, 1 attempt in \d+\.\d s\)"
    assert re.fullmatch(re.escape(f"anthropic: {status} {kind}: {text}{hint}") + where, str(exc))
    assert isinstance(exc.body, dict)
    assert exc.body["error"]["message"] == text
    assert exc.headers["request-id"] == "req_011CSHoEeqs5C35K2UUqR7Fy"
    assert isinstance(exc.__cause__, anthropic.APIStatusError)


@pytest.mark.parametrize(
    ("failure", "expected"),
    [
        (httpx2.ReadTimeout("timed out"), ProviderTimeout),
        (httpx2.ConnectError("[Errno 111] Connection refused"), ProviderConnectionError),
    ],
)
def test_no_answer_maps_to_connection_errors(failure: Exception, expected: type[Exception]) -> None:
    p = provider(Server(failure))
    with pytest.raises(ProviderConnectionError) as caught:
        p.send(p.render(Prompt((), (), conversation()[:1])))
    assert type(caught.value) is expected
    assert isinstance(caught.value.__cause__, anthropic.APIConnectionError)


Answer = Callable[[], httpx2.Response]


@pytest.mark.parametrize(
    "failure",
    [
        lambda: error(429, "rate_limit_error", "slow down", FAST_RETRY),
        lambda: error(529, "overloaded_error", "Overloaded", FAST_RETRY),
    ],
    ids=["429", "529"],
)
def test_retries_then_succeeds(failure: Answer) -> None:
    server = Server(failure(), HELLO)
    p = provider(server, max_retries=1)
    assert p.send(p.render(Prompt((), (), conversation()[:1]))).message.text == "Hello!"
    assert len(server.requests) == 2


def test_a_400_is_never_retried() -> None:
    server = Server(error(400, "invalid_request_error", "bad", FAST_RETRY), HELLO)
    p = provider(server, max_retries=4)
    with pytest.raises(BadRequestError):
        p.send(p.render(Prompt((), (), conversation()[:1])))
    assert len(server.requests) == 1


def test_exhausted_retries_surface_the_rate_limit() -> None:
    server = Server(
        error(429, "rate_limit_error", "slow down", FAST_RETRY), error(429, "rate_limit_error", "slow", FAST_RETRY)
    )
    p = provider(server, max_retries=1)
    with pytest.raises(RateLimitError) as caught:
        p.send(p.render(Prompt((), (), conversation()[:1])))
    assert caught.value.status_code == 429
    assert len(server.requests) == 2


def test_price_context_window_and_count_tokens() -> None:
    p = provider(Server())
    full = p.profile.price(Usage(input_tokens=10_000, output_tokens=500))
    cached = p.profile.price(Usage(input_tokens=10_000, output_tokens=500, cache_read_tokens=8_000))
    assert full is not None and full > 0
    assert cached is not None and 0 < cached < full
    assert p.profile.price(Usage(input_tokens=None, output_tokens=500)) is None
    window = p.profile.context_window
    assert isinstance(window, int) and window > 0
    assert provider(Server(), context_window=1234).profile.context_window == 1234
    unknown = AnthropicProvider(model="claude-does-not-exist-9", api_key="k")
    assert unknown.profile.context_window is None
    assert unknown.profile.price(Usage(input_tokens=10, output_tokens=10)) is None
    assert p.count_tokens(Prompt((), (), conversation())) is None


def test_cache_diagnostics_ask_why_against_the_previous_answer() -> None:
    server = Server(
        ok([{"type": "text", "text": "hi"}], {"input_tokens": 5, "output_tokens": 1}),
        httpx2.Response(
            200,
            json={
                "id": "msg_2",
                "type": "message",
                "role": "assistant",
                "model": "claude-haiku-4-5",
                "content": [{"type": "text", "text": "again"}],
                "stop_reason": "end_turn",
                "usage": {"input_tokens": 900, "output_tokens": 1, "cache_read_input_tokens": 0},
                "diagnostics": {"cache_miss_reason": {"type": "system_changed", "cache_missed_input_tokens": 880}},
            },
        ),
    )
    adapter = provider(server, cache_diagnostics=True)
    first = adapter.send(adapter.render(Prompt(("s",), (), (Message.user("hi"),))))
    prompt = Prompt(("t",), (), (Message.user("hi"),), previous_response_id=first.response_id)
    second = adapter.send(adapter.render(prompt))
    assert server.body(0)["diagnostics"] == {"previous_message_id": None}
    assert server.body(1)["diagnostics"] == {"previous_message_id": "msg_01XFDUDYJgAACzvnptvVoYEL"}
    assert "anthropic-beta" not in server.requests[1].headers, "diagnostics need their former beta no more"
    assert second.provider_miss == "system_changed (~880 tokens)"
    assert first.provider_miss is None


def test_diagnostics_only_for_the_official_api_and_a_one_hour_lifetime() -> None:
    assert AnthropicProvider(model="m", api_key="k").cache_diagnostics
    assert not AnthropicProvider(model="m", api_key="k", base_url="http://127.0.0.1:8080").cache_diagnostics
    body = AnthropicProvider(model="m", api_key="k", cache_ttl="1h").render(
        Prompt(("s",), (ToolSpec("t", "d", {"type": "object"}),), (Message.user("hi"),))
    )
    assert body["tools"][-1]["cache_control"] == {"type": "ephemeral", "ttl": "1h"}
    assert body["system"][-1]["cache_control"] == {"type": "ephemeral", "ttl": "1h"}
