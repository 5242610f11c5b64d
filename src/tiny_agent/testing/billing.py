"""A model API on 127.0.0.1 that bills like the provider: a scripted task, usage from the cache rules.

Both wires, whole answers and streams, reached by the adapters through their real SDKs::

    with BillingFake([Task("tour the files", steps)]) as fake:
        provider = resolve_provider("anthropic", base_url=fake.url("run-a", "anthropic"), env=...)
        ...
        fake.bills("run-a")        # what the server billed, request by request

Each route (the first part of the path) is one conversation: its own scripted model
(``ScriptedTask``) and its own cache (``providers.cache_sim.Simulator``, on the wire's rules,
priced by genai-prices), so two runs of the same task under two policies can be compared bill
for bill. The usage sent back is the simulator's, in the wire's own fields (Anthropic's uncached
``input_tokens`` beside the cache counts; OpenAI's ``prompt_tokens`` with ``cached_tokens`` inside).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tiny_agent.providers.base import Wire
from tiny_agent.providers.cache_sim import GenaiPricer, SimCall, Simulator
from tiny_agent.providers.prefix import Counter, block_tokens
from tiny_agent.providers.profile import PRICING_IDS
from tiny_agent.providers.wire import prefix_blocks, rules_of, wire_of
from tiny_agent.testing.tasks import ScriptedTask, Task
from tiny_agent.types import Block, TextBlock, ToolUseBlock

__all__ = ["SPOKEN", "Bill", "BillingFake", "Speaks"]


@dataclass(frozen=True)
class Bill:
    """One request the fake answered, and what it billed for it."""

    route: str
    wire: Wire
    body: Mapping[str, Any]
    call: SimCall
    reply: Mapping[str, Any]


@dataclass
class _Route:
    model: ScriptedTask
    provider: str
    """The profile name whose cache rules and price list bill this route ("anthropic", "deepseek"...)."""
    sims: dict[str, Simulator] = field(default_factory=dict)
    bills: list[Bill] = field(default_factory=list)
    served: int = 0
    counted: list[int] = field(default_factory=list)
    """What each ``count_tokens`` request was answered (free, not billed)."""


class BillingFake:
    """``tasks`` are played on every route; ``delay`` seconds pass before each answer. ``refuses``
    names request fields the fake answers a 400 for, as OpenAI does for a field a model does not take
    (``prompt_cache_options`` before GPT-5.6)."""

    def __init__(
        self,
        tasks: Sequence[Task],
        *,
        delay: float = 0.0,
        clock: Callable[[], float] = time.time,
        summary_words: int = 60,
        refuses: Sequence[str] = (),
        counter: Counter = block_tokens,
    ) -> None:
        """``refuses`` names request fields answered with OpenAI's 400 for an unknown parameter;
        ``counter`` gives each block's tokens, for the bills and ``count_tokens`` alike: the
        estimator of ``providers.prefix`` by default, or a real tokenizer's count."""
        self.refuses = tuple(refuses)
        self.tasks = tuple(tasks)
        self.counter = counter
        self.delay = delay
        self.clock = clock
        self.summary_words = summary_words
        self._routes: dict[str, _Route] = {}
        self._lock = threading.Lock()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                owner._handle(self)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, name="billing-fake", daemon=True)

    # -- set up -------------------------------------------------------------------------------

    def url(self, route: str, wire: Wire, *, provider: str | None = None) -> str:
        """The base URL a provider of ``wire`` takes for ``route``, billed by the cache rules and prices
        of the profile ``provider`` ("anthropic", "openai", "deepseek", "moonshot"; by default the wire's)."""
        if "/" in route or not route:
            raise ValueError(f"a route is one path segment, not {route!r}")
        with self._lock:
            if route not in self._routes:
                model = ScriptedTask(self.tasks, self.summary_words, _speaking(wire).call_ids)
                self._routes[route] = _Route(model, provider or wire)
        port = self._httpd.server_address[1]
        return f"http://127.0.0.1:{port}/{route}" + wire_of(wire).sdk_path

    def counts(self, route: str) -> list[int]:
        """The answers to the route's ``count_tokens`` requests, in order."""
        with self._lock:
            found = self._routes.get(route)
            return list(found.counted) if found else []

    def bills(self, route: str) -> list[Bill]:
        with self._lock:
            found = self._routes.get(route)
            return list(found.bills) if found else []

    def __enter__(self) -> BillingFake:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    # -- one request --------------------------------------------------------------------------

    def _handle(self, http: BaseHTTPRequestHandler) -> None:
        parts = http.path.split("?")[0].strip("/").split("/")
        if parts[1:] == ["v1", "messages", "count_tokens"]:
            self._count(http, parts[0])
            return
        wire = next((name for name, speaks in SPOKEN.items() if list(speaks.path) == parts[1:]), None)
        with self._lock:
            route = self._routes.get(parts[0]) if wire else None
        if wire is None or route is None:
            _send(http, 404, {"error": {"type": "not_found_error", "message": f"no route {http.path}"}})
            return
        body = json.loads(http.rfile.read(int(http.headers.get("content-length") or 0)) or b"{}")
        refused = next((f for f in self.refuses if f'"{f}"' in json.dumps(body)), None)
        if refused is not None:
            error = {"message": f"Unrecognized request argument supplied: {refused}", "param": refused}
            _send(http, 400, {"error": {**error, "type": "invalid_request_error", "code": "unknown_parameter"}})
            return
        blocks, stop = route.model.reply(body, wire)
        output = sum(block_tokens(b.to_dict()) for b in blocks)
        cap = body.get("max_tokens") or body.get("max_completion_tokens")
        if isinstance(cap, int) and output > cap:  # cut at the output limit, as a model would be
            blocks, stop, output = (TextBlock("." * cap),), "max_tokens", cap
        with self._lock:
            model = str(body.get("model") or "unknown")
            sim = route.sims.get(model)
            if sim is None:
                pricing = PRICING_IDS.get(route.provider)
                pricer = GenaiPricer(model, pricing) if pricing else (lambda call: 0.0)
                rules = rules_of(route.provider, model, wire)
                sim = route.sims[model] = Simulator(wire, model, pricer=pricer, rules=rules, counter=self.counter)
            call = sim.send(self.clock(), body, output)
            route.served += 1
            number = route.served
        speaks = SPOKEN[wire]
        reply = speaks.reply(number, model, blocks, stop, call)
        with self._lock:
            route.bills.append(Bill(parts[0], wire, body, call, reply))
        if self.delay:
            time.sleep(self.delay)
        if body.get("stream"):
            _send_stream(http, speaks.stream(reply, body))
        else:
            _send(http, 200, reply)

    def _count(self, http: BaseHTTPRequestHandler, name: str) -> None:
        """Anthropic's ``count_tokens``: the whole prompt, as the bills count it, for free."""
        with self._lock:
            route = self._routes.get(name)
        if route is None:
            _send(http, 404, {"error": {"type": "not_found_error", "message": f"no route {http.path}"}})
            return
        body = json.loads(http.rfile.read(int(http.headers.get("content-length") or 0)) or b"{}")
        tokens = sum(b.tokens for b in prefix_blocks(body, "anthropic", self.counter))
        with self._lock:
            route.counted.append(tokens)
        _send(http, 200, {"input_tokens": tokens})


