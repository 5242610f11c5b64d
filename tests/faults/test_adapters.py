"""Both adapters, through the real SDKs and real sockets, against a server that misbehaves on purpose.

Every fault must come out as one class of ``tiny_agent.errors`` with a message that says what went
wrong, where the call went and how long it tried, and never the API key.
"""

from __future__ import annotations

import json
import socket
import time
from typing import Any

import pytest

from tests.faults import server as faults
from tests.faults.kit import ADAPTER_KITS, FAST, KEY, KITS, REDACTED, Events, Kit, assert_no_secret, body
from tests.faults.server import FaultServer
from tiny_agent.errors import (
    AuthenticationError,
    BadRequestError,
    ConfigError,
    OverloadedError,
    ProviderConnectionError,
    ProviderError,
    ProviderResponseError,
    ProviderTimeout,
    RateLimitError,
    ServerError,
)
from tiny_agent.providers.anthropic.adapter import AnthropicProvider
from tiny_agent.providers.openai.adapter import OpenAICompatProvider
from tiny_agent.types import INVALID_JSON_KEY, RetryNotice, TextBlock, Usage


@pytest.fixture(params=ADAPTER_KITS, ids=lambda k: k.label)
def kit(request: pytest.FixtureRequest) -> Kit:
    return request.param  # type: ignore[no-any-return]


@pytest.fixture(params=["send", "stream"])
def mode(request: pytest.FixtureRequest) -> str:
    return request.param  # type: ignore[no-any-return]


def call(provider: AnthropicProvider | OpenAICompatProvider, mode: str, events: Events | None = None) -> Any:
    method = provider.send if mode == "send" else provider.stream
    return method(body(provider), on_event=events)


def fails(kind: type[ProviderError], provider: Any, mode: str = "send", events: Events | None = None) -> ProviderError:
    with pytest.raises(kind) as caught:
        call(provider, mode, events)
    error = caught.value
    assert_no_secret(error, error.args, getattr(error, "body", None), getattr(error, "headers", None))
    assert "\n" not in str(error)
    assert error.url == provider.url and provider.url in str(error)
    return error


def notices(events: Events) -> list[RetryNotice]:
    return [e for e in events if isinstance(e, RetryNotice)]


# -- retries --------------------------------------------------------------------------------------


def test_a_429_with_retry_after_is_retried_after_that_wait(server: FaultServer, kit: Kit, mode: str) -> None:
    url = server.route(faults.status(429, kit.error("rate_limit_error", "slow down"), FAST), faults.reply(kit.text()))
    events = Events()
    assert call(kit.provider(url), mode, events).message.text == "Hello!"
    assert len(server.seen(url)) == 2
    [notice] = notices(events)
    assert (notice.attempt, notice.max_attempts, notice.wait_seconds) == (1, 3, 0.01)
    assert notice.reason.startswith("429 ")


def test_a_429_without_retry_after_backs_off_with_jitter(server: FaultServer, kit: Kit) -> None:
    url = server.route(
        faults.status(429, kit.error("rate_limit_error", "slow down")),
        faults.status(429, kit.error("rate_limit_error", "slow down")),
        faults.reply(kit.text()),
    )
    events = Events()
    kit.provider(url, retry_backoff=0.02).send(body(kit.provider(url)), on_event=events)
    first, second = notices(events)
    assert 0.01 <= first.wait_seconds <= 0.02  # base * [0.5, 1]
    assert 0.02 <= second.wait_seconds <= 0.04  # doubled


def test_a_retry_after_beyond_the_cap_is_reported_not_slept(server: FaultServer, kit: Kit) -> None:
    url = server.route(faults.status(429, kit.error("rate_limit_error", "slow down"), {"retry-after": "3600"}))
    started = time.monotonic()
    error = fails(RateLimitError, kit.provider(url, max_retry_wait=60))
    assert time.monotonic() - started < 2
    assert len(server.seen(url)) == 1
    assert "the server asked to retry after 3600 s, longer than the 60 s tiny-agent waits at most" in str(error)
    assert "did not wait" in str(error) and "1 attempt in" in str(error)


def test_5xx_bursts_then_success(server: FaultServer, kit: Kit, mode: str) -> None:
    url = server.route(
        faults.status(500, kit.error("api_error", "Internal server error")),
        faults.status(503, "<html><body>503 Service Unavailable</body></html>"),
        faults.status(529, kit.error("overloaded_error", "Overloaded"), FAST),
        faults.reply(kit.text("made it")),
    )
    events = Events()
    assert call(kit.provider(url, max_retries=3), mode, events).message.text == "made it"
    assert [n.attempt for n in notices(events)] == [1, 2, 3]
    assert len(server.seen(url)) == 4


