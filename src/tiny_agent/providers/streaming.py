"""A streamed answer, from its first event to the ``ModelResponse``: the part both adapters share.

An adapter opens the stream inside its retry loop (``open_stream`` reads up to the first event, so
a failure before it is retried) and then hands it to ``consume``, which folds the events with the
wire's accumulator and reads the result with the wire's ``process``: the same reading a whole
answer gets. Errors raised while the events are read go through the adapter's ``boundary``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from typing import Any, Protocol

import httpx2

from tiny_agent.providers.decode import is_event_stream, parse_json, reading, whole_json
from tiny_agent.providers.lines import iter_sse, sse_lines
from tiny_agent.providers.reasoning_shown import reasoning_text
from tiny_agent.types import ModelResponse, OnProviderEvent, TextDelta, ThinkingDelta

__all__ = ["Accumulating", "OpenedStream", "consume", "open_stream", "whole_deltas"]


class Accumulating(Protocol):
    """A wire's accumulator: events in, the whole answer's JSON out."""

    def feed(self, payload: object) -> list[TextDelta | ThinkingDelta]:
        """Take one event's payload; return the pieces of answer and reasoning text it adds."""
        ...

    def result(self, provider: str) -> dict[str, Any]:
        """The whole answer; raises ``ProviderResponseError`` for a stream cut before its end."""
        ...


class OpenedStream:
    """A streamed answer up to its first event: after this point a failure is not retried.

    Iterating gives the events' JSON payloads, the first one included. ``whole`` is set instead
    when the server answered the streaming request with one JSON body (some servers ignore
    ``stream``). ``close`` releases the connection; the adapters close in a ``finally``."""

    def __init__(
        self, response: httpx2.Response, events: Iterator[Any], first: Any = None, whole: dict[str, Any] | None = None
    ) -> None:
        self.response = response
        self.whole = whole
        self._events = events
        self._first = first

    def __iter__(self) -> Iterator[Any]:
        if self._first is not None:
            first, self._first = self._first, None
            yield first
        yield from self._events

    def close(self) -> None:
        self.response.close()


def open_stream(response: httpx2.Response, check: Callable[[str | None, Any], None]) -> OpenedStream:
    """Read ``response`` up to its first event. ``check(event, payload)`` raises for an error event."""
    try:
        if not is_event_stream(response):
            response.read()
            whole = whole_json(response)
            check(None, whole)
            return OpenedStream(response, iter(()), whole=whole)
        events = _payloads(response, check)
        return OpenedStream(response, events, next(events, None))
    except BaseException:
        response.close()
        raise


def _payloads(response: httpx2.Response, check: Callable[[str | None, Any], None]) -> Iterator[Any]:
    for event, data in iter_sse(sse_lines(response.iter_text())):
        if data.strip() == "[DONE]":  # OpenAI's end marker
            return
        if event == "ping":
            continue
        payload = parse_json(data, f"a stream event ({event or 'data'})")
        check(event, payload)
        yield payload


def consume(
    opened: OpenedStream,
    *,
    provider: str,
    boundary: Callable[[], AbstractContextManager[None]],
    accumulator: Accumulating,
    process: Callable[[dict[str, Any]], ModelResponse],
    on_event: OnProviderEvent | None,
) -> ModelResponse:
    """The rest of an opened stream as one ``ModelResponse``; reasoning and text deltas go to
    ``on_event`` as they arrive. The caller closes ``opened`` (also on Ctrl-C) and gives errors their ending."""
    if opened.whole is not None:
        with reading(provider):
            response = process(opened.whole)
        if on_event is not None:
            for delta in whole_deltas(response):
                on_event(delta)
        return response
    with boundary():
        for payload in opened:
            with reading(provider):
                deltas = accumulator.feed(payload)
            for delta in deltas:
                if delta.text and on_event is not None:  # outside ``reading``: the listener's errors stay its own
                    on_event(delta)
    with reading(provider):
        return process(accumulator.result(provider))


def whole_deltas(response: ModelResponse) -> list[TextDelta | ThinkingDelta]:
    """The deltas a reply that arrived whole stands for: its reasoning first (a placeholder for what has
    no text to show), then its text."""
    deltas: list[TextDelta | ThinkingDelta] = [ThinkingDelta(reasoning_text(response.message))]
    deltas.append(TextDelta(response.message.text))
    return [d for d in deltas if d.text]