def _anthropic(number: int, model: str, blocks: Sequence[Block], stop: str, call: SimCall) -> dict[str, Any]:
    return {
        "id": f"msg_fake{number:05d}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [b.to_dict() for b in blocks],
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": {
            "input_tokens": call.uncached,
            "cache_read_input_tokens": call.cache_read,
            "cache_creation_input_tokens": call.cache_write,
            "cache_creation": {
                "ephemeral_5m_input_tokens": call.cache_write_5m,
                "ephemeral_1h_input_tokens": call.cache_write_1h,
            },
            "output_tokens": call.output_tokens,
        },
    }


def _openai(number: int, model: str, blocks: Sequence[Block], stop: str, call: SimCall) -> dict[str, Any]:
    text = "\n\n".join(b.text for b in blocks if isinstance(b, TextBlock))
    calls = [
        {"id": b.id, "type": "function", "function": {"name": b.name, "arguments": json.dumps(dict(b.input))}}
        for b in blocks
        if isinstance(b, ToolUseBlock)
    ]
    message: dict[str, Any] = {"role": "assistant", "content": text or None, "refusal": None}
    if calls:
        message["tool_calls"] = calls
    details: dict[str, Any] = {"cached_tokens": call.cache_read}
    if call.cache_write:
        details["cache_write_tokens"] = call.cache_write
    return {
        "id": f"chatcmpl-fake{number:05d}",
        "object": "chat.completion",
        "created": int(call.at),
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": _finish(calls, stop)}],
        "usage": {
            "prompt_tokens": call.input_tokens,
            "completion_tokens": call.output_tokens,
            "total_tokens": call.input_tokens + call.output_tokens,
            "prompt_tokens_details": details,
        },
    }


