"""Streaming on both wires, through the real SDKs and real sockets: the same answer as ``send``,
text deltas as they arrive, and every way a stream can break."""

from __future__ import annotations

import _thread
import json
import signal
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from tests.faults import server as faults
from tests.faults import wire
from tests.faults.kit import ADAPTER_KITS, KITS, Events, Kit, assert_no_secret, body, same
from tests.faults.server import FaultServer
from tiny_agent.errors import (
    OverloadedError,
    ProviderConnectionError,
    ProviderError,
    ProviderResponseError,
    ProviderTimeout,
    ServerError,
)
from tiny_agent.providers.openai.adapter import OpenAICompatProvider
from tiny_agent.types import Message, Prompt, RetryNotice, TextDelta, ToolSpec, ToolUseBlock

KIT = {k.name: k for k in KITS}

ANSWERS: list[Any] = [
    ("anthropic", wire.anthropic_message([wire.text_block("A streamed answer, long enough for pieces.")])),
    (
        "anthropic",
        wire.anthropic_message(
            [
                {"type": "thinking", "thinking": "Look first.", "signature": "EqQBCgIYAh"},
                wire.text_block("Reading it."),
                wire.text_block("   "),
                wire.tool_use("read_file", {"path": "docs/ü ✓.md", "n": [1, 2]}),
            ],
            {
                "input_tokens": 50,
                "cache_creation_input_tokens": 200,
                "cache_read_input_tokens": 3000,
                "output_tokens": 9,
            },
            "tool_use",
        ),
    ),
    ("anthropic", wire.anthropic_message([wire.text_block("cut at the lim")], None, "max_tokens")),
    ("anthropic", wire.anthropic_message([wire.text_block("odd \ud800 text, emoji 😀")])),
    # Line breaks other than CR and LF, raw inside the JSON of an event: SSE does not split there.
    (
        "anthropic",
        wire.anthropic_message(
            [
                {"type": "thinking", "thinking": "a\u2028b\u2029c\x85d\x0be\x0cf\x1cg", "signature": "EqQBCgIYAh"},
                wire.text_block("quoted: \u2028 \u2029 \x85 \x1e and a long enough tail for pieces"),
            ]
        ),
    ),
    ("openai", wire.openai_completion("A streamed answer, long enough for pieces.")),
    (
        "openai",
        wire.openai_completion(
            "Calling two.",
            tool_calls=[wire.function_call("read_file", '{"path": "a"}'), wire.function_call("list_dir", "", "call_2")],
            finish_reason="tool_calls",
            usage={"prompt_tokens": 1500, "completion_tokens": 8, "prompt_cache_hit_tokens": 1280},
        ),
    ),
    (
        "openai",
        wire.openai_completion(
            "local",
            usage={"prompt_tokens": 1200, "completion_tokens": 40, "prompt_tokens_details": {"cached_tokens": 1024}},
            timings={"cache_n": 1024, "prompt_n": 176, "prompt_ms": 212.75},
        ),
    ),
    ("openai", wire.openai_completion(None, refusal="No.")),
    ("openai", wire.openai_completion("quoted: \u2028 \u2029 \x85 \x1d and a long enough tail for pieces")),
]


@pytest.mark.parametrize(("name", "answer"), ANSWERS, ids=[f"{n}-{i}" for i, (n, _) in enumerate(ANSWERS)])
def test_a_stream_gives_the_same_response_as_send(server: FaultServer, name: str, answer: dict[str, Any]) -> None:
    kit = KIT[name]
    url = server.route(faults.reply(answer))
    provider = kit.provider(url)
    events = Events()
    streamed = provider.stream(body(provider), on_event=events)
    whole = provider.send(body(provider))
    assert same(streamed, whole), (streamed, whole)
    deltas = [e for e in events if isinstance(e, TextDelta)]
    if len(whole.message.text) > wire.PIECE and whole.stop_reason != "refusal":
        assert len(deltas) > 1
        assert events.text.strip() == whole.message.text.strip()


def test_the_openai_stream_asks_for_usage(server: FaultServer) -> None:
    kit = KIT["openai"]
    url = server.route(faults.reply(kit.text()))
    provider = kit.provider(url)
    provider.stream(body(provider))
    [seen] = server.seen(url)
    assert seen.body["stream"] is True
    assert seen.body["stream_options"] == {"include_usage": True}