@pytest.mark.parametrize(
    ("status", "kind", "expected"),
    [
        (503, "api_error", ServerError),
        (529, "overloaded_error", OverloadedError),
        (429, "rate_limit_error", RateLimitError),
    ],
)
def test_when_retries_run_out_the_error_says_how_long_and_where(
    server: FaultServer, kit: Kit, status: int, kind: str, expected: type[ProviderError]
) -> None:
    url = server.route(faults.status(status, kit.error(kind, "busy"), FAST))
    events = Events()
    error = fails(expected, kit.provider(url, max_retries=2), events=events)
    assert len(server.seen(url)) == 3 == error.attempts
    assert len(notices(events)) == 2
    assert str(error).startswith(f"{kit.name}: {status} {kind}: busy (")
    assert f"({kit.provider(url).url}, 3 attempts in " in str(error)


def test_a_400_is_not_retried(server: FaultServer, kit: Kit) -> None:
    url = server.route(faults.status(400, kit.error("invalid_request_error", "bad"), FAST), faults.reply(kit.text()))
    error = fails(BadRequestError, kit.provider(url))
    assert len(server.seen(url)) == 1 == error.attempts


def test_the_sdk_does_not_retry_on_its_own(server: FaultServer, kit: Kit) -> None:
    url = server.route(faults.status(503, kit.error("api_error", "down"), FAST), faults.reply(kit.text()))
    fails(ServerError, kit.provider(url, max_retries=0))
    assert len(server.seen(url)) == 1


# -- no answer ------------------------------------------------------------------------------------


def test_a_server_that_never_answers_times_out_per_attempt(server: FaultServer, kit: Kit, mode: str) -> None:
    url = server.route(faults.hang)
    events = Events()
    started = time.monotonic()
    error = fails(ProviderTimeout, kit.provider(url, timeout=0.3, max_retries=1), mode, events)
    assert 0.6 <= time.monotonic() - started < 5
    assert f"{kit.name}: no answer within 0.3 s (the per-call timeout)" in str(error)
    assert "2 attempts in" in str(error) and len(notices(events)) == 1


def test_a_reset_is_retried_then_reported(server: FaultServer, kit: Kit) -> None:
    url = server.route(faults.reset)
    error = fails(ProviderConnectionError, kit.provider(url, max_retries=1))
    assert type(error) is ProviderConnectionError
    assert str(error).startswith(f"{kit.name}: connection lost: ")
    assert len(server.seen(url)) == 2


@pytest.mark.parametrize("fault", [faults.reset, faults.cut_body({"half": "x" * 200})], ids=["reset", "cut-body"])
def test_a_broken_answer_then_a_good_one(server: FaultServer, kit: Kit, fault: faults.Fault) -> None:
    url = server.route(fault, faults.reply(kit.text("second time")))
    assert kit.provider(url).send(body(kit.provider(url))).message.text == "second time"


def test_a_body_cut_short_is_a_connection_error(server: FaultServer, kit: Kit) -> None:
    url = server.route(faults.cut_body(kit.text("x" * 300)))
    error = fails(ProviderConnectionError, kit.provider(url, max_retries=0))
    assert str(error).startswith(f"{kit.name}: connection lost: ")


def test_a_refused_connection_names_the_url(kit: Kit) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # free once closed: nothing listens there
    provider = kit.provider(f"http://127.0.0.1:{port}", max_retries=1)
    error = fails(ProviderConnectionError, provider)
    assert str(error).startswith(f"{kit.name}: cannot connect: ")
    assert f"http://127.0.0.1:{port}/v1/" in str(error)


# -- answers we cannot read -----------------------------------------------------------------------

NOT_READABLE = [
    pytest.param(
        b"Internal error, please retry", "text/plain", "a 200 answer (text/plain) that is not JSON", id="text"
    ),
    pytest.param(
        b"<html>\n<body><h1>502 Bad Gateway</h1></body>\n</html>",
        "text/html",
        "a 200 answer (text/html) that is not JSON: '<html> <body><h1>502 Bad Gateway",
        id="html",
    ),
    pytest.param(b'{"truncated": ', "application/json", "that is not JSON", id="bad-json"),
    pytest.param(b'["a", "list"]', "application/json", "the 200 answer (application/json) is a list", id="list"),
]


@pytest.mark.parametrize(("payload", "content_type", "fragment"), NOT_READABLE)
def test_an_unreadable_200_is_a_response_error_and_not_retried(
    server: FaultServer, kit: Kit, mode: str, payload: bytes, content_type: str, fragment: str
) -> None:
    url = server.route(faults.raw(200, payload, content_type), faults.reply(kit.text()))
    error = fails(ProviderResponseError, kit.provider(url), mode)
    assert fragment in str(error)
    assert len(server.seen(url)) == 1


