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
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

from tiny_agent.providers.base import Wire
from tiny_agent.providers.cache_sim import GenaiPricer, SimCall, Simulator
from tiny_agent.providers.prefix import Counter, block_tokens
from tiny_agent.providers.profile import PRICING_IDS
from tiny_agent.providers.wire import prefix_blocks, rules_of, wire_of
from tiny_agent.testing.anthropic_compaction import Compacted, ServerCompaction
from tiny_agent.testing.loopback import LoopbackHttp
from tiny_agent.testing.tasks import ScriptedTask, Task
from tiny_agent.testing.thinking_server import ThinkingRules, binding_refused
from tiny_agent.testing.thinking_wires import admit, with_thought
from tiny_agent.testing.wire_replies import SPOKEN, Speaks, send, send_stream, speaking
from tiny_agent.types import TextBlock

__all__ = ["SPOKEN", "Bill", "BillingFake", "Speaks"]


@dataclass(frozen=True)
class Bill:
    """One request the fake answered, and what it billed for it."""

    route: str
    wire: Wire
    body: Mapping[str, Any]
    call: SimCall
    reply: Mapping[str, Any]


_Admitted = tuple[dict[str, Any], tuple[Any, int] | None, Compacted | None]
"""What the model reads of a request, its thought, and the server compaction it runs."""


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
        thinking: ThinkingRules | None = None,
        compaction: ServerCompaction | None = None,
        hold: Callable[[], object] | None = None,
    ) -> None:
        """``refuses`` names request fields answered with OpenAI's 400 for an unknown parameter;
        ``counter`` gives each block's tokens, for the bills and ``count_tokens`` alike: the
        estimator of ``providers.prefix`` by default, or a real tokenizer's count; ``hold`` is called
        before a stream's last event, each event written as it comes (``wire_replies.send_stream``)."""
        self.hold = hold
        self.refuses = tuple(refuses)
        self.thinking = thinking
        """The thinking rules the model API enforces (``testing.thinking_server``); None: no thinking."""
        self.compaction = compaction
        """Anthropic's server-side compaction (``testing.anthropic_compaction``); None: not offered."""
        self.tasks = tuple(tasks)
        self.counter = counter
        self.delay = delay
        self.clock = clock
        self.summary_words = summary_words
        self._routes: dict[str, _Route] = {}
        self._lock = threading.Lock()
        self._http = LoopbackHttp(self._handle, "billing-fake")

    # -- set up -------------------------------------------------------------------------------

    def url(self, route: str, wire: Wire, *, provider: str | None = None) -> str:
        """The base URL a provider of ``wire`` takes for ``route``, billed by the cache rules and prices
        of the profile ``provider`` ("anthropic", "openai", "deepseek", "moonshot"; by default the wire's)."""
        if "/" in route or not route:
            raise ValueError(f"a route is one path segment, not {route!r}")
        with self._lock:
            if route not in self._routes:
                model = ScriptedTask(self.tasks, self.summary_words, speaking(wire).call_ids)
                self._routes[route] = _Route(model, provider or wire)
        port = self._http.port
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
        self._http.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._http.stop()

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
            send(http, 404, {"error": {"type": "not_found_error", "message": f"no route {http.path}"}})
            return
        body = json.loads(http.rfile.read(int(http.headers.get("content-length") or 0)) or b"{}")
        admitted = self._admit(http, route, wire, body)
        if admitted is not None:
            self._answer(http, parts[0], route, wire, *admitted)

    def _admit(self, http: BaseHTTPRequestHandler, route: _Route, wire: Wire, body: dict[str, Any]) -> _Admitted | None:
        """What the model reads of ``body``, its thought and the server compaction it runs; None when
        ``http`` was answered a 400."""
        refused = next((f for f in self.refuses if f'"{f}"' in json.dumps(body)), None)
        if refused is not None:
            error = {"message": f"Unrecognized request argument supplied: {refused}", "param": refused}
            send(http, 400, {"error": {**error, "type": "invalid_request_error", "code": "unknown_parameter"}})
            return None
        compacted: Compacted | None = None
        if self.compaction is not None:
            with self._lock:
                betas = str(http.headers.get("anthropic-beta") or "")
                said, body, compacted = self.compaction.admit(body, betas, self.counter)
            if said is not None:
                send(http, 400, {"type": "error", "error": {"type": "invalid_request_error", "message": said}})
                return None
        thought: tuple[Any, int] | None = None
        if self.thinking is not None:
            opened = compacted.body if compacted is not None else None
            with self._lock:
                rejected, body, thought = admit(self.thinking, body, wire, route.provider, http.headers, opened)
            if rejected is not None:
                send(http, 400, rejected)
                return None
        return body, thought, compacted

    def _answer(
        self,
        http: BaseHTTPRequestHandler,
        name: str,
        route: _Route,
        wire: Wire,
        body: dict[str, Any],
        thought: tuple[Any, int] | None,
        compacted: Compacted | None,
    ) -> None:
        blocks, stop = route.model.reply(body, wire)
        output = sum(block_tokens(b.to_dict()) for b in blocks) + (thought[1] if thought else 0)
        cap = body.get("max_tokens") or body.get("max_completion_tokens")
        if isinstance(cap, int) and output > cap:  # cut at the output limit, as a model would be
            blocks, stop, output = (TextBlock("." * cap),), "max_tokens", cap
        model = str(body.get("model") or "unknown")
        passes: tuple[SimCall, SimCall] | None = None
        with self._lock:
            sim = self._simulator(route, wire, model)
            if compacted is not None and self.compaction is not None:
                call, passes = self.compaction.bill(sim, self.clock(), body, compacted, output)
            else:
                call = sim.send(self.clock(), body, output)
            route.served += 1
            number = route.served
        speaks = SPOKEN[wire]
        reply = speaks.reply(number, model, blocks, stop, passes[1] if passes else call)
        if thought is not None:
            reply = with_thought(reply, wire, thought, self.thinking)
        if compacted is not None and passes is not None:
            reply = ServerCompaction.reply(reply, compacted, passes)
        with self._lock:
            route.bills.append(Bill(name, wire, body, call, reply))
        if self.delay:
            time.sleep(self.delay)
        if body.get("stream"):
            send_stream(http, speaks.stream(reply, body), self.hold)
        else:
            send(http, 200, reply)

    def _simulator(self, route: _Route, wire: Wire, model: str) -> Simulator:
        """The cache of ``model`` at ``route``, billed by its profile's rules and prices (under the lock)."""
        sim = route.sims.get(model)
        if sim is None:
            pricing = PRICING_IDS.get(route.provider)
            pricer = GenaiPricer(model, pricing) if pricing else (lambda call: 0.0)
            rules = rules_of(route.provider, model, wire)
            sim = route.sims[model] = Simulator(wire, model, pricer=pricer, rules=rules, counter=self.counter)
        return sim

    def _count(self, http: BaseHTTPRequestHandler, name: str) -> None:
        """Anthropic's ``count_tokens``: the whole prompt, as the bills count it, for free."""
        with self._lock:
            route = self._routes.get(name)
        if route is None:
            send(http, 404, {"error": {"type": "not_found_error", "message": f"no route {http.path}"}})
            return
        body = json.loads(http.rfile.read(int(http.headers.get("content-length") or 0)) or b"{}")
        refused = binding_refused(body, str(http.headers.get("anthropic-beta") or ""))
        if refused is not None:
            send(http, 400, {"type": "error", "error": {"type": "invalid_request_error", "message": refused}})
            return
        tokens = sum(b.tokens for b in prefix_blocks(body, "anthropic", self.counter))
        with self._lock:
            route.counted.append(tokens)
        send(http, 200, {"input_tokens": tokens})
