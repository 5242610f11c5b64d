"""A Responses API on 127.0.0.1 that validates bodies as OpenAI does and bills as documented.

Reached through the official ``openai`` SDK (``client.responses.create``, whole and streamed)::

    with ResponsesServer([Task("read the files", steps)]) as server:
        provider = resolve_provider("openai", api="responses", base_url=server.url("run"), env=...)
        ...
        server.rejected            # every request it refused (400/404), with the API's message
        server.bills("run")        # what it billed, request by request

What it refuses, with the API's own texts (../shared/facts/reasoning.md section 2): the item rules
(``providers.responses.check.check_input``: a reasoning item without its following item, outputs
without their calls and calls without outputs, ``rs_``/``msg_`` ids under ``store: false``, a
reasoning item without ``summary``, function call ids not beginning with ``fc``); besides them,
what only the server can know: encrypted content (reasoning and compaction items) minted for
another model (``invalid_encrypted_content``), an assistant ``msg_`` item sent without the reasoning
item that came before it, a breakpoint on an output block, more than four breakpoints.

What it answers: the scripted task's reply (``testing.tasks``) as output items (a reasoning item
with encrypted content bound to the model, for reasoning models; message items with ``phase``;
function calls with ``fc_`` ids); usage from the billing simulator on the model's cache rules
(``cached_tokens``, ``cache_write_tokens``; ``reasoning_tokens`` counted in the output), priced by
genai-prices (writes 1.25x on GPT-5.6+); ``prompt_cache_diagnostics`` when the request names a
``prompt_cache_options.comparison_response_id``; a compaction item when ``context_management``'s
threshold is passed; streams as ``response.created`` ... ``response.output_text.delta`` ...
``response.output_item.done`` ... ``response.completed``.
"""

from __future__ import annotations

import base64
import json
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

from tiny_agent.providers.cache_sim import GenaiPricer, SimCall, Simulator
from tiny_agent.providers.prefix import block_tokens
from tiny_agent.providers.responses.check import BREAKPOINT, INPUT_PARTS, check_input
from tiny_agent.providers.thinking_caps import openai_reasons
from tiny_agent.providers.wire import rules_of
from tiny_agent.testing.loopback import LoopbackHttp
from tiny_agent.testing.responses_replies import Event, diagnose, events, response
from tiny_agent.testing.responses_replies import fingerprint as fingerprint_of
from tiny_agent.testing.tasks import ScriptedTask, Task
from tiny_agent.types import Block, TextBlock, ToolUseBlock

__all__ = ["REASONING_TOKENS", "Rejected", "ResponseBill", "ResponsesServer", "chat_view"]

REASONING_TOKENS = 24
"""Reasoning tokens every reply of a reasoning model spends (part of its output tokens)."""


@dataclass(frozen=True)
class Rejected:
    route: str
    status: int
    message: str
    body: Mapping[str, Any]


@dataclass(frozen=True)
class ResponseBill:
    route: str
    body: Mapping[str, Any]
    call: SimCall
    reply: Mapping[str, Any]


@dataclass
class _Route:
    model: ScriptedTask
    sims: dict[str, Simulator] = field(default_factory=dict)
    bills: list[ResponseBill] = field(default_factory=list)
    fingerprints: dict[str, dict[str, Any]] = field(default_factory=dict)
    before_reasoning: dict[str, str] = field(default_factory=dict)
    """msg_ id -> the rs_ id that came before it in the same output."""