WRONG_SHAPES: dict[str, list[Any]] = {
    "anthropic": [
        ({"content": "hi"}, "'content' is a string, not a list"),
        ({"content": [42]}, "content[0] is int, not an object"),
        ({"content": [{"type": "text", "text": 5}]}, "content[0].text is int, not a string"),
        ({"content": [{"type": "tool_use", "name": "read_file", "input": {}}]}, "content[0].id is missing"),
        ({"content": [], "stop_reason": 7}, "'stop_reason' is int, not a string"),
    ],
    "openai": [
        ({"choices": None}, "'choices' is missing, not a list"),
        ({"choices": []}, "the answer has no choices"),
        ({"choices": [{"message": "hi"}]}, "choices[0].message is a string, not an object"),
        ({"choices": [{"message": {"tool_calls": {}}}]}, "message.tool_calls is an object, not a list"),
        (
            {"choices": [{"message": {"tool_calls": [{"function": {"arguments": "{}"}}]}}]},
            "tool_calls[0].function.name is missing",
        ),
        ({"choices": [{"message": {"content": 3}}]}, "message.content is int, not a list"),
    ],
}


KIT = {k.name: k for k in KITS}


@pytest.mark.parametrize(
    ("name", "change", "fragment"),
    [(name, change, fragment) for name, cases in WRONG_SHAPES.items() for change, fragment in cases],
)
def test_wrong_shapes_say_what_was_wrong(server: FaultServer, name: str, change: Any, fragment: str) -> None:
    kit = KIT[name]
    answer = {**kit.text(), **change}
    url = server.route(faults.raw(200, json.dumps(answer).encode(), "application/json"))
    error = fails(ProviderResponseError, kit.provider(url))
    assert f"{kit.name}: the answer cannot be read: {fragment}" in str(error)


def test_an_error_inside_a_200_is_classified_by_its_type(server: FaultServer, kit: Kit) -> None:
    payload = json.dumps(kit.error("overloaded_error", "Overloaded")).encode()
    url = server.route(faults.raw(200, payload, "application/json"), faults.reply(kit.text("after")))
    events = Events()
    assert kit.provider(url).send(body(kit.provider(url)), on_event=events).message.text == "after"
    [notice] = notices(events)
    assert notice.reason == "error in the answer: overloaded_error: Overloaded"


# -- answers we can read, odd as they are ---------------------------------------------------------

USAGES = {
    "anthropic": [
        ("missing", Usage()),
        (None, Usage()),
        ({"output_tokens": 5}, Usage(output_tokens=5)),
        ({"input_tokens": "12", "output_tokens": 4}, Usage(output_tokens=4)),
        ({"input_tokens": 10, "cache_read_input_tokens": 30, "output_tokens": 2}, Usage(40, 2, 30)),
    ],
    "openai": [
        ("missing", Usage()),
        (None, Usage()),
        ({"completion_tokens": 3}, Usage(output_tokens=3)),
        ({"prompt_tokens": -1, "completion_tokens": True}, Usage()),
        ({"prompt_tokens": 50, "prompt_tokens_details": {"cached_tokens": 0}}, Usage(50, None, 0)),
    ],
}


@pytest.mark.parametrize(
    ("name", "usage", "expected"),
    [(name, usage, expected) for name, cases in USAGES.items() for usage, expected in cases],
)
def test_missing_null_or_partial_usage_is_unknown_never_zero(
    server: FaultServer, mode: str, name: str, usage: Any, expected: Usage
) -> None:
    kit = KIT[name]
    answer = kit.text("fine")
    if usage == "missing":
        del answer["usage"]
    else:
        answer["usage"] = usage
    url = server.route(faults.reply(answer))
    got = call(kit.provider(url), mode).usage
    fields = (got.input_tokens, got.output_tokens, got.cache_read_tokens, got.cache_write_tokens)
    assert fields == (expected.input_tokens, expected.output_tokens, expected.cache_read_tokens, None)


def test_max_tokens_on_an_answer_keeps_the_text(server: FaultServer, kit: Kit, mode: str) -> None:
    stop = "max_tokens" if kit.name == "anthropic" else "length"
    url = server.route(faults.reply(kit.text("The answer is cut in the mid", stop=stop)))
    response = call(kit.provider(url), mode)
    assert (response.stop_reason, response.message.text) == ("max_tokens", "The answer is cut in the mid")