def test_usage_comes_from_the_final_event(server: FaultServer, kit: Kit) -> None:
    usage = (
        {"input_tokens": 7, "cache_read_input_tokens": 93, "output_tokens": 321}
        if kit.name == "anthropic"
        else {"prompt_tokens": 100, "completion_tokens": 321, "prompt_tokens_details": {"cached_tokens": 93}}
    )
    events = kit.events(kit.text("counted", usage=usage))
    final = events[-2]  # message_delta before message_stop; the usage chunk before [DONE]
    assert final[1]["usage"]["output_tokens" if kit.name == "anthropic" else "completion_tokens"] == 321
    url = server.route(faults.stream(events))
    got = kit.provider(url).stream(body(kit.provider(url))).usage
    assert (got.input_tokens, got.output_tokens, got.cache_read_tokens) == (100, 321, 93)


def test_an_openai_stream_without_its_usage_chunk_has_unknown_usage(server: FaultServer) -> None:
    kit = KIT["openai"]
    events = wire.openai_chunks(kit.text("no usage"), include_usage=False)
    url = server.route(faults.stream(events))
    got = kit.provider(url).stream(body(kit.provider(url))).usage
    assert (got.input_tokens, got.output_tokens) == (None, None)


# -- broken streams -------------------------------------------------------------------------------


def broken(kit: Kit, fault: faults.Fault, server: FaultServer, expected: type[ProviderError], **kw: Any) -> Any:
    url = server.route(fault, faults.reply(kit.text("a retry would have worked")))
    events = Events()
    provider = kit.provider(url, **kw)
    with pytest.raises(expected) as caught:
        provider.stream(body(provider), on_event=events)
    assert_no_secret(caught.value)
    assert len(server.seen(url)) == 1, "a stream that started is never retried"
    assert not [e for e in events if isinstance(e, RetryNotice)]
    return caught.value, events


LONG = "This answer streams in many pieces and is cut somewhere in the middle of it."


def test_a_stream_cut_mid_body_is_a_connection_error(server: FaultServer, kit: Kit) -> None:
    error, events = broken(kit, faults.cut(kit.text(LONG)), server, ProviderConnectionError)
    assert str(error).startswith(f"{kit.name}: connection lost: ")
    assert 0 < len(events.text) < len(LONG)  # some text was shown; none of it became a response


def test_a_stream_reset_mid_body_is_a_connection_error(server: FaultServer, kit: Kit) -> None:
    events = kit.events(kit.text(LONG))
    broken(kit, faults.stream(events[:4], ending="reset"), server, ProviderConnectionError)


def test_a_stream_that_ends_before_its_stop_reason_is_cut(server: FaultServer, kit: Kit) -> None:
    events = kit.events(kit.text(LONG))
    finish = "stop reason" if kit.name == "anthropic" else "finish reason"
    error, _ = broken(kit, faults.stream(events[:5]), server, ProviderResponseError)
    assert f"the stream ended before the reply did (no {finish}); nothing was kept" in str(error)


def test_an_empty_stream_is_cut(server: FaultServer, kit: Kit) -> None:
    error, _ = broken(kit, faults.stream([]), server, ProviderResponseError)
    assert "the stream ended before its first event" in str(error)


@pytest.mark.parametrize(
    ("kind", "expected"), [("overloaded_error", OverloadedError), ("api_error", ServerError), ("odd", ServerError)]
)
def test_an_error_event_mid_stream(server: FaultServer, kit: Kit, kind: str, expected: type[ProviderError]) -> None:
    events = kit.events(kit.text(LONG))
    fault = faults.stream([*events[:4], kit.error_event(kind, "Overloaded"), *events[4:]])
    error, _ = broken(kit, fault, server, expected)
    assert str(error).startswith(f"{kit.name}: error in the answer: {kind}: Overloaded (")
    assert error.status_code == 200


def test_an_error_event_before_anything_else_is_retried(server: FaultServer, kit: Kit) -> None:
    url = server.route(faults.stream([kit.error_event("overloaded_error", "Overloaded")]), faults.reply(kit.text()))
    events = Events()
    assert kit.provider(url).stream(body(kit.provider(url)), on_event=events).message.text == "Hello!"
    assert isinstance(events[0], RetryNotice)
    assert len(server.seen(url)) == 2


