"""A recording proxy: another program's model calls stored as a session, so ``lint``, ``stats``,
``replay`` and ``view`` work on them.

The proxy listens on 127.0.0.1; the program's SDK reaches it through ``ANTHROPIC_BASE_URL`` and
``OPENAI_BASE_URL`` (``Recorder.environment``), and every request goes on to the real base URL with
its headers (the key included) unchanged; the answer comes back as it came. Each request that
carries ``messages`` is stored as a call: its body (under ``request`` in the ``call`` entry, which the
view and ``lint --session`` read), then its usage, cost and time in a ``call_done`` entry, priced by
the wire's profile, with its prefix layers' fingerprint and the cause of a cache miss
(``record_prefix``); a refused one (4xx, 5xx) in a ``call_failed`` entry with the provider's reason.
The session is made at the first call (a program that makes none leaves none) and ends with a ``stop``
entry when the program does.
A streamed answer (``text/event-stream``) is passed on piece by piece as it
arrives (chunked), a copy kept to read its usage from the events at the end. Nothing the program
sends is changed.
"""

from __future__ import annotations

import json
import queue
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from http.client import HTTPResponse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tiny_agent.context.entries import CallDone, CallFailed, CallOpened, RunChange, RunStop
from tiny_agent.context.entry_codec import encode
from tiny_agent.context.tokens import CallRecord
from tiny_agent.errors import TinyAgentError
from tiny_agent.observe.record_prefix import body_fingerprint, recorded_miss, shared_messages
from tiny_agent.providers.anthropic.reply import normalise_usage as anthropic_usage
from tiny_agent.providers.lines import sse_lines
from tiny_agent.providers.openai.reply import normalise_usage as openai_usage
from tiny_agent.providers.registry import offline_profile
from tiny_agent.store import open_store
from tiny_agent.types import Usage

__all__ = ["UPSTREAMS", "Recorder", "Wire"]


@dataclass(frozen=True)
class Wire:
    """What the recorder needs of a wire: the SDK's variable, the real base URL, how usage reads."""

    variable: str
    default: str
    usage: Callable[[object], Usage]
    usage_key: str
    """Where a streamed answer's events carry usage (``message``'s for Anthropic's ``message_start``)."""


UPSTREAMS: dict[str, Wire] = {
    "anthropic": Wire("ANTHROPIC_BASE_URL", "https://api.anthropic.com", anthropic_usage, "message"),
    "openai": Wire("OPENAI_BASE_URL", "https://api.openai.com/v1", openai_usage, ""),
}
_SKIPPED = frozenset({"host", "content-length", "accept-encoding", "connection", "transfer-encoding"})


class Recorder:
    """A proxy per wire under one server, writing to a new session of the store at ``location``."""

    def __init__(self, location: str, upstreams: Mapping[str, str] | None = None, workspace: str | None = None) -> None:
        """``upstreams``: the real base URL of each wire (default: the environment's, else the provider's)."""
        self.upstreams = {name: (upstreams or {}).get(name) or wire.default for name, wire in UPSTREAMS.items()}
        self._queue: queue.Queue[tuple[str, dict[str, Any], int, bytes, str, float, float] | None] = queue.Queue()
        self._ready = threading.Event()
        self._error: Exception | None = None
        self.session_id = ""
        """Empty until the first call is stored."""
        self.calls = 0
        self.exit_status: int | None = None
        """The program's, stored with the run's end."""
        self._writer = threading.Thread(target=self._write, args=(location, workspace), daemon=True)
        self._writer.start()
        self._ready.wait(timeout=60)
        if self._error is not None:
            raise self._error
        handler = type("Handler", (_Handler,), {"recorder": self})
        self._server = _Server(("127.0.0.1", 0), handler)
        self._thread = threading.Thread(target=self._server.serve_forever, name="tiny-agent-record", daemon=True)
        self._thread.start()

    def base_url(self, wire: str) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/{wire}"

    def environment(self) -> dict[str, str]:
        """The variables that send a program's SDK calls through this recorder."""
        return {wire.variable: self.base_url(name) for name, wire in UPSTREAMS.items()}

    def close(self) -> None:
        """Stop the proxy, then write what is still queued."""
        self._server.shutdown()
        self._server.server_close()
        self._queue.put(None)
        self._writer.join(timeout=60)

    def __enter__(self) -> Recorder:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def record(self, wire: str, body: dict[str, Any], status: int, answer: bytes, kind: str, sent: float) -> None:
        self._queue.put((wire, body, status, answer, kind, sent, time.time()))

    def _write(self, location: str, workspace: str | None) -> None:
        """The one thread that touches the store (an SQLite connection stays on its thread)."""
        try:
            store = open_store(location)
        except (TinyAgentError, OSError) as exc:
            self._error = exc
            self._ready.set()
            return
        head = -1
        running: tuple[str, str] | None = None
        last: dict[str, tuple[dict[str, Any], Usage, float]] = {}
        """Each wire's newest answered body: a call is compared with its own wire's (another is another cache)."""
        self._ready.set()
        with store:
            while (item := self._queue.get()) is not None:
                wire, body, status, answer, kind, sent, done = item
                if not self.session_id:  # made at the first call: a program that makes none leaves nothing
                    self.session_id = store.create(workspace=workspace).id
                model = str(body.get("model") or "")
                entries = [] if running == (wire, model) else [encode(RunChange({"provider": wire, "model": model}))]
                running = (wire, model)
                before = last.get(wire)
                shared = shared_messages(before[0] if before else None, body, wire)
                prints = body_fingerprint(body, wire)
                call = CallOpened("turn", model, len(json.dumps(body)), prints, provider=wire, shared_messages=shared)
                opened = encode(call)
                entries.append((opened[0], {**opened[1], "request": body}))
                written = store.append(self.session_id, entries, expected_head=head)
                head = written[-1].seq
                if status >= 400:  # refused: no usage to store, the reason as the provider gave it
                    reason = f"HTTP {status}: {answer.decode('utf-8', 'replace')[:300]}"
                    failed = encode(CallFailed(written[-1].seq, reason))
                    head = store.append(self.session_id, [failed], expected_head=head)[-1].seq
                    continue
                usage = _usage(UPSTREAMS[wire], answer, kind)
                try:
                    cost = offline_profile(wire, model).price(usage, sent)
                except TinyAgentError:
                    cost = None
                miss = recorded_miss(before, body, usage, wire, model, done)
                last[wire] = (body, usage, done)
                record = CallRecord(usage, cost, done - sent, model, miss=miss, at=done)
                head = store.append(self.session_id, [encode(CallDone(written[-1].seq, record))], expected_head=head)[
                    -1
                ].seq
                self.calls += 1
            if self.session_id:  # the program's end is the run's (``stats`` counts runs by their ends)
                detail = "" if self.exit_status is None else f"the program exited with status {self.exit_status}"
                store.append(self.session_id, [encode(RunStop("recorded", self.calls, detail))], expected_head=head)