class ResponsesServer:
    """``tasks`` are played on every route (one conversation each, with its own cache)."""

    def __init__(
        self, tasks: Sequence[Task], *, clock: Callable[[], float] = time.time, summary_words: int = 60
    ) -> None:
        self.tasks = tuple(tasks)
        self.clock = clock
        self.summary_words = summary_words
        self.rejected: list[Rejected] = []
        self.compactions = 0
        self._routes: dict[str, _Route] = {}
        self._lock = threading.Lock()
        self._served = 0
        self._http = LoopbackHttp(self._handle, "responses-server")

    def url(self, route: str) -> str:
        """The base URL (``.../v1``) of the conversation ``route``."""
        with self._lock:
            self._routes.setdefault(route, _Route(ScriptedTask(self.tasks, self.summary_words, "call")))
        return f"http://127.0.0.1:{self._http.port}/{route}/v1"

    def bills(self, route: str) -> list[ResponseBill]:
        with self._lock:
            found = self._routes.get(route)
            return list(found.bills) if found else []

    def __enter__(self) -> ResponsesServer:
        self._http.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._http.stop()

    def _handle(self, http: BaseHTTPRequestHandler) -> None:
        parts = http.path.split("?")[0].strip("/").split("/")
        with self._lock:
            route = self._routes.get(parts[0]) if parts[1:] == ["v1", "responses"] else None
        if route is None:
            _send(http, 404, {"error": {"type": "not_found_error", "message": f"no route {http.path}"}})
            return
        body = json.loads(http.rfile.read(int(http.headers.get("content-length") or 0)) or b"{}")
        problem = self._problem(route, body)
        if problem is not None:
            status, message = problem
            with self._lock:
                self.rejected.append(Rejected(parts[0], status, message, body))
            error = {"message": message, "type": "invalid_request_error", "param": "input", "code": None}
            _send(http, status, {"error": error})
            return
        reply = self._answer(parts[0], route, body)
        if body.get("stream"):
            _send_stream(http, events(reply))
        else:
            _send(http, 200, reply)

    def _problem(self, route: _Route, body: Mapping[str, Any]) -> tuple[int, str] | None:
        items = [x for x in body.get("input") or [] if isinstance(x, Mapping)]
        store = bool(body.get("store", True))
        model = str(body.get("model"))
        for problem in check_input(items, store=store):
            return (404 if "not found" in problem else 400), problem
        ids = {x.get("id") for x in items}
        for n, item in enumerate(items):
            sealed = item.get("encrypted_content")
            if isinstance(sealed, str) and _opened(sealed).get("model") != model:
                return 400, (
                    "The encrypted content for item "
                    f"{item.get('id')} could not be verified. Reason: Encrypted content could not be decrypted or "
                    "parsed. (invalid_encrypted_content)"
                )
            needed = route.before_reasoning.get(str(item.get("id")))
            if needed and needed not in ids:
                said = f"Item '{item.get('id')}' of type 'message' was provided without its required 'reasoning' item"
                return 400, said
            content = item.get("content") if item.get("type", "message") == "message" else item.get("output")
            for j, part in enumerate(content if isinstance(content, list) else []):
                if isinstance(part, Mapping) and BREAKPOINT in part and part.get("type") not in INPUT_PARTS:
                    return 400, f"input[{n}].content[{j}]: prompt_cache_breakpoint is only supported on input content"
        marks = sum(1 for x in items for p in _parts(x) if isinstance(p, Mapping) and BREAKPOINT in p)
        if marks > 4:
            return 400, f"A request may set at most 4 prompt_cache_breakpoint markers; it set {marks}."
        return None

    def _answer(self, name: str, route: _Route, body: Mapping[str, Any]) -> dict[str, Any]:
        model = str(body.get("model"))
        with self._lock:
            self._served += 1
            number = self._served
            blocks, stop = route.model.reply(chat_view(body), "openai")
            sim = route.sims.get(model)
            if sim is None:
                rules = rules_of("openai", model, "responses")
                sim = Simulator("responses", model, pricer=GenaiPricer(model, "openai"), rules=rules)
                route.sims[model] = sim
            thinking = REASONING_TOKENS if openai_reasons(model) else 0
            output = sum(block_tokens(b.to_dict()) for b in blocks) + thinking
            call = sim.send(self.clock(), body, output)
            items = self._items(route, number, model, blocks, stop, body)
            reply = response(number, model, items, call, thinking)
            fingerprint = fingerprint_of(body)
            options = body.get("prompt_cache_options")
            compared = options.get("comparison_response_id") if isinstance(options, Mapping) else None
            if isinstance(compared, str):
                reply["prompt_cache_diagnostics"] = diagnose(route.fingerprints.get(compared), fingerprint)
            route.fingerprints[reply["id"]] = fingerprint
            route.bills.append(ResponseBill(name, body, call, reply))
        return reply

    def _items(
        self, route: _Route, number: int, model: str, blocks: Sequence[Block], stop: str, body: Mapping[str, Any]
    ) -> list[dict[str, Any]]:
        items: list[dict[str, Any]] = []
        threshold = next(
            (c.get("compact_threshold") for c in body.get("context_management") or [] if c.get("type") == "compaction"),
            None,
        )
        if isinstance(threshold, int) and sum(block_tokens(x) for x in body.get("input") or []) > threshold:
            self.compactions += 1
            items.append({"type": "compaction", "id": f"cmp_{number:05d}", "encrypted_content": _sealed(model, number)})
        reasoning = f"rs_{number:05d}"
        if openai_reasons(model):
            sealed = _sealed(model, number)
            items.append({"type": "reasoning", "id": reasoning, "summary": [], "encrypted_content": sealed})
        calls = any(isinstance(b, ToolUseBlock) for b in blocks)
        for k, block in enumerate(blocks):
            if isinstance(block, TextBlock):
                item_id = f"msg_{number:05d}_{k}"
                if openai_reasons(model):
                    route.before_reasoning[item_id] = reasoning
                part = {"type": "output_text", "text": block.text, "annotations": []}
                phase = "commentary" if calls else "final_answer"
                message = {"type": "message", "id": item_id, "role": "assistant", "status": "completed"}
                items.append({**message, "phase": phase, "content": [part]})
            elif isinstance(block, ToolUseBlock):
                arguments = json.dumps(dict(block.input))
                call = {"type": "function_call", "id": f"fc_{number:05d}_{k}", "call_id": block.id, "name": block.name}
                items.append({**call, "arguments": arguments, "status": "completed"})
        return items