def test_max_tokens_on_a_tool_call_is_flagged(server: FaultServer, kit: Kit, mode: str) -> None:
    stop = "max_tokens" if kit.name == "anthropic" else "length"
    cut = '{"path": "config.json", "content": "{\\"name\\": \\"de'
    url = server.route(faults.reply(kit.tool("write_file", cut, stop=stop)))
    response = call(kit.provider(url), mode)
    assert response.stop_reason == "max_tokens"
    [block] = response.message.tool_uses
    assert block.input == {INVALID_JSON_KEY: cut}


def test_a_refusal_is_its_own_stop_reason(server: FaultServer, kit: Kit, mode: str) -> None:
    url = server.route(faults.reply(kit.refusal()))
    response = call(kit.provider(url), mode)
    assert (response.stop_reason, response.message.text) == ("refusal", "I can't help with that.")


def test_openai_content_filter_is_a_refusal(server: FaultServer) -> None:
    kit = KITS[1]
    url = server.route(faults.reply(kit.text("", stop="content_filter")))
    response = kit.provider(url).send(body(kit.provider(url)))
    assert (response.stop_reason, response.message.content) == ("refusal", ())


def test_an_empty_reply_has_no_blocks(server: FaultServer, kit: Kit, mode: str) -> None:
    url = server.route(faults.reply(kit.empty()))
    response = call(kit.provider(url), mode)
    assert (response.message.content, response.stop_reason) == ((), "end_turn")


@pytest.mark.parametrize(
    ("tool_input", "expected"),
    [
        ("not json", {INVALID_JSON_KEY: "not json"}),
        ('{"path": "README.md"}', {"path": "README.md"}),
        (["a", 1], {INVALID_JSON_KEY: '["a", 1]'}),
        (7, {INVALID_JSON_KEY: "7"}),
        (None, {}),
    ],
)
def test_an_anthropic_tool_input_that_is_not_an_object(server: FaultServer, tool_input: Any, expected: Any) -> None:
    kit = KITS[0]
    url = server.route(faults.reply(kit.tool("read_file", tool_input)))
    [block] = kit.provider(url).send(body(kit.provider(url))).message.tool_uses
    assert block.input == expected


def test_a_lone_surrogate_becomes_a_replacement_character(server: FaultServer, kit: Kit, mode: str) -> None:
    answer = kit.text("bad \ud800 char")
    url = server.route(faults.reply(answer))
    response = call(kit.provider(url), mode)
    assert response.message.content == (TextBlock("bad \ufffd char"),)
    response.message.text.encode("utf-8")  # printable and storable
    url = server.route(faults.reply(kit.tool("read_file", {"path": "a\udc00b"})))
    assert call(kit.provider(url), mode).message.tool_uses[0].input == {"path": "a\ufffdb"}


# -- keys -----------------------------------------------------------------------------------------


def test_a_401_names_the_variable_and_never_shows_the_key(server: FaultServer, kit: Kit) -> None:
    echoed = kit.error("authentication_error", f"invalid x-api-key: {KEY}")
    url = server.route(faults.status(401, echoed, {"x-echo-key": KEY}))
    error = fails(AuthenticationError, kit.provider(url))
    assert isinstance(error, ConfigError)
    assert str(error).startswith(
        f"{kit.name}: 401 authentication_error: invalid x-api-key: {REDACTED}; check {kit.key_env}"
    )
    assert REDACTED in json.dumps(error.body) and error.headers["x-echo-key"] == REDACTED  # type: ignore[attr-defined]
    assert len(server.seen(url)) == 1


def test_without_a_key_variable_the_401_says_check_the_key(server: FaultServer, kit: Kit) -> None:
    url = server.route(faults.status(403, kit.error("permission_error", "no access")))
    error = fails(AuthenticationError, kit.provider(url, key_env=None))
    assert "no access; check the API key (" in str(error)


@pytest.mark.parametrize("url", ["not a url", "ftp://example.com", "http://", "127.0.0.1:8080", "http://h:port/v1"])
def test_a_base_url_that_is_not_http_is_refused_at_construction(kit: Kit, url: str) -> None:
    with pytest.raises(ConfigError, match="is not an http\\(s\\) URL with a host"):
        kit.provider(url)


def test_the_sent_request_carries_the_key_and_the_body(server: FaultServer, kit: Kit) -> None:
    url = server.route(faults.reply(kit.text()))
    provider = kit.provider(url)
    provider.send(body(provider))
    [seen] = server.seen(url)
    assert seen.path.endswith(kit.path())
    assert KEY in (seen.headers.get("x-api-key", "") + seen.headers.get("authorization", ""))
    assert seen.body == body(provider)