def test_a_stream_that_stalls_times_out_without_retry(server: FaultServer, kit: Kit) -> None:
    events = kit.events(kit.text(LONG))
    error, _ = broken(kit, faults.stream(events[:4], ending="stall", stall=5), server, ProviderTimeout, timeout=0.3)
    assert "no answer within 0.3 s" in str(error)


def test_an_event_that_is_not_json(server: FaultServer, kit: Kit) -> None:
    events = kit.events(kit.text(LONG))
    error, _ = broken(kit, faults.stream([*events[:3], ("message_delta", "{oops")]), server, ProviderResponseError)
    assert "is not JSON" in str(error)


def test_html_in_answer_to_a_stream_request(server: FaultServer, kit: Kit) -> None:
    page = b"<html><body>Gateway Timeout</body></html>"
    error, _ = broken(kit, faults.raw(200, page, "text/html"), server, ProviderResponseError)
    assert "'<html><body>Gateway Timeout" in str(error)


def test_a_whole_answer_to_a_stream_request_still_works(server: FaultServer, kit: Kit) -> None:
    answer = kit.text("the server ignored stream")
    url = server.route(faults.raw(200, json.dumps(answer).encode(), "application/json"))
    events = Events()
    response = kit.provider(url).stream(body(kit.provider(url)), on_event=events)
    assert response.message.text == events.text == "the server ignored stream"


@pytest.fixture
def ctrl_c_reaches_python() -> Iterator[None]:
    """A Ctrl-C that Python hears: a process started in the background by a shell without job control
    inherits SIGINT ignored, and then ``interrupt_main`` does nothing (the test would wait forever)."""
    before = signal.getsignal(signal.SIGINT)
    if before is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, before)


@pytest.mark.parametrize("how", ["signal", "callback"])
@pytest.mark.usefixtures("ctrl_c_reaches_python")
def test_ctrl_c_closes_the_stream_and_propagates(server: FaultServer, kit: Kit, how: str) -> None:
    disconnected = threading.Event()
    url = server.route(faults.trickle(kit.events(kit.text(LONG))[:5], disconnected))
    provider = kit.provider(url)
    interrupted = threading.Event()

    def on_event(event: Any) -> None:
        if isinstance(event, TextDelta) and not interrupted.is_set():
            interrupted.set()
            if how == "callback":
                raise KeyboardInterrupt
            # A real Ctrl-C arrives while the main thread waits on the socket.
            threading.Timer(0.1, _thread.interrupt_main).start()

    with pytest.raises(KeyboardInterrupt):
        provider.stream(body(provider), on_event=on_event)
    assert disconnected.wait(3), "the connection was left open"


# -- JSON tool mode -------------------------------------------------------------------------------


def json_mode(url: str) -> tuple[OpenAICompatProvider, dict[str, Any]]:
    provider = OpenAICompatProvider(model="m", api_key="k", base_url=f"{url}/v1", tool_mode="json_schema")
    tools = (ToolSpec("read_file", "Read a file.", {"type": "object", "properties": {"path": {"type": "string"}}}),)
    return provider, provider.render(Prompt(("s",), tools, (Message.user("hi"),)))


def test_json_tool_mode_streams_the_answer_text(server: FaultServer) -> None:
    answer = 'Two "quoted" words,\na newline, \\ and ✓ \U0001f600 done.'
    url = server.route(faults.reply(wire.openai_completion(json.dumps({"answer": answer}))))
    provider, request = json_mode(url)
    events = Events()
    response = provider.stream(request, on_event=events)
    assert response.message.text == events.text == answer
    assert len([e for e in events if isinstance(e, TextDelta)]) > 3


def test_json_tool_mode_does_not_stream_a_tool_call(server: FaultServer) -> None:
    call = json.dumps({"tool": "read_file", "arguments": {"path": "README.md"}})
    url = server.route(faults.reply(wire.openai_completion(call)))
    provider, request = json_mode(url)
    events = Events()
    response = provider.stream(request, on_event=events)
    assert events == []
    assert response.stop_reason == "tool_use"
    [block] = response.message.content
    assert isinstance(block, ToolUseBlock) and block.input == {"path": "README.md"}
    assert same(response, provider.send(request)) is False  # the call id is new each time...
    assert provider.send(request).message.tool_uses[0].input == block.input  # ...the call is the same


@pytest.fixture(params=ADAPTER_KITS, ids=lambda k: k.label)
def kit(request: pytest.FixtureRequest) -> Kit:
    return request.param  # type: ignore[no-any-return]
