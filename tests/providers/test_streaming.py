"""``stream()`` on both wires through the real SDKs over ``httpx2.MockTransport``: a normal stream,
usage in the final event, a cut stream, an error event. (The real-socket cases are in tests/faults.)"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx2
import pytest

from tests.faults import wire
from tiny_agent.errors import OverloadedError, ProviderConnectionError, ProviderResponseError, ServerError
from tiny_agent.providers.anthropic.adapter import AnthropicProvider
from tiny_agent.providers.openai.adapter import OpenAICompatProvider
from tiny_agent.types import Message, Prompt, ProviderEvent, TextDelta, Usage

TEXT = "Streaming works: the reply arrives in pieces."


def transport(events: list[wire.Event], cut: bool = False) -> tuple[httpx2.Client, list[Any]]:
    seen: list[Any] = []

    def body() -> Iterator[bytes]:
        for event in events:
            yield wire.sse([event])
        if cut:
            raise httpx2.RemoteProtocolError("peer closed connection without sending complete message body")

    def handler(request: httpx2.Request) -> httpx2.Response:
        seen.append(request)
        return httpx2.Response(200, headers={"content-type": "text/event-stream"}, content=body())

    return httpx2.Client(transport=httpx2.MockTransport(handler)), seen


def provider(wire_name: str, client: httpx2.Client) -> AnthropicProvider | OpenAICompatProvider:
    if wire_name == "anthropic":
        return AnthropicProvider(model="claude-haiku-4-5", api_key="sk-ant-x", http_client=client, max_retries=3)
    return OpenAICompatProvider(model="gpt-4o-mini", api_key="sk-x", http_client=client, max_retries=3)


def events_of(wire_name: str, usage: dict[str, Any]) -> list[wire.Event]:
    if wire_name == "anthropic":
        return wire.anthropic_events(wire.anthropic_message([wire.text_block(TEXT)], usage))
    return wire.openai_chunks(wire.openai_completion(TEXT, usage=usage))


USAGE = {
    "anthropic": ({"input_tokens": 12, "cache_read_input_tokens": 88, "output_tokens": 41}, Usage(100, 41, 88)),
    "openai": (
        {"prompt_tokens": 100, "completion_tokens": 41, "prompt_tokens_details": {"cached_tokens": 88}},
        Usage(100, 41, 88),
    ),
}


def run(p: AnthropicProvider | OpenAICompatProvider, heard: list[ProviderEvent]) -> Any:
    return p.stream(p.render(Prompt((), (), (Message.user("hi"),))), on_event=heard.append)


@pytest.fixture(params=["anthropic", "openai"])
def wire_name(request: pytest.FixtureRequest) -> str:
    return request.param  # type: ignore[no-any-return]


def test_a_normal_stream_with_usage_in_the_final_event(wire_name: str) -> None:
    raw_usage, expected = USAGE[wire_name]
    client, seen = transport(events_of(wire_name, raw_usage))
    heard: list[ProviderEvent] = []
    response = run(provider(wire_name, client), heard)
    assert response.message.text == TEXT
    assert [e.text for e in heard if isinstance(e, TextDelta)] == wire.pieces(TEXT)
    got = response.usage
    assert (got.input_tokens, got.output_tokens, got.cache_read_tokens) == (
        expected.input_tokens,
        expected.output_tokens,
        expected.cache_read_tokens,
    )
    assert response.stop_reason == "end_turn"
    assert len(seen) == 1


def test_a_cut_stream_raises_and_is_not_retried(wire_name: str) -> None:
    events = events_of(wire_name, USAGE[wire_name][0])
    client, seen = transport(events[:5], cut=True)
    heard: list[ProviderEvent] = []
    with pytest.raises(ProviderConnectionError, match="connection lost: peer closed connection"):
        run(provider(wire_name, client), heard)
    assert len(seen) == 1
    assert heard and all(isinstance(e, TextDelta) for e in heard)


def test_a_stream_that_just_stops_is_cut(wire_name: str) -> None:
    client, _ = transport(events_of(wire_name, USAGE[wire_name][0])[:5])
    with pytest.raises(ProviderResponseError, match="the stream ended before the reply did"):
        run(provider(wire_name, client), [])


def test_an_error_event(wire_name: str) -> None:
    events = events_of(wire_name, USAGE[wire_name][0])
    if wire_name == "anthropic":
        error: wire.Event = wire.anthropic_error_event("overloaded_error", "Overloaded")
        expected: type[Exception] = OverloadedError
    else:
        error, expected = wire.openai_error_chunk("server_error", "The server had an error"), ServerError
    client, seen = transport([*events[:4], error])
    with pytest.raises(expected, match="error in the answer"):
        run(provider(wire_name, client), [])
    assert len(seen) == 1
