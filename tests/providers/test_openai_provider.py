"""OpenAICompatProvider against the real ``openai`` SDK, served by ``httpx2.MockTransport``."""

from __future__ import annotations

import json
import re
from typing import Any

import httpx2
import openai
import pytest

from tiny_agent.errors import (
    AuthenticationError,
    BadRequestError,
    ConfigError,
    ContextTooLongError,
    OverloadedError,
    ProviderConnectionError,
    ProviderHTTPError,
    ProviderTimeout,
    RateLimitError,
    ServerError,
)
from tiny_agent.providers.base import Provider
from tiny_agent.providers.openai.adapter import INVALID_JSON_KEY, OpenAICompatProvider
from tiny_agent.types import (
    CachePlan,
    Message,
    Prompt,
    TextBlock,
    ToolResultBlock,
    ToolSpec,
    ToolUseBlock,
    Usage,
)

FAST_RETRY = {"retry-after-ms": "1"}
"""The retry loop (providers/retry) waits exactly this long, so the tests stay fast."""

SCHEMA = {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}
TOOLS = (ToolSpec("read_file", "Read a file.", SCHEMA),)
BASE_URL = "http://127.0.0.1:8080/v1"


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


def provider(server: Server, **kwargs: Any) -> OpenAICompatProvider:
    kwargs.setdefault("max_retries", 0)
    kwargs.setdefault("model", "gpt-4o-mini")
    return OpenAICompatProvider(
        api_key="sk-test",
        base_url=BASE_URL,
        http_client=httpx2.Client(transport=httpx2.MockTransport(server)),
        **kwargs,
    )


def completion(
    message: dict[str, Any], usage: dict[str, Any] | None, finish_reason: str = "stop", **extra: Any
) -> httpx2.Response:
    body: dict[str, Any] = {
        "id": "chatcmpl-B9MBs8CjcvOU2jLn4n570S5qMJKcT",
        "object": "chat.completion",
        "created": 1741569952,
        "model": "gpt-4o-mini-2024-07-18",
        "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": finish_reason}],
        "system_fingerprint": "fp_06737a9306",
        **extra,
    }
    if usage is not None:
        body["usage"] = usage
    return httpx2.Response(200, json=body)


def text_reply(text: str = "Hello!", usage: dict[str, Any] | None = None, **extra: Any) -> httpx2.Response:
    usage = usage or {"prompt_tokens": 19, "completion_tokens": 10, "total_tokens": 29}
    return completion({"role": "assistant", "content": text, "refusal": None}, usage, **extra)


def tool_reply(arguments: str) -> httpx2.Response:
    call = {"id": "call_abc123", "type": "function", "function": {"name": "read_file", "arguments": arguments}}
    usage = {"prompt_tokens": 82, "completion_tokens": 17, "total_tokens": 99}
    return completion({"role": "assistant", "content": None, "tool_calls": [call]}, usage, "tool_calls")


def error(status: int, payload: dict[str, Any], headers: dict[str, str] | None = None) -> httpx2.Response:
    return httpx2.Response(status, json={"error": payload}, headers={"x-request-id": "req_123", **(headers or {})})


def conversation() -> tuple[Message, ...]:
    return (
        Message.user("What is in README.md?"),
        Message("assistant", (TextBlock("Let me look."), ToolUseBlock("call_1", "read_file", {"path": "README.md"}))),
        Message(
            "user",
            (
                ToolResultBlock("call_1", "no such file", is_error=True),
                ToolResultBlock("call_2", "ERROR: already flagged", is_error=True),
                TextBlock("Try docs/."),
            ),
        ),
        Message("assistant", (ToolUseBlock("call_3", "read_file", {"path": "docs/a.md"}),)),
        Message("user", (ToolResultBlock("call_3", "# A"),)),
    )


def send(p: OpenAICompatProvider) -> Any:
    return p.send(p.render(Prompt((), (), conversation()[:1])))


def test_it_is_a_provider() -> None:
    assert isinstance(provider(Server()), Provider)


