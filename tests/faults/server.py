"""A local HTTP server on 127.0.0.1 that misbehaves on purpose, for the fault-injection suite.

Each test scripts a route: ``url = server.route(fault, fault, ...)`` returns a base URL whose
requests get the faults in order (the last one repeats), and ``server.seen(url)`` the requests that
arrived. A fault is a function of the handler and the request body; the ones here cover what a
remote API or a proxy in front of it can do: error statuses with or without ``retry-after``, a
connection that is accepted and never answered, a reset, a body cut short, HTML or non-JSON with a
200, and streams that are normal, cut, stopped early, stalled or carry an error event.

A ``reply`` answers in the form the request asked for: a whole JSON body, or (``"stream": true``)
the same answer as server-sent events, so one script serves ``send`` and ``stream`` alike.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import socket
import struct
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.faults.wire import Event, anthropic_events, openai_chunks, sse

Fault = Callable[["Handler", dict[str, Any]], None]


@dataclass
class Seen:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]


@dataclass
class Route:
    faults: list[Fault]
    seen: list[Seen] = field(default_factory=list)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: FaultServer

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length)
        body = json.loads(raw) if raw else {}
        route = self.server.routes.get(self.path.split("/")[1])
        if route is None:
            self.send_error(404, "no such route")
            return
        route.seen.append(Seen(self.path, {k.lower(): v for k, v in self.headers.items()}, body))
        fault = route.faults.pop(0) if len(route.faults) > 1 else route.faults[0]
        self.close_connection = True
        fault(self, body)

    def send(self, status: int, payload: bytes, content_type: str, headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("content-type", content_type)
        self.send_header("content-length", str(len(payload)))
        self.send_header("connection", "close")
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(payload)

    def start_chunked(self, content_type: str = "text/event-stream") -> None:
        self.send_response(200)
        self.send_header("content-type", content_type)
        self.send_header("transfer-encoding", "chunked")
        self.send_header("connection", "close")
        self.end_headers()

    def chunk(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()

    def end_chunked(self) -> None:
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def reset(self) -> None:
        """Close with a TCP reset (RST) instead of an orderly close."""
        self.wfile.flush()
        self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.connection.close()

    def finish(self) -> None:
        with contextlib.suppress(OSError):  # the fault closed or reset the socket itself
            super().finish()

    def log_message(self, format: str, *args: Any) -> None:
        pass


class FaultServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), Handler)
        self.routes: dict[str, Route] = {}
        self.stopping = threading.Event()
        self._ids = itertools.count(1)
        self._thread = threading.Thread(target=self.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()

    @property
    def origin(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    def route(self, *faults: Fault) -> str:
        """A base URL (``http://127.0.0.1:PORT/rN``) whose requests get ``faults`` in order."""
        name = f"r{next(self._ids)}"
        self.routes[name] = Route(list(faults))
        return f"{self.origin}/{name}"

    def seen(self, url: str) -> list[Seen]:
        return self._route(url).seen

    def _route(self, url: str) -> Route:
        return self.routes[url.removeprefix(self.origin).split("/")[1]]

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a client that went away mid-answer is what these tests are about

    def close(self) -> None:
        self.stopping.set()
        self.shutdown()
        self.server_close()


# -- faults ---------------------------------------------------------------------------------------


def status(code: int, payload: Any, headers: dict[str, str] | None = None) -> Fault:
    """An error status with a JSON body (or a str body sent as text/html)."""

    def fault(h: Handler, body: dict[str, Any]) -> None:
        if isinstance(payload, str):
            h.send(code, payload.encode(), "text/html", headers)
        else:
            h.send(code, json.dumps(payload).encode(), "application/json", headers)

    return fault


def raw(code: int, payload: bytes, content_type: str) -> Fault:
    """Any bytes with any status: non-JSON, HTML, a JSON value of the wrong shape."""
    return lambda h, body: h.send(code, payload, content_type)


def reply(answer: dict[str, Any]) -> Fault:
    """A good answer: whole JSON, or the same answer streamed when the request asks for a stream."""

    def fault(h: Handler, body: dict[str, Any]) -> None:
        if not body.get("stream"):
            h.send(200, json.dumps(answer).encode(), "application/json")
            return
        h.start_chunked()
        for event in events_for(answer, body):
            h.chunk(sse([event]))
        h.end_chunked()

    return fault


def refuses(fields: tuple[str, ...], answer: dict[str, Any], *, param: bool = True) -> Fault:
    """A model (or a proxy) that does not take ``fields``: a request carrying one of them anywhere
    gets OpenAI's 400 naming it (in ``param`` and the message, as OpenAI says it; with
    ``param=False`` in the message only, as Azure's "Unrecognized request argument supplied" does);
    a request without them gets ``answer``."""

    def fault(h: Handler, body: dict[str, Any]) -> None:
        found = next(((f, where) for f in fields if (where := _path_of(body, f)) is not None), None)
        if found is None:
            reply(answer)(h, body)
            return
        field, where = found
        if param:
            error = {"message": f"Unknown parameter: '{where}'.", "param": where, "code": "unknown_parameter"}
        else:
            error = {"message": f"Unrecognized request argument supplied: {field}", "param": None, "code": None}
        payload = {"error": {**error, "type": "invalid_request_error"}}
        h.send(400, json.dumps(payload).encode(), "application/json")

    return fault


def _path_of(value: Any, key: str, path: str = "") -> str | None:
    """Where ``key`` first occurs in a JSON value, as OpenAI's ``param`` names it (``messages[0].content[0].x``)."""
    if isinstance(value, dict):
        if key in value:
            return f"{path}.{key}" if path else key
        items: Any = value.items()
        return next((p for k, v in items if (p := _path_of(v, key, f"{path}.{k}" if path else k))), None)
    if isinstance(value, list):
        return next((p for i, v in enumerate(value) if (p := _path_of(v, key, f"{path}[{i}]"))), None)
    return None


def events_for(answer: dict[str, Any], body: dict[str, Any]) -> list[Event]:
    if "choices" in answer:
        include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
        return openai_chunks(answer, include_usage=include_usage)
    return anthropic_events(answer)


def stream(events: list[Event], *, ending: str = "clean", stall: float = 0.0) -> Fault:
    """Exactly ``events`` as a stream, then: "clean" (the stream ends properly, whatever it said),
    "cut" (the connection closes mid-body: no terminating chunk), "reset" (a TCP reset) or
    "stall" (nothing more is sent until ``stall`` seconds have passed)."""

    def fault(h: Handler, body: dict[str, Any]) -> None:
        h.start_chunked()
        for event in events:
            h.chunk(sse([event]))
        if ending == "clean":
            h.end_chunked()
        elif ending == "reset":
            h.reset()
        elif ending == "stall":
            h.server.stopping.wait(stall)
        # "cut": return without the terminating chunk; the connection closes

    return fault


def trickle(events: list[Event], disconnected: threading.Event) -> Fault:
    """``events``, then a keep-alive every 20 ms until the client closes the connection, which
    sets ``disconnected``."""

    def fault(h: Handler, body: dict[str, Any]) -> None:
        h.start_chunked()
        try:  # the client may close while the first events are still being written
            for event in events:
                h.chunk(sse([event]))
            while not h.server.stopping.is_set():
                time.sleep(0.02)
                h.chunk(b": keep-alive\n\n")  # an SSE comment: the client reads it and waits on
        except OSError:
            disconnected.set()

    return fault


def hang(h: Handler, body: dict[str, Any]) -> None:
    """Accept the request, never answer (until the server stops)."""
    h.server.stopping.wait(60)


def reset(h: Handler, body: dict[str, Any]) -> None:
    """Read the request, answer with a TCP reset."""
    h.reset()


def cut_body(answer: dict[str, Any]) -> Fault:
    """A 200 that promises the whole body (content-length) and closes after half of it."""

    def fault(h: Handler, body: dict[str, Any]) -> None:
        payload = json.dumps(answer).encode()
        h.send_response(200)
        h.send_header("content-type", "application/json")
        h.send_header("content-length", str(len(payload)))
        h.end_headers()
        h.wfile.write(payload[: len(payload) // 2])
        h.wfile.flush()

    return fault


def cut(answer: dict[str, Any]) -> Fault:
    """``answer`` cut in the middle, in the form asked for: half a JSON body, or a stream of half
    its events whose connection then closes."""

    def fault(h: Handler, body: dict[str, Any]) -> None:
        if not body.get("stream"):
            cut_body(answer)(h, body)
            return
        events = events_for(answer, body)
        stream(events[: len(events) // 2], ending="cut")(h, body)

    return fault


def slow_stream(opening: str, word: str, *, every: float, most: int, disconnected: threading.Event) -> Fault:
    """A Chat Completions stream that takes long on purpose, whatever the machine's speed: ``opening``
    at once, then ``word`` every ``every`` seconds, ``most`` times, then the end of the reply. It stops
    when the client goes away (which sets ``disconnected``) or the server closes, so a test that fails
    halfway leaves nothing streaming behind it."""

    def fault(h: Handler, body: dict[str, Any]) -> None:
        head = {"id": "chatcmpl-slow", "object": "chat.completion.chunk", "created": 1, "model": "slow"}

        def piece(delta: dict[str, Any], finish: str | None = None) -> bytes:
            return sse([(None, {**head, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})])

        h.start_chunked()
        try:
            h.chunk(piece({"role": "assistant", "content": opening}))
            for _ in range(most):
                if h.server.stopping.wait(every):
                    return
                h.chunk(piece({"content": word}))
            h.chunk(piece({}, "stop"))
            h.chunk(sse([(None, "[DONE]")]))
            h.end_chunked()
        except OSError:
            disconnected.set()

    return fault