def _usage(wire: Wire, answer: bytes, kind: str) -> Usage:
    """The usage of a JSON answer, or of a streamed one's events (the later ones update the earlier)."""
    text = answer.decode("utf-8", "replace")
    if "text/event-stream" not in kind:
        try:
            data = json.loads(text)
        except ValueError:
            return Usage()
        return wire.usage(data.get("usage") if isinstance(data, dict) else None)
    raw: dict[str, Any] = {}
    for line in sse_lines([text]):
        if not line.startswith("data:") or line[5:].strip() in ("", "[DONE]"):
            continue
        try:
            event = json.loads(line[5:])
        except ValueError:
            continue
        holder = event.get(wire.usage_key) if wire.usage_key and isinstance(event.get(wire.usage_key), dict) else event
        if isinstance(holder.get("usage"), dict):
            raw.update({k: v for k, v in holder["usage"].items() if v is not None})
    return wire.usage(raw or None)


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Quiet about a reset connection: a program that exits with one open resets it, no error of its calls."""
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    recorder: Recorder
    protocol_version = "HTTP/1.1"

    def do_GET(self) -> None:
        self._forward(b"")

    def do_POST(self) -> None:
        size = int(self.headers.get("Content-Length") or 0)
        self._forward(self.rfile.read(size))

    def _forward(self, payload: bytes) -> None:
        wire, _, rest = self.path.lstrip("/").partition("/")
        upstream = self.recorder.upstreams.get(wire)
        if upstream is None:
            self._send(404, {"Content-Type": "text/plain"}, f"the recorder serves /{' or /'.join(UPSTREAMS)}".encode())
            return
        url = upstream.rstrip("/") + "/" + rest
        headers = {k: v for k, v in self.headers.items() if k.lower() not in _SKIPPED}
        request = urllib.request.Request(url, data=payload or None, headers=headers, method=self.command)
        sent = time.time()
        try:
            with urllib.request.urlopen(request, timeout=600) as answer:
                status, answer_headers = answer.status, dict(answer.headers.items())
                kind = next((v for k, v in answer_headers.items() if k.lower() == "content-type"), "")
                if "text/event-stream" in kind:
                    body = self._relay(status, answer_headers, answer)
                else:
                    body = answer.read()
                    self._send(status, answer_headers, body)
        except urllib.error.HTTPError as error:
            status, answer_headers, body = error.code, dict(error.headers.items()), error.read()
            kind = next((v for k, v in answer_headers.items() if k.lower() == "content-type"), "")
            self._send(status, answer_headers, body)
        except (urllib.error.URLError, OSError) as exc:
            self._send(502, {"Content-Type": "text/plain"}, f"the recorder could not reach {url}: {exc}".encode())
            return
        try:
            sent_body = json.loads(payload) if payload else None
        except ValueError:
            sent_body = None
        if isinstance(sent_body, dict) and isinstance(sent_body.get("messages"), list):
            self.recorder.record(wire, sent_body, status, body, kind, sent)

    def _relay(self, status: int, headers: Mapping[str, str], answer: HTTPResponse) -> bytes:
        """A streamed answer passed on as each piece arrives (chunked, so the program reads every event
        when it comes); the whole of it returned, for its usage. If the program hangs up, the upstream
        stream is left too, as it would be without the recorder."""
        self.send_response(status)
        self._headers(headers)
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        kept = bytearray()
        try:
            while piece := answer.read1(65536):
                kept += piece
                self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
                self.wfile.flush()
            self.wfile.write(b"0\r\n\r\n")
        except OSError:  # the program hung up
            self.close_connection = True
        return bytes(kept)

    def _send(self, status: int, headers: Mapping[str, str], body: bytes) -> None:
        self.send_response(status)
        self._headers(headers)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _headers(self, headers: Mapping[str, str]) -> None:
        for key, value in headers.items():
            if key.lower() not in _SKIPPED | {"content-encoding", "date", "server"}:
                self.send_header(key, value)

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: the program's own output is what the terminal shows."""