def test_render_maps_messages_tool_calls_and_results() -> None:
    prompt = Prompt(system=("You are terse.", "", "Never delete files."), tools=TOOLS, messages=conversation())
    assert provider(Server()).render(prompt) == {
        "model": "gpt-4o-mini",
        "max_tokens": 4096,
        "messages": [
            {"role": "system", "content": "You are terse.\n\nNever delete files."},
            {"role": "user", "content": "What is in README.md?"},
            {
                "role": "assistant",
                "content": "Let me look.",
                "tool_calls": [
                    {
                        "id": "call_1",
                        "type": "function",
                        "function": {"name": "read_file", "arguments": json.dumps({"path": "README.md"})},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "call_1", "content": "ERROR: no such file"},
            {"role": "tool", "tool_call_id": "call_2", "content": "ERROR: already flagged"},
            {"role": "user", "content": "Try docs/."},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "call_3",
                        "type": "function",
                        "function": {"name": "read_file", "arguments": json.dumps({"path": "docs/a.md"})},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "call_3", "content": "# A"},
        ],
        "tools": [
            {"type": "function", "function": {"name": "read_file", "description": "Read a file.", "parameters": SCHEMA}}
        ],
        "stream": False,
    }


def test_render_without_system_or_tools_and_with_prompt_max_tokens() -> None:
    body = provider(Server()).render(Prompt(("",), (), conversation()[:1], max_tokens=55))
    assert body["messages"] == [{"role": "user", "content": "What is in README.md?"}]
    assert body["max_tokens"] == 55
    assert "tools" not in body
    assert "tool_choice" not in body


def test_tool_choice_none_keeps_the_tools() -> None:
    body = provider(Server()).render(Prompt(("s",), TOOLS, conversation()[:1], tool_choice="none"))
    assert body["tool_choice"] == "none"
    assert len(body["tools"]) == 1


def test_the_cache_plan_changes_nothing() -> None:
    p = provider(Server())
    plain = p.render(Prompt(("s",), TOOLS, conversation(), cache=CachePlan(tools=False, system=False)))
    planned = p.render(Prompt(("s",), TOOLS, conversation(), cache=CachePlan(message_indices=(0, 2, 4))))
    assert plain == planned
    assert "cache_control" not in json.dumps(planned)


def test_a_tool_call_round_trips() -> None:
    server = Server(tool_reply('{"path": "docs/b.md"}'))
    p = provider(server)
    body = p.render(Prompt(("s",), TOOLS, conversation()))
    response = p.send(body)
    assert server.requests[0].url == f"{BASE_URL}/chat/completions"
    assert server.body() == body
    assert response.stop_reason == "tool_use"
    assert response.model == "gpt-4o-mini-2024-07-18"
    assert response.message == Message("assistant", (ToolUseBlock("call_abc123", "read_file", {"path": "docs/b.md"}),))
    again = p.render(Prompt(("s",), TOOLS, (*conversation()[:1], response.message)))
    assert again["messages"][-1]["tool_calls"][0]["function"]["arguments"] == '{"path": "docs/b.md"}'


@pytest.mark.parametrize("raw", ['{"path": "a', "[1, 2]", "null"])
def test_arguments_that_are_not_a_json_object_are_kept_raw(raw: str) -> None:
    response = send(provider(Server(tool_reply(raw))))
    assert response.message.tool_uses == [ToolUseBlock("call_abc123", "read_file", {INVALID_JSON_KEY: raw})]


def test_empty_arguments_mean_no_arguments() -> None:
    assert send(provider(Server(tool_reply("")))).message.tool_uses[0].input == {}


@pytest.mark.parametrize(
    ("finish", "expected"),
    [
        ("stop", "end_turn"),
        ("length", "max_tokens"),
        ("content_filter", "refusal"),
        ("tool_calls", "tool_use"),
        ("weird", "weird"),
    ],
)
def test_finish_reasons(finish: str, expected: str) -> None:
    reply = completion({"role": "assistant", "content": "x"}, {"prompt_tokens": 1, "completion_tokens": 1}, finish)
    assert send(provider(Server(reply))).stop_reason == expected


@pytest.mark.parametrize(
    ("usage", "expected"),
    [
        pytest.param(
            {
                "prompt_tokens": 2006,
                "completion_tokens": 300,
                "total_tokens": 2306,
                "prompt_tokens_details": {"cached_tokens": 1920, "audio_tokens": 0},
                "completion_tokens_details": {"reasoning_tokens": 0},
            },
            (2006, 300, 1920, None),
            id="openai",
        ),
        pytest.param(
            {
                "prompt_tokens": 5000,
                "completion_tokens": 20,
                "total_tokens": 5020,
                "prompt_tokens_details": {"cached_tokens": 1000, "cache_write_tokens": 3500},
            },
            (5000, 20, 1000, 3500),
            id="openai-cache-write",
        ),
        pytest.param(
            {
                "prompt_tokens": 1500,
                "completion_tokens": 8,
                "total_tokens": 1508,
                "prompt_cache_hit_tokens": 1280,
                "prompt_cache_miss_tokens": 220,
            },
            (1500, 8, 1280, None),
            id="deepseek",
        ),
        pytest.param(
            {"prompt_cache_hit_tokens": 1280, "prompt_cache_miss_tokens": 220, "completion_tokens": 8},
            (1500, 8, 1280, None),
            id="deepseek-without-prompt-tokens",
        ),
        pytest.param(
            {"prompt_tokens": 900, "completion_tokens": 4, "total_tokens": 904, "cached_tokens": 512},
            (900, 4, 512, None),
            id="moonshot",
        ),
        pytest.param(
            {"prompt_tokens": 900, "completion_tokens": 4, "prompt_tokens_details": {"cached_tokens": 768}},
            (900, 4, 768, None),
            id="moonshot-k2.5",
        ),
        pytest.param(
            {
                "prompt_tokens": 900,
                "completion_tokens": 4,
                "cached_tokens": 512,
                "prompt_tokens_details": {"cached_tokens": 0},
            },
            (900, 4, 512, None),
            id="moonshot-both-fields",
        ),
        pytest.param(
            {"prompt_tokens": 900, "completion_tokens": 4, "total_tokens": 904}, (900, 4, None, None), id="none"
        ),
        pytest.param(
            {
                "prompt_tokens": 900,
                "completion_tokens": 4,
                "total_tokens": 904,
                "prompt_tokens_details": {"cached_tokens": 0},
            },
            (900, 4, 0, None),
            id="zero-stays-zero",
        ),
    ],
)
def test_usage_is_normalised(usage: dict[str, Any], expected: tuple[int | None, ...]) -> None:
    got = send(provider(Server(text_reply(usage=usage)))).usage
    assert (got.input_tokens, got.output_tokens, got.cache_read_tokens, got.cache_write_tokens) == expected
    assert dict(got.details) == usage


def test_a_response_without_usage_has_unknown_usage() -> None:
    reply = completion({"role": "assistant", "content": "hi"}, None)
    got = send(provider(Server(reply))).usage
    assert (got.input_tokens, got.output_tokens, got.cache_read_tokens, got.cache_write_tokens) == (None,) * 4


def test_llama_cpp_timings_give_prefill_time() -> None:
    usage = {
        "prompt_tokens": 1200,
        "completion_tokens": 40,
        "total_tokens": 1240,
        "prompt_tokens_details": {"cached_tokens": 1024},
    }
    timings = {"cache_n": 1024, "prompt_n": 176, "prompt_ms": 212.75, "predicted_n": 40, "predicted_ms": 800.5}
    response = send(provider(Server(text_reply(usage=usage, timings=timings))))
    assert response.prefill_ms == timings["prompt_ms"]
    assert response.usage.cache_read_tokens == timings["cache_n"]
    assert send(provider(Server(text_reply()))).prefill_ms is None


CONTEXT_MESSAGE = (
    "This model's maximum context length is 128000 tokens. However, your messages resulted in 130532 tokens. "
    "Please reduce the length of the messages."
)


def payload(message: str, kind: str, code: object = None, **extra: Any) -> dict[str, Any]:
    return {"message": message, "type": kind, "param": None, "code": code, **extra}


ERRORS: list[Any] = [
    (
        400,
        payload("Invalid parameter: messages with role 'tool' must be a response", "invalid_request_error"),
        BadRequestError,
    ),
    (400, payload(CONTEXT_MESSAGE, "invalid_request_error"), ContextTooLongError),
    (
        400,
        payload("Input tokens exceed the configured limit.", "invalid_request_error", "context_length_exceeded"),
        ContextTooLongError,
    ),
    (
        400,
        payload(
            "the request exceeds the available context size, try increasing it",
            "exceed_context_size_error",
            400,
            n_ctx=8192,
        ),
        ContextTooLongError,
    ),
    (
        400,
        payload("the request exceeds the available context size, try increasing it", "invalid_request_error"),
        ContextTooLongError,
    ),
    (
        401,
        payload("Incorrect API key provided: sk-test.", "invalid_request_error", "invalid_api_key"),
        AuthenticationError,
    ),
    (404, payload("The model `gpt-9` does not exist", "invalid_request_error", "model_not_found"), BadRequestError),
    (429, payload("Rate limit reached for gpt-4o-mini", "requests", "rate_limit_exceeded"), RateLimitError),
    (500, payload("The server had an error while processing your request.", "server_error"), ServerError),
    (529, payload("Overloaded", "overloaded_error"), OverloadedError),
]


@pytest.mark.parametrize(("status", "body", "expected"), ERRORS)
def test_http_errors_map_to_the_most_specific_class(
    status: int, body: dict[str, Any], expected: type[ProviderHTTPError]
) -> None:
    server = Server(error(status, body))
    with pytest.raises(ProviderHTTPError) as caught:
        send(provider(server, name="deepseek"))
    exc = caught.value
    assert type(exc) is expected
    assert exc.status_code == status
    hint = "; check the API key" if expected is AuthenticationError else ""
    where = r" \(http://127\.0\.0\.1:8080/v1/chat/completions, 1 attempt in \d+\.\d s\)"
    assert re.fullmatch(re.escape(f"deepseek: {status} {body['type']}: {body['message']}{hint}") + where, str(exc))
    assert exc.body == body
    assert exc.headers["x-request-id"] == "req_123"
    assert isinstance(exc.__cause__, openai.APIStatusError)
    assert len(server.requests) == 1


@pytest.mark.parametrize(
    ("failure", "expected"),
    [
        (httpx2.ReadTimeout("timed out"), ProviderTimeout),
        (httpx2.ConnectError("[Errno 111] Connection refused"), ProviderConnectionError),
    ],
)
def test_no_answer_maps_to_connection_errors(failure: Exception, expected: type[Exception]) -> None:
    with pytest.raises(ProviderConnectionError) as caught:
        send(provider(Server(failure)))
    assert type(caught.value) is expected
    assert isinstance(caught.value.__cause__, openai.APIConnectionError)


@pytest.mark.parametrize("status", [429, 529])
def test_retries_then_succeeds(status: int) -> None:
    server = Server(error(status, {"message": "busy", "type": "x"}, FAST_RETRY), text_reply("done"))
    assert send(provider(server, max_retries=1)).message.text == "done"
    assert len(server.requests) == 2


def test_a_400_is_never_retried() -> None:
    server = Server(error(400, {"message": "bad", "type": "invalid_request_error"}, FAST_RETRY), text_reply())
    with pytest.raises(BadRequestError):
        send(provider(server, max_retries=4))
    assert len(server.requests) == 1


def test_exhausted_retries_surface_the_rate_limit() -> None:
    limited = {"message": "Rate limit reached", "type": "requests", "code": "rate_limit_exceeded"}
    server = Server(error(429, limited, FAST_RETRY), error(429, limited, FAST_RETRY))
    with pytest.raises(RateLimitError) as caught:
        send(provider(server, max_retries=1))
    assert caught.value.status_code == 429
    assert len(server.requests) == 2


@pytest.mark.parametrize(
    ("name", "model"), [("openai", "gpt-4o-mini"), ("deepseek", "deepseek-chat"), ("moonshot", "kimi-k2-0905-preview")]
)
def test_pricing_follows_the_profile_name(name: str, model: str) -> None:
    p = provider(Server(), name=name, model=model)
    full = p.profile.price(Usage(input_tokens=10_000, output_tokens=500))
    cached = p.profile.price(Usage(input_tokens=10_000, output_tokens=500, cache_read_tokens=8_000))
    assert full is not None and full > 0
    assert cached is not None and 0 < cached < full
    window = p.profile.context_window
    assert isinstance(window, int) and window > 0


def test_unknown_endpoints_have_no_price_or_window() -> None:
    local = provider(Server(), name="local", model="gpt-4o-mini")
    assert local.profile.price(Usage(input_tokens=10, output_tokens=10)) is None
    assert local.profile.context_window is None
    explicit = provider(
        Server(), name="local", model="deepseek-chat", pricing_provider_id="deepseek", context_window=8192
    )
    assert explicit.profile.price(Usage(input_tokens=10, output_tokens=10)) is not None
    assert explicit.profile.context_window == 8192
    assert explicit.count_tokens(Prompt((), (), conversation())) is None


def test_an_unknown_tool_mode_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="json_schema"):
        provider(Server(), tool_mode="xml")