def _finish(calls: Sequence[Any], stop: str) -> str:
    return "tool_calls" if calls else ("length" if stop == "max_tokens" else "stop")


Event = tuple[str | None, Any]


def _anthropic_events(message: Mapping[str, Any], body: Mapping[str, Any]) -> Iterator[Event]:
    usage = dict(message["usage"])
    start = {**message, "content": [], "stop_reason": None, "usage": {**usage, "output_tokens": 1}}
    yield "message_start", {"type": "message_start", "message": start}
    for index, block in enumerate(message["content"]):
        if block["type"] == "tool_use":
            opening = {**block, "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        else:
            opening = {"type": "text", "text": ""}
            delta = {"type": "text_delta", "text": block["text"]}
        yield "content_block_start", {"type": "content_block_start", "index": index, "content_block": opening}
        yield "content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}
        yield "content_block_stop", {"type": "content_block_stop", "index": index}
    delta_usage = {"output_tokens": usage["output_tokens"]}
    yield (
        "message_delta",
        {"type": "message_delta", "delta": {"stop_reason": message["stop_reason"]}, "usage": delta_usage},
    )
    yield "message_stop", {"type": "message_stop"}


def _openai_chunks(completion: Mapping[str, Any], body: Mapping[str, Any]) -> Iterator[Event]:
    head = {k: completion[k] for k in ("id", "created", "model")} | {"object": "chat.completion.chunk"}
    choice = completion["choices"][0]
    message = choice["message"]

    def chunk(delta: dict[str, Any], finish: str | None = None) -> Event:
        return None, {**head, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

    yield chunk({"role": "assistant", "content": ""})
    if message.get("content"):
        yield chunk({"content": message["content"]})
    for k, call in enumerate(message.get("tool_calls") or []):
        yield chunk({"tool_calls": [{"index": k, **call}]})
    yield chunk({}, choice["finish_reason"])
    if (body.get("stream_options") or {}).get("include_usage"):
        yield None, {**head, "choices": [], "usage": completion["usage"]}
    yield None, "[DONE]"


def _send(http: BaseHTTPRequestHandler, status: int, payload: Mapping[str, Any]) -> None:
    data = json.dumps(payload).encode()
    http.send_response(status)
    http.send_header("content-type", "application/json")
    http.send_header("content-length", str(len(data)))
    http.end_headers()
    http.wfile.write(data)


def _send_stream(http: BaseHTTPRequestHandler, events: Iterator[Event]) -> None:
    data = b"".join(
        ((f"event: {name}\n" if name else "") + f"data: {d if isinstance(d, str) else json.dumps(d)}\n\n").encode()
        for name, d in events
    )
    http.send_response(200)
    http.send_header("content-type", "text/event-stream")
    http.send_header("content-length", str(len(data)))
    http.end_headers()
    http.wfile.write(data)


@dataclass(frozen=True)
class Speaks:
    """How the fake speaks one wire: the path it answers, its tool call ids, its answers whole and streamed."""

    path: tuple[str, ...]
    call_ids: str
    reply: Callable[[int, str, Sequence[Block], str, SimCall], dict[str, Any]]
    stream: Callable[[Mapping[str, Any], Mapping[str, Any]], Iterator[Event]]


SPOKEN: Mapping[Wire, Speaks] = {
    "anthropic": Speaks(("v1", "messages"), "toolu", _anthropic, _anthropic_events),
    "openai": Speaks(("v1", "chat", "completions"), "call", _openai, _openai_chunks),
}
"""The wires the fake speaks, by name."""


def _speaking(wire: Wire) -> Speaks:
    found = SPOKEN.get(wire)
    if found is None:
        raise ValueError(f"the billing fake speaks {', '.join(SPOKEN)}, not {wire!r}")
    return found