def chat_view(body: Mapping[str, Any]) -> dict[str, Any]:
    """A Responses body as the Chat Completions body the scripted model reads (user text, tool results)."""
    messages: list[dict[str, Any]] = []
    for item in body.get("input") or []:
        kind = item.get("type", "message")
        if kind == "function_call_output":
            messages.append({"role": "tool", "tool_call_id": item.get("call_id"), "content": ""})
        elif kind == "message":
            texts = [{"type": "text", "text": str(p.get("text", ""))} for p in _parts(item) if isinstance(p, Mapping)]
            role = "system" if item.get("role") in ("system", "developer") else item.get("role")
            messages.append({"role": role, "content": texts})
    return {"messages": messages, "tool_choice": body.get("tool_choice")}


def _parts(item: Mapping[str, Any]) -> list[Any]:
    content = item.get("content") if item.get("type", "message") == "message" else item.get("output")
    return content if isinstance(content, list) else []


def _sealed(model: str, number: int) -> str:
    return base64.b64encode(json.dumps({"model": model, "n": number}).encode()).decode()


def _opened(sealed: str) -> dict[str, Any]:
    try:
        found = json.loads(base64.b64decode(sealed))
    except ValueError:
        return {}
    return found if isinstance(found, dict) else {}


def _send(http: BaseHTTPRequestHandler, status: int, payload: Mapping[str, Any]) -> None:
    data = json.dumps(payload).encode()
    http.send_response(status)
    http.send_header("content-type", "application/json")
    http.send_header("content-length", str(len(data)))
    http.end_headers()
    http.wfile.write(data)


def _send_stream(http: BaseHTTPRequestHandler, events: Iterator[Event]) -> None:
    data = b"".join(f"event: {name}\ndata: {json.dumps(d)}\n\n".encode() for name, d in events)
    http.send_response(200)
    http.send_header("content-type", "text/event-stream")
    http.send_header("content-length", str(len(data)))
    http.end_headers()
    http.wfile.write(data)
